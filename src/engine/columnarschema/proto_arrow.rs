//! Protobuf → Arrow (semantics §3): nullability = the field has presence; list and map
//! fields are not nullable; uint32/fixed32 widen to Int64.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};

/// The wrapper messages, read as their nullable scalar (and written back by `proto_writer`).
pub(crate) const WRAPPERS: [&str; 9] = [
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
];

/// The messages read as JSON text; the first is what `proto_writer` writes a JSON
/// column without message metadata as.
pub(crate) const JSON_MESSAGES: [&str; 3] = [
    "google.protobuf.Value",
    "google.protobuf.Struct",
    "google.protobuf.ListValue",
];

/// The Arrow schema of a message: one column per field.
pub fn message_to_arrow(msg: &MessageDescriptor) -> Result<Schema, String> {
    let mut path = vec![msg.full_name().to_string()];
    let fields = msg
        .fields()
        .map(|f| field(&f, &mut path))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Schema::new(fields))
}

fn scalar(kind: &Kind) -> Option<DataType> {
    Some(match kind {
        Kind::Double => DataType::Float64,
        Kind::Float => DataType::Float32,
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => DataType::Int32,
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => DataType::Int64,
        Kind::Uint32 | Kind::Fixed32 => DataType::Int64,
        Kind::Uint64 | Kind::Fixed64 => DataType::UInt64,
        Kind::Bool => DataType::Boolean,
        Kind::String => DataType::Utf8,
        Kind::Bytes => DataType::Binary,
        _ => return None,
    })
}

fn single(
    kind: &Kind,
    path: &mut Vec<String>,
) -> Result<(DataType, HashMap<String, String>), String> {
    let mut md = HashMap::new();
    let dt = match kind {
        Kind::Enum(e) => {
            md.insert("krabka.proto.enum".into(), e.full_name().to_string());
            DataType::Utf8
        }
        Kind::Message(m) => {
            let name = m.full_name();
            if name == "google.protobuf.Timestamp" {
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            } else if WRAPPERS.contains(&name) {
                md.insert("krabka.proto.wrapper".into(), name.to_string());
                let inner = m.get_field(1).ok_or("wrapper without a value field")?;
                scalar(&inner.kind()).ok_or("wrapper of a non-scalar")?
            } else if JSON_MESSAGES.contains(&name) || path.iter().any(|p| p == name) {
                md.insert("krabka.json".into(), "true".into());
                md.insert("krabka.proto.message".into(), name.to_string());
                DataType::Utf8
            } else {
                path.push(name.to_string());
                let children = m
                    .fields()
                    .map(|f| field(&f, path))
                    .collect::<Result<Vec<_>, _>>();
                path.pop();
                DataType::Struct(Fields::from(children?))
            }
        }
        other => scalar(other).ok_or_else(|| format!("unsupported Protobuf kind {other:?}"))?,
    };
    Ok((dt, md))
}

fn field(f: &FieldDescriptor, path: &mut Vec<String>) -> Result<Field, String> {
    let mut oneof = HashMap::new();
    if let Some(o) = f.containing_oneof()
        && !o.is_synthetic()
    {
        oneof.insert("krabka.proto.oneof".to_string(), o.name().to_string());
    }
    if f.is_map() {
        let Kind::Message(entry) = f.kind() else {
            return Err(format!("map field {} without an entry message", f.name()));
        };
        let key = entry.map_entry_key_field();
        let value = entry.map_entry_value_field();
        let (kt, _) = single(&key.kind(), path)?;
        let (vt, vmd) = single(&value.kind(), path)?;
        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("key", kt, false),
                Field::new("value", vt, value.supports_presence()).with_metadata(vmd),
            ])),
            false,
        );
        return Ok(
            Field::new(f.name(), DataType::Map(Arc::new(entries), false), false)
                .with_metadata(oneof),
        );
    }
    let (dt, mut md) = single(&f.kind(), path)?;
    if f.is_list() {
        let item = Field::new("item", dt, false).with_metadata(md);
        return Ok(Field::new(f.name(), DataType::List(Arc::new(item)), false).with_metadata(oneof));
    }
    md.extend(oneof);
    Ok(Field::new(f.name(), dt, f.supports_presence()).with_metadata(md))
}
