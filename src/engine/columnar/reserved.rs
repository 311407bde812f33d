//! The five reserved metadata columns every decoded batch ends with (formats §4),
//! their builder, and the escaping of payload columns whose name collides with a
//! reserved one (`__key` → `__payload___key` + `krabka.payload.name=__key`).

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder};
use arrow_schema::{DataType, Field, FieldRef};

use crate::engine::columnar::headers::encode_headers;
use crate::engine::columnar::record::Record;

pub const KEY_COLUMN: &str = "__key";
pub const TIMESTAMP_COLUMN: &str = "__timestamp";
pub const PARTITION_COLUMN: &str = "__partition";
pub const OFFSET_COLUMN: &str = "__offset";
pub const HEADERS_COLUMN: &str = "__headers";

/// The reserved names, in column order.
pub const RESERVED_COLUMNS: [&str; 5] = [
    KEY_COLUMN,
    TIMESTAMP_COLUMN,
    PARTITION_COLUMN,
    OFFSET_COLUMN,
    HEADERS_COLUMN,
];

/// Prefix of an escaped payload column name.
pub const ESCAPED_PREFIX: &str = "__payload_";
/// Field metadata key holding an escaped column's original name.
pub const PAYLOAD_NAME_KEY: &str = "krabka.payload.name";
/// Field metadata: a Utf8 column holding JSON text.
pub const JSON_KEY: &str = "krabka.json";

pub fn is_reserved(name: &str) -> bool {
    RESERVED_COLUMNS.contains(&name)
}

/// The five reserved fields: all nullable, no metadata.
pub fn reserved_fields() -> [FieldRef; 5] {
    [
        Arc::new(Field::new(KEY_COLUMN, DataType::Binary, true)),
        Arc::new(Field::new(TIMESTAMP_COLUMN, DataType::Int64, true)),
        Arc::new(Field::new(PARTITION_COLUMN, DataType::Int32, true)),
        Arc::new(Field::new(OFFSET_COLUMN, DataType::Int64, true)),
        Arc::new(Field::new(HEADERS_COLUMN, DataType::Binary, true)),
    ]
}

/// Renames a payload field that collides with a reserved name; others pass unchanged.
pub fn escape_payload_field(field: Field) -> Field {
    if !is_reserved(field.name()) {
        return field;
    }
    let original = field.name().clone();
    let mut metadata = field.metadata().clone();
    metadata.insert(PAYLOAD_NAME_KEY, original.clone());
    field
        .with_name(format!("{ESCAPED_PREFIX}{original}"))
        .with_metadata(metadata)
}

/// Restores an escaped payload field's original name and drops the escaping key (sinks).
pub fn restore_payload_field(field: &Field) -> Field {
    match field.metadata().get(PAYLOAD_NAME_KEY) {
        Some(original) => {
            let mut metadata = field.metadata().clone();
            metadata.remove(PAYLOAD_NAME_KEY);
            field
                .clone()
                .with_name(original.clone())
                .with_metadata(metadata)
        }
        None => field.clone(),
    }
}

/// Accumulates the reserved columns, one row per call to [`append`](Self::append).
#[derive(Debug, Default)]
pub struct MetadataBuilder {
    key: BinaryBuilder,
    timestamp: Int64Builder,
    partition: Int32Builder,
    offset: Int64Builder,
    headers: BinaryBuilder,
}

impl MetadataBuilder {
    pub fn with_capacity(rows: usize) -> Self {
        MetadataBuilder {
            key: BinaryBuilder::with_capacity(rows, rows * 8),
            timestamp: Int64Builder::with_capacity(rows),
            partition: Int32Builder::with_capacity(rows),
            offset: Int64Builder::with_capacity(rows),
            headers: BinaryBuilder::with_capacity(rows, rows * 4),
        }
    }

    /// Appends `rows` copies of the record's metadata (a blob value gives many rows).
    pub fn append(&mut self, record: &Record, rows: usize) {
        let headers = encode_headers(&record.headers);
        for _ in 0..rows {
            self.key.append_option(record.key.as_deref());
            self.timestamp.append_value(record.timestamp);
            self.partition.append_value(record.partition);
            self.offset.append_value(record.offset);
            self.headers.append_value(&headers);
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

    #[test]
    fn a_payload_column_named_like_a_reserved_one_is_escaped_and_restored() {
        let escaped = escape_payload_field(Field::new("__key", DataType::Utf8, true));
        assert_eq!(escaped.name(), "__payload___key");
        assert_eq!(escaped.metadata().get(PAYLOAD_NAME_KEY).unwrap(), "__key");
        let restored = restore_payload_field(&escaped);
        assert_eq!(restored.name(), "__key");
        assert!(restored.metadata().is_empty());
        let plain = escape_payload_field(Field::new("user", DataType::Utf8, true));
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
