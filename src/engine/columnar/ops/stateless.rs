//! Filter, select and with_columns: stateless, zero-copy where the rows stay.
//! Under `run --threads` a filter and with_columns work on row ranges of each
//! batch (see [`parallel`]); select only re-points columns, so it has nothing
//! to share out.

mod parallel;
#[cfg(test)]
mod parallel_tests;

use std::sync::Arc;

use arrow::compute::filter_record_batch;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{Field, FieldRef, Schema, SchemaRef};

use self::parallel::RangeVerdict;
use super::{ColumnSet, OpError, Operator, Processor, restore_stateless};
use crate::engine::columnar::expr::{Expression, ParsedExpr};
use crate::engine::columnar::metadata::{RESERVED_COLUMNS, is_reserved};

/// Compiles an expression once per distinct batch schema (compared once per batch).
#[derive(Debug, Clone)]
struct CompiledFor {
    parsed: ParsedExpr,
    predicate: bool,
    cache: Option<(SchemaRef, Expression)>,
}

impl CompiledFor {
    fn new(parsed: ParsedExpr, predicate: bool) -> Self {
        CompiledFor {
            parsed,
            predicate,
            cache: None,
        }
    }

    fn compile(&self, schema: &Schema) -> Result<Expression, OpError> {
        let compiled = if self.predicate {
            self.parsed.compile_predicate(schema)
        } else {
            self.parsed.compile(schema)
        };
        compiled
            .map_err(|e| OpError::new(format!("`{}`: {}", self.parsed.text().trim(), e.message)))
    }

    fn get(&mut self, schema: &SchemaRef) -> Result<&Expression, OpError> {
        let fresh = match &self.cache {
            Some((cached, _)) => !(Arc::ptr_eq(cached, schema) || cached == schema),
            None => true,
        };
        if fresh {
            let compiled = self.compile(schema)?;
            self.cache = Some((schema.clone(), compiled));
        }
        Ok(&self.cache.as_ref().expect("just compiled").1)
    }
}

/// `filter(pred)`: matching rows in order, schema unchanged; null counts as false.
#[derive(Debug, Clone)]
pub struct Filter {
    predicate: ParsedExpr,
}

impl Filter {
    pub fn new(predicate: ParsedExpr) -> Self {
        Filter { predicate }
    }
}

impl Operator for Filter {
    fn instantiate(&self) -> Box<dyn Processor> {
        Box::new(FilterProcessor {
            compiled: CompiledFor::new(self.predicate.clone(), true),
            threads: 1,
        })
    }

    fn output_schema(&self, input: &Schema) -> Result<SchemaRef, OpError> {
        CompiledFor::new(self.predicate.clone(), true).compile(input)?;
        Ok(Arc::new(input.clone()))
    }

    fn describe(&self) -> String {
        format!("filter {}", self.predicate.text().trim())
    }

    fn input_columns(&self, output: Option<&ColumnSet>) -> Option<ColumnSet> {
        let mut needed = output?.clone();
        needed.extend(self.predicate.columns()?);
        Some(needed)
    }
}

struct FilterProcessor {
    compiled: CompiledFor,
    threads: usize,
}

impl Processor for FilterProcessor {
    fn process(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>, OpError> {
        let predicate = self.compiled.get(&batch.schema())?;
        if self.threads > 1 {
            let kept = parallel::kept_rows_parallel(predicate, batch, self.threads)?;
            return Ok(vec![parallel::filter_parallel(batch, kept, self.threads)?]);
        }
        let mask = predicate.evaluate_predicate(batch)?;
        Ok(vec![filter_record_batch(batch, &mask)?])
    }
    fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }
    fn selection(&mut self, batch: &RecordBatch) -> Option<Result<BooleanBuffer, OpError>> {
        let threads = self.threads;
        let kept = self.compiled.get(&batch.schema()).and_then(|predicate| {
            // A null verdict drops the row, as in `filter_record_batch`.
            parallel::kept_rows_parallel(predicate, batch, threads).map_err(OpError::from)
        });
        Some(kept)
    }
    fn snapshot(&self) -> Result<Vec<u8>, OpError> {
        Ok(Vec::new())
    }
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError> {
        restore_stateless(snapshot)
    }
}

/// `select(cols…)`: the named columns in order (duplicates ignored), then the reserved columns present.
#[derive(Debug, Clone)]
pub struct Select {
    columns: Vec<String>,
}

impl Select {
    pub fn new(columns: Vec<String>) -> Self {
        Select { columns }
    }

    fn indices(&self, schema: &Schema) -> Result<Vec<usize>, OpError> {
        let mut out: Vec<usize> = Vec::new();
        let requested = self.columns.iter().map(String::as_str);
        let reserved = RESERVED_COLUMNS
            .iter()
            .copied()
            .filter(|name| schema.index_of(name).is_ok());
        for name in requested.chain(reserved) {
            let index = schema
                .index_of(name)
                .map_err(|_| OpError::new(format!("Arrow column does not exist: {name}")))?;
            if !out.contains(&index) {
                out.push(index);
            }
        }
        Ok(out)
    }
}

impl Operator for Select {
    fn instantiate(&self) -> Box<dyn Processor> {
        Box::new(SelectProcessor(self.clone()))
    }

