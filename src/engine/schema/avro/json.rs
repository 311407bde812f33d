//! Avro values as JSON for display and NDJSON: records as objects in field order,
//! unions unwrapped to the branch value, enums and uuids as strings, bytes and fixed
//! as base64, decimals as exact decimal strings at the schema's scale, dates and
//! times as their integer encodings, durations as `{months, days, millis}`.

use apache_avro::Schema;
use apache_avro::schema::NamesRef;
use apache_avro::types::Value as AvroValue;
use base64::Engine as _;
use serde_json::{Map, Value, json};

/// Converts `value` (which conforms to `schema`) to JSON; `names` resolves `Ref`s.
pub fn avro_to_json(
    value: &AvroValue,
    schema: &Schema,
    names: &NamesRef<'_>,
) -> Result<Value, String> {
    let schema = deref(schema, names)?;
    Ok(match value {
        AvroValue::Null => Value::Null,
        AvroValue::Boolean(b) => json!(b),
        AvroValue::Int(n) | AvroValue::Date(n) | AvroValue::TimeMillis(n) => json!(n),
        AvroValue::Long(n)
        | AvroValue::TimeMicros(n)
        | AvroValue::TimestampMillis(n)
        | AvroValue::TimestampMicros(n)
        | AvroValue::TimestampNanos(n)
        | AvroValue::LocalTimestampMillis(n)
        | AvroValue::LocalTimestampMicros(n)
        | AvroValue::LocalTimestampNanos(n) => json!(n),
        AvroValue::Float(f) => float(f64::from(*f)),
        AvroValue::Double(f) => float(*f),
        AvroValue::Bytes(b) | AvroValue::Fixed(_, b) => match schema {
            Schema::Decimal(d) => json!(decimal_text(b, d.scale)),
            _ => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        },
        AvroValue::String(s) | AvroValue::Enum(_, s) => json!(s),
        AvroValue::Uuid(u) => json!(u.to_string()),
        AvroValue::Union(i, inner) => {
            let Schema::Union(u) = schema else {
                return Err("union value for a non-union schema".into());
            };
            let branch = u
                .variants()
                .get(*i as usize)
                .ok_or_else(|| format!("union branch {i} does not exist"))?;
            avro_to_json(inner, branch, names)?
        }
        AvroValue::Array(items) => {
            let Schema::Array(a) = schema else {
                return Err("array value for a non-array schema".into());
            };
            Value::Array(
                items
                    .iter()
                    .map(|v| avro_to_json(v, &a.items, names))
                    .collect::<Result<_, _>>()?,
            )
        }
        AvroValue::Map(entries) => {
            let Schema::Map(m) = schema else {
                return Err("map value for a non-map schema".into());
            };
            let mut keys: Vec<&String> = entries.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), avro_to_json(&entries[k], &m.types, names)?);
            }
            Value::Object(out)
        }
        AvroValue::Record(fields) => {
            let Schema::Record(r) = schema else {
                return Err("record value for a non-record schema".into());
            };
            let mut out = Map::new();
            for (name, v) in fields {
                let field = r
                    .lookup
                    .get(name)
                    .and_then(|i| r.fields.get(*i))
                    .ok_or_else(|| {
                        format!("record {} has no field {name}", r.name.fullname(None))
                    })?;
                out.insert(name.clone(), avro_to_json(v, &field.schema, names)?);
            }
            Value::Object(out)
        }
        AvroValue::Decimal(d) => {
            let scale = match schema {
                Schema::Decimal(ds) => ds.scale,
                _ => 0,
            };
            let bytes: Vec<u8> = Vec::<u8>::try_from(d).map_err(|e| e.to_string())?;
            json!(decimal_text(&bytes, scale))
        }
        AvroValue::BigDecimal(b) => json!(b.to_string()),
        AvroValue::Duration(d) => json!({
            "months": u32::from(d.months()),
            "days": u32::from(d.days()),
            "millis": u32::from(d.millis()),
        }),
    })
}

fn deref<'a>(schema: &'a Schema, names: &'a NamesRef<'_>) -> Result<&'a Schema, String> {
    match schema {
        Schema::Ref { name } => names
            .get(name)
            .copied()
            .ok_or_else(|| format!("unresolved Avro reference {}", name.fullname(None))),
        other => Ok(other),
    }
}

/// NaN and infinities have no JSON number: they are written as strings.
fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or_else(|| json!(f.to_string()), Value::Number)
}

/// Two's-complement big-endian unscaled bytes at `scale` → exact decimal text.
pub fn decimal_text(bytes: &[u8], scale: usize) -> String {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut magnitude: Vec<u8> = if negative {
        // Two's complement negation: invert, then add one.
        let mut m: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in m.iter_mut().rev() {
            let (sum, carry) = b.overflowing_add(1);
            *b = sum;
            if !carry {
                break;
            }
        }
        m
    } else {
        bytes.to_vec()
    };
    let mut digits = Vec::new();
    while magnitude.iter().any(|b| *b != 0) {
        let mut rem = 0u32;
        for b in magnitude.iter_mut() {
            let cur = (rem << 8) | u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    while digits.len() <= scale {
        digits.push(b'0');
    }
    digits.reverse();
    let text = String::from_utf8(digits).unwrap_or_default();
    let (int, frac) = text.split_at(text.len() - scale);
    let sign = if negative { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_print_exactly_at_their_scale() {
        assert_eq!(decimal_text(&[0x04, 0xd2], 2), "12.34");
        assert_eq!(decimal_text(&[0xfb, 0x2e], 2), "-12.34");
        assert_eq!(decimal_text(&[0x05], 3), "0.005");
        assert_eq!(decimal_text(&[], 0), "0");
        assert_eq!(decimal_text(&[0x80], 0), "-128");
    }
}
