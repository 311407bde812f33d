//! The text view of a decoded batch, for outputs people read (NDJSON, the table):
//! `__headers` becomes a JSON object, `__key` shows the decoded key when the key has
//! a format, and raw bytes (`__key`, a raw `value`) show as text when they are valid
//! UTF-8 — what kcat prints — and as `{"base64": "…"}` otherwise, so a JSON string is
//! always the bytes' own text and never ambiguous. The rewritten columns are Utf8
//! holding JSON text (`krabka.json=true`), which the JSON writer embeds as JSON.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, FieldRef, Schema};
use base64::Engine as _;
use serde_json::{Map, Value};

use crate::engine::columnar::batch::DECODED_KEY_COLUMN;
use crate::engine::columnar::codec::raw::VALUE_COLUMN;
use crate::engine::columnar::headers::{Header, decode_headers};
use crate::engine::columnar::json_values::column_to_json;
use crate::engine::columnar::reserved::{HEADERS_COLUMN, JSON_KEY, KEY_COLUMN};

/// How raw bytes are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BinaryText {
    /// Valid UTF-8 as text, anything else as `{"base64": "…"}`.
    #[default]
    Auto,
    /// Every byte string as a base64 JSON string.
    Base64,
}

/// What the view rewrites.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextView {
    pub binary: BinaryText,
    /// The `value` column holds raw bytes (value format `raw`).
    pub raw_value: bool,
    /// The batch has a decoded key column `key`: `__key` shows it, and `key` is
    /// dropped unless `keep_decoded_key` (asked for by name).
    pub decoded_key: bool,
    pub keep_decoded_key: bool,
    /// The key format is JSON: `__key` shows the key's own JSON document. The decoded
    /// column cannot stand in for it — a key of one field (`{"id":7}`) decodes to that
    /// field's value alone.
    pub key_is_json: bool,
}

/// The marker object of bytes that are not text.
pub fn base64_marker(bytes: &[u8]) -> Value {
    let mut m = Map::new();
    m.insert(
        "base64".into(),
        Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
    );
    Value::Object(m)
}

/// One byte string as JSON under `mode`.
pub fn bytes_json(bytes: &[u8], mode: BinaryText) -> Value {
    match (mode, std::str::from_utf8(bytes)) {
        (BinaryText::Auto, Ok(text)) => Value::String(text.to_string()),
        (BinaryText::Auto, Err(_)) => base64_marker(bytes),
        (BinaryText::Base64, _) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
    }
}

/// A header list as one JSON object: names in first-seen order, a repeated name's
/// values as an array in record order, a null value as `null`.
pub fn headers_json(headers: &[Header], mode: BinaryText) -> Value {
    let mut order: Vec<&str> = Vec::new();
    let mut values: HashMap<&str, Vec<Value>> = HashMap::new();
    for h in headers {
        let v = h
            .value
            .as_deref()
            .map_or(Value::Null, |b| bytes_json(b, mode));
        values
            .entry(h.key.as_str())
            .or_insert_with(|| {
                order.push(h.key.as_str());
                Vec::new()
            })
            .push(v);
    }
    let mut m = Map::new();
    for name in order {
        let mut vs = values.remove(name).unwrap_or_default();
        let v = if vs.len() == 1 {
            vs.pop().unwrap_or(Value::Null)
        } else {
            Value::Array(vs)
        };
        m.insert(name.to_string(), v);
    }
    Value::Object(m)
}

fn json_field(name: &str) -> FieldRef {
    Arc::new(
        Field::new(name, DataType::Utf8, true)
            .with_metadata(HashMap::from([(JSON_KEY.to_string(), "true".to_string())])),
    )
}

fn json_column(cells: impl Iterator<Item = Option<String>>) -> ArrayRef {
    Arc::new(cells.collect::<StringArray>())
}

fn binary_cells(array: &dyn Array, mode: BinaryText) -> Option<ArrayRef> {
    let cells: Vec<Option<&[u8]>> = match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().iter().collect(),
        DataType::LargeBinary => array.as_binary::<i64>().iter().collect(),
        DataType::BinaryView => array.as_binary_view().iter().collect(),
        _ => return None,
    };
    Some(json_column(
        cells
            .into_iter()
            .map(|c| c.map(|b| bytes_json(b, mode).to_string())),
    ))
}

