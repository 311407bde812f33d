//! Arrow → Protobuf for `protobuf` sinks: the proto3 writer schema of a sink
//! batch's payload columns — the inverse of the tail mapping in
//! [`proto_arrow`](super::proto_arrow), reserved columns left out and escaped
//! names restored — and each row's message body, built as a prost-reflect
//! `DynamicMessage` from the compiled schema.
//!
//! A nullable scalar column is an `optional` field (proto3 presence, which the
//! mapping reads back as a nullable column of the same type); a column read from
//! a wrapper (`krabka.proto.wrapper`) goes back out as that wrapper. Timestamps
//! of any unit are `google.protobuf.Timestamp` (seconds and nanos by floor
//! division, as Go writes them); JSON-text columns (`krabka.json`) are
//! `google.protobuf.Value` (or the `Struct` / `ListValue` they were read from);
//! structs are messages named `<parent>_<column>`, defined after the top message
//! so that its message-index path is `[0]`; lists are `repeated`, maps `map<K, V>`.
//! Decimals, dates and times have no Protobuf scalar: they are written as the
//! text the JSON sinks write (`"12.50"`, `"2024-05-01"`). Shapes proto3 cannot
//! declare (a list of lists, a map of lists, map keys that are not integers,
//! text or booleans) are refused when the schema is derived; a null list item or
//! map value, which a repeated field cannot hold, fails its row.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, TimeUnit};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, Value};

use crate::engine::columnar::json_values::column_to_json;
use crate::engine::columnar::reserved::JSON_KEY;
use crate::engine::columnarschema::avro_writer::payload_fields;
use crate::engine::columnarschema::proto_arrow::{JSON_MESSAGES, WRAPPERS};
use crate::engine::columnarschema::protobuf::columns::WRAPPER_KEY;

const MESSAGE_KEY: &str = "krabka.proto.message";
pub(crate) const TIMESTAMP: &str = "google.protobuf.Timestamp";

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The proto3 file text of a sink batch's payload columns: the top message is
/// `message` (a valid Protobuf name, e.g. from `avro_name(topic)`), first in the file.
pub fn proto_schema_of(schema: &arrow_schema::Schema, message: &str) -> Result<String, String> {
    let fields: Vec<Field> = payload_fields(schema).into_iter().map(|(_, f)| f).collect();
    let mut w = ProtoText::default();
    w.message(message, &fields)?;
    let mut out = String::from("syntax = \"proto3\";\n\n");
    for import in &w.imports {
        let _ = writeln!(out, "import \"{import}\";");
    }
    if !w.imports.is_empty() {
        out.push('\n');
    }
    out.push_str(&w.messages.join("\n"));
    Ok(out)
}

#[derive(Default)]
struct ProtoText {
    /// Message definitions in file order (the top message first).
    messages: Vec<String>,
    names: Vec<String>,
    imports: BTreeSet<&'static str>,
}

impl ProtoText {
    fn message(&mut self, name: &str, fields: &[Field]) -> Result<(), String> {
        if self.names.iter().any(|n| n == name) {
            return Err(format!("Protobuf message name {name} is used twice"));
        }
        self.names.push(name.to_owned());
        let slot = self.messages.len();
        self.messages.push(String::new());
        let mut text = format!("message {name} {{\n");
        for (i, f) in fields.iter().enumerate() {
            if !valid_name(f.name()) {
                return Err(format!(
                    "column `{}` is not a valid Protobuf field name (letters, digits and _, not starting with a digit): rename it with select or AS",
                    f.name()
                ));
            }
            let line = self.field(f, &format!("{name}_{}", f.name()))?;
            let _ = writeln!(text, "  {line} {} = {};", f.name(), i + 1);
        }
        text.push_str("}\n");
        self.messages[slot] = text;
        Ok(())
    }