    fn output_schema(&self, input: &Schema) -> Result<SchemaRef, OpError> {
        Ok(Arc::new(input.project(&self.indices(input)?)?))
    }

    fn describe(&self) -> String {
        format!("select {}", self.columns.join(", "))
    }

    fn input_columns(&self, _output: Option<&ColumnSet>) -> Option<ColumnSet> {
        let mut needed: ColumnSet = self.columns.iter().cloned().collect();
        needed.extend(RESERVED_COLUMNS.iter().map(|c| (*c).to_owned()));
        Some(needed)
    }
}

struct SelectProcessor(Select);

impl Processor for SelectProcessor {
    fn process(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>, OpError> {
        let indices = self.0.indices(&batch.schema())?;
        Ok(vec![batch.project(&indices)?])
    }
    fn snapshot(&self) -> Result<Vec<u8>, OpError> {
        Ok(Vec::new())
    }
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError> {
        restore_stateless(snapshot)
    }
}

/// `with_columns(derived…)`: each expression is evaluated over the input batch;
/// an existing name is replaced in place, a new one appended in declaration order.
#[derive(Debug, Clone)]
pub struct WithColumns {
    derived: Vec<(String, ParsedExpr)>,
}

impl WithColumns {
    /// Refuses reserved names at construction.
    pub fn new(derived: Vec<(String, ParsedExpr)>) -> Result<Self, OpError> {
        for (name, _) in &derived {
            if is_reserved(name) {
                return Err(OpError::new(format!(
                    "payload column `{name}` collides with a reserved metadata column"
                )));
            }
        }
        Ok(WithColumns { derived })
    }
}

impl Operator for WithColumns {
    fn instantiate(&self) -> Box<dyn Processor> {
        Box::new(WithColumnsProcessor {
            derived: self
                .derived
                .iter()
                .map(|(name, parsed)| {
                    let compiled = CompiledFor::new(parsed.clone(), false);
                    (name.clone(), compiled, RangeVerdict::default())
                })
                .collect(),
            threads: 1,
        })
    }

    fn output_schema(&self, input: &Schema) -> Result<SchemaRef, OpError> {
        let types = self
            .derived
            .iter()
            .map(|(name, parsed)| {
                let expression = CompiledFor::new(parsed.clone(), false).compile(input)?;
                Ok((name.clone(), Field::new(name, expression.data_type(), true)))
            })
            .collect::<Result<Vec<_>, OpError>>()?;
        Ok(Arc::new(merged_schema(input, &types)))
    }

    fn describe(&self) -> String {
        let items: Vec<String> = self
            .derived
            .iter()
            .map(|(name, parsed)| match parsed.alias() {
                Some(_) => parsed.text().trim().to_owned(),
                None => format!("{} AS {name}", parsed.text().trim()),
            })
            .collect();
        format!("with_columns {}", items.join(", "))
    }

    fn input_columns(&self, output: Option<&ColumnSet>) -> Option<ColumnSet> {
        let mut needed = output?.clone();
        for (name, _) in &self.derived {
            needed.remove(name);
        }
        for (_, parsed) in &self.derived {
            needed.extend(parsed.columns()?);
        }
        Some(needed)
    }
}

fn merged_schema(input: &Schema, derived: &[(String, Field)]) -> Schema {
    let mut fields: Vec<FieldRef> = input
        .fields()
        .iter()
        .map(
            |f| match derived.iter().find(|(name, _)| name == f.name()) {
                Some((_, replacement)) => Arc::new(replacement.clone()),
                None => f.clone(),
            },
        )
        .collect();
    for (name, field) in derived {
        if input.index_of(name).is_err() && !fields.iter().any(|f| f.name() == name) {
            fields.push(Arc::new(field.clone()));
        }
    }
    Schema::new(fields)
}

struct WithColumnsProcessor {
    derived: Vec<(String, CompiledFor, RangeVerdict)>,
    threads: usize,
}

impl Processor for WithColumnsProcessor {
    fn process(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>, OpError> {
        let schema = batch.schema();
        let mut computed: Vec<(String, Field, ArrayRef)> = Vec::with_capacity(self.derived.len());
        for (name, compiled, verdict) in &mut self.derived {
            let expression = compiled.get(&schema)?;
            let values = if self.threads > 1 {
                parallel::evaluate_parallel(expression, batch, self.threads, verdict)?
            } else {
                expression.evaluate(batch)?
            };
            let field = Field::new(name.as_str(), values.data_type().clone(), true);
            computed.retain(|(n, _, _)| n != name);
            computed.push((name.clone(), field, values));
        }
        let fields: Vec<(String, Field)> = computed
            .iter()
            .map(|(n, f, _)| (n.clone(), f.clone()))
            .collect();
        let out_schema = Arc::new(merged_schema(&schema, &fields));
        let columns: Vec<ArrayRef> = out_schema
            .fields()
            .iter()
            .map(|f| match computed.iter().find(|(n, _, _)| n == f.name()) {
                Some((_, _, values)) => values.clone(),
                None => batch
                    .column_by_name(f.name())
                    .expect("input column")
                    .clone(),
            })
            .collect();
        Ok(vec![RecordBatch::try_new(out_schema, columns)?])
    }
    fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }
    fn snapshot(&self) -> Result<Vec<u8>, OpError> {
        Ok(Vec::new())
    }
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError> {
        restore_stateless(snapshot)
    }
}
