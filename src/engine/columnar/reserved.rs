//! The five reserved metadata columns every decoded batch ends with (formats §4),
//! their builder, and the escaping of payload columns whose name collides with a
//! reserved one (`__key` → `__payload___key` + `krabka.payload.name=__key`).

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder};

use crate::engine::columnar::headers::encode_headers_into;
use crate::engine::columnar::record::{HeadersRef, RecordView};

// One definition of the names, fields and escaping lives in `metadata`; the codecs
// import them from here together with the builder.
pub use crate::engine::columnar::metadata::{
    HEADERS_COLUMN, KEY_COLUMN, OFFSET_COLUMN, PARTITION_COLUMN,
    PAYLOAD_NAME_METADATA as PAYLOAD_NAME_KEY, PAYLOAD_PREFIX as ESCAPED_PREFIX, RESERVED_COLUMNS,
    TIMESTAMP_COLUMN, escape_payload_field, is_reserved, reserved_fields, restore_payload_field,
};

/// Field metadata: a Utf8 column holding JSON text.
pub const JSON_KEY: &str = "krabka.json";

/// Accumulates the reserved columns, one row per call to [`append`](Self::append).
#[derive(Debug, Default)]
pub struct MetadataBuilder {
    key: BinaryBuilder,
    timestamp: Int64Builder,
    partition: Int32Builder,
    offset: Int64Builder,
    headers: BinaryBuilder,
    /// The headers cell of the record being appended, reused across records.
    scratch: Vec<u8>,
}

impl MetadataBuilder {
    pub fn with_capacity(rows: usize) -> Self {
        MetadataBuilder {
            key: BinaryBuilder::with_capacity(rows, rows * 8),
            timestamp: Int64Builder::with_capacity(rows),
            partition: Int32Builder::with_capacity(rows),
            offset: Int64Builder::with_capacity(rows),
            headers: BinaryBuilder::with_capacity(rows, rows * 4),
            scratch: Vec::new(),
        }
    }

    /// Appends `rows` copies of the record's metadata (a blob value gives many rows).
    pub fn append(&mut self, record: &RecordView<'_>, rows: usize) {
        let cell: &[u8] = match record.headers {
            HeadersRef::Cell(cell) => cell,
            HeadersRef::List(list) => {
                encode_headers_into(&mut self.scratch, list);
                &self.scratch
            }
        };
        for _ in 0..rows {
            self.key.append_option(record.key);
            self.timestamp.append_value(record.timestamp);
            self.partition.append_value(record.partition);
            self.offset.append_value(record.offset);
            self.headers.append_value(cell);
        }
    }

    pub fn len(&self) -> usize {
        self.offset.values_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The five columns in reserved order; the builder is empty afterwards.
    pub fn finish(&mut self) -> [ArrayRef; 5] {
        [
            Arc::new(self.key.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.partition.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.headers.finish()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field};

    #[test]
    fn a_payload_column_named_like_a_reserved_one_is_escaped_and_restored() {
        let escaped = escape_payload_field(&Field::new("__key", DataType::Utf8, true));
        assert_eq!(escaped.name(), "__payload___key");
        assert_eq!(escaped.metadata().get(PAYLOAD_NAME_KEY).unwrap(), "__key");
        let restored = restore_payload_field(&escaped);
        assert_eq!(restored.name(), "__key");
        assert!(restored.metadata().is_empty());
        let plain = escape_payload_field(&Field::new("user", DataType::Utf8, true));
        assert_eq!(plain.name(), "user");
    }

    #[test]
    fn reserved_fields_are_nullable_without_metadata_in_order() {
        let f = reserved_fields();
        let names: Vec<&str> = f.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, RESERVED_COLUMNS);
        assert!(f.iter().all(|f| f.is_nullable() && f.metadata().is_empty()));
    }
}