    /// The declaration of a field before its name: `optional int64`, `repeated string`, …
    fn field(&mut self, f: &Field, path: &str) -> Result<String, String> {
        match f.data_type() {
            DataType::List(item) | DataType::LargeList(item) => {
                let (ty, _) = self.single(item, &format!("{path}_item"), f.name())?;
                Ok(format!("repeated {ty}"))
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(format!(
                        "column `{}`: map entries are not a struct",
                        f.name()
                    ));
                };
                let key = match kv[0].data_type() {
                    DataType::Utf8 | DataType::LargeUtf8 => "string",
                    DataType::Boolean => "bool",
                    DataType::Int8 | DataType::Int16 | DataType::Int32 => "int32",
                    DataType::UInt8 | DataType::UInt16 => "int32",
                    DataType::Int64 | DataType::UInt32 => "int64",
                    DataType::UInt64 => "uint64",
                    other => {
                        return Err(format!(
                            "column `{}`: Protobuf map keys are integers, text or booleans, not {other}",
                            f.name()
                        ));
                    }
                };
                let (value, _) = self.single(&kv[1], &format!("{path}_value"), f.name())?;
                Ok(format!("map<{key}, {value}>"))
            }
            _ => {
                let (ty, message) = self.single(f, path, f.name())?;
                Ok(if f.is_nullable() && !message {
                    format!("optional {ty}")
                } else {
                    ty
                })
            }
        }
    }

    /// A singular type: its name and whether it is a message (which has presence).
    fn single(&mut self, f: &Field, path: &str, column: &str) -> Result<(String, bool), String> {
        let meta = |k: &str| f.metadata().get(k).map(String::as_str);
        if let Some(wrapper) = meta(WRAPPER_KEY).filter(|w| WRAPPERS.contains(w)) {
            self.imports.insert("google/protobuf/wrappers.proto");
            return Ok((wrapper.to_owned(), true));
        }
        if meta(JSON_KEY) == Some("true") {
            let message = meta(MESSAGE_KEY)
                .filter(|m| JSON_MESSAGES.contains(m))
                .unwrap_or(JSON_MESSAGES[0]);
            self.imports.insert("google/protobuf/struct.proto");
            return Ok((message.to_owned(), true));
        }
        let scalar = match f.data_type() {
            DataType::Boolean => "bool",
            DataType::Int8 | DataType::Int16 | DataType::Int32 => "int32",
            DataType::UInt8 | DataType::UInt16 => "int32",
            DataType::Int64 | DataType::UInt32 => "int64",
            DataType::UInt64 => "uint64",
            DataType::Float16 | DataType::Float32 => "float",
            DataType::Float64 => "double",
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string",
            DataType::Decimal128(..)
            | DataType::Decimal256(..)
            | DataType::Date32
            | DataType::Date64
            | DataType::Time32(_)
            | DataType::Time64(_) => "string",
            DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_) => "bytes",
            DataType::Timestamp(..) => {
                self.imports.insert("google/protobuf/timestamp.proto");
                return Ok((TIMESTAMP.to_owned(), true));
            }
            DataType::Struct(children) => {
                let children: Vec<Field> = children.iter().map(|c| c.as_ref().clone()).collect();
                self.message(path, &children)?;
                return Ok((path.to_owned(), true));
            }
            DataType::List(_) | DataType::LargeList(_) | DataType::Map(..) => {
                return Err(format!(
                    "column `{column}` nests a list or map directly in a list or map, which Protobuf cannot declare: wrap the inner one in a struct"
                ));
            }
            other => {
                return Err(format!(
                    "column `{column}` has type {other}, which a Protobuf sink cannot write"
                ));
            }
        };
        Ok((scalar.to_owned(), false))
    }
}

/// Writes the Protobuf bodies of a batch's payload columns, one per row:
/// `columns` pairs each column index with the field it is written as, in the
/// order of `message`'s fields (see [`proto_schema_of`]).
pub fn proto_messages(
    batch: &RecordBatch,
    columns: &[(usize, Field)],
    message: &MessageDescriptor,
) -> Result<Vec<DynamicMessage>, String> {
    let fields: Vec<FieldDescriptor> = message.fields().collect();
    if fields.len() != columns.len() {
        return Err(format!(
            "Protobuf message {} has {} fields for {} columns",
            message.full_name(),
            fields.len(),
            columns.len()
        ));
    }
    let arrays: Vec<(&ArrayRef, &Field, &FieldDescriptor)> = columns
        .iter()
        .zip(&fields)
        .map(|((i, f), fd)| (batch.column(*i), f, fd))
        .collect();
    (0..batch.num_rows())
        .map(|row| {
            let mut msg = DynamicMessage::new(message.clone());
            for (array, field, fd) in &arrays {
                set_field(&mut msg, array.as_ref(), field, fd, row)
                    .map_err(|e| format!("row {row}: {e}"))?;
            }
            Ok(msg)
        })
        .collect()
}

