//! Payload codecs: how a record value (or key) becomes payload columns and back.
//!
//! A [`ValueDecoder`] appends the rows of one value at a time (one row for the row
//! codecs, many for Arrow blobs) and hands back the payload columns of everything
//! appended since the last `finish`. A failed `append` may leave rows half-written:
//! the caller then calls `reset` and decodes the batch again without the failing
//! record, so no decoder needs undo logic. A [`CodecError`] is either a decode
//! failure of that record or retriable (a writer schema still being fetched).
//! Codecs that know Avro, Protobuf or JSON Schema registries live in `columnarschema`.

pub mod blob;
pub mod gzip;
pub mod json;
pub mod ordered_json;
pub mod raw;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::FieldRef;

/// Why one record could not be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The record cannot be decoded (bad bytes, schema mismatch, …).
    #[error("{0}")]
    Invalid(String),
    /// Not yet decodable: a writer schema is being fetched. Retry the record later.
    #[error("{0}")]
    Pending(String),
}

impl CodecError {
    pub fn invalid(message: impl Into<String>) -> Self {
        CodecError::Invalid(message.into())
    }

    pub fn is_retriable(&self) -> bool {
        matches!(self, CodecError::Pending(_))
    }

    /// Prefixes the message with context, keeping the kind.
    pub fn context(self, what: impl std::fmt::Display) -> Self {
        match self {
            CodecError::Invalid(m) => CodecError::Invalid(format!("{what}: {m}")),
            CodecError::Pending(m) => CodecError::Pending(m),
        }
    }
}

/// Payload columns produced by a decoder: field (unescaped name) and array.
pub type PayloadColumns = Vec<(FieldRef, ArrayRef)>;

/// Turns record values into payload columns.
pub trait ValueDecoder: Send {
    /// Appends the rows of one value (`None` = tombstone) and returns how many.
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError>;
    /// The payload columns of every row appended since the last `finish` or `reset`.
    fn finish(&mut self) -> Result<PayloadColumns, CodecError>;
    /// Discards every row appended since the last `finish`.
    fn reset(&mut self);
}

/// Turns the payload columns of a batch back into record values, one per row.
pub trait RowEncoder {
    /// The value of `row` (`None` = tombstone), reading the payload columns of `batch`.
    fn encode_row(&self, batch: &RecordBatch, row: usize) -> Result<Option<Vec<u8>>, CodecError>;
}
