//! Row-wise pieces of a sink batch: the payload columns of every row as one
//! compact JSON object (the `json` and `json-schema` sinks), and the record key
//! taken from a column (`key: {column, codec}`). Both render whole columns once
//! through [`column_to_json`] — the renderer of `tail --format ndjson` — so a
//! sink writes every Arrow type the way `tail` shows it: nested values as JSON,
//! binary as base64, decimals as exact decimal text, timestamps as RFC 3339.

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::engine::columnar::codec::{self, RowEncoder};
use crate::engine::columnar::json_values::column_to_json;
use crate::engine::columnar::reserved::{is_reserved, restore_payload_field};

/// Every row's payload columns (reserved columns left out, escaped names restored)
/// as a JSON object text, columns in batch order.
pub fn payload_json_rows(batch: &RecordBatch) -> Result<Vec<String>, codec::CodecError> {
    let schema = batch.schema();
    let mut names = Vec::new();
    let mut columns = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        if is_reserved(field.name()) {
            continue;
        }
        let name = restore_payload_field(field).name().clone();
        names.push(serde_json::Value::String(name).to_string());
        columns.push(
            column_to_json(batch.column(i).as_ref(), field)
                .map_err(|e| codec::CodecError::invalid(format!("column {}: {e}", field.name())))?,
        );
    }
    Ok((0..batch.num_rows())
        .map(|row| {
            let mut text = String::from("{");
            for (k, (name, column)) in names.iter().zip(&columns).enumerate() {
                if k > 0 {
                    text.push(',');
                }
                text.push_str(name);
                text.push(':');
                text.push_str(&column[row]);
            }
            text.push('}');
            text
        })
        .collect())
}

/// A [`RowEncoder`] over rows rendered ahead of time (one batch).
pub struct Prerendered {
    pub rows: Vec<Vec<u8>>,
}

impl RowEncoder for Prerendered {
    fn encode_row(
        &self,
        _batch: &RecordBatch,
        row: usize,
    ) -> Result<Option<Vec<u8>>, codec::CodecError> {
        Ok(Some(self.rows[row].clone()))
    }
}

/// How a key column becomes record key bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCodec {
    /// UTF-8 text: a text column as is, numbers in decimal, other values as `tail` shows them
    /// (what the Java client's `StringSerializer` writes for the same text).
    String,
    /// The bytes of a binary or text column, untouched.
    Raw,
    /// The value as compact JSON.
    Json,
}

impl KeyCodec {
    pub fn parse(name: &str) -> Result<KeyCodec, String> {
        match name {
            "string" => Ok(KeyCodec::String),
            "raw" => Ok(KeyCodec::Raw),
            "json" => Ok(KeyCodec::Json),
            other => Err(format!(
                "a sink key column is written with string, raw or json, not `{other}`"
            )),
        }
    }
}