/// Writes the Protobuf bodies of a batch's columns, one per row, into a message
/// of a schema file: each column sets the field of its name; columns the
/// message does not name are left out, fields no column holds are left unset.
pub fn proto_messages_named(
    batch: &RecordBatch,
    columns: &[(usize, Field)],
    message: &MessageDescriptor,
) -> Result<Vec<DynamicMessage>, String> {
    let arrays: Vec<(&ArrayRef, &Field, FieldDescriptor)> = columns
        .iter()
        .filter_map(|(i, f)| {
            message
                .get_field_by_name(f.name())
                .map(|fd| (batch.column(*i), f, fd))
        })
        .collect();
    (0..batch.num_rows())
        .map(|row| {
            let mut msg = DynamicMessage::new(message.clone());
            for (array, field, fd) in &arrays {
                set_field(&mut msg, array.as_ref(), field, fd, row)
                    .map_err(|e| format!("row {row}: {e}"))?;
            }
            Ok(msg)
        })
        .collect()
}

/// Sets one field of `msg` from `array[row]`; a null leaves it unset (absent, or an
/// empty list or map).
fn set_field(
    msg: &mut DynamicMessage,
    array: &dyn Array,
    f: &Field,
    fd: &FieldDescriptor,
    row: usize,
) -> Result<(), String> {
    if array.is_null(row) {
        return Ok(());
    }
    let value = if fd.is_list() {
        let (values, range) = list_range(array, row)?;
        let item = match f.data_type() {
            DataType::List(item) | DataType::LargeList(item) => item.as_ref(),
            _ => return Err(format!("column {} is not a list", f.name())),
        };
        let mut items = Vec::with_capacity(range.len());
        for i in range {
            if values.is_null(i) {
                return Err(format!(
                    "column {}: a null list item, which a repeated Protobuf field cannot hold",
                    f.name()
                ));
            }
            items.push(single(values.as_ref(), item, &fd.kind(), i)?);
        }
        Value::List(items)
    } else if fd.is_map() {
        let Kind::Message(entry) = fd.kind() else {
            return Err(format!("field {} is a map without entries", fd.name()));
        };
        let DataType::Map(entries, _) = f.data_type() else {
            return Err(format!("column {} is not a map", f.name()));
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(format!("column {}: map entries are not a struct", f.name()));
        };
        let map = array.as_map();
        let offsets = map.value_offsets();
        let key_kind = entry.map_entry_key_field().kind();
        let value_kind = entry.map_entry_value_field().kind();
        let mut out = std::collections::HashMap::new();
        for i in offsets[row] as usize..offsets[row + 1] as usize {
            if map.values().is_null(i) {
                return Err(format!(
                    "column {}: a null map value, which a Protobuf map cannot hold",
                    f.name()
                ));
            }
            let key = map_key(single(map.keys().as_ref(), &kv[0], &key_kind, i)?)?;
            out.insert(key, single(map.values().as_ref(), &kv[1], &value_kind, i)?);
        }
        Value::Map(out)
    } else {
        single(array, f, &fd.kind(), row)?
    };
    msg.try_set_field(fd, value)
        .map_err(|e| format!("column {}: {e}", f.name()))
}

fn list_range(array: &dyn Array, row: usize) -> Result<(ArrayRef, std::ops::Range<usize>), String> {
    Ok(match array.data_type() {
        DataType::List(_) => {
            let a = array.as_list::<i32>();
            let o = a.value_offsets();
            (a.values().clone(), o[row] as usize..o[row + 1] as usize)
        }
        DataType::LargeList(_) => {
            let a = array.as_list::<i64>();
            let o = a.value_offsets();
            (a.values().clone(), o[row] as usize..o[row + 1] as usize)
        }
        other => return Err(format!("a {other} column is not a list")),
    })
}

