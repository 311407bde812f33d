//! Arrow → JSON Schema for `json-schema` sinks: the writer schema of a sink
//! batch's payload columns (reserved columns left out, escaped names restored),
//! describing exactly the objects the sink writes (see `sink_rows`): integers,
//! numbers, booleans, text; binary as base64 text (`contentEncoding`, which the
//! tail mapping reads back as binary); decimals as decimal text; dates and
//! timestamps as `date` / `date-time` text; structs as objects, lists as arrays,
//! maps as objects with `additionalProperties`; JSON-text columns as any object
//! or array. Nullable columns allow `null` and are not `required`.

use arrow_schema::{DataType, Field, Schema};
use serde_json::{Map, Value, json};

use crate::engine::columnar::reserved::JSON_KEY;
use crate::engine::columnarschema::avro_writer::payload_fields;

/// The JSON Schema (draft-07) of a sink batch's payload columns, titled `title`.
pub fn json_schema_of(schema: &Schema, title: &str) -> Result<Value, String> {
    let fields: Vec<Field> = payload_fields(schema).into_iter().map(|(_, f)| f).collect();
    let mut object = object_schema(&fields)?;
    let map = object
        .as_object_mut()
        .expect("object_schema builds an object");
    let mut head = Map::new();
    head.insert(
        "$schema".into(),
        json!("http://json-schema.org/draft-07/schema#"),
    );
    head.insert("title".into(), json!(title));
    head.append(map);
    Ok(Value::Object(head))
}

fn object_schema(fields: &[Field]) -> Result<Value, String> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in fields {
        properties.insert(f.name().clone(), field_schema(f)?);
        if !f.is_nullable() {
            required.push(json!(f.name()));
        }
    }
    let mut out = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        out["required"] = Value::Array(required);
    }
    Ok(out)
}

/// A field's schema; a nullable field also allows `null`.
fn field_schema(f: &Field) -> Result<Value, String> {
    let mut schema = type_schema(f)?;
    if f.is_nullable() {
        match schema.get_mut("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                schema["type"] = json!([t, "null"]);
            }
            Some(Value::Array(ts)) => ts.push(json!("null")),
            _ => {}
        }
    }
    Ok(schema)
}

pub(crate) fn type_schema(f: &Field) -> Result<Value, String> {
    Ok(match f.data_type() {
        DataType::Null => json!({"type": "null"}),
        DataType::Boolean => json!({"type": "boolean"}),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => json!({"type": "integer"}),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => json!({"type": "number"}),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            if f.metadata().get(JSON_KEY).is_some_and(|v| v == "true") =>
        {
            json!({"type": ["object", "array"]})
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => json!({"type": "string"}),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            json!({"type": "string", "contentEncoding": "base64"})
        }
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            json!({"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$"})
        }
        DataType::Date32 | DataType::Date64 => json!({"type": "string", "format": "date"}),
        DataType::Timestamp(..) => json!({"type": "string", "format": "date-time"}),
        DataType::Time32(_) | DataType::Time64(_) => json!({"type": "string", "format": "time"}),
        DataType::List(item) | DataType::LargeList(item) => {
            json!({"type": "array", "items": field_schema(item)?})
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(format!(
                    "column `{}`: map entries are not a struct",
                    f.name()
                ));
            };
            json!({"type": "object", "additionalProperties": field_schema(&kv[1])?})
        }
        DataType::Struct(children) => {
            let children: Vec<Field> = children.iter().map(|c| c.as_ref().clone()).collect();
            object_schema(&children)?
        }
        other => {
            return Err(format!(
                "column `{}` has type {other}, which a json-schema sink cannot describe",
                f.name()
            ));
        }
    })
}
