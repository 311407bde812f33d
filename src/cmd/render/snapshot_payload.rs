//! Turning decoded snapshot payloads into JSON values and human text (D12):
//! Go GroupBy state as rows of parts and aggregates, join state as its Arrow
//! batches (schema and rows, in a compact rendering of our own: arrow's pretty
//! printer is not among the dependencies), Rust byte stores as key/value, a
//! `u64` counter, and everything else as hex.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use serde_json::{Value, json};

use crate::engine::columnar::snapshot::groupby::{GroupByState, NO_STREAM_TIME};
use crate::engine::columnar::snapshot::join::{JoinState, TimedBatch};
use crate::engine::columnar::snapshot::payload::Payload;
use crate::engine::columnar::snapshot::tagged::TaggedValue;

/// Human output shows at most this many bytes of an opaque value as hex.
pub const HUMAN_HEX_LIMIT: usize = 64;

/// A tagged value in the shape of the golden vectors: `{"t": "int", "v": 5}`.
pub fn tagged_json(value: &TaggedValue) -> Value {
    match value {
        TaggedValue::Null => json!({"t": "null"}),
        TaggedValue::Bool(b) => json!({"t": "bool", "v": b}),
        TaggedValue::String(s) => json!({"t": "string", "v": s}),
        TaggedValue::Bytes(b) => json!({"t": "bytes", "hex": hex::encode(b)}),
        TaggedValue::Int(i) => json!({"t": "int", "v": i}),
        TaggedValue::Uint64(u) => json!({"t": "uint64", "v": u}),
        TaggedValue::Float32(f) => json!({"t": "float32", "v": float_json(f64::from(*f))}),
        TaggedValue::Float64(f) => json!({"t": "float64", "v": float_json(*f)}),
        TaggedValue::BigInt(text) => json!({"t": "bigint", "v": text}),
        TaggedValue::Rational { num, den } => json!({"t": "rational", "num": num, "den": den}),
        TaggedValue::List(items) => {
            json!({"t": "list", "items": items.iter().map(tagged_json).collect::<Vec<_>>()})
        }
        TaggedValue::Map(entries) => json!({"t": "map", "entries": entries
            .iter()
            .map(|(k, v)| json!([k, tagged_json(v)]))
            .collect::<Vec<_>>()}),
    }
}

/// JSON has no NaN or infinities: those are written as strings.
fn float_json(f: f64) -> Value {
    if f.is_finite() {
        json!(f)
    } else {
        json!(f.to_string())
    }
}

/// The JSON of one entry's payload, by kind.
pub fn payload_json(payload: &Payload, bytes: &[u8]) -> Value {
    match payload {
        Payload::Empty => json!({}),
        Payload::GroupBy(state) => group_by_json(state),
        Payload::Join(state) => join_json(state),
        Payload::ByteStore(store) => json!({"entries": store
            .entries
            .iter()
            .map(|e| json!({
                "key_hex": hex::encode(&e.key),
                "key_text": std::str::from_utf8(&e.key).ok(),
                "value_hex": hex::encode(&e.value),
            }))
            .collect::<Vec<_>>()}),
        Payload::Counter(n) => json!({"value": n}),
        Payload::Opaque => json!({"hex": hex::encode(bytes)}),
    }
}

fn stream_time_json(stream_time: i64) -> Value {
    if stream_time == NO_STREAM_TIME {
        Value::Null
    } else {
        json!(stream_time)
    }
}

