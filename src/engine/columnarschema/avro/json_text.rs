//! Avro binary → Avro JSON text, for recursive records (stored as Utf8 with
//! `krabka.json=true`). Avro's JSON encoding: unions other than null as
//! `{"<branch>": value}`, bytes and fixed as strings of code points 0–255,
//! logical types as their base values. Decimals are refused.

use serde_json::{Map, Value};

use crate::engine::columnarschema::avro::cursor::{Cursor, DecodeError, DecodeResult};
use crate::engine::columnarschema::avro::schema::{AvroSchema, AvroType, NamedType};

/// Nesting deeper than this is refused (a recursive value could otherwise overflow the stack).
const MAX_DEPTH: usize = 256;

fn latin1(bytes: &[u8]) -> Value {
    Value::String(bytes.iter().map(|&b| char::from(b)).collect())
}

fn refuse(what: &str) -> DecodeError {
    DecodeError(format!(
        "cannot encode recursive Avro value as JSON: {what}"
    ))
}

fn float(v: f64) -> DecodeResult<Value> {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .ok_or_else(|| refuse("a float that is not finite"))
}

/// Decodes one value of `ty` as Avro JSON.
pub fn avro_json(schema: &AvroSchema, ty: &AvroType, c: &mut Cursor<'_>) -> DecodeResult<Value> {
    json_at(schema, ty, c, 0)
}

fn branch_label(schema: &AvroSchema, ty: &AvroType) -> String {
    match ty {
        AvroType::Named(i) => schema.named(*i).name().to_string(),
        AvroType::Boolean => "boolean".into(),
        AvroType::Int | AvroType::Date | AvroType::TimeMillis => "int".into(),
        AvroType::Float => "float".into(),
        AvroType::Double => "double".into(),
        AvroType::Bytes | AvroType::Decimal { .. } => "bytes".into(),
        AvroType::String | AvroType::Uuid => "string".into(),
        AvroType::Array(_) => "array".into(),
        AvroType::Map(_) => "map".into(),
        AvroType::Null => "null".into(),
        AvroType::Union(_) => "union".into(),
        _ => "long".into(),
    }
}

fn json_at(
    schema: &AvroSchema,
    ty: &AvroType,
    c: &mut Cursor<'_>,
    depth: usize,
) -> DecodeResult<Value> {
    if depth > MAX_DEPTH {
        return Err(refuse("nested too deeply"));
    }
    Ok(match ty {
        AvroType::Null => Value::Null,
        AvroType::Boolean => Value::Bool(c.read_bool()?),
        AvroType::Int | AvroType::Date | AvroType::TimeMillis => Value::from(c.read_int()?),
        AvroType::Long
        | AvroType::TimeMicros
        | AvroType::TimestampMillis
        | AvroType::TimestampMicros
        | AvroType::LocalTimestampMillis
        | AvroType::LocalTimestampMicros => Value::from(c.read_long()?),
        AvroType::Float => float(f64::from(c.read_f32()?))?,
        AvroType::Double => float(c.read_f64()?)?,
        AvroType::Bytes => latin1(c.read_bytes()?),
        AvroType::String | AvroType::Uuid => Value::String(c.read_str()?.to_string()),
        AvroType::Decimal { .. } => return Err(refuse("decimal")),
        AvroType::Array(item) => {
            let mut out = Vec::new();
            loop {
                let n = c.read_block_count()?;
                if n == 0 {
                    break;
                }
                if n > c.remaining().max(1 << 16) {
                    return Err(DecodeError(format!("invalid Avro block count {n}")));
                }
                for _ in 0..n {
                    out.push(json_at(schema, item, c, depth + 1)?);
                }
            }
            Value::Array(out)
        }
        AvroType::Map(values) => {
            let mut out = Map::new();
            loop {
                let n = c.read_block_count()?;
                if n == 0 {
                    break;
                }
                if n > c.remaining() {
                    return Err(DecodeError(format!("invalid Avro block count {n}")));
                }
                for _ in 0..n {
                    let k = c.read_str()?.to_string();
                    out.insert(k, json_at(schema, values, c, depth + 1)?);
                }
            }
            Value::Object(out)
        }
        AvroType::Union(branches) => {
            let i = c.read_long()?;
            let b = usize::try_from(i)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or_else(|| {
                    DecodeError(format!(
                        "invalid Avro union branch index {i} ({} branches)",
                        branches.len()
                    ))
                })?;
            if *b == AvroType::Null {
                Value::Null
            } else {
                let mut m = Map::new();
                m.insert(branch_label(schema, b), json_at(schema, b, c, depth + 1)?);
                Value::Object(m)
            }
        }
        AvroType::Named(index) => match schema.named(*index) {
            NamedType::Record { fields, .. } => {
                let mut m = Map::new();
                for f in fields {
                    m.insert(f.name.clone(), json_at(schema, &f.ty, c, depth + 1)?);
                }
                Value::Object(m)
            }
            NamedType::Enum { symbols, .. } => {
                let i = c.read_int()?;
                let s = usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or_else(|| DecodeError(format!("invalid Avro enum index {i}")))?;
                Value::String(s.clone())
            }
            NamedType::Fixed {
                decimal: Some(_), ..
            } => return Err(refuse("decimal")),
            NamedType::Fixed { size, .. } => latin1(c.read_fixed(*size)?),
        },
    })
}
