//! SQL expressions over Arrow batches: filter predicates and derived columns.
//!
//! Text is parsed once by this module's own tokenizer and Pratt parser
//! ([`ParsedExpr`], syntax only, no schema; the SQL subset the compiler accepts),
//! then compiled against an Arrow schema into a typed tree ([`Expression`]):
//! column references resolved, operand types coerced, functions checked, with
//! errors that carry the position inside the expression text. Evaluation runs
//! Arrow compute kernels over whole columns (comparisons, checked arithmetic,
//! Kleene AND/OR, LIKE, casts, string kernels) — never a value at a time
//! through an interpreter loop. Knows nothing of topologies or files.

mod ast;
mod compile;
mod eval;
mod parse;
mod strings;
mod token;
pub mod types;

use std::fmt;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, Schema};
use ast::Expr as SqlExpr;

pub(crate) use compile::Node;

/// A parse or type error, positioned inside the expression text (1-based line and
/// column; 0 when the parser gave no position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    pub message: String,
    pub line: u64,
    pub column: u64,
}

impl ExprError {
    pub(crate) fn at(message: impl Into<String>, line: u64, column: u64) -> Self {
        ExprError {
            message: message.into(),
            line,
            column,
        }
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExprError {}

/// A failure while evaluating a compiled expression over a batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// An Arrow kernel's failure as the evaluation error the user reads.
pub(super) fn arrow_error(e: arrow_schema::ArrowError) -> EvalError {
    use arrow_schema::ArrowError;
    match e {
        ArrowError::ArithmeticOverflow(m) => EvalError(format!("integer overflow: {m}")),
        ArrowError::DivideByZero => EvalError("division by zero".into()),
        ArrowError::CastError(m) => EvalError(format!("cast failed: {m}")),
        other => EvalError(other.to_string()),
    }
}

/// An expression whose syntax is valid; not yet checked against a schema.
#[derive(Debug, Clone)]
pub struct ParsedExpr {
    text: String,
    ast: SqlExpr,
    alias: Option<String>,
}

impl ParsedExpr {
    /// Parses `expr`, or `expr AS name` when `allow_alias`.
    pub fn parse(text: &str, allow_alias: bool) -> Result<ParsedExpr, ExprError> {
        let (ast, alias) = parse::parse(text, allow_alias)?;
        Ok(ParsedExpr {
            text: text.to_owned(),
            ast,
            alias,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `AS name` given, if any.
    pub fn alias(&self) -> Option<&str> {
        self.alias.as_deref()
    }

    /// The bare column name when the expression is just a column reference.
    pub fn column_name(&self) -> Option<&str> {
        match &self.ast {
            SqlExpr::Identifier { name, .. } => Some(name),
            _ => None,
        }
    }

    /// Every column the expression reads, or `None` when that cannot be told.
    pub fn columns(&self) -> Option<std::collections::BTreeSet<String>> {
        let mut out = std::collections::BTreeSet::new();
        compile::referenced_columns(&self.ast, &mut out).then_some(out)
    }

    /// Type-checks against `schema` and returns the evaluable expression.
    pub fn compile(&self, schema: &Schema) -> Result<Expression, ExprError> {
        let root = compile::compile(&self.ast, schema)?;
        Ok(Expression {
            text: self.text.clone(),
            root,
        })
    }

    /// Compiles and requires a boolean result (a filter predicate).
    pub fn compile_predicate(&self, schema: &Schema) -> Result<Expression, ExprError> {
        let expression = self.compile(schema)?;
        match expression.data_type() {
            DataType::Boolean | DataType::Null => Ok(expression),
            other => {
                let (line, column) = compile::position(&self.ast);
                Err(ExprError::at(
                    format!(
                        "a filter predicate must be boolean, but `{}` is {}",
                        self.text.trim(),
                        types::type_name(&other)
                    ),
                    line,
                    column,
                ))
            }
        }
    }
}

/// An aggregate call as a group-by writes it: `sum(amount) AS total`,
/// `count(*) AS n`, `CAST(sum(amount) AS DOUBLE) AS total` (output type override).
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateCall {
    /// `count`, `sum`, `min` or `max`, lower-case.
    pub function: String,
    /// The input column; `None` for `count(*)`.
    pub column: Option<String>,
    pub output_type: Option<DataType>,
    pub alias: Option<String>,
}

/// Parses one aggregate; errors are positioned inside `text`.
pub fn parse_aggregate(text: &str) -> Result<AggregateCall, ExprError> {
    let parsed = ParsedExpr::parse(text, true)?;
    let fail = |e: &SqlExpr, message: String| {
        let (line, column) = e.pos();
        ExprError::at(message, line.max(1), column.max(1))
    };
    let (call, output_type) = match &parsed.ast {
        SqlExpr::Cast { expr, ty, .. } => {
            let ty = compile::sql_type(ty).map_err(|m| fail(&parsed.ast, m))?;
            (expr.as_ref(), Some(ty))
        }
        other => (other, None),
    };
    let SqlExpr::Function {
        name,
        args,
        distinct,
        ..
    } = call
    else {
        return Err(fail(
            call,
            format!("expected an aggregate such as `sum(amount) AS total`, got `{call}`"),
        ));
    };
    let name = name.to_ascii_lowercase();
    if !matches!(name.as_str(), "count" | "sum" | "min" | "max") {
        return Err(fail(
            call,
            format!("unknown aggregate `{name}`; expected count, sum, min or max"),
        ));
    }
    if *distinct {
        return Err(fail(call, format!("{name} takes one column")));
    }
    let column = match args.as_slice() {
        [SqlExpr::Wildcard { .. }] if name == "count" => None,
        [SqlExpr::Identifier { name, .. }] => Some(name.clone()),
        [e] if !matches!(e, SqlExpr::Wildcard { .. }) => {
            return Err(fail(
                e,
                format!(
                    "an aggregate input must be a column name, not `{e}`; derive it with with_columns first"
                ),
            ));
        }
        _ => return Err(fail(call, format!("{name} takes exactly one column"))),
    };
    Ok(AggregateCall {
        function: name,
        column,
        output_type,
        alias: parsed.alias,
    })
}

/// At most this many nested sub-expressions (parentheses, function calls,
/// prefix operators; a parenthesis or call counts two). The parser recurses
/// once per level and so do compiling, evaluating and dropping the tree; a
/// debug build spends about 20 KiB of stack per level, and real expressions
/// nest a few levels.
pub const MAX_EXPR_NESTING: usize = 16;

/// At most this many operators (symbols and syntax keywords) in one expression.
///
/// The parser bounds nesting, but builds a chain of infix or postfix operators
/// (`a + a + …`, `x IS NULL IS NULL …`) in a loop, one tree level per operator;
/// compiling, evaluating and dropping that tree recurse once per level. Capping
/// the operators caps the depth, so no expression can overflow the stack: 64
/// operators plus the deepest nesting stay well inside a 2 MiB thread (tokio
/// workers, test threads). A longer condition splits into several `filter` or
/// `with_columns` nodes.
pub const MAX_EXPR_OPERATORS: usize = 64;

/// A compiled, typed expression.
#[derive(Debug, Clone)]
pub struct Expression {
    text: String,
    root: Node,
}

impl Expression {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn data_type(&self) -> DataType {
        self.root.data_type()
    }

    /// Evaluates over every row of `batch`; the result has `batch.num_rows()` values.
    /// A failure that depends on a row's values (a cast, an overflow, a division by
    /// zero) names that row, and the record's partition and offset when the batch has
    /// them.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<ArrayRef, EvalError> {
        eval::evaluate(&self.root, batch).map_err(|e| locate_failing_row(&self.root, batch, e))
    }

    /// Evaluates a predicate; null counts as false when filtering.
    pub fn evaluate_predicate(&self, batch: &RecordBatch) -> Result<BooleanArray, EvalError> {
        let array = self.evaluate(batch)?;
        match array.data_type() {
            DataType::Boolean => Ok(array
                .as_any()
                .downcast_ref::<BooleanArray>()
                .expect("boolean array")
                .clone()),
            DataType::Null => Ok(BooleanArray::new_null(array.len())),
            other => Err(EvalError(format!(
                "a filter predicate must be boolean, got {}",
                types::type_name(other)
            ))),
        }
    }
}

#[cfg(test)]
mod tests;

/// Finds the first row whose evaluation fails (the error path only: about log2(rows)
/// re-evaluations of halving slices) and adds it to the message. An error that an
/// empty batch raises too is not about a row and is returned as it is.
fn locate_failing_row(root: &compile::Node, batch: &RecordBatch, error: EvalError) -> EvalError {
    if batch.num_rows() == 0 || eval::evaluate(root, &batch.slice(0, 0)).is_err() {
        return error;
    }
    let fails =
        |offset: usize, len: usize| eval::evaluate(root, &batch.slice(offset, len)).is_err();
    let (mut start, mut len) = (0usize, batch.num_rows());
    while len > 1 {
        let half = len / 2;
        if fails(start, half) {
            len = half;
        } else {
            start += half;
            len -= half;
        }
    }
    if !fails(start, 1) {
        // Only the rows together fail (nothing a single record explains).
        return error;
    }
    EvalError(format!("{} ({})", error.0, row_position(batch, start)))
}

/// `row R of the batch`, with `partition P offset O` when the batch carries them.
fn row_position(batch: &RecordBatch, row: usize) -> String {
    use crate::engine::columnar::metadata::{OFFSET_COLUMN, PARTITION_COLUMN};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};
    let value = |name: &str| batch.column_by_name(name).filter(|c| c.is_valid(row));
    let partition = value(PARTITION_COLUMN)
        .and_then(|c| c.as_primitive_opt::<Int32Type>().map(|a| a.value(row)));
    let offset =
        value(OFFSET_COLUMN).and_then(|c| c.as_primitive_opt::<Int64Type>().map(|a| a.value(row)));
    match (partition, offset) {
        (Some(p), Some(o)) => {
            format!("at the record of partition {p} offset {o}, row {row} of its batch")
        }
        _ => format!("at row {row} of its batch"),
    }
}
