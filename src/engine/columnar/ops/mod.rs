//! Built-in operators (semantics §4): filter, select, with_columns, group_by and
//! windowed group_by, plus the event-time join (§6). An [`Operator`] is the
//! configured, shareable description; [`Operator::instantiate`] gives a fresh
//! [`Processor`] with its own state, one per logical partition. Built-ins forward
//! exactly one batch per input batch; stateless ones snapshot to empty bytes and
//! refuse a non-empty restore. Stateful snapshots are the Go payloads of
//! formats §8.5/§8.6, byte for byte.

pub mod group_by;
pub mod join;
pub mod stateless;
#[cfg(test)]
pub(crate) mod testing;
pub mod values;

use std::fmt;

use arrow_array::{BooleanArray, RecordBatch};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{Schema, SchemaRef};

/// Why an operator failed on a batch or on a snapshot. `retriable` errors (a
/// pending schema fetch upstream) make the runner retry the poll instead of
/// applying its error policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub message: String,
    pub retriable: bool,
}

impl OpError {
    pub fn new(message: impl Into<String>) -> Self {
        OpError {
            message: message.into(),
            retriable: false,
        }
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpError {}

impl From<crate::engine::columnar::expr::EvalError> for OpError {
    fn from(e: crate::engine::columnar::expr::EvalError) -> Self {
        OpError::new(e.0)
    }
}

impl From<arrow_schema::ArrowError> for OpError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        OpError::new(e.to_string())
    }
}

/// One operator instance: processes batches, keeps its own state.
pub trait Processor: Send {
    /// Handles one batch and returns what it forwards (exactly one batch for built-ins).
    fn process(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>, OpError>;
    /// How many threads one batch may be processed on (`run --threads`); the
    /// output must be the same at every count. Default: one, whatever is asked.
    fn set_threads(&mut self, threads: usize) {
        let _ = threads;
    }
    /// The state as bytes; empty for stateless operators.
    fn snapshot(&self) -> Result<Vec<u8>, OpError>;
    /// Replaces the state with a snapshot.
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError>;
    /// For a filter: the rows of `batch` it forwards (set bits, no nulls),
    /// instead of [`Processor::process`]'s filtered copy, so a consumer that
    /// takes a selection reads them in place. `None` for any other operator.
    fn selection(&mut self, batch: &RecordBatch) -> Option<Result<BooleanBuffer, OpError>> {
        let _ = batch;
        None
    }
    /// [`Processor::process`] of the rows of `batch` whose bit in `selected`
    /// is set, in order. Default: of their filtered copy.
    fn process_selected(
        &mut self,
        batch: &RecordBatch,
        selected: &BooleanBuffer,
    ) -> Result<Vec<RecordBatch>, OpError> {
        let mask = BooleanArray::new(selected.clone(), None);
        self.process(&arrow::compute::filter_record_batch(batch, &mask)?)
    }
}

/// A configured operator: creates processors and predicts their output schema.
pub trait Operator: Send + Sync + fmt::Debug {
    fn instantiate(&self) -> Box<dyn Processor>;
    /// The schema of the batches forwarded for input batches of `input`;
    /// errors name the column or expression that does not fit.
    fn output_schema(&self, input: &Schema) -> Result<SchemaRef, OpError>;
    /// One line for `--explain`.
    fn describe(&self) -> String;
    /// The input columns needed to produce `output` (`None` = every column);
    /// lets a run drop columns nothing downstream reads. Default: everything.
    fn input_columns(&self, output: Option<&ColumnSet>) -> Option<ColumnSet> {
        let _ = output;
        None
    }
}

/// A set of column names.
pub type ColumnSet = std::collections::BTreeSet<String>;

/// Stateless operators share this: empty snapshot, refuse non-empty restore.
pub(crate) fn restore_stateless(snapshot: &[u8]) -> Result<(), OpError> {
    if snapshot.is_empty() {
        Ok(())
    } else {
        Err(OpError::new(
            "cannot restore state into a stateless operator",
        ))
    }
}