/// The key of every row from `column` (`None` for a null cell: a keyless record).
pub fn column_keys(
    batch: &RecordBatch,
    column: &str,
    codec: KeyCodec,
) -> Result<Vec<Option<Vec<u8>>>, String> {
    let schema = batch.schema();
    let (index, field) = schema.column_with_name(column).ok_or_else(|| {
        format!(
            "sink key column does not exist: {column} (columns: {})",
            schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let array = batch.column(index);
    let present = |row: usize| array.is_valid(row);
    let bytes_of = |row: usize| -> Option<Vec<u8>> {
        match array.data_type() {
            DataType::Utf8 => Some(array.as_string::<i32>().value(row).as_bytes().to_vec()),
            DataType::LargeUtf8 => Some(array.as_string::<i64>().value(row).as_bytes().to_vec()),
            DataType::Binary => Some(array.as_binary::<i32>().value(row).to_vec()),
            DataType::LargeBinary => Some(array.as_binary::<i64>().value(row).to_vec()),
            _ => None,
        }
    };
    let direct = matches!(
        array.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
    );
    match codec {
        KeyCodec::Raw if !direct => Err(format!(
            "a raw sink key needs a binary or utf8 column; {column} is {}",
            array.data_type()
        )),
        KeyCodec::Raw => Ok((0..batch.num_rows())
            .map(|r| present(r).then(|| bytes_of(r)).flatten())
            .collect()),
        KeyCodec::String if direct => Ok((0..batch.num_rows())
            .map(|r| present(r).then(|| bytes_of(r)).flatten())
            .collect()),
        KeyCodec::String | KeyCodec::Json => {
            let texts =
                column_to_json(array.as_ref(), field).map_err(|e| format!("{column}: {e}"))?;
            Ok(texts
                .into_iter()
                .enumerate()
                .map(|(r, text)| {
                    present(r).then(|| match (codec, serde_json::from_str(&text)) {
                        (KeyCodec::String, Ok(serde_json::Value::String(s))) => s.into_bytes(),
                        _ => text.into_bytes(),
                    })
                })
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{
        ArrayRef, BinaryArray, Decimal128Array, Int64Array, StringArray, StructArray,
        TimestampMillisecondArray,
    };
    use arrow_schema::{Field, Fields, Schema};

    use super::*;

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns.into_iter().map(|(_, a)| a).collect(),
        )
        .unwrap()
    }

    #[test]
    fn decimals_timestamps_structs_lists_and_binary_are_nested_json_never_double_encoded() {
        let decimal: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(1250), None])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        );
        let ts: ArrayRef = Arc::new(
            TimestampMillisecondArray::from(vec![1_700_000_000_123, 0]).with_timezone("UTC"),
        );
        let mut list = ListBuilder::new(Int64Builder::new());
        list.values().append_value(1);
        list.values().append_value(2);
        list.append(true);
        list.append(false);
        let list: ArrayRef = Arc::new(list.finish());
        let inner = StructArray::new(
            Fields::from(vec![Field::new("city", DataType::Utf8, true)]),
            vec![Arc::new(StringArray::from(vec!["Gent", "Delft"])) as ArrayRef],
            None,
        );
        let b = batch(vec![
            ("price", decimal),
            ("ts", ts),
            ("tags", list),
            ("address", Arc::new(inner)),
            (
                "blob",
                Arc::new(BinaryArray::from(vec![&b"\x00\xff"[..], b""])),
            ),
            ("__key", Arc::new(BinaryArray::from(vec![&b"k"[..], b"k"]))),
        ]);
        let rows = payload_json_rows(&b).unwrap();
        assert_eq!(
            rows[0],
            r#"{"price":"12.50","ts":"2023-11-14T22:13:20.123Z","tags":[1,2],"address":{"city":"Gent"},"blob":"AP8="}"#
        );
        assert_eq!(
            rows[1],
            r#"{"price":null,"ts":"1970-01-01T00:00:00Z","tags":null,"address":{"city":"Delft"},"blob":""}"#
        );
    }

    #[test]
    fn key_columns_become_utf8_text_raw_bytes_or_json_and_nulls_keyless() {
        let b = batch(vec![
            (
                "user",
                Arc::new(StringArray::from(vec![Some("alice"), None])) as ArrayRef,
            ),
            ("n", Arc::new(Int64Array::from(vec![7, 8]))),
            (
                "ts",
                Arc::new(TimestampMillisecondArray::from(vec![0, 1]).with_timezone("UTC")),
            ),
        ]);
        let keys = column_keys(&b, "user", KeyCodec::String).unwrap();
        assert_eq!(keys, vec![Some(b"alice".to_vec()), None]);
        assert_eq!(
            column_keys(&b, "n", KeyCodec::String).unwrap()[1],
            Some(b"8".to_vec())
        );
        assert_eq!(
            column_keys(&b, "ts", KeyCodec::String).unwrap()[0],
            Some(b"1970-01-01T00:00:00Z".to_vec())
        );
        assert_eq!(
            column_keys(&b, "user", KeyCodec::Json).unwrap()[0],
            Some(br#""alice""#.to_vec())
        );
        assert!(
            column_keys(&b, "n", KeyCodec::Raw)
                .unwrap_err()
                .contains("raw sink key")
        );
        assert!(
            column_keys(&b, "usr", KeyCodec::String)
                .unwrap_err()
                .starts_with("sink key column does not exist: usr (columns: user, n, ts)")
        );
    }
}
