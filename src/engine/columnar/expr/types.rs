//! Arrow data types as a topology file writes them (`utf8`, `int64`,
//! `timestamp[us, UTC]`, `decimal(10,2)`), their display, and the coercion
//! rules expressions use when two operands of different types meet.

use std::sync::Arc;

use arrow_schema::{DataType, TimeUnit};

/// Parses a type name: `utf8`/`string`, `binary`, `bool`, `int8`…`int64`,
/// `uint8`…`uint64`, `float32`/`float64`, `date32`, `timestamp` (= `timestamp[ms, UTC]`),
/// `timestamp[s|ms|us|ns]`, `timestamp[unit, ZONE]`, `decimal(p,s)`.
pub fn parse_type(text: &str) -> Result<DataType, String> {
    let t = text.trim().to_ascii_lowercase();
    let simple = match t.as_str() {
        "utf8" | "string" | "text" | "varchar" => Some(DataType::Utf8),
        "large_utf8" | "large_string" => Some(DataType::LargeUtf8),
        "binary" | "bytes" => Some(DataType::Binary),
        "bool" | "boolean" => Some(DataType::Boolean),
        "int8" => Some(DataType::Int8),
        "int16" => Some(DataType::Int16),
        "int32" | "int" | "integer" => Some(DataType::Int32),
        "int64" | "bigint" | "long" => Some(DataType::Int64),
        "uint8" => Some(DataType::UInt8),
        "uint16" => Some(DataType::UInt16),
        "uint32" => Some(DataType::UInt32),
        "uint64" => Some(DataType::UInt64),
        "float32" | "float" | "real" => Some(DataType::Float32),
        "float64" | "double" => Some(DataType::Float64),
        "date32" | "date" => Some(DataType::Date32),
        "timestamp" => Some(timestamp(TimeUnit::Millisecond, Some("UTC"))),
        _ => None,
    };
    if let Some(ty) = simple {
        return Ok(ty);
    }
    if let Some(inner) = t
        .strip_prefix("timestamp[")
        .and_then(|rest| rest.strip_suffix(']'))
    {
        let mut parts = inner.splitn(2, ',');
        let unit = match parts.next().map(str::trim) {
            Some("s") => TimeUnit::Second,
            Some("ms") => TimeUnit::Millisecond,
            Some("us") => TimeUnit::Microsecond,
            Some("ns") => TimeUnit::Nanosecond,
            _ => return Err(format!("unknown timestamp unit in type `{text}`")),
        };
        // Zone names keep their original spelling (`Europe/Amsterdam`).
        let zone = parts.next().map(|_| {
            let original = text.trim();
            let start = original.find(',').map_or(0, |i| i + 1);
            original[start..original.len() - 1].trim().to_owned()
        });
        return Ok(timestamp(unit, zone.as_deref()));
    }
    if let Some(inner) = t
        .strip_prefix("decimal(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let (p, s) = inner.split_once(',').unwrap_or((inner, "0"));
        let precision: u8 = p
            .trim()
            .parse()
            .map_err(|_| format!("invalid decimal precision in type `{text}`"))?;
        let scale: i8 = s
            .trim()
            .parse()
            .map_err(|_| format!("invalid decimal scale in type `{text}`"))?;
        if precision == 0 || precision > 38 || scale < 0 || scale as u8 > precision {
            return Err(format!(
                "decimal type `{text}` needs 1 ≤ precision ≤ 38 and 0 ≤ scale ≤ precision"
            ));
        }
        return Ok(DataType::Decimal128(precision, scale));
    }
    Err(format!(
        "unknown type `{text}`; expected utf8, binary, bool, int8…int64, uint8…uint64, float32, float64, date32, timestamp[unit, zone] or decimal(p,s)"
    ))
}

fn timestamp(unit: TimeUnit, zone: Option<&str>) -> DataType {
    DataType::Timestamp(unit, zone.map(Arc::from))
}

/// The name `parse_type` reads back (used in messages and `--explain`).
pub fn type_name(ty: &DataType) -> String {
    match ty {
        DataType::Utf8 => "utf8".into(),
        DataType::LargeUtf8 => "large_utf8".into(),
        DataType::Binary => "binary".into(),
        DataType::Boolean => "bool".into(),
        DataType::Null => "null".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Date32 => "date32".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        DataType::Timestamp(unit, zone) => {
            let unit = match unit {
                TimeUnit::Second => "s",
                TimeUnit::Millisecond => "ms",
                TimeUnit::Microsecond => "us",
                TimeUnit::Nanosecond => "ns",
            };
            match zone {
                Some(z) => format!("timestamp[{unit}, {z}]"),
                None => format!("timestamp[{unit}]"),
            }
        }
        other => other.to_string().to_ascii_lowercase(),
    }
}

