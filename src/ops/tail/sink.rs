//! Where the decode side's batches go, as a trait: the data sinks of
//! `io::batch_sink` (Arrow IPC, Parquet, NDJSON; published atomically by `finish`)
//! are one implementation, the table preview `cmd::tail` draws on a terminal is
//! another, and the unit tests keep the batches in memory.

use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::io::batch_sink::{BatchSink, SinkError};

/// The output of a tail. Dropped without `finish` (a failed tail), it publishes
/// nothing.
pub trait TailSink: Send {
    /// Writes one batch; `SinkError::Closed` means the reader went away (a normal end).
    fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError>;
    /// Closes the output properly and names the files published; with no batch at
    /// all, `fallback` gives the schema of an empty output.
    fn finish(self: Box<Self>, fallback: &SchemaRef) -> Result<Vec<PathBuf>, SinkError>;
}

impl TailSink for BatchSink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        BatchSink::write(self, batch)
    }
    fn finish(self: Box<Self>, fallback: &SchemaRef) -> Result<Vec<PathBuf>, SinkError> {
        BatchSink::finish(*self, fallback)
    }
}
