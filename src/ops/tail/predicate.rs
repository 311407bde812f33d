//! `tail --where 'PREDICATE'`: one SQL predicate over the decoded columns (payload
//! and reserved), parsed when the command starts, compiled per topic against that
//! topic's batch schema (again only when the schema changes) and evaluated over
//! whole columns by the engine's expression evaluator; null counts as false.

use std::collections::HashMap;

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::SchemaRef;

use crate::engine::columnar::expr::{ExprError, Expression, ParsedExpr};
use crate::ops::Error;

/// The predicate and its compiled form per topic.
pub struct WherePredicate {
    parsed: ParsedExpr,
    compiled: HashMap<String, (SchemaRef, Expression)>,
}

fn usage(text: &str, topic: Option<&str>, e: ExprError) -> Error {
    let at = if e.line > 0 {
        format!(" (line {}, column {})", e.line, e.column)
    } else {
        String::new()
    };
    let topic = topic.map_or_else(String::new, |t| format!(" on topic {t}"));
    Error::usage(format!(
        "invalid --where `{}`{topic}{at}: {}",
        text.trim(),
        e.message
    ))
}

impl WherePredicate {
    /// Parses the predicate (syntax only); a syntax error is a usage error.
    pub fn parse(text: &str) -> crate::ops::Result<Self> {
        let parsed = ParsedExpr::parse(text, false).map_err(|e| usage(text, None, e))?;
        Ok(WherePredicate {
            parsed,
            compiled: HashMap::new(),
        })
    }

    /// Checks the predicate against the columns a topic is known to have before any
    /// record is read. When the codec learns its columns from the data (a registry
    /// writer schema, inferred JSON) and the predicate names a column not known yet,
    /// the check waits for the first batch of that topic, which is never written
    /// before it passes.
    pub fn check_known_columns(
        &mut self,
        topic: &str,
        schema: &SchemaRef,
        columns_learned_from_data: bool,
    ) -> crate::ops::Result<()> {
        let all_known = self
            .parsed
            .columns()
            .is_some_and(|cols| cols.iter().all(|c| schema.index_of(c).is_ok()));
        if columns_learned_from_data && !all_known {
            return Ok(());
        }
        self.compile(topic, schema).map(|_| ())
    }

    fn compile(&mut self, topic: &str, schema: &SchemaRef) -> crate::ops::Result<&Expression> {
        let fresh = match self.compiled.get(topic) {
            Some((cached, _)) => !(std::sync::Arc::ptr_eq(cached, schema) || cached == schema),
            None => true,
        };
        if fresh {
            let expression = self
                .parsed
                .compile_predicate(schema.as_ref())
                .map_err(|e| usage(self.parsed.text(), Some(topic), e))?;
            self.compiled
                .insert(topic.to_string(), (schema.clone(), expression));
        }
        Ok(&self.compiled.get(topic).expect("compiled above").1)
    }

    /// Which rows of `batch` (one topic's decoded batch) the predicate keeps.
    pub fn mask(&mut self, topic: &str, batch: &RecordBatch) -> crate::ops::Result<BooleanArray> {
        let schema = batch.schema();
        let expression = self.compile(topic, &schema)?;
        expression.evaluate_predicate(batch).map_err(|e| {
            Error::failure(format!(
                "topic {topic}: cannot evaluate --where `{}`: {e}",
                self.parsed.text().trim()
            ))
        })
    }
}
