//! Arrow values as JSON, for NDJSON output, table previews and the JSON sinks of `run`: binary as base64,
//! nested values (structs, lists, maps) as JSON objects and arrays, columns marked
//! `krabka.json=true` embedded as the JSON they hold (never a JSON string of JSON),
//! decimals as exact decimal text, temporal values as ISO 8601 text.

use std::fmt::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, TimeUnit};
use base64::Engine as _;

use crate::engine::columnar::reserved::JSON_KEY;

const NULL: &str = "null";

fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

fn b64(bytes: &[u8]) -> String {
    quoted(&base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn float(v: f64) -> String {
    if v.is_finite() {
        serde_json::Number::from_f64(v).map_or_else(|| quoted(&v.to_string()), |n| n.to_string())
    } else {
        quoted(&v.to_string())
    }
}

/// Every value of one column as a JSON text fragment, nulls as `null`. Objects keep
/// the column order of the schema.
/// Long because it has one arm per Arrow type: the table of how each type prints.
pub fn column_to_json(array: &dyn Array, field: &Field) -> Result<Vec<String>, String> {
    let n = array.len();
    let mut out: Vec<String> = Vec::with_capacity(n);
    let is_json = field.metadata().get(JSON_KEY).is_some_and(|v| v == "true");
    macro_rules! prim {
        ($t:ty, $conv:expr) => {{
            let a = array.as_primitive::<$t>();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    NULL.to_string()
                } else {
                    $conv(a.value(i))
                });
            }
        }};
    }
    match array.data_type() {
        DataType::Null => out.resize(n, NULL.to_string()),
        DataType::Boolean => {
            let a = array.as_boolean();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    NULL.to_string()
                } else {
                    a.value(i).to_string()
                });
            }
        }
        DataType::Int8 => prim!(Int8Type, |v: i8| v.to_string()),
        DataType::Int16 => prim!(Int16Type, |v: i16| v.to_string()),
        DataType::Int32 => prim!(Int32Type, |v: i32| v.to_string()),
        DataType::Int64 => prim!(Int64Type, |v: i64| v.to_string()),
        DataType::UInt8 => prim!(UInt8Type, |v: u8| v.to_string()),
        DataType::UInt16 => prim!(UInt16Type, |v: u16| v.to_string()),
        DataType::UInt32 => prim!(UInt32Type, |v: u32| v.to_string()),
        DataType::UInt64 => prim!(UInt64Type, |v: u64| v.to_string()),
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
                    None => NULL.to_string(),
                    Some(t) if is_json => {
                        // Re-serialise to check it and to make it one compact line.
                        let v: serde_json::Value = serde_json::from_str(t).map_err(|e| {
                            format!("column {} holds invalid JSON: {e}", field.name())
                        })?;
                        v.to_string()
                    }
                    Some(t) => quoted(t),
                });
            }
        }
        DataType::Binary => array
            .as_binary::<i32>()
            .iter()
            .for_each(|v| out.push(v.map_or_else(|| NULL.to_string(), b64))),
        DataType::LargeBinary => array
            .as_binary::<i64>()
            .iter()
            .for_each(|v| out.push(v.map_or_else(|| NULL.to_string(), b64))),
        DataType::BinaryView => array
            .as_binary_view()
            .iter()
            .for_each(|v| out.push(v.map_or_else(|| NULL.to_string(), b64))),
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    NULL.to_string()
                } else {
                    b64(a.value(i))
                });
            }
        }
        DataType::Struct(fields) => {
            let a = array.as_struct();
            let children: Vec<Vec<String>> = fields
                .iter()
                .zip(a.columns())
                .map(|(f, c)| column_to_json(c.as_ref(), f))
                .collect::<Result<_, _>>()?;
            let names: Vec<String> = fields.iter().map(|f| quoted(f.name())).collect();
            for i in 0..n {
                if a.is_null(i) {
                    out.push(NULL.to_string());
                    continue;
                }
                out.push(object(
                    names.iter().zip(children.iter().map(|c| c[i].as_str())),
                ));
            }
        }
        DataType::List(item) | DataType::LargeList(item) => {
            let (values, offsets): (Vec<String>, Vec<usize>) = match array.data_type() {
                DataType::List(_) => {
                    let a = array.as_list::<i32>();
                    (
                        column_to_json(a.values().as_ref(), item)?,
                        a.value_offsets().iter().map(|o| *o as usize).collect(),
                    )
                }
                _ => {
                    let a = array.as_list::<i64>();
                    (
                        column_to_json(a.values().as_ref(), item)?,
                        a.value_offsets().iter().map(|o| *o as usize).collect(),
                    )
                }
            };
            for i in 0..n {
                out.push(if array.is_null(i) {
                    NULL.to_string()
                } else {
                    format!("[{}]", values[offsets[i]..offsets[i + 1]].join(","))
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
                    out.push(NULL.to_string());
                    continue;
                }
                let range = offsets[i] as usize..offsets[i + 1] as usize;
                let keys: Vec<String> = keys[range.clone()]
                    .iter()
                    .map(|k| {
                        if k.starts_with('"') {
                            k.clone()
                        } else {
                            quoted(k)
                        }
                    })
                    .collect();
                out.push(object(
                    keys.iter().zip(values[range].iter().map(String::as_str)),
                ));
            }
        }
        DataType::Timestamp(unit, tz) => {
            let ints = arrow_cast::cast(array, &DataType::Int64).map_err(|e| e.to_string())?;
            let a = ints.as_primitive::<Int64Type>();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    NULL.to_string()
                } else {
                    quoted(&timestamp_text(a.value(i), *unit, tz.is_some()))
                });
            }
        }
        _ => {
            // Dates, times, decimals and anything else: the Arrow display text.
            let fmt = ArrayFormatter::try_new(array, &FormatOptions::default())
                .map_err(|e| format!("column {}: {e}", field.name()))?;
            for i in 0..n {
                out.push(if array.is_null(i) {
                    NULL.to_string()
                } else {
                    quoted(&fmt.value(i).to_string())
                });
            }
        }
    }
    Ok(out)
}

