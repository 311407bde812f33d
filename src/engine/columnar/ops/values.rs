//! Arrow cells as Go values (formats §8.5 tagged values): reading a cell the way
//! krabka-streams-go's `arrowValue` does, writing values back into a column of a
//! given type with range checks (semantics §3 coercion), and Go's ordering for
//! min/max.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use super::OpError;
use crate::engine::columnar::expr::types::type_name;
use crate::engine::columnar::snapshot::tagged::TaggedValue;

/// Whether a column type can be a group or join key (and a min/max input).
pub fn supported(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Null
            | DataType::Boolean
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::FixedSizeBinary(_)
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
            | DataType::Date32
            | DataType::Date64
            | DataType::Time32(_)
            | DataType::Time64(_)
            | DataType::Timestamp(..)
            | DataType::Decimal128(..)
    )
}

fn unsupported(ty: &DataType) -> OpError {
    OpError::new(format!(
        "cannot use {} as a group key or aggregate",
        type_name(ty)
    ))
}

/// Appends the tagged encoding of `array[row]` (exactly Go's `encodeValue(arrowValue(…))`).
pub fn encode_cell(array: &dyn Array, row: usize, out: &mut Vec<u8>) -> Result<(), OpError> {
    if array.is_null(row) {
        out.push(b'n');
        return Ok(());
    }
    let int = |out: &mut Vec<u8>, v: i64| {
        out.push(b'i');
        out.extend_from_slice(&v.to_be_bytes());
    };
    let sized = |out: &mut Vec<u8>, tag: u8, bytes: &[u8]| {
        out.push(tag);
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    };
    match array.data_type() {
        DataType::Utf8 => sized(out, b's', array.as_string::<i32>().value(row).as_bytes()),
        DataType::LargeUtf8 => sized(out, b's', array.as_string::<i64>().value(row).as_bytes()),
        DataType::Int64 => int(out, array.as_primitive::<Int64Type>().value(row)),
        DataType::Int32 => int(out, array.as_primitive::<Int32Type>().value(row).into()),
        _ => cell(array, row)?.encode_into(out),
    }
    Ok(())
}

