//! What the registry-framed value targets (`json_schema_value`, `protobuf_value`)
//! share: writer schemas seeded into an offline cache, the `schema text \0 body`
//! input split, and the driver's append/reset/finish contract checked on a value.

#![allow(dead_code)]

use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnarschema::writer_schemas::WriterSchema;
use krabka_streams::engine::schema::registry::SchemaType;

/// A writer schema as the registry would return it for `id`.
pub fn writer(id: i32, schema_type: SchemaType, text: &str) -> WriterSchema {
    WriterSchema {
        id,
        schema_type,
        text: text.to_string(),
        message_type: None,
        references: Vec::new(),
    }
}

/// `schema text \0 body` split at the first NUL; `None` without one or with a
/// non-UTF-8 schema text (the registry only serves text).
pub fn schema_and_body(input: &[u8]) -> Option<(&str, &[u8])> {
    let split = input.iter().position(|&b| b == 0)?;
    let text = std::str::from_utf8(&input[..split]).ok()?;
    Some((text, &input[split + 1..]))
}

/// Appends `value`, a tombstone and `value` again (multi-row columns with nulls).
/// The driver's contract: a failed append is followed by `reset`, which drops the
/// batch's rows; the columns must then still finish evenly.
pub fn decode_twice_with_a_tombstone(decoder: &mut dyn ValueDecoder, value: &[u8]) {
    for record in [Some(value), None, Some(value)] {
        if decoder.append(record).is_err() {
            decoder.reset();
        }
    }
    if let Ok(columns) = decoder.finish() {
        let rows = columns.first().map(|(_, a)| a.len());
        assert!(
            columns.iter().all(|(_, a)| Some(a.len()) == rows),
            "columns of uneven length"
        );
    }
}
