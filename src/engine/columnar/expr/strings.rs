//! String functions over whole Utf8 columns. Where Arrow has a kernel
//! (`substring_by_char`, `concat_elements_utf8`, `length`) it is used; lower,
//! upper and trim rewrite the value buffer in one pass, with a byte-level fast
//! path when the column is ASCII.

use std::sync::Arc;

use arrow::compute::kernels::concat_elements::concat_elements_utf8;
use arrow::compute::kernels::length::length;
use arrow::compute::kernels::substring::substring_by_char;
use arrow_array::{Array, ArrayRef, Int32Array, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer};

use super::compile::Func;
use super::{EvalError, arrow_error};

fn utf8(array: &ArrayRef) -> Result<&StringArray, EvalError> {
    array
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| EvalError(format!("expected utf8, got {}", array.data_type())))
}

pub(super) fn call(func: &Func, args: &[ArrayRef]) -> Result<ArrayRef, EvalError> {
    match func {
        Func::Lower => map_text(
            utf8(&args[0])?,
            |b| b.to_ascii_lowercase(),
            str::to_lowercase,
        ),
        Func::Upper => map_text(
            utf8(&args[0])?,
            |b| b.to_ascii_uppercase(),
            str::to_uppercase,
        ),
        Func::Length => char_length(utf8(&args[0])?),
        Func::Trim { leading, trailing } => Ok(trim(utf8(&args[0])?, *leading, *trailing)),
        Func::Substr { start, length } => {
            // SQL positions are 1-based; a start before 1 eats into the length.
            let text = utf8(&args[0])?;
            let (from, len) = if *start >= 1 {
                (start - 1, *length)
            } else {
                let lost = (1 - start) as u64;
                (0, length.map(|l| l.saturating_sub(lost)))
            };
            substring_by_char(text, from, len)
                .map(|a| Arc::new(a) as ArrayRef)
                .map_err(arrow_error)
        }
        Func::Concat => {
            let mut acc = utf8(&args[0])?.clone();
            for next in &args[1..] {
                acc = concat_elements_utf8(&acc, utf8(next)?).map_err(arrow_error)?;
            }
            Ok(Arc::new(acc))
        }
        Func::Coalesce => unreachable!("coalesce is not a string function"),
    }
}

/// Lower/upper case: ASCII columns map bytes in place of the value buffer (same
/// offsets, same nulls); others go through Unicode case mapping per value.
fn map_text(
    text: &StringArray,
    ascii: impl Fn(&[u8]) -> Vec<u8>,
    unicode: impl Fn(&str) -> String,
) -> Result<ArrayRef, EvalError> {
    let values = text.values();
    if values.is_ascii() {
        let mapped = Buffer::from_vec(ascii(values.as_slice()));
        let out = StringArray::try_new(text.offsets().clone(), mapped, text.nulls().cloned())
            .map_err(arrow_error)?;
        return Ok(Arc::new(out));
    }
    Ok(Arc::new(
        text.iter()
            .map(|v| v.map(&unicode))
            .collect::<StringArray>(),
    ))
}

fn char_length(text: &StringArray) -> Result<ArrayRef, EvalError> {
    if text.values().is_ascii() {
        return length(text).map_err(arrow_error);
    }
    Ok(Arc::new(
        text.iter()
            .map(|v| v.map(|s| s.chars().count() as i32))
            .collect::<Int32Array>(),
    ))
}

fn trim(text: &StringArray, leading: bool, trailing: bool) -> ArrayRef {
    let mut values: Vec<u8> = Vec::with_capacity(text.values().len());
    let mut offsets: Vec<i32> = Vec::with_capacity(text.len() + 1);
    offsets.push(0);
    for i in 0..text.len() {
        if !text.is_null(i) {
            let mut s = text.value(i);
            if leading {
                s = s.trim_start();
            }
            if trailing {
                s = s.trim_end();
            }
            values.extend_from_slice(s.as_bytes());
        }
        offsets.push(values.len() as i32);
    }
    let offsets = OffsetBuffer::new(offsets.into());
    Arc::new(
        StringArray::try_new(offsets, Buffer::from_vec(values), text.nulls().cloned())
            .expect("valid UTF-8 slices of valid UTF-8"),
    )
}