/// A key column downcast once per batch, so that encoding a row is one match.
pub enum KeyColumn<'a> {
    Utf8(&'a arrow_array::StringArray),
    Int64(&'a arrow_array::Int64Array),
    Int32(&'a arrow_array::Int32Array),
    Other(&'a dyn Array),
}

impl<'a> KeyColumn<'a> {
    pub fn new(array: &'a dyn Array) -> Self {
        match array.data_type() {
            DataType::Utf8 => KeyColumn::Utf8(array.as_string::<i32>()),
            DataType::Int64 => KeyColumn::Int64(array.as_primitive::<Int64Type>()),
            DataType::Int32 => KeyColumn::Int32(array.as_primitive::<Int32Type>()),
            _ => KeyColumn::Other(array),
        }
    }

    /// Appends the tagged encoding of row `row` (as [`encode_cell`]).
    #[inline]
    pub fn encode(&self, row: usize, out: &mut Vec<u8>) -> Result<(), OpError> {
        match self {
            KeyColumn::Utf8(a) => {
                if a.is_null(row) {
                    out.push(b'n');
                } else {
                    let v = a.value(row).as_bytes();
                    out.push(b's');
                    out.extend_from_slice(&(v.len() as u32).to_be_bytes());
                    out.extend_from_slice(v);
                }
            }
            KeyColumn::Int64(a) => {
                if a.is_null(row) {
                    out.push(b'n');
                } else {
                    out.push(b'i');
                    out.extend_from_slice(&a.value(row).to_be_bytes());
                }
            }
            KeyColumn::Int32(a) => {
                if a.is_null(row) {
                    out.push(b'n');
                } else {
                    out.push(b'i');
                    out.extend_from_slice(&i64::from(a.value(row)).to_be_bytes());
                }
            }
            KeyColumn::Other(a) => encode_cell(*a, row, out)?,
        }
        Ok(())
    }
}

/// `array[row]` as a Go value: strings, bytes, integers (u64 apart), floats, bools,
/// temporal types as their integer, decimals as exact rationals.
pub fn cell(array: &dyn Array, row: usize) -> Result<TaggedValue, OpError> {
    if array.is_null(row) {
        return Ok(TaggedValue::Null);
    }
    Ok(match array.data_type() {
        DataType::Null => TaggedValue::Null,
        DataType::Boolean => TaggedValue::Bool(array.as_boolean().value(row)),
        DataType::Utf8 => TaggedValue::String(array.as_string::<i32>().value(row).to_owned()),
        DataType::LargeUtf8 => TaggedValue::String(array.as_string::<i64>().value(row).to_owned()),
        DataType::Binary => TaggedValue::Bytes(array.as_binary::<i32>().value(row).to_vec()),
        DataType::LargeBinary => TaggedValue::Bytes(array.as_binary::<i64>().value(row).to_vec()),
        DataType::FixedSizeBinary(_) => {
            TaggedValue::Bytes(array.as_fixed_size_binary().value(row).to_vec())
        }
        DataType::Int8 => TaggedValue::Int(array.as_primitive::<Int8Type>().value(row).into()),
        DataType::Int16 => TaggedValue::Int(array.as_primitive::<Int16Type>().value(row).into()),
        DataType::Int32 => TaggedValue::Int(array.as_primitive::<Int32Type>().value(row).into()),
        DataType::Int64 => TaggedValue::Int(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => TaggedValue::Int(array.as_primitive::<UInt8Type>().value(row).into()),
        DataType::UInt16 => TaggedValue::Int(array.as_primitive::<UInt16Type>().value(row).into()),
        DataType::UInt32 => TaggedValue::Int(array.as_primitive::<UInt32Type>().value(row).into()),
        DataType::UInt64 => TaggedValue::Uint64(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => TaggedValue::Float32(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => TaggedValue::Float64(array.as_primitive::<Float64Type>().value(row)),
        DataType::Date32 => TaggedValue::Int(array.as_primitive::<Date32Type>().value(row).into()),
        DataType::Date64 => TaggedValue::Int(array.as_primitive::<Date64Type>().value(row)),
        DataType::Time32(TimeUnit::Second) => {
            TaggedValue::Int(array.as_primitive::<Time32SecondType>().value(row).into())
        }
        DataType::Time32(_) => TaggedValue::Int(
            array
                .as_primitive::<Time32MillisecondType>()
                .value(row)
                .into(),
        ),
        DataType::Time64(TimeUnit::Microsecond) => {
            TaggedValue::Int(array.as_primitive::<Time64MicrosecondType>().value(row))
        }
        DataType::Time64(_) => {
            TaggedValue::Int(array.as_primitive::<Time64NanosecondType>().value(row))
        }
        DataType::Timestamp(unit, _) => TaggedValue::Int(timestamp_at(array, *unit, row)),
        DataType::Decimal128(_, scale) => {
            let unscaled = array.as_primitive::<Decimal128Type>().value(row);
            decimal_rational(unscaled, *scale)?
        }
        other => return Err(unsupported(other)),
    })
}

pub fn timestamp_at(array: &dyn Array, unit: TimeUnit, row: usize) -> i64 {
    match unit {
        TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
        TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(row),
        TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(row),
        TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
    }
}

pub fn decimal_rational(unscaled: i128, scale: i8) -> Result<TaggedValue, OpError> {
    let den = 10i128
        .checked_pow(scale.max(0) as u32)
        .ok_or_else(|| OpError::new("decimal scale too large"))?;
    let num = if scale < 0 {
        unscaled
            .checked_mul(10i128.pow((-scale) as u32))
            .ok_or_else(|| OpError::new("decimal value too large"))?
    } else {
        unscaled
    };
    Ok(TaggedValue::rational(num, den).expect("positive denominator"))
}

/// (num, den) of a stored rational, when both fit 128 bits.
pub fn rational_parts(value: &TaggedValue) -> Option<(i128, i128)> {
    match value {
        TaggedValue::Rational { num, den } => Some((num.parse().ok()?, den.parse().ok()?)),
        _ => None,
    }
}

fn as_f64(value: &TaggedValue) -> Option<f64> {
    Some(match value {
        TaggedValue::Int(v) => *v as f64,
        TaggedValue::Uint64(v) => *v as f64,
        TaggedValue::Float32(v) => f64::from(*v),
        TaggedValue::Float64(v) => *v,
        TaggedValue::BigInt(t) => t.parse().ok()?,
        TaggedValue::Rational { .. } => {
            let (n, d) = rational_parts(value)?;
            n as f64 / d as f64
        }
        _ => return None,
    })
}

/// Go's `compareValues`: strings and bytes by unsigned bytes, false < true, numbers numerically.
pub fn compare(left: &TaggedValue, right: &TaggedValue) -> Result<Ordering, OpError> {
    use TaggedValue as T;
    Ok(match (left, right) {
        (T::String(a), T::String(b)) => a.as_bytes().cmp(b.as_bytes()),
        (T::Bytes(a), T::Bytes(b)) => a.cmp(b),
        (T::Bool(a), T::Bool(b)) => a.cmp(b),
        (T::Int(a), T::Int(b)) => a.cmp(b),
        (T::Uint64(a), T::Uint64(b)) => a.cmp(b),
        (T::Rational { .. }, T::Rational { .. }) => {
            match (rational_parts(left), rational_parts(right)) {
                (Some((an, ad)), Some((bn, bd))) => {
                    match (an.checked_mul(bd), bn.checked_mul(ad)) {
                        (Some(x), Some(y)) => x.cmp(&y),
                        _ => numeric_cmp(left, right)?,
                    }
                }
                _ => numeric_cmp(left, right)?,
            }
        }
        _ => numeric_cmp(left, right)?,
    })
}

fn numeric_cmp(left: &TaggedValue, right: &TaggedValue) -> Result<Ordering, OpError> {
    match (as_f64(left), as_f64(right)) {
        (Some(a), Some(b)) => Ok(a.partial_cmp(&b).unwrap_or(Ordering::Equal)),
        _ => Err(OpError::new(format!(
            "cannot compare {} with {}",
            kind(left),
            kind(right)
        ))),
    }
}

fn kind(value: &TaggedValue) -> &'static str {
    match value {
        TaggedValue::Null => "null",
        TaggedValue::Bool(_) => "bool",
        TaggedValue::String(_) => "string",
        TaggedValue::Bytes(_) => "bytes",
        TaggedValue::Int(_) => "int64",
        TaggedValue::Uint64(_) => "uint64",
        TaggedValue::Float32(_) => "float32",
        TaggedValue::Float64(_) => "float64",
        TaggedValue::BigInt(_) => "big integer",
        TaggedValue::Rational { .. } => "rational",
        TaggedValue::List(_) => "list",
        TaggedValue::Map(_) => "map",
    }
}

/// An integer value (int, u64, big integer text, or an integral rational) as i128.
fn integer(value: &TaggedValue) -> Option<i128> {
    match value {
        TaggedValue::Int(v) => Some((*v).into()),
        TaggedValue::Uint64(v) => Some((*v).into()),
        TaggedValue::BigInt(t) => t.parse().ok(),
        TaggedValue::Bool(b) => Some((*b).into()),
        TaggedValue::Rational { .. } => {
            let (n, d) = rational_parts(value)?;
            (d == 1).then_some(n)
        }
        _ => None,
    }
}

fn overflow(value: &TaggedValue) -> OpError {
    let text = match value {
        TaggedValue::BigInt(t) => t.clone(),
        other => other.to_string(),
    };
    OpError::new(format!("integer overflow: {text}"))
}

fn int_in<T: TryFrom<i128>>(value: &TaggedValue, to: &DataType) -> Result<T, OpError> {
    let n = integer(value).ok_or_else(|| mismatch(value, to))?;
    T::try_from(n).map_err(|_| overflow(value))
}

fn unsigned_in<T: TryFrom<i128>>(
    value: &TaggedValue,
    to: &DataType,
    bits: u32,
) -> Result<T, OpError> {
    let n = integer(value).ok_or_else(|| mismatch(value, to))?;
    T::try_from(n).map_err(|_| OpError::new(format!("unsigned {bits}-bit overflow: {n}")))
}

fn mismatch(value: &TaggedValue, to: &DataType) -> OpError {
    OpError::new(format!(
        "cannot write {} {value} into a {} column",
        kind(value),
        type_name(to)
    ))
}

fn float(value: &TaggedValue, to: &DataType) -> Result<f64, OpError> {
    as_f64(value).ok_or_else(|| mismatch(value, to))
}

/// Builds a column of type `to` from values (null → null), range-checking integers.
/// Long because it has one arm per Arrow type it can build.
pub fn build_array<'a>(
    to: &DataType,
    values: impl ExactSizeIterator<Item = &'a TaggedValue>,
) -> Result<ArrayRef, OpError> {
    use arrow_array::*;
    let len = values.len();
    macro_rules! collect {
        ($array:ty, $convert:expr) => {{
            let mut out = Vec::with_capacity(len);
            for v in values {
                out.push(match v {
                    TaggedValue::Null => None,
                    v => Some($convert(v)?),
                });
            }
            Arc::new(out.into_iter().collect::<$array>()) as ArrayRef
        }};
    }
    let text = |v: &TaggedValue| -> Result<String, OpError> {
        Ok(match v {
            TaggedValue::String(s) => s.clone(),
            TaggedValue::BigInt(t) => t.clone(),
            TaggedValue::Bytes(_) => return Err(mismatch(v, to)),
            other => other.to_string(),
        })
    };
    let bytes = |v: &TaggedValue| -> Result<Vec<u8>, OpError> {
        match v {
            TaggedValue::Bytes(b) => Ok(b.clone()),
            TaggedValue::String(s) => Ok(s.as_bytes().to_vec()),
            other => Err(mismatch(other, to)),
        }
    };
    Ok(match to {
        DataType::Utf8 => {
            // Borrow the text instead of cloning it; other values fall back to their rendering.
            let mut builder = arrow_array::builder::StringBuilder::with_capacity(len, len * 8);
            for v in values {
                match v {
                    TaggedValue::Null => builder.append_null(),
                    TaggedValue::String(s) => builder.append_value(s),
                    other => builder.append_value(text(other)?),
                }
            }
            Arc::new(builder.finish())
        }
        DataType::Int64 => {
            let mut out = Vec::with_capacity(len);
            for v in values {
                out.push(match v {
                    TaggedValue::Null => None,
                    TaggedValue::Int(n) => Some(*n),
                    other => Some(int_in::<i64>(other, to)?),
                });
            }
            Arc::new(Int64Array::from(out))
        }
        DataType::Null => arrow_array::new_null_array(to, len),
        DataType::Boolean => collect!(BooleanArray, |v: &TaggedValue| match v {
            TaggedValue::Bool(b) => Ok(*b),
            other => Err(mismatch(other, to)),
        }),
        DataType::LargeUtf8 => collect!(LargeStringArray, text),
        DataType::Binary => collect!(BinaryArray, bytes),
        DataType::LargeBinary => collect!(LargeBinaryArray, bytes),
        DataType::Int8 => collect!(Int8Array, |v| int_in::<i8>(v, to)),
        DataType::Int16 => collect!(Int16Array, |v| int_in::<i16>(v, to)),
        DataType::Int32 => collect!(Int32Array, |v| int_in::<i32>(v, to)),
        DataType::UInt8 => collect!(UInt8Array, |v| unsigned_in::<u8>(v, to, 8)),
        DataType::UInt16 => collect!(UInt16Array, |v| unsigned_in::<u16>(v, to, 16)),
        DataType::UInt32 => collect!(UInt32Array, |v| unsigned_in::<u32>(v, to, 32)),
        DataType::UInt64 => collect!(UInt64Array, |v| unsigned_in::<u64>(v, to, 64)),
        DataType::Float32 => collect!(Float32Array, |v| float(v, to).map(|f| f as f32)),
        DataType::Float64 => collect!(Float64Array, |v| float(v, to)),
        DataType::Date32 => collect!(Date32Array, |v| int_in::<i32>(v, to)),
        DataType::Date64 => collect!(Date64Array, |v| int_in::<i64>(v, to)),
        DataType::Timestamp(unit, zone) => {
            let values = collect!(Int64Array, |v| int_in::<i64>(v, to));
            let data = values
                .to_data()
                .into_builder()
                .data_type(DataType::Timestamp(*unit, zone.clone()));
            arrow_array::make_array(data.build().map_err(OpError::from)?)
        }
        DataType::Time32(_) => {
            let values = collect!(Int32Array, |v| int_in::<i32>(v, to));
            arrow_array::make_array(
                values
                    .to_data()
                    .into_builder()
                    .data_type(to.clone())
                    .build()?,
            )
        }
        DataType::Time64(_) => {
            let values = collect!(Int64Array, |v| int_in::<i64>(v, to));
            arrow_array::make_array(
                values
                    .to_data()
                    .into_builder()
                    .data_type(to.clone())
                    .build()?,
            )
        }
        DataType::Decimal128(precision, scale) => {
            let factor = 10i128.pow((*scale).max(0) as u32);
            let unscaled = |v: &TaggedValue| -> Result<i128, OpError> {
                let (n, d) = match v {
                    TaggedValue::Rational { .. } => rational_parts(v).ok_or_else(|| overflow(v))?,
                    other => (integer(other).ok_or_else(|| mismatch(other, to))?, 1),
                };
                let scaled = n.checked_mul(factor).ok_or_else(|| overflow(v))?;
                if scaled % d != 0 {
                    return Err(OpError::new(format!(
                        "decimal value does not fit scale {scale}"
                    )));
                }
                Ok(scaled / d)
            };
            let values = collect!(Decimal128Array, unscaled);
            let values = values
                .as_any()
                .downcast_ref::<Decimal128Array>()
                .expect("decimal")
                .clone()
                .with_precision_and_scale(*precision, *scale)?;
            Arc::new(values)
        }
        other => {
            return Err(OpError::new(format!(
                "cannot write values into a {} column",
                type_name(other)
            )));
        }
    })
}
