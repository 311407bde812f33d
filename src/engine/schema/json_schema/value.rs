//! JSON values compared as JSON Schema compares them: numbers by value (1 == 1.0),
//! objects regardless of key order; exact decimal `multipleOf`.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use serde_json::{Number, Value};

use super::draft::Draft;

/// An integer by the draft's rules: draft 4 counts only numbers written without a
/// fraction; later drafts any number whose fraction is zero.
pub fn is_integer(value: &Value, draft: Draft) -> bool {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => true,
        // serde_json keeps integers beyond 64 bits as floats: one that large with no
        // fraction was written as an integer, even in draft 4.
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && (draft > Draft::Draft4 || f.abs() >= 9.2e18)),
        _ => false,
    }
}

fn as_int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// `a` against `b` by value; integers stay exact beyond 2^53.
pub fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => compare_int_float(x, b.as_f64()?),
        (None, Some(y)) => compare_int_float(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn compare_int_float(x: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= 1.7e38 {
        return Some(Ordering::Less);
    }
    if f <= -1.7e38 {
        return Some(Ordering::Greater);
    }
    let floor = f.floor();
    match x.cmp(&(floor as i128)) {
        Ordering::Equal if f > floor => Some(Ordering::Less),
        other => Some(other),
    }
}

/// JSON equality: numbers by value, arrays in order, objects by their members.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A hash consistent with [`json_equal`], so that `uniqueItems` compares only the items
/// that may be equal instead of every pair.
pub fn json_hash(value: &Value, state: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(state),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => {
            2u8.hash(state);
            match as_int(n) {
                Some(i) => (i as f64).to_bits().hash(state),
                None => {
                    let f = n.as_f64().unwrap_or(0.0);
                    // -0.0 == 0.0; every other float's bits are its value.
                    (if f == 0.0 { 0.0f64 } else { f }).to_bits().hash(state)
                }
            }
        }
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            for item in items {
                json_hash(item, state);
            }
        }
        Value::Object(map) => {
            // Member order must not matter: combine the members' hashes commutatively.
            let mut sum = 0u64;
            for (k, v) in map {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                k.hash(&mut h);
                json_hash(v, &mut h);
                sum = sum.wrapping_add(h.finish());
            }
            (5u8, map.len(), sum).hash(state);
        }
    }
}

/// `(digits, exponent)` with `value = ±digits * 10^exponent`, from the shortest decimal
/// that reads back as the number: `multipleOf` is decided on the decimals as written.
fn decimal(n: &Number) -> Option<(u128, i32)> {
    if let Some(i) = as_int(n) {
        return Some((i.unsigned_abs(), 0));
    }
    let text = format!("{:e}", n.as_f64()?.abs());
    let (mantissa, exp) = text.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: u128 = format!("{whole}{frac}").parse().ok()?;
    Some((digits, exp - frac.len() as i32))
}

fn pow10_mod(mut exp: u32, m: u128) -> u128 {
    let mut result = 1 % m;
    let mut base = 10 % m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = result * base % m;
        }
        base = base * base % m;
        exp >>= 1;
    }
    result
}

/// Whether `value` is an integer multiple of `divisor` (> 0), exactly in decimal.
pub fn is_multiple_of(value: &Number, divisor: &Number) -> bool {
    let (Some((a, ea)), Some((b, eb))) = (decimal(value), decimal(divisor)) else {
        return false;
    };
    if a == 0 {
        return true;
    }
    if b == 0 {
        return false;
    }
    // Digits stay below 10^18, so products of two residues fit in u128.
    let k = ea - eb;
    if k >= 0 {
        ((a % b) * pow10_mod(k as u32, b)).is_multiple_of(b)
    } else {
        match 10u128
            .checked_pow((-k) as u32)
            .and_then(|p| p.checked_mul(b))
        {
            Some(d) => a % d == 0,
            None => false,
        }
    }
}
