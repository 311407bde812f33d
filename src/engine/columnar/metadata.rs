//! The five reserved metadata columns every decoded batch carries (formats §4),
//! the window columns, and payload-name escaping for collisions.

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef};

pub const KEY_COLUMN: &str = "__key";
pub const TIMESTAMP_COLUMN: &str = "__timestamp";
pub const PARTITION_COLUMN: &str = "__partition";
pub const OFFSET_COLUMN: &str = "__offset";
pub const HEADERS_COLUMN: &str = "__headers";
/// The source topic, an extension of the five (formats §4): written by `tail` when it
/// reads several topics (or on request), dictionary-encoded, just before `__key`.
pub const TOPIC_COLUMN: &str = "__topic";
pub const WINDOW_START_COLUMN: &str = "__window_start";
pub const WINDOW_END_COLUMN: &str = "__window_end";

/// The reserved columns, in the order they follow the payload columns.
pub const RESERVED_COLUMNS: [&str; 5] = [
    KEY_COLUMN,
    TIMESTAMP_COLUMN,
    PARTITION_COLUMN,
    OFFSET_COLUMN,
    HEADERS_COLUMN,
];

/// Field metadata key holding a payload column's original name after escaping.
pub const PAYLOAD_NAME_METADATA: &str = "krabka.payload.name";
/// Prefix of an escaped payload column name.
pub const PAYLOAD_PREFIX: &str = "__payload_";

/// A reserved name: one of the five, or `__topic` (never a payload column).
pub fn is_reserved(name: &str) -> bool {
    RESERVED_COLUMNS.contains(&name) || name == TOPIC_COLUMN
}

/// The `__topic` field: utf8, dictionary-encoded with Int32 keys (a batch of one
/// topic stores the name once), nullable like the five.
pub fn topic_field() -> FieldRef {
    Arc::new(Field::new(
        TOPIC_COLUMN,
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        true,
    ))
}

/// The five reserved fields: all nullable, no field metadata.
pub fn reserved_fields() -> [FieldRef; 5] {
    [
        Arc::new(Field::new(KEY_COLUMN, DataType::Binary, true)),
        Arc::new(Field::new(TIMESTAMP_COLUMN, DataType::Int64, true)),
        Arc::new(Field::new(PARTITION_COLUMN, DataType::Int32, true)),
        Arc::new(Field::new(OFFSET_COLUMN, DataType::Int64, true)),
        Arc::new(Field::new(HEADERS_COLUMN, DataType::Binary, true)),
    ]
}

/// A payload field ready for a processing batch: a reserved name becomes
/// `__payload_<name>` with `krabka.payload.name = <name>`; others are unchanged.
pub fn escape_payload_field(field: &Field) -> Field {
    if !is_reserved(field.name()) {
        return field.clone();
    }
    let mut metadata = field.metadata().clone();
    metadata.insert(PAYLOAD_NAME_METADATA.to_string(), field.name().clone());
    field
        .clone()
        .with_name(format!("{PAYLOAD_PREFIX}{}", field.name()))
        .with_metadata(metadata)
}

/// The payload name a sink writes: the original name of an escaped field, without the escaping key.
pub fn restore_payload_field(field: &Field) -> Field {
    match field.metadata().get(PAYLOAD_NAME_METADATA) {
        Some(original) => {
            let mut metadata = field.metadata().clone();
            metadata.remove(PAYLOAD_NAME_METADATA);
            field
                .clone()
                .with_name(original.clone())
                .with_metadata(metadata)
        }
        None => field.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_column_named_like_a_reserved_one_is_escaped_and_restored() {
        let f = Field::new("__key", DataType::Utf8, true);
        let escaped = escape_payload_field(&f);
        assert_eq!(escaped.name(), "__payload___key");
        assert_eq!(escaped.metadata()[PAYLOAD_NAME_METADATA], "__key");
        let restored = restore_payload_field(&escaped);
        assert_eq!(restored.name(), "__key");
        assert!(restored.metadata().is_empty());
        let plain = Field::new("amount", DataType::Int64, false);
        assert_eq!(escape_payload_field(&plain), plain);
    }

    #[test]
    fn reserved_fields_are_nullable_and_carry_no_metadata() {
        let names: Vec<_> = reserved_fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, RESERVED_COLUMNS);
        assert!(
            reserved_fields()
                .iter()
                .all(|f| f.is_nullable() && f.metadata().is_empty())
        );
    }
}