/// Rewrites `batch` for a text output (see the module docs). A `__headers` cell that
/// is not a header list (§3) is an error naming the row.
pub fn text_view(batch: &RecordBatch, view: &TextView) -> Result<RecordBatch, String> {
    let schema = batch.schema();
    let raw_key = schema
        .index_of(KEY_COLUMN)
        .ok()
        .map(|i| batch.column(i))
        .filter(|c| c.data_type() == &DataType::Binary);
    let decoded_key: Option<ArrayRef> = match schema.index_of(DECODED_KEY_COLUMN) {
        Ok(_) if view.decoded_key && view.key_is_json && raw_key.is_some() => {
            let keys = raw_key.expect("checked").as_binary::<i32>();
            let mut cells = Vec::with_capacity(keys.len());
            for (row, key) in keys.iter().enumerate() {
                cells.push(
                    key.map(|k| {
                        serde_json::from_slice::<Value>(k)
                            .map(|v| v.to_string())
                            .map_err(|e| format!("row {row}: the key is not JSON: {e}"))
                    })
                    .transpose()?,
                );
            }
            Some(json_column(cells.into_iter()))
        }
        Ok(i) if view.decoded_key => {
            let key = batch.column(i);
            // A `gzip+raw` key decodes to bytes: shown like raw bytes.
            match binary_cells(key.as_ref(), view.binary) {
                Some(cells) => Some(cells),
                // `column_to_json` writes a null key as `null`.
                None => Some(json_column(
                    column_to_json(key.as_ref(), schema.field(i))?
                        .into_iter()
                        .map(Some),
                )),
            }
        }
        _ => None,
    };
    let mut fields: Vec<FieldRef> = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let name = field.name().as_str();
        let rewritten = match name {
            DECODED_KEY_COLUMN if decoded_key.is_some() && !view.keep_decoded_key => continue,
            KEY_COLUMN => match &decoded_key {
                Some(cells) => Some(cells.clone()),
                None => binary_cells(column.as_ref(), view.binary),
            },
            HEADERS_COLUMN if column.data_type() == &DataType::Binary => {
                let a = column.as_binary::<i32>();
                let mut cells = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    if a.is_null(i) {
                        cells.push(None);
                        continue;
                    }
                    let headers = decode_headers(a.value(i))
                        .map_err(|e| format!("row {i}: cannot read __headers: {e}"))?;
                    cells.push(Some(headers_json(&headers, view.binary).to_string()));
                }
                Some(json_column(cells.into_iter()))
            }
            VALUE_COLUMN if view.raw_value => binary_cells(column.as_ref(), view.binary),
            _ => None,
        };
        match rewritten {
            Some(c) => {
                fields.push(json_field(name));
                columns.push(c);
            }
            None => {
                fields.push(field.clone());
                columns.push(column.clone());
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| format!("cannot build the text view: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::headers::encode_headers;
    use crate::engine::columnar::json_values::batch_to_json_lines;
    use arrow_array::BinaryArray;

    fn batch(
        key: Vec<Option<&[u8]>>,
        value: Vec<Option<&[u8]>>,
        headers: Vec<&[u8]>,
    ) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("value", DataType::Binary, true),
                Field::new(KEY_COLUMN, DataType::Binary, true),
                Field::new(HEADERS_COLUMN, DataType::Binary, true),
            ])),
            vec![
                Arc::new(BinaryArray::from(value)),
                Arc::new(BinaryArray::from(key)),
                Arc::new(BinaryArray::from(headers)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn headers_become_an_object_with_repeats_as_arrays_and_binary_marked() {
        let cell = encode_headers(&[
            Header::new("trace-id", Some(b"t-6".to_vec())),
            Header::new("hop", Some(b"a".to_vec())),
            Header::new("bin", Some(vec![0xff, 0x00])),
            Header::new("hop", Some(b"b".to_vec())),
            Header::new("gone", None),
        ]);
        let b = batch(vec![Some(b"k1")], vec![Some(b"hello")], vec![&cell]);
        let view = TextView {
            raw_value: true,
            ..Default::default()
        };
        let lines = batch_to_json_lines(&text_view(&b, &view).unwrap()).unwrap();
        assert_eq!(
            lines[0],
            r#"{"value":"hello","__key":"k1","__headers":{"trace-id":"t-6","hop":["a","b"],"bin":{"base64":"/wA="},"gone":null}}"#
        );
    }

    #[test]
    fn raw_bytes_are_text_when_utf8_else_marked_and_all_base64_on_request() {
        let empty = encode_headers(&[]);
        let b = batch(
            vec![None, Some(&[0xc3, 0x28])],
            vec![Some("é".as_bytes()), None],
            vec![&empty, &empty],
        );
        let auto = TextView {
            raw_value: true,
            ..Default::default()
        };
        let lines = batch_to_json_lines(&text_view(&b, &auto).unwrap()).unwrap();
        assert_eq!(lines[0], r#"{"value":"é","__key":null,"__headers":{}}"#);
        assert_eq!(
            lines[1],
            r#"{"value":null,"__key":{"base64":"wyg="},"__headers":{}}"#
        );
        let b64 = TextView {
            binary: BinaryText::Base64,
            raw_value: true,
            ..Default::default()
        };
        let lines = batch_to_json_lines(&text_view(&b, &b64).unwrap()).unwrap();
        assert_eq!(lines[0], r#"{"value":"w6k=","__key":null,"__headers":{}}"#);
        // Not a raw value: a payload column named `value` keeps the JSON writer's base64.
        let lines = batch_to_json_lines(&text_view(&b, &TextView::default()).unwrap()).unwrap();
        assert_eq!(lines[0], r#"{"value":"w6k=","__key":null,"__headers":{}}"#);
    }

    #[test]
    fn a_decoded_key_replaces_the_key_bytes_and_its_column_goes() {
        let empty = encode_headers(&[]);
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new(DECODED_KEY_COLUMN, DataType::Utf8, true),
                Field::new(KEY_COLUMN, DataType::Binary, true),
                Field::new(HEADERS_COLUMN, DataType::Binary, true),
            ])),
            vec![
                Arc::new(StringArray::from(vec![Some("alice"), None])),
                Arc::new(BinaryArray::from(vec![Some(b"alice".as_ref()), None])),
                Arc::new(BinaryArray::from(vec![empty.as_slice(), empty.as_slice()])),
            ],
        )
        .unwrap();
        let view = TextView {
            decoded_key: true,
            ..Default::default()
        };
        let lines = batch_to_json_lines(&text_view(&b, &view).unwrap()).unwrap();
        assert_eq!(
            lines,
            vec![
                r#"{"__key":"alice","__headers":{}}"#.to_string(),
                r#"{"__key":null,"__headers":{}}"#.to_string(),
            ]
        );
        let keep = TextView {
            decoded_key: true,
            keep_decoded_key: true,
            ..Default::default()
        };
        let lines = batch_to_json_lines(&text_view(&b, &keep).unwrap()).unwrap();
        assert_eq!(
            lines[0],
            r#"{"key":"alice","__key":"alice","__headers":{}}"#
        );
    }

    #[test]
    fn a_json_key_of_one_field_shows_as_the_object_it_is() {
        let empty = encode_headers(&[]);
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new(DECODED_KEY_COLUMN, DataType::Int64, true),
                Field::new(KEY_COLUMN, DataType::Binary, true),
                Field::new(HEADERS_COLUMN, DataType::Binary, true),
            ])),
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![Some(7), None])),
                Arc::new(BinaryArray::from(vec![
                    Some(br#"{"id": 7}"#.as_ref()),
                    None,
                ])),
                Arc::new(BinaryArray::from(vec![empty.as_slice(), empty.as_slice()])),
            ],
        )
        .unwrap();
        let view = TextView {
            decoded_key: true,
            key_is_json: true,
            ..Default::default()
        };
        let lines = batch_to_json_lines(&text_view(&b, &view).unwrap()).unwrap();
        assert_eq!(lines[0], r#"{"__key":{"id":7},"__headers":{}}"#);
        assert_eq!(lines[1], r#"{"__key":null,"__headers":{}}"#);
    }

    #[test]
    fn a_malformed_headers_cell_is_an_error_naming_the_row() {
        let b = batch(vec![None], vec![None], vec![&[0, 0, 0]]);
        let e = text_view(&b, &TextView::default()).unwrap_err();
        assert!(e.contains("row 0"), "{e}");
    }
}
