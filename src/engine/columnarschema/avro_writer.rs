//! Arrow → Avro for `avro` sinks: the writer schema of a sink batch — the inverse
//! of the tail mapping in [`avro_arrow`](super::avro_arrow), reserved columns left
//! out and escaped payload names restored — and each row's Avro binary body.
//!
//! Nullable columns become `["null", T]` with a null default; structs become
//! records named `<parent>_<field>` (Avro names must be unique); a struct marked
//! `krabka.avro.union` becomes the union it was read from, and a text column
//! marked `krabka.avro.enum` the enum. Types no shared Avro logical type carries
//! exactly (timestamp[ns], float16, 64-bit dates, times in seconds or
//! nanoseconds) are refused when the schema is derived, before any data flows.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, Time32MillisecondType, Time64MicrosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use serde_json::{Value, json};

use crate::engine::columnar::reserved::{is_reserved, restore_payload_field};

const UNION: &str = "krabka.avro.union";
const ENUM: &str = "krabka.avro.enum";
const ENUM_SYMBOLS: &str = "krabka.avro.enum.symbols";
const FIXED: &str = "krabka.avro.fixed";
const UUID: &str = "krabka.avro.logical";

/// An Avro name from free text (a topic): characters outside `[A-Za-z0-9_]` become `_`,
/// and a leading digit gets a `_` in front.
pub fn avro_name(text: &str) -> String {
    let mut name: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The payload fields of a sink batch, under their original names.
pub fn payload_fields(schema: &Schema) -> Vec<(usize, Field)> {
    schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| !is_reserved(f.name()))
        .map(|(i, f)| (i, restore_payload_field(f)))
        .collect()
}

/// The Avro writer schema (JSON) of a sink batch's payload columns: one record named `record`.
pub fn avro_schema_of(schema: &Schema, record: &str) -> Result<Value, String> {
    let mut names = Vec::new();
    let fields: Vec<Field> = payload_fields(schema).into_iter().map(|(_, f)| f).collect();
    record_schema(record, &fields, &mut names)
}

fn record_schema(name: &str, fields: &[Field], names: &mut Vec<String>) -> Result<Value, String> {
    names.push(name.to_owned());
    let mut out = Vec::new();
    for f in fields {
        if !valid_name(f.name()) {
            return Err(format!(
                "column `{}` is not a valid Avro field name (letters, digits and _, not starting with a digit): rename it with select or AS",
                f.name()
            ));
        }
        let ty = field_type(f, &format!("{name}_{}", f.name()), names)?;
        let mut entry = json!({"name": f.name(), "type": ty});
        if f.is_nullable() {
            entry["default"] = Value::Null;
        }
        out.push(entry);
    }
    Ok(json!({"type": "record", "name": name, "fields": out}))
}

fn is_union(f: &Field) -> bool {
    matches!(f.data_type(), DataType::Struct(_))
        && f.metadata().get(UNION).is_some_and(|v| v == "true")
}

/// A field's Avro type, wrapped in a union with null when nullable.
fn field_type(f: &Field, path: &str, names: &mut Vec<String>) -> Result<Value, String> {
    if is_union(f) {
        let DataType::Struct(children) = f.data_type() else {
            unreachable!("is_union checked the type")
        };
        let mut branches = Vec::new();
        if f.is_nullable() {
            branches.push(json!("null"));
        }
        for c in children {
            branches.push(plain_type(
                c,
                &format!("{path}_{}", avro_name(c.name())),
                names,
            )?);
        }
        return Ok(Value::Array(branches));
    }
    let plain = plain_type(f, path, names)?;
    Ok(if f.is_nullable() {
        json!(["null", plain])
    } else {
        plain
    })
}

/// A named type (record, enum, fixed) is defined once; later uses refer to it by name.
fn named(name: &str, names: &mut Vec<String>, define: impl FnOnce() -> Value) -> Value {
    if names.iter().any(|n| n == name) {
        json!(name)
    } else {
        names.push(name.to_owned());
        define()
    }
}

