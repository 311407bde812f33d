//! An offline run's inputs and sinks held in memory: batches read in order, and a
//! writer whose clones share every batch written (the demo's run; tests).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::{BatchReader, BatchWriter, WriteError};

/// Batches read in order, then the end.
pub struct MemoryReader {
    schema: SchemaRef,
    batches: VecDeque<RecordBatch>,
}

impl MemoryReader {
    pub fn new(schema: SchemaRef, batches: impl Into<VecDeque<RecordBatch>>) -> Self {
        MemoryReader {
            schema,
            batches: batches.into(),
        }
    }
}

impl BatchReader for MemoryReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn next_batch(&mut self) -> Option<Result<RecordBatch, String>> {
        self.batches.pop_front().map(Ok)
    }
}

/// Keeps every batch written; a clone handed to the run shares them with this one.
#[derive(Clone, Default)]
pub struct MemoryWriter(Arc<Mutex<Vec<RecordBatch>>>);

impl MemoryWriter {
    /// The batches written so far, in order.
    pub fn batches(&self) -> Vec<RecordBatch> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl BatchWriter for MemoryWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), WriteError> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(batch.clone());
        Ok(())
    }
}
