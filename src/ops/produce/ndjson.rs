//! NDJSON rows as `tail --format ndjson` writes them (its text view,
//! `engine::columnar::text_view`): payload fields, then `__key` (text, a
//! `{"base64": …}` marker for bytes that are not text, or the key's JSON document),
//! `__timestamp` (epoch ms), `__partition`, `__offset` (ignored) and `__headers` (an
//! object: name → text | marker | null, a repeated name's values as an array). Rows
//! become Arrow batches in the library layout (formats §4) through the same `json`
//! or `raw` decoder `tail` reads records with, so NDJSON and columnar inputs share one
//! encoding path. Header order across different names is the object's order: the
//! text view groups a repeated name's values, so that is all NDJSON keeps.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch};
use arrow_schema::Schema;
use base64::Engine as _;
use serde_json::{Map, Value};

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::record::Record;
use crate::engine::columnar::reserved::{
    HEADERS_COLUMN, KEY_COLUMN, OFFSET_COLUMN, PARTITION_COLUMN, TIMESTAMP_COLUMN, TOPIC_COLUMN,
};
use crate::engine::columnar::text_view::BinaryText;
use crate::engine::columnar::topology::BatchCodec;
use crate::engine::columnar::topology::spec::{CodecResolver, CodecSpec, Located};
use crate::engine::columnarschema::topology_codecs::OnlineCodecs;
use crate::ops::produce::input::LineInput;
use crate::ops::{Error, Result};

/// Reads NDJSON rows into batches.
pub struct NdjsonRows {
    input: LineInput,
    codec: Arc<dyn BatchCodec>,
    /// The value is the `value` field's bytes (raw and string formats), not the payload object.
    value_field: bool,
    binary: BinaryText,
    batch_rows: usize,
    /// 1-based line of each row of the last batch.
    pub lines: Vec<u64>,
}

fn codec(name: &str) -> Result<Arc<dyn BatchCodec>> {
    let spec = CodecSpec {
        value: Located::new(name.to_owned(), Default::default()),
        key: None,
        key_column: None,
        topic: None,
        schema_file: None,
        key_schema_file: None,
    };
    OnlineCodecs { schemas: None }
        .resolve(&spec, None)
        .map_err(Error::failure)
}

fn decode_base64(text: &str) -> std::result::Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("invalid base64: {e}"))
}

/// Bytes from a text-view cell: text (or, under `--binary base64`, a base64 string),
/// or a `{"base64": …}` marker.
fn bytes_of(v: &Value, mode: BinaryText) -> Option<std::result::Result<Vec<u8>, String>> {
    match v {
        Value::String(s) if mode == BinaryText::Base64 => Some(
            decode_base64(s)
                .map_err(|e| format!("{e} (--binary base64: every byte string is base64)")),
        ),
        Value::String(s) => Some(Ok(s.as_bytes().to_vec())),
        Value::Object(m) if m.len() == 1 && m.contains_key("base64") => Some(
            m["base64"]
                .as_str()
                .ok_or_else(|| "a base64 marker that is not a string".to_owned())
                .and_then(decode_base64),
        ),
        _ => None,
    }
}

fn header_values(
    name: &str,
    v: &Value,
    mode: BinaryText,
    out: &mut Vec<Header>,
) -> std::result::Result<(), String> {
    match v {
        Value::Null => out.push(Header::new(name, None)),
        Value::Array(items) => {
            for item in items {
                if item.is_array() {
                    return Err(format!("__headers.{name}: a nested array"));
                }
                header_values(name, item, mode, out)?;
            }
        }
        other => match bytes_of(other, mode) {
            Some(bytes) => out.push(Header::new(
                name,
                Some(bytes.map_err(|e| format!("__headers.{name}: {e}"))?),
            )),
            None => {
                return Err(format!(
                    "__headers.{name} is {other}, not text, a {{\"base64\": …}} marker, null or an array of them"
                ));
            }
        },
    }
    Ok(())
}

/// One parsed row: the record to decode and the reserved cells it gave.
struct Row {
    record: Record,
    timestamp: Option<i64>,
    partition: Option<i32>,
}