fn plain_type(f: &Field, path: &str, names: &mut Vec<String>) -> Result<Value, String> {
    let meta = |k: &str| f.metadata().get(k).cloned();
    Ok(match f.data_type() {
        DataType::Null => json!("null"),
        DataType::Boolean => json!("boolean"),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16 => {
            json!("int")
        }
        DataType::Int64 | DataType::UInt32 | DataType::UInt64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 | DataType::LargeUtf8 => match (meta(ENUM), meta(ENUM_SYMBOLS)) {
            (Some(name), Some(symbols)) => named(
                &name,
                names,
                || json!({"type": "enum", "name": name, "symbols": symbols.split(',').collect::<Vec<_>>()}),
            ),
            _ if meta(UUID).as_deref() == Some("uuid") => {
                json!({"type": "string", "logicalType": "uuid"})
            }
            _ => json!("string"),
        },
        DataType::Binary | DataType::LargeBinary => json!("bytes"),
        DataType::FixedSizeBinary(size) => {
            let name = meta(FIXED).unwrap_or_else(|| path.to_owned());
            named(
                &name,
                names,
                || json!({"type": "fixed", "name": name, "size": size}),
            )
        }
        DataType::Date32 => json!({"type": "int", "logicalType": "date"}),
        DataType::Time32(TimeUnit::Millisecond) => {
            json!({"type": "int", "logicalType": "time-millis"})
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            json!({"type": "long", "logicalType": "time-micros"})
        }
        DataType::Timestamp(unit, tz) => {
            let logical = match (unit, tz.is_some()) {
                (TimeUnit::Second | TimeUnit::Millisecond, true) => "timestamp-millis",
                (TimeUnit::Microsecond, true) => "timestamp-micros",
                (TimeUnit::Second | TimeUnit::Millisecond, false) => "local-timestamp-millis",
                (TimeUnit::Microsecond, false) => "local-timestamp-micros",
                (TimeUnit::Nanosecond, _) => {
                    return Err(format!(
                        "column `{}` is timestamp[ns], which no Avro logical type shared by the readers holds: CAST it to timestamp[us]",
                        f.name()
                    ));
                }
            };
            json!({"type": "long", "logicalType": logical})
        }
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => {
            if *s < 0 {
                return Err(format!(
                    "column `{}` has a negative decimal scale, which Avro cannot hold",
                    f.name()
                ));
            }
            json!({"type": "bytes", "logicalType": "decimal", "precision": p, "scale": s})
        }
        DataType::List(item) | DataType::LargeList(item) => {
            json!({"type": "array", "items": field_type(item, &format!("{path}_item"), names)?})
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(format!(
                    "column `{}`: map entries are not a struct",
                    f.name()
                ));
            };
            if !matches!(kv[0].data_type(), DataType::Utf8 | DataType::LargeUtf8) {
                return Err(format!(
                    "column `{}`: Avro map keys are text, not {}",
                    f.name(),
                    kv[0].data_type()
                ));
            }
            json!({"type": "map", "values": field_type(&kv[1], &format!("{path}_value"), names)?})
        }
        DataType::Struct(children) => {
            if names.iter().any(|n| n == path) {
                return Err(format!("Avro record name {path} is used twice"));
            }
            let children: Vec<Field> = children.iter().map(|c| c.as_ref().clone()).collect();
            record_schema(path, &children, names)?
        }
        other => {
            return Err(format!(
                "column `{}` has type {other}, which an Avro sink cannot write",
                f.name()
            ));
        }
    })
}

/// Whether data of `actual` can be written as `prepared`: the same names and types,
/// nullable wherever `actual` is (recursively; metadata aside).
pub fn fits(prepared: &Field, actual: &Field) -> bool {
    if prepared.name() != actual.name() || (actual.is_nullable() && !prepared.is_nullable()) {
        return false;
    }
    let all = |p: &Fields, a: &Fields| {
        p.len() == a.len() && p.iter().zip(a.iter()).all(|(p, a)| fits(p, a))
    };
    match (prepared.data_type(), actual.data_type()) {
        (DataType::Struct(p), DataType::Struct(a)) => all(p, a),
        (DataType::List(p), DataType::List(a))
        | (DataType::LargeList(p), DataType::LargeList(a)) => fits(p, a),
        (DataType::Map(p, ps), DataType::Map(a, as_)) => ps == as_ && fits(p, a),
        (p, a) => p == a,
    }
}

/// Writes Avro binary bodies of a batch's payload columns, one per row: `columns`
/// pairs each column index with the field it is written as (see [`fits`]).
pub fn avro_bodies(
    batch: &RecordBatch,
    columns: &[(usize, Field)],
) -> Result<Vec<Vec<u8>>, String> {
    (0..batch.num_rows())
        .map(|row| {
            let mut out = Vec::with_capacity(64);
            for (i, field) in columns {
                write_field(batch.column(*i).as_ref(), field, row, &mut out)
                    .map_err(|e| format!("row {row}: {e}"))?;
            }
            Ok(out)
        })
        .collect()
}

fn long(v: i64, out: &mut Vec<u8>) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn bytes(b: &[u8], out: &mut Vec<u8>) {
    long(b.len() as i64, out);
    out.extend_from_slice(b);
}

/// Two's complement big-endian without redundant sign bytes (Avro decimal bytes).
fn decimal_bytes(be: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    while start + 1 < be.len()
        && ((be[start] == 0 && be[start + 1] & 0x80 == 0)
            || (be[start] == 0xff && be[start + 1] & 0x80 != 0))
    {
        start += 1;
    }
    bytes(&be[start..], out);
}