fn group_by_json(state: &GroupByState) -> Value {
    json!({
        "stream_time": stream_time_json(state.stream_time),
        "groups": state.groups.iter().map(|g| json!({
            "parts": g.parts.iter().map(tagged_json).collect::<Vec<_>>(),
            "aggregates": g.aggregates.iter().map(tagged_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn join_json(state: &JoinState) -> Value {
    let side = |batches: &[TimedBatch]| -> Vec<Value> {
        batches
            .iter()
            .map(|b| {
                let mut v = json!({"max_timestamp": b.max_timestamp, "ipc_bytes": b.ipc.len()});
                match b.record_batches() {
                    Ok((schema, batches)) => {
                        v["schema"] = schema_json(&schema);
                        v["rows"] = Value::Array(batches.iter().flat_map(batch_rows).collect());
                    }
                    Err(e) => v["error"] = json!(e.to_string()),
                }
                v
            })
            .collect()
    };
    json!({
        "stream_time": stream_time_json(state.stream_time),
        "left": side(&state.left),
        "right": side(&state.right),
    })
}

fn schema_json(schema: &SchemaRef) -> Value {
    Value::Array(
        schema
            .fields()
            .iter()
            .map(|f| json!({"name": f.name(), "type": f.data_type().to_string(), "nullable": f.is_nullable()}))
            .collect(),
    )
}

fn batch_rows(batch: &RecordBatch) -> Vec<Value> {
    (0..batch.num_rows())
        .map(|row| {
            Value::Array(
                batch
                    .columns()
                    .iter()
                    .map(|c| cell(c.as_ref(), row))
                    .collect(),
            )
        })
        .collect()
}

/// One Arrow value as JSON: numbers and text as themselves, bytes as hex,
/// decimals as their decimal text, nested types nested; anything rarer as its type name.
pub fn cell(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    macro_rules! prim {
        ($t:ty) => {
            json!(array.as_primitive::<$t>().value(row))
        };
    }
    match array.data_type() {
        DataType::Boolean => json!(array.as_boolean().value(row)),
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => float_json(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => float_json(array.as_primitive::<Float64Type>().value(row)),
        DataType::Timestamp(unit, _) => {
            let value = match unit {
                arrow_schema::TimeUnit::Second => {
                    array.as_primitive::<TimestampSecondType>().value(row)
                }
                arrow_schema::TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                arrow_schema::TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                arrow_schema::TimeUnit::Nanosecond => {
                    array.as_primitive::<TimestampNanosecondType>().value(row)
                }
            };
            json!(value)
        }
        DataType::Date32 => prim!(Date32Type),
        DataType::Date64 => prim!(Date64Type),
        DataType::Decimal128(precision, scale) => json!(Decimal128Type::format_decimal(
            array.as_primitive::<Decimal128Type>().value(row),
            *precision,
            *scale
        )),
        DataType::Utf8 => json!(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => json!(array.as_string::<i64>().value(row)),
        DataType::Utf8View => json!(array.as_string_view().value(row)),
        DataType::Binary => json!(hex::encode(array.as_binary::<i32>().value(row))),
        DataType::LargeBinary => json!(hex::encode(array.as_binary::<i64>().value(row))),
        DataType::BinaryView => json!(hex::encode(array.as_binary_view().value(row))),
        DataType::FixedSizeBinary(_) => json!(hex::encode(array.as_fixed_size_binary().value(row))),
        DataType::List(_) => list_json(array.as_list::<i32>().value(row).as_ref()),
        DataType::LargeList(_) => list_json(array.as_list::<i64>().value(row).as_ref()),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            Value::Object(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| (f.name().clone(), cell(c.as_ref(), row)))
                    .collect(),
            )
        }
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            cell(dict.values().as_ref(), key)
        }
        other => json!(format!("<{other}>")),
    }
}

fn list_json(values: &dyn Array) -> Value {
    Value::Array((0..values.len()).map(|i| cell(values, i)).collect())
}

/// A JSON cell as table text: strings bare, everything else as JSON.
pub fn cell_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Bytes as hex, cut to [`HUMAN_HEX_LIMIT`] with the total size when longer.
pub fn short_hex(bytes: &[u8]) -> String {
    if bytes.len() <= HUMAN_HEX_LIMIT {
        hex::encode(bytes)
    } else {
        format!(
            "{}… ({} bytes)",
            hex::encode(&bytes[..HUMAN_HEX_LIMIT]),
            bytes.len()
        )
    }
}

/// Bytes as text when they are printable UTF-8, else hex.
pub fn text_or_hex(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => format!("{s:?}"),
        _ => format!("0x{}", short_hex(bytes)),
    }
}

/// The human rendering of one entry's payload (lines, without a trailing newline).
pub fn payload_human(payload: &Payload, bytes: &[u8]) -> String {
    match payload {
        Payload::Empty => "(empty: a stateless node)".to_owned(),
        Payload::Counter(n) => format!("u64 counter = {n}"),
        Payload::Opaque => format!("hex {}", short_hex(bytes)),
        Payload::ByteStore(store) => {
            let mut t = crate::cmd::output::table(&["key", "value"]);
            for e in &store.entries {
                t.add_row(vec![text_or_hex(&e.key), text_or_hex(&e.value)]);
            }
            format!("byte store, {} keys\n{t}", store.entries.len())
        }
        Payload::GroupBy(state) => {
            let mut t = crate::cmd::output::table(&["parts", "aggregates"]);
            for g in &state.groups {
                let join = |values: &[TaggedValue]| {
                    values
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                t.add_row(vec![join(&g.parts), join(&g.aggregates)]);
            }
            format!(
                "groupBy, stream time {}, {} groups\n{t}",
                stream_time_text(state.stream_time),
                state.groups.len()
            )
        }
        Payload::Join(state) => {
            let mut out = format!("join, stream time {}", stream_time_text(state.stream_time));
            for (side, batches) in [("left", &state.left), ("right", &state.right)] {
                out.push_str(&format!("\n{side}: {} batches", batches.len()));
                for (i, b) in batches.iter().enumerate() {
                    out.push_str(&format!(
                        "\n{side}[{i}] max timestamp {}, {} IPC bytes",
                        b.max_timestamp,
                        b.ipc.len()
                    ));
                    match b.record_batches() {
                        Ok((schema, batches)) => {
                            let headers: Vec<String> = schema
                                .fields()
                                .iter()
                                .map(|f| format!("{}: {}", f.name(), f.data_type()))
                                .collect();
                            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
                            let mut t = crate::cmd::output::table(&headers);
                            for row in batches.iter().flat_map(batch_rows) {
                                if let Value::Array(cells) = row {
                                    t.add_row(cells.iter().map(cell_text).collect::<Vec<_>>());
                                }
                            }
                            out.push_str(&format!("\n{t}"));
                        }
                        Err(e) => out.push_str(&format!("\n(cannot decode the Arrow batch: {e})")),
                    }
                }
            }
            out
        }
    }
}

fn stream_time_text(stream_time: i64) -> String {
    if stream_time == NO_STREAM_TIME {
        "none".to_owned()
    } else {
        stream_time.to_string()
    }
}