fn parse_row(line: &[u8], value_field: bool, mode: BinaryText) -> std::result::Result<Row, String> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| format!("not a JSON object: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("not a JSON object".into());
    };
    let key = match object.remove(KEY_COLUMN) {
        None | Some(Value::Null) => None,
        Some(v) => Some(match bytes_of(&v, mode) {
            Some(b) => b.map_err(|e| format!("__key: {e}"))?,
            // A formatted key shows as its own JSON document.
            None => v.to_string().into_bytes(),
        }),
    };
    let timestamp = match object.remove(TIMESTAMP_COLUMN) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_i64()
                .ok_or_else(|| format!("__timestamp is {v}, not an integer (epoch ms)"))?,
        ),
    };
    let partition = match object.remove(PARTITION_COLUMN) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .ok_or_else(|| format!("__partition is {v}, not a partition number"))?,
        ),
    };
    object.remove(OFFSET_COLUMN);
    object.remove(TOPIC_COLUMN);
    let mut headers = Vec::new();
    match object.remove(HEADERS_COLUMN) {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, v) in &map {
                header_values(name, v, mode, &mut headers)?;
            }
        }
        Some(other) => return Err(format!("__headers is {other}, not an object")),
    }
    let value = if value_field {
        match object.remove("value") {
            None | Some(Value::Null) => None,
            Some(v) => Some(bytes_of(&v, mode).ok_or_else(|| {
                format!(
                    "value is {v}, not text or a {{\"base64\": …}} marker (raw and string values)"
                )
            })?
            .map_err(|e| format!("value: {e}"))?),
        }
    } else {
        Some(
            Value::Object(Map::from_iter(object))
                .to_string()
                .into_bytes(),
        )
    };
    Ok(Row {
        record: Record {
            topic: String::new(),
            partition: partition.unwrap_or(-1),
            offset: 0,
            timestamp: timestamp.unwrap_or(0),
            key,
            value,
            headers,
        },
        timestamp,
        partition,
    })
}

/// Replaces a column (by name) with `array`.
fn replace(batch: &RecordBatch, name: &str, array: ArrayRef) -> Result<RecordBatch> {
    let schema = batch.schema();
    let Ok(index) = schema.index_of(name) else {
        return Ok(batch.clone());
    };
    let mut columns = batch.columns().to_vec();
    columns[index] = array;
    let fields: Vec<_> = schema.fields().iter().cloned().collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| Error::failure(e.to_string()))
}

impl NdjsonRows {
    /// `value_format` decides what a row's value is: the `value` field for raw and
    /// string (under any `gzip+`), else the payload object.
    pub fn new(
        input: LineInput,
        value_format: &str,
        binary: BinaryText,
        batch_rows: usize,
    ) -> Result<Self> {
        let inner = value_format.trim_start_matches("gzip+");
        let value_field = matches!(inner, "raw" | "string");
        Ok(NdjsonRows {
            input,
            codec: codec(if value_field { "raw" } else { "json" })?,
            value_field,
            binary,
            batch_rows: batch_rows.max(1),
            lines: Vec::new(),
        })
    }