fn write_field(array: &dyn Array, f: &Field, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
    if is_union(f) {
        if array.is_null(row) {
            if !f.is_nullable() {
                return Err(format!("null in the non-nullable column {}", f.name()));
            }
            long(0, out);
            return Ok(());
        }
        let DataType::Struct(children) = f.data_type() else {
            unreachable!("is_union checked the type")
        };
        let s = array.as_struct();
        let offset = i64::from(f.is_nullable());
        for (k, child) in children.iter().enumerate() {
            if s.column(k).is_valid(row) {
                long(k as i64 + offset, out);
                return write_plain(s.column(k).as_ref(), child, row, out);
            }
        }
        return Err(format!("union column {} has no branch set", f.name()));
    }
    if f.is_nullable() {
        if array.is_null(row) {
            long(0, out);
            return Ok(());
        }
        long(1, out);
    } else if array.is_null(row) {
        return Err(format!("null in the non-nullable column {}", f.name()));
    }
    write_plain(array, f, row, out)
}

/// One non-null cell in Avro binary. Long because it has one arm per Arrow type.
fn write_plain(array: &dyn Array, f: &Field, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
    macro_rules! int {
        ($t:ty) => {
            long(i64::from(array.as_primitive::<$t>().value(row)), out)
        };
    }
    match array.data_type() {
        DataType::Null => {}
        DataType::Boolean => out.push(u8::from(array.as_boolean().value(row))),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => {
            let v = array.as_primitive::<UInt64Type>().value(row);
            let v = i64::try_from(v)
                .map_err(|_| format!("column {}: {v} does not fit an Avro long", f.name()))?;
            long(v, out);
        }
        DataType::Float32 => {
            out.extend_from_slice(&array.as_primitive::<Float32Type>().value(row).to_le_bytes())
        }
        DataType::Float64 => {
            out.extend_from_slice(&array.as_primitive::<Float64Type>().value(row).to_le_bytes())
        }
        DataType::Utf8 | DataType::LargeUtf8 => {
            let text = match array.data_type() {
                DataType::Utf8 => array.as_string::<i32>().value(row),
                _ => array.as_string::<i64>().value(row),
            };
            match f.metadata().get(ENUM_SYMBOLS) {
                Some(symbols) if f.metadata().contains_key(ENUM) => {
                    let index = symbols.split(',').position(|s| s == text).ok_or_else(|| {
                        format!("column {}: `{text}` is not a symbol of its enum", f.name())
                    })?;
                    long(index as i64, out);
                }
                _ => bytes(text.as_bytes(), out),
            }
        }
        DataType::Binary => bytes(array.as_binary::<i32>().value(row), out),
        DataType::LargeBinary => bytes(array.as_binary::<i64>().value(row), out),
        DataType::FixedSizeBinary(_) => {
            out.extend_from_slice(array.as_fixed_size_binary().value(row))
        }
        DataType::Date32 => int!(Date32Type),
        DataType::Time32(TimeUnit::Millisecond) => int!(Time32MillisecondType),
        DataType::Time64(TimeUnit::Microsecond) => int!(Time64MicrosecondType),
        DataType::Timestamp(TimeUnit::Second, _) => {
            let v = array.as_primitive::<TimestampSecondType>().value(row);
            let ms = v
                .checked_mul(1000)
                .ok_or_else(|| format!("column {}: timestamp {v}s is out of range", f.name()))?;
            long(ms, out);
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => int!(TimestampMillisecondType),
        DataType::Timestamp(TimeUnit::Microsecond, _) => int!(TimestampMicrosecondType),
        DataType::Decimal128(_, _) => decimal_bytes(
            &array
                .as_primitive::<Decimal128Type>()
                .value(row)
                .to_be_bytes(),
            out,
        ),
        DataType::Decimal256(_, _) => decimal_bytes(
            &array
                .as_primitive::<Decimal256Type>()
                .value(row)
                .to_be_bytes(),
            out,
        ),
        DataType::List(item) | DataType::LargeList(item) => {
            let (values, range) = match array.data_type() {
                DataType::List(_) => {
                    let a = array.as_list::<i32>();
                    let o = a.value_offsets();
                    (a.values().clone(), o[row] as usize..o[row + 1] as usize)
                }
                _ => {
                    let a = array.as_list::<i64>();
                    let o = a.value_offsets();
                    (a.values().clone(), o[row] as usize..o[row + 1] as usize)
                }
            };
            if !range.is_empty() {
                long(range.len() as i64, out);
                for i in range {
                    write_field(values.as_ref(), item, i, out)?;
                }
            }
            long(0, out);
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(format!("column {}: map entries are not a struct", f.name()));
            };
            let a = array.as_map();
            let o = a.value_offsets();
            let range = o[row] as usize..o[row + 1] as usize;
            if !range.is_empty() {
                long(range.len() as i64, out);
                for i in range {
                    write_plain(a.keys().as_ref(), &kv[0], i, out)?;
                    write_field(a.values().as_ref(), &kv[1], i, out)?;
                }
            }
            long(0, out);
        }
        DataType::Struct(children) => {
            let s = array.as_struct();
            for (k, child) in children.iter().enumerate() {
                write_field(s.column(k).as_ref(), child, row, out)?;
            }
        }
        other => {
            return Err(format!(
                "column {} has type {other}, which an Avro sink cannot write",
                f.name()
            ));
        }
    }
    Ok(())
}