fn map_key(v: Value) -> Result<MapKey, String> {
    Ok(match v {
        Value::Bool(b) => MapKey::Bool(b),
        Value::I32(n) => MapKey::I32(n),
        Value::I64(n) => MapKey::I64(n),
        Value::U32(n) => MapKey::U32(n),
        Value::U64(n) => MapKey::U64(n),
        Value::String(s) => MapKey::String(s),
        other => return Err(format!("{other:?} is not a valid Protobuf map key")),
    })
}

/// Any integer cell, widened.
fn integer(array: &dyn Array, row: usize) -> Option<i128> {
    macro_rules! at {
        ($t:ty) => {
            i128::from(array.as_primitive::<$t>().value(row))
        };
    }
    Some(match array.data_type() {
        DataType::Int8 => at!(Int8Type),
        DataType::Int16 => at!(Int16Type),
        DataType::Int32 => at!(Int32Type),
        DataType::Int64 => at!(Int64Type),
        DataType::UInt8 => at!(UInt8Type),
        DataType::UInt16 => at!(UInt16Type),
        DataType::UInt32 => at!(UInt32Type),
        DataType::UInt64 => at!(UInt64Type),
        _ => return None,
    })
}

/// The text the JSON sinks write for a cell (a string cell unquoted).
fn text(array: &dyn Array, f: &Field, row: usize) -> Result<String, String> {
    let rendered = column_to_json(array.slice(row, 1).as_ref(), f)?;
    let json = rendered.into_iter().next().unwrap_or_default();
    Ok(match serde_json::from_str(&json) {
        Ok(serde_json::Value::String(s)) => s,
        _ => json,
    })
}