/// ISO 8601 text of a timestamp: with `Z` when the column has a zone (instants), without otherwise.
fn timestamp_text(v: i64, unit: TimeUnit, zoned: bool) -> String {
    let t = match unit {
        TimeUnit::Second => chrono::DateTime::from_timestamp(v, 0),
        TimeUnit::Millisecond => chrono::DateTime::from_timestamp_millis(v),
        TimeUnit::Microsecond => chrono::DateTime::from_timestamp_micros(v),
        TimeUnit::Nanosecond => Some(chrono::DateTime::from_timestamp_nanos(v)),
    };
    match t {
        Some(t) if zoned => t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        Some(t) => t.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f").to_string(),
        None => v.to_string(),
    }
}

fn object<'a>(pairs: impl Iterator<Item = (&'a String, &'a str)>) -> String {
    let mut s = String::from("{");
    for (k, (name, value)) in pairs.enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{name}:{value}");
    }
    s.push('}');
    s
}

/// Every row of a batch as one compact JSON object, columns in schema order.
pub fn batch_to_json_lines(batch: &RecordBatch) -> Result<Vec<String>, String> {
    let schema = batch.schema();
    let columns: Vec<Vec<String>> = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| column_to_json(c.as_ref(), f))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = schema.fields().iter().map(|f| quoted(f.name())).collect();
    Ok((0..batch.num_rows())
        .map(|i| object(names.iter().zip(columns.iter().map(|c| c[i].as_str()))))
        .collect())
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
        let rows = batch_to_json_lines(&batch).unwrap();
        assert_eq!(
            rows[0],
            r#"{"doc":{"a":[1,2]},"text":"{\"a\":1}","raw":"AP8="}"#
        );
    }
}
