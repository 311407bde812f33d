//! Arrow values as JSON, for NDJSON output and table previews: binary as base64,
//! nested values (structs, lists, maps) as JSON objects and arrays, columns marked
//! `krabka.json=true` embedded as the JSON they hold (never a JSON string of JSON),
//! decimals as exact decimal text, temporal values as ISO 8601 text.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field};
use base64::Engine as _;
use serde_json::{Map, Number, Value};

use crate::engine::columnar::reserved::JSON_KEY;

fn b64(bytes: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn float(v: f64) -> Value {
    Number::from_f64(v).map_or_else(|| Value::String(v.to_string()), Value::Number)
}

/// Every value of one column as JSON, nulls as `null`.
pub fn column_to_json(array: &dyn Array, field: &Field) -> Result<Vec<Value>, String> {
    let n = array.len();
    let mut out = Vec::with_capacity(n);
    let is_json = field.metadata().get(JSON_KEY).is_some_and(|v| v == "true");
    macro_rules! prim {
        ($t:ty, $conv:expr) => {{
            let a = array.as_primitive::<$t>();
            for i in 0..n {
                out.push(if a.is_null(i) { Value::Null } else { $conv(a.value(i)) });
            }
        }};
    }
    match array.data_type() {
        DataType::Null => out.resize(n, Value::Null),
        DataType::Boolean => {
            let a = array.as_boolean();
            for i in 0..n {
                out.push(if a.is_null(i) { Value::Null } else { Value::Bool(a.value(i)) });
            }
        }
        DataType::Int8 => prim!(Int8Type, |v: i8| Value::from(v)),
        DataType::Int16 => prim!(Int16Type, |v: i16| Value::from(v)),
        DataType::Int32 => prim!(Int32Type, |v: i32| Value::from(v)),
        DataType::Int64 => prim!(Int64Type, |v: i64| Value::from(v)),
        DataType::UInt8 => prim!(UInt8Type, |v: u8| Value::from(v)),
        DataType::UInt16 => prim!(UInt16Type, |v: u16| Value::from(v)),
        DataType::UInt32 => prim!(UInt32Type, |v: u32| Value::from(v)),
        DataType::UInt64 => prim!(UInt64Type, |v: u64| Value::from(v)),
        DataType::Float32 => prim!(Float32Type, |v: f32| float(f64::from(v))),
        DataType::Float64 => prim!(Float64Type, float),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let texts: Vec<Option<&str>> = match array.data_type() {
                DataType::Utf8 => array.as_string::<i32>().iter().collect(),
                DataType::LargeUtf8 => array.as_string::<i64>().iter().collect(),
                _ => array.as_string_view().iter().collect(),
            };
            for t in texts {
                out.push(match t {
                    None => Value::Null,
                    Some(t) if is_json => serde_json::from_str(t)
                        .map_err(|e| format!("column {} holds invalid JSON: {e}", field.name()))?,
                    Some(t) => Value::String(t.to_string()),
                });
            }
        }
        DataType::Binary => array
            .as_binary::<i32>()
            .iter()
            .for_each(|v| out.push(v.map_or(Value::Null, b64))),
        DataType::LargeBinary => array
            .as_binary::<i64>()
            .iter()
            .for_each(|v| out.push(v.map_or(Value::Null, b64))),
        DataType::BinaryView => array
            .as_binary_view()
            .iter()
            .for_each(|v| out.push(v.map_or(Value::Null, b64))),
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            for i in 0..n {
                out.push(if a.is_null(i) { Value::Null } else { b64(a.value(i)) });
            }
        }
        DataType::Struct(fields) => {
            let a = array.as_struct();
            let children: Vec<Vec<Value>> = fields
                .iter()
                .zip(a.columns())
                .map(|(f, c)| column_to_json(c.as_ref(), f))
                .collect::<Result<_, _>>()?;
            for i in 0..n {
                if a.is_null(i) {
                    out.push(Value::Null);
                    continue;
                }
                let mut map = Map::with_capacity(fields.len());
                for (f, c) in fields.iter().zip(&children) {
                    map.insert(f.name().clone(), c[i].clone());
                }
                out.push(Value::Object(map));
            }
        }
        DataType::List(item) => {
            let a = array.as_list::<i32>();
            let values = column_to_json(a.values().as_ref(), item)?;
            let offsets = a.value_offsets();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Array(values[offsets[i] as usize..offsets[i + 1] as usize].to_vec())
                });
            }
        }
        DataType::LargeList(item) => {
            let a = array.as_list::<i64>();
            let values = column_to_json(a.values().as_ref(), item)?;
            let offsets = a.value_offsets();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Array(values[offsets[i] as usize..offsets[i + 1] as usize].to_vec())
                });
            }
        }
        DataType::Map(entries, _) => {
            let a = array.as_map();
            let DataType::Struct(kv) = entries.data_type() else {
                return Err("map entries are not a struct".into());
            };
            let keys = column_to_json(a.keys().as_ref(), &kv[0])?;
            let values = column_to_json(a.values().as_ref(), &kv[1])?;
            let offsets = a.value_offsets();
            for i in 0..n {
                if a.is_null(i) {
                    out.push(Value::Null);
                    continue;
                }
                let mut map = Map::new();
                for j in offsets[i] as usize..offsets[i + 1] as usize {
                    let k = match &keys[j] {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    map.insert(k, values[j].clone());
                }
                out.push(Value::Object(map));
            }
        }
        _ => {
            // Temporal, decimal and anything else: the Arrow display text.
            let fmt = ArrayFormatter::try_new(array, &FormatOptions::default())
                .map_err(|e| format!("column {}: {e}", field.name()))?;
            for i in 0..n {
                out.push(if array.is_null(i) {
                    Value::Null
                } else {
                    Value::String(fmt.value(i).to_string())
                });
            }
        }
    }
    Ok(out)
}

/// Every row of a batch as a JSON object, columns in schema order.
pub fn batch_to_json_rows(batch: &RecordBatch) -> Result<Vec<Map<String, Value>>, String> {
    let schema = batch.schema();
    let columns: Vec<Vec<Value>> = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| column_to_json(c.as_ref(), f))
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let mut map = Map::with_capacity(columns.len());
        for (f, c) in schema.fields().iter().zip(&columns) {
            map.insert(f.name().clone(), c[i].clone());
        }
        rows.push(map);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{BinaryArray, StringArray};
    use arrow_schema::Schema;

    use super::*;

    #[test]
    fn json_text_columns_are_embedded_and_binary_is_base64() {
        let schema = Schema::new(vec![
            Field::new("doc", DataType::Utf8, true)
                .with_metadata(arrow_schema::Metadata::new().with(JSON_KEY, "true")),
            Field::new("text", DataType::Utf8, true),
            Field::new("raw", DataType::Binary, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(StringArray::from(vec![r#"{"a":[1,2]}"#])),
                Arc::new(StringArray::from(vec![r#"{"a":1}"#])),
                Arc::new(BinaryArray::from(vec![&b"\x00\xff"[..]])),
            ],
        )
        .unwrap();
        let rows = batch_to_json_rows(&batch).unwrap();
        assert_eq!(
            Value::Object(rows[0].clone()).to_string(),
            r#"{"doc":{"a":[1,2]},"text":"{\"a\":1}","raw":"AP8="}"#
        );
    }
}