/// One non-null cell as a value of `kind`.
/// Long because it has one arm per Protobuf kind and the Arrow types each accepts.
fn single(array: &dyn Array, f: &Field, kind: &Kind, row: usize) -> Result<Value, String> {
    let name = f.name();
    let overflow = |v: i128, ty: &str| format!("column {name}: {v} does not fit a Protobuf {ty}");
    let mismatch = || {
        format!(
            "column {name}: a {} column cannot be written as Protobuf {kind:?}",
            array.data_type()
        )
    };
    Ok(match kind {
        Kind::Message(m) if m.full_name() == TIMESTAMP => {
            let (v, per_second) = match array.data_type() {
                DataType::Timestamp(TimeUnit::Second, _) => {
                    (array.as_primitive::<TimestampSecondType>().value(row), 1)
                }
                DataType::Timestamp(TimeUnit::Millisecond, _) => (
                    array.as_primitive::<TimestampMillisecondType>().value(row),
                    1_000,
                ),
                DataType::Timestamp(TimeUnit::Microsecond, _) => (
                    array.as_primitive::<TimestampMicrosecondType>().value(row),
                    1_000_000,
                ),
                DataType::Timestamp(TimeUnit::Nanosecond, _) => (
                    array.as_primitive::<TimestampNanosecondType>().value(row),
                    1_000_000_000,
                ),
                _ => return Err(mismatch()),
            };
            let mut ts = DynamicMessage::new(m.clone());
            ts.set_field_by_name("seconds", Value::I64(v.div_euclid(per_second)));
            let nanos = v.rem_euclid(per_second) * (1_000_000_000 / per_second);
            ts.set_field_by_name("nanos", Value::I32(nanos as i32));
            Value::Message(ts)
        }
        Kind::Message(m) if JSON_MESSAGES.contains(&m.full_name()) => {
            let text = match array.data_type() {
                DataType::Utf8 => array.as_string::<i32>().value(row),
                DataType::LargeUtf8 => array.as_string::<i64>().value(row),
                _ => return Err(mismatch()),
            };
            let json: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| format!("column {name}: not JSON text: {e}"))?;
            let msg = DynamicMessage::deserialize(m.clone(), json)
                .map_err(|e| format!("column {name}: {e}"))?;
            Value::Message(msg)
        }
        Kind::Message(m) if WRAPPERS.contains(&m.full_name()) => {
            let inner = m.get_field(1).ok_or_else(mismatch)?;
            let mut msg = DynamicMessage::new(m.clone());
            msg.set_field(&inner, single(array, f, &inner.kind(), row)?);
            Value::Message(msg)
        }
        Kind::Message(m) => {
            let DataType::Struct(children) = array.data_type() else {
                return Err(mismatch());
            };
            let s = array.as_struct();
            let mut msg = DynamicMessage::new(m.clone());
            // By name: a message of a schema file may order (or omit) fields differently.
            for (child, column) in children.iter().zip(s.columns()) {
                if let Some(fd) = m.get_field_by_name(child.name()) {
                    set_field(&mut msg, column.as_ref(), child, &fd, row)?;
                }
            }
            Value::Message(msg)
        }
        Kind::Bool => match array.data_type() {
            DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
            _ => return Err(mismatch()),
        },
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            let v = integer(array, row).ok_or_else(mismatch)?;
            Value::I32(i32::try_from(v).map_err(|_| overflow(v, "int32"))?)
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            let v = integer(array, row).ok_or_else(mismatch)?;
            Value::I64(i64::try_from(v).map_err(|_| overflow(v, "int64"))?)
        }
        Kind::Uint32 | Kind::Fixed32 => {
            let v = integer(array, row).ok_or_else(mismatch)?;
            Value::U32(u32::try_from(v).map_err(|_| overflow(v, "uint32"))?)
        }
        Kind::Uint64 | Kind::Fixed64 => {
            let v = integer(array, row).ok_or_else(mismatch)?;
            Value::U64(u64::try_from(v).map_err(|_| overflow(v, "uint64"))?)
        }
        Kind::Float => match array.data_type() {
            DataType::Float16 => Value::F32(array.as_primitive::<Float16Type>().value(row).into()),
            DataType::Float32 => Value::F32(array.as_primitive::<Float32Type>().value(row)),
            _ => return Err(mismatch()),
        },
        Kind::Double => match array.data_type() {
            DataType::Float32 => Value::F64(array.as_primitive::<Float32Type>().value(row).into()),
            DataType::Float64 => Value::F64(array.as_primitive::<Float64Type>().value(row)),
            _ => return Err(mismatch()),
        },
        Kind::String => Value::String(match array.data_type() {
            DataType::Utf8 => array.as_string::<i32>().value(row).to_owned(),
            DataType::LargeUtf8 => array.as_string::<i64>().value(row).to_owned(),
            DataType::Utf8View => array.as_string_view().value(row).to_owned(),
            _ => text(array, f, row)?,
        }),
        Kind::Bytes => Value::Bytes(bytes::Bytes::copy_from_slice(match array.data_type() {
            DataType::Binary => array.as_binary::<i32>().value(row),
            DataType::LargeBinary => array.as_binary::<i64>().value(row),
            DataType::BinaryView => array.as_binary_view().value(row),
            DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().value(row),
            _ => return Err(mismatch()),
        })),
        Kind::Enum(e) => {
            let symbol = match array.data_type() {
                DataType::Utf8 => array.as_string::<i32>().value(row),
                DataType::LargeUtf8 => array.as_string::<i64>().value(row),
                _ => return Err(mismatch()),
            };
            match e.get_value_by_name(symbol) {
                Some(v) => Value::EnumNumber(v.number()),
                None => Value::EnumNumber(symbol.parse().map_err(|_| {
                    format!(
                        "column {name}: enum {} has no value {symbol}",
                        e.full_name()
                    )
                })?),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::builder::{Int64Builder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{Int32Array, StringArray, TimestampNanosecondArray};
    use arrow_schema::Schema;
    use prost_reflect::ReflectMessage;

    use super::*;
    use crate::engine::columnarschema::proto_arrow::message_to_arrow;
    use crate::engine::schema::protobuf::{ProtoSchema, decode_body, encode_message};

    fn compiled(text: &str) -> MessageDescriptor {
        ProtoSchema::parse(text, &[])
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .message_at(&[0])
            .unwrap()
    }

    #[test]
    fn columns_read_from_wrappers_json_values_and_maps_go_back_out_as_those_protobuf_types() {
        let wrapper = HashMap::from([(
            WRAPPER_KEY.to_owned(),
            "google.protobuf.Int64Value".to_owned(),
        )]);
        let json = HashMap::from([(JSON_KEY.to_owned(), "true".to_owned())]);
        let mut counts = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        counts.keys().append_value("b");
        counts.values().append_value(2);
        counts.keys().append_value("a");
        counts.values().append_value(1);
        counts.append(true).unwrap();
        let counts = counts.finish();
        let schema = Schema::new(vec![
            Field::new("qty", DataType::Int64, true).with_metadata(wrapper),
            Field::new("extra", DataType::Utf8, true).with_metadata(json),
            Field::new("counts", counts.data_type().clone(), false),
            Field::new("small", DataType::Int32, false),
            Field::new("at", DataType::Timestamp(TimeUnit::Nanosecond, None), false),
        ]);
        let text = proto_schema_of(&schema, "m").unwrap();
        let message = compiled(&text);
        let back = message_to_arrow(&message).unwrap();
        assert_eq!(
            back.field(0)
                .metadata()
                .get(WRAPPER_KEY)
                .map(String::as_str),
            Some("google.protobuf.Int64Value")
        );
        assert_eq!(back.field(0).data_type(), &DataType::Int64);
        assert_eq!(
            back.field(1).metadata().get(JSON_KEY).map(String::as_str),
            Some("true")
        );
        assert!(matches!(back.field(2).data_type(), DataType::Map(..)));
        assert_eq!(back.field(3).data_type(), &DataType::Int32);
        assert!(!back.field(3).is_nullable());

        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![Some(7)])),
                Arc::new(StringArray::from(vec![Some(r#"{"a":[1,"x",null]}"#)])),
                Arc::new(counts),
                Arc::new(Int32Array::from(vec![-3])),
                // One nanosecond before the epoch: floor division, nanos kept.
                Arc::new(TimestampNanosecondArray::from(vec![-1])),
            ],
        )
        .unwrap();
        let columns: Vec<(usize, Field)> = batch
            .schema()
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.as_ref().clone()))
            .collect();
        let messages = proto_messages(&batch, &columns, &message).unwrap();
        let body = encode_message(&messages[0]).unwrap();
        assert_eq!(messages[0].descriptor().full_name(), "m");
        let json = decode_body(&message, &body).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "qty": "7",
                "extra": {"a": [1.0, "x", null]},
                "counts": {"a": "1", "b": "2"},
                "small": -3,
                "at": "1969-12-31T23:59:59.999999999Z",
            })
        );
    }

    #[test]
    fn shapes_proto3_cannot_declare_are_refused_and_a_null_list_item_fails_its_row() {
        let nested = DataType::List(Arc::new(Field::new(
            "item",
            DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
            true,
        )));
        let e =
            proto_schema_of(&Schema::new(vec![Field::new("grid", nested, true)]), "m").unwrap_err();
        assert!(e.contains("column `grid` nests a list"), "{e}");
        let e = proto_schema_of(
            &Schema::new(vec![Field::new("odd name", DataType::Int64, true)]),
            "m",
        )
        .unwrap_err();
        assert!(e.contains("not a valid Protobuf field name"), "{e}");

        let mut tags = ListBuilder::new(Int64Builder::new());
        tags.values().append_value(1);
        tags.values().append_null();
        tags.append(true);
        let tags = tags.finish();
        let schema = Schema::new(vec![Field::new("tags", tags.data_type().clone(), true)]);
        let message = compiled(&proto_schema_of(&schema, "m").unwrap());
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(tags)]).unwrap();
        let e =
            proto_messages(&batch, &[(0, batch.schema().field(0).clone())], &message).unwrap_err();
        assert!(e.contains("row 0: column tags: a null list item"), "{e}");
    }
}
