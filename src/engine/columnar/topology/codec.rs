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

/// A sink row the codec refused on its own (a JSON Schema file's validation),
/// while the batch's other rows encoded: the error policy decides its fate.
#[derive(Debug, Clone, PartialEq)]
pub struct RefusedRow {
    /// Why, naming the topic, the row and its source partition and offset.
    pub message: String,
    /// The source partition and offset the row carries, when it carries them.
    pub partition: Option<i32>,
    pub offset: Option<i64>,
    /// The row as a record (key, timestamp, headers; the unframed body as value),
    /// for a dead letter when no source record can be named.
    pub record: OutRecord,
}

/// A batch's records, and the rows refused one by one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Encoded {
    pub records: Vec<OutRecord>,
    pub refused: Vec<RefusedRow>,
}

/// Converts between the records of one fetched batch and one Arrow batch.
pub trait BatchCodec: Send + Sync + std::fmt::Debug {
    /// Decodes a non-empty batch of one topic's records into one batch carrying
    /// the reserved columns.
    fn decode(&self, topic: &str, records: &[Record]) -> Result<RecordBatch, CodecError>;
    /// Encodes a batch back into records for `topic`.
    fn encode(&self, topic: &str, batch: &RecordBatch) -> Result<Vec<OutRecord>, CodecError>;
    /// Encodes a batch, refusing single rows instead of the batch where the codec
    /// can (by default it cannot: every failure is the batch's).
    fn encode_rows(&self, topic: &str, batch: &RecordBatch) -> Result<Encoded, CodecError> {
        Ok(Encoded {
            records: self.encode(topic, batch)?,
            refused: Vec::new(),
        })
    }
    /// The codec's name for `--explain` (e.g. `avro`, `json`, `arrow`).
    fn name(&self) -> String;
}