pub fn is_integer(ty: &DataType) -> bool {
    ty.is_integer()
}

pub fn is_string(ty: &DataType) -> bool {
    matches!(ty, DataType::Utf8 | DataType::LargeUtf8)
}

pub fn is_numeric(ty: &DataType) -> bool {
    ty.is_integer() || ty.is_floating() || matches!(ty, DataType::Decimal128(..))
}

fn int_width(ty: &DataType) -> u8 {
    match ty {
        DataType::Int8 | DataType::UInt8 => 8,
        DataType::Int16 | DataType::UInt16 => 16,
        DataType::Int32 | DataType::UInt32 => 32,
        _ => 64,
    }
}

fn signed_of_width(bits: u8) -> DataType {
    match bits {
        8 => DataType::Int8,
        16 => DataType::Int16,
        32 => DataType::Int32,
        _ => DataType::Int64,
    }
}

fn unsigned_of_width(bits: u8) -> DataType {
    match bits {
        8 => DataType::UInt8,
        16 => DataType::UInt16,
        32 => DataType::UInt32,
        _ => DataType::UInt64,
    }
}

/// The type two numeric operands are brought to before arithmetic or comparison.
/// Integers widen (a signed and an unsigned meet in the next signed width that
/// holds both, up to int64; uint64 with a signed type has none); any float makes
/// float64; decimals only meet the same decimal type.
pub fn common_numeric(a: &DataType, b: &DataType) -> Option<DataType> {
    if a == b {
        return Some(a.clone());
    }
    if a.is_floating() || b.is_floating() {
        return (is_numeric(a) && is_numeric(b)).then_some(DataType::Float64);
    }
    if a.is_integer() && b.is_integer() {
        let (wa, wb) = (int_width(a), int_width(b));
        return match (a.is_signed_integer(), b.is_signed_integer()) {
            (true, true) => Some(signed_of_width(wa.max(wb))),
            (false, false) => Some(unsigned_of_width(wa.max(wb))),
            (true, false) | (false, true) => {
                let (signed, unsigned) = if a.is_signed_integer() {
                    (wa, wb)
                } else {
                    (wb, wa)
                };
                if unsigned >= 64 {
                    None
                } else {
                    Some(signed_of_width(signed.max(unsigned * 2)))
                }
            }
        };
    }
    None
}

/// Whether two types can be compared with `=`, `<`, … after coercion; returns the common type.
pub fn comparable(a: &DataType, b: &DataType) -> Option<DataType> {
    if a == b {
        return Some(a.clone());
    }
    if is_numeric(a) && is_numeric(b) {
        return common_numeric(a, b);
    }
    if is_string(a) && is_string(b) {
        return Some(DataType::LargeUtf8);
    }
    if let (DataType::Timestamp(ua, _), DataType::Timestamp(ub, _)) = (a, b)
        && ua == ub
    {
        return Some(a.clone());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_round_trip() {
        for name in [
            "utf8",
            "binary",
            "bool",
            "int8",
            "int64",
            "uint32",
            "float64",
            "date32",
            "decimal(10,2)",
            "timestamp[ms, UTC]",
            "timestamp[us]",
        ] {
            assert_eq!(type_name(&parse_type(name).unwrap()), name);
        }
        assert_eq!(
            parse_type("timestamp").unwrap(),
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
        );
        assert!(
            parse_type("int128")
                .unwrap_err()
                .contains("unknown type `int128`")
        );
        assert!(parse_type("decimal(40,2)").is_err());
    }

    #[test]
    fn integers_widen_and_mixed_signs_need_a_wider_signed_type() {
        use DataType::*;
        assert_eq!(common_numeric(&Int32, &Int64), Some(Int64));
        assert_eq!(common_numeric(&UInt8, &Int8), Some(Int16));
        assert_eq!(common_numeric(&UInt32, &Int32), Some(Int64));
        assert_eq!(common_numeric(&UInt64, &Int64), None);
        assert_eq!(common_numeric(&Int64, &Float32), Some(Float64));
        assert_eq!(common_numeric(&Utf8, &Int64), None);
    }
}
