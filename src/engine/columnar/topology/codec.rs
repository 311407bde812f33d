//! What the topology needs from a codec: consumed records in, one Arrow batch
//! (payload columns + the five reserved columns) out, and back. The row and
//! blob codecs themselves live with `tail`; the record types are theirs, so
//! the two meet without conversion.

use arrow_array::RecordBatch;

pub use crate::engine::columnar::record::{OutRecord, Record};

/// A codec failure; `retriable` when the record may decode later (a writer
/// schema still being fetched), which fails the poll instead of the record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CodecError {
    pub message: String,
    pub retriable: bool,
}

impl CodecError {
    pub fn new(message: impl Into<String>) -> Self {
        CodecError {
            message: message.into(),
            retriable: false,
        }
    }
}

/// Converts between the records of one fetched batch and one Arrow batch.
pub trait BatchCodec: Send + Sync + std::fmt::Debug {
    /// Decodes a non-empty batch of one topic's records into one batch carrying
    /// the reserved columns.
    fn decode(&self, topic: &str, records: &[Record]) -> Result<RecordBatch, CodecError>;
    /// Encodes a batch back into records for `topic`.
    fn encode(&self, topic: &str, batch: &RecordBatch) -> Result<Vec<OutRecord>, CodecError>;
    /// The codec's name for `--explain` (e.g. `avro`, `json`, `arrow`).
    fn name(&self) -> String;
}