    /// The next batch of up to `batch_rows` rows; blank lines are skipped. A line
    /// that is not a row is an error naming the line (exit 2: the input is not NDJSON
    /// rows).
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let mut rows = Vec::new();
        self.lines.clear();
        while rows.len() < self.batch_rows {
            let Some(line) = self.input.next_line()? else {
                break;
            };
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let row = parse_row(&line, self.value_field, self.binary).map_err(|e| {
                Error::usage(format!("{} line {}: {e}", self.input.name, self.input.line))
            })?;
            self.lines.push(self.input.line);
            rows.push(row);
        }
        if rows.is_empty() {
            return Ok(None);
        }
        let records: Vec<Record> = rows.iter().map(|r| r.record.clone()).collect();
        let batch = self.codec.decode("ndjson", &records).map_err(|e| {
            Error::usage(format!(
                "{} lines {}-{}: {}",
                self.input.name,
                self.lines[0],
                self.lines[self.lines.len() - 1],
                e.message
            ))
        })?;
        // Absent cells stay null: no timestamp means "now", no partition means none.
        let timestamps: Int64Array = rows.iter().map(|r| r.timestamp).collect();
        let partitions: Int32Array = rows.iter().map(|r| r.partition).collect();
        let batch = replace(&batch, TIMESTAMP_COLUMN, Arc::new(timestamps))?;
        let batch = replace(&batch, PARTITION_COLUMN, Arc::new(partitions))?;
        debug_assert_eq!(batch.column(0).len(), rows.len());
        Ok(Some(batch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::headers::decode_headers;
    use arrow_array::cast::AsArray;

    fn rows(text: &str, format: &str) -> RecordBatch {
        let input = LineInput::for_tests(text);
        NdjsonRows::new(input, format, BinaryText::Auto, 100)
            .unwrap()
            .next_batch()
            .unwrap()
            .unwrap()
    }

    #[test]
    fn tails_text_view_comes_back_as_reserved_columns() {
        let b = rows(
            r#"{"a":1,"b":"x","__key":"k1","__timestamp":1700,"__partition":1,"__offset":9,"__headers":{"h":["1",null],"bin":{"base64":"/w=="}}}
{"a":2,"b":"y","__key":{"base64":"AP8="}}"#,
            "json",
        );
        let schema = b.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(&names[..2], &["a", "b"]);
        let keys = b.column_by_name(KEY_COLUMN).unwrap().as_binary::<i32>();
        assert_eq!(keys.value(0), b"k1");
        assert_eq!(keys.value(1), &[0, 0xff]);
        let ts = b.column_by_name(TIMESTAMP_COLUMN).unwrap();
        assert_eq!(
            ts.as_primitive::<arrow_array::types::Int64Type>().value(0),
            1700
        );
        assert!(ts.is_null(1));
        let parts = b.column_by_name(PARTITION_COLUMN).unwrap();
        assert!(parts.is_null(1));
        let cell = b.column_by_name(HEADERS_COLUMN).unwrap().as_binary::<i32>();
        let h = decode_headers(cell.value(0)).unwrap();
        assert_eq!(
            h,
            vec![
                Header::new("h", Some(b"1".to_vec())),
                Header::new("h", None),
                Header::new("bin", Some(vec![0xff])),
            ]
        );
    }

    #[test]
    fn tails_base64_view_comes_back_as_the_original_bytes_and_bad_base64_is_named() {
        let text = r#"{"value":"AP8=","__key":"aw==","__headers":{"h":["/w==",null]}}
{"value":{"base64":"YQ=="},"__key":null}"#;
        let mut r =
            NdjsonRows::new(LineInput::for_tests(text), "raw", BinaryText::Base64, 10).unwrap();
        let b = r.next_batch().unwrap().unwrap();
        let v = b.column_by_name("value").unwrap().as_binary::<i32>();
        assert_eq!(v.value(0), &[0, 0xff]);
        assert_eq!(v.value(1), b"a");
        let keys = b.column_by_name(KEY_COLUMN).unwrap().as_binary::<i32>();
        assert_eq!(keys.value(0), b"k");
        assert!(keys.is_null(1));
        let cell = b.column_by_name(HEADERS_COLUMN).unwrap().as_binary::<i32>();
        assert_eq!(
            decode_headers(cell.value(0)).unwrap(),
            vec![Header::new("h", Some(vec![0xff])), Header::new("h", None)]
        );
        // The same text read as text keeps the base64 letters: the mode is the caller's to say.
        let b = rows(r#"{"value":"AP8="}"#, "raw");
        let v = b.column_by_name("value").unwrap().as_binary::<i32>();
        assert_eq!(v.value(0), b"AP8=");
        let mut r = NdjsonRows::new(
            LineInput::for_tests("{\"value\":\"AA==\"}\n{\"value\":\"not base64!\"}\n"),
            "raw",
            BinaryText::Base64,
            10,
        )
        .unwrap();
        let e = r.next_batch().unwrap_err();
        assert!(
            e.message.contains("line 2") && e.message.contains("--binary base64"),
            "{}",
            e.message
        );
    }

    #[test]
    fn raw_values_come_from_the_value_field_and_bad_lines_are_named() {
        let b = rows("{\"value\":\"hi\"}\n\n{\"value\":null}\n", "raw");
        let v = b.column_by_name("value").unwrap().as_binary::<i32>();
        assert_eq!(v.value(0), b"hi");
        assert!(v.is_null(1));
        let mut r = NdjsonRows::new(
            LineInput::for_tests("{\"value\":\"a\"}\n[1]\n"),
            "raw",
            BinaryText::Auto,
            10,
        )
        .unwrap();
        let e = r.next_batch().unwrap_err();
        assert_eq!(e.kind, crate::ops::ErrorKind::Usage);
        assert!(e.message.contains("line 2"), "{}", e.message);
    }
}
