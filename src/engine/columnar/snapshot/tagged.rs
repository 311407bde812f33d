//! Go tagged values (formats §8.5): the encoding krabka-streams-go uses for group
//! keys and aggregates inside GroupBy snapshots.
//!
//! One tag byte, then the payload; "sized" = `u32` length + bytes. Decoding is
//! strict and canonical, so that decode → encode gives the same bytes: text must
//! be UTF-8, big integers and rationals must be in the form Go's `big` package
//! prints, and map keys must be strictly ascending (Go writes them sorted and a
//! map cannot repeat a key). Nesting is bounded so no input can exhaust the stack.

use std::fmt;

use crate::engine::bytes::Reader;

/// Lists and maps may nest at most this deep when decoding.
pub const MAX_NESTING: usize = 64;

/// One Go value as stored in a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum TaggedValue {
    /// `n`
    Null,
    /// `t` / `F`
    Bool(bool),
    /// `s`: sized UTF-8.
    String(String),
    /// `b`: sized bytes.
    Bytes(Vec<u8>),
    /// `i`: every signed integer width, and u8/u16/u32.
    Int(i64),
    /// `u`: u64 (never equal to an `Int`).
    Uint64(u64),
    /// `g`: a float32, stored as the bits of the widened float64.
    Float32(f32),
    /// `f`
    Float64(f64),
    /// `I`: decimal text, canonical (`-?(0|[1-9][0-9]*)`, no `-0`).
    BigInt(String),
    /// `R`: `num/den` in lowest terms, or `num` alone when `den` is 1.
    /// Both are canonical decimal text; `den` is positive.
    Rational { num: String, den: String },
    /// `L`
    List(Vec<TaggedValue>),
    /// `M`: map or struct; encoded in ascending key order.
    Map(Vec<(String, TaggedValue)>),
}

/// Why a tagged value could not be decoded. `truncated snapshot` and the tag
/// message are Go's wording; the others are ours for its silent leniencies.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaggedError {
    #[error("truncated snapshot")]
    Truncated,
    #[error("unknown snapshot value tag {}", go_quote(*.0))]
    UnknownTag(u8),
    #[error("invalid UTF-8 in snapshot text")]
    InvalidUtf8,
    #[error("invalid integer in snapshot")]
    InvalidInteger,
    #[error("invalid rational in snapshot")]
    InvalidRational,
    #[error("invalid float32 in snapshot")]
    InvalidFloat32,
    #[error("snapshot map keys are not in ascending order")]
    UnsortedMapKeys,
    #[error("snapshot values nest deeper than {MAX_NESTING}")]
    TooDeep,
    #[error("trailing bytes after snapshot value")]
    Trailing,
}

impl TaggedValue {
    /// A rational reduced to lowest terms (the only form Go writes); `None` when `den` is 0.
    pub fn rational(num: i128, den: i128) -> Option<TaggedValue> {
        if den == 0 {
            return None;
        }
        let g = gcd(num.unsigned_abs(), den.unsigned_abs());
        let sign = if (num < 0) != (den < 0) && num != 0 {
            "-"
        } else {
            ""
        };
        Some(TaggedValue::Rational {
            num: format!("{sign}{}", num.unsigned_abs() / g),
            den: (den.unsigned_abs() / g).to_string(),
        })
    }

    /// The tagged bytes of this value.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Appends the tagged bytes of this value; map entries are written sorted by key bytes.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            TaggedValue::Null => out.push(b'n'),
            TaggedValue::Bool(true) => out.push(b't'),
            TaggedValue::Bool(false) => out.push(b'F'),
            TaggedValue::String(s) => put_sized(out, b's', s.as_bytes()),
            TaggedValue::Bytes(b) => put_sized(out, b'b', b),
            TaggedValue::Int(v) => {
                out.push(b'i');
                out.extend_from_slice(&v.to_be_bytes());
            }
            TaggedValue::Uint64(v) => {
                out.push(b'u');
                out.extend_from_slice(&v.to_be_bytes());
            }
            TaggedValue::Float32(v) => {
                out.push(b'g');
                out.extend_from_slice(&f64::from(*v).to_bits().to_be_bytes());
            }
            TaggedValue::Float64(v) => {
                out.push(b'f');
                out.extend_from_slice(&v.to_bits().to_be_bytes());
            }
            TaggedValue::BigInt(text) => put_sized(out, b'I', text.as_bytes()),
            TaggedValue::Rational { num, den } => {
                if den == "1" {
                    put_sized(out, b'R', num.as_bytes());
                } else {
                    put_sized(out, b'R', format!("{num}/{den}").as_bytes());
                }
            }
            TaggedValue::List(items) => {
                out.push(b'L');
                out.extend_from_slice(&(items.len() as u32).to_be_bytes());
                for item in items {
                    item.encode_into(out);
                }
            }
            TaggedValue::Map(entries) => {
                let mut sorted: Vec<&(String, TaggedValue)> = entries.iter().collect();
                sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                out.push(b'M');
                out.extend_from_slice(&(sorted.len() as u32).to_be_bytes());
                for (key, value) in sorted {
                    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
                    out.extend_from_slice(key.as_bytes());
                    value.encode_into(out);
                }
            }
        }
    }

    /// Decodes exactly one tagged value occupying all of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<TaggedValue, TaggedError> {
        let mut reader = Reader::new(bytes);
        let value = read_value(&mut reader)?;
        if !reader.is_empty() {
            return Err(TaggedError::Trailing);
        }
        Ok(value)
    }
}

/// Reads one tagged value from a shared cursor (used by the GroupBy payload).
pub(crate) fn read_value(reader: &mut Reader<'_>) -> Result<TaggedValue, TaggedError> {
    read_nested(reader, 0)
}

fn read_nested(reader: &mut Reader<'_>, depth: usize) -> Result<TaggedValue, TaggedError> {
    let tag = reader.u8().ok_or(TaggedError::Truncated)?;
    Ok(match tag {
        b'n' => TaggedValue::Null,
        b't' => TaggedValue::Bool(true),
        b'F' => TaggedValue::Bool(false),
        b's' => TaggedValue::String(read_text(reader)?),
        b'b' => TaggedValue::Bytes(read_sized(reader)?.to_vec()),
        b'i' => TaggedValue::Int(reader.i64().ok_or(TaggedError::Truncated)?),
        b'u' => TaggedValue::Uint64(reader.u64().ok_or(TaggedError::Truncated)?),
        b'g' => {
            // Go narrows the stored float64 back to float32; only a widened
            // float32 survives that unchanged, so nothing else is accepted.
            let bits = reader.u64().ok_or(TaggedError::Truncated)?;
            let narrowed = f64::from_bits(bits) as f32;
            if f64::from(narrowed).to_bits() != bits {
                return Err(TaggedError::InvalidFloat32);
            }
            TaggedValue::Float32(narrowed)
        }
        b'f' => TaggedValue::Float64(f64::from_bits(reader.u64().ok_or(TaggedError::Truncated)?)),
        b'I' => {
            let text = read_text(reader)?;
            if !is_canonical_integer(&text) {
                return Err(TaggedError::InvalidInteger);
            }
            TaggedValue::BigInt(text)
        }
        b'R' => read_rational(reader)?,
        b'L' => {
            let depth = nest(depth)?;
            let count = reader.u32().ok_or(TaggedError::Truncated)?;
            // Every item takes at least one byte.
            let mut items = Vec::with_capacity((count as usize).min(reader.remaining()));
            for _ in 0..count {
                items.push(read_nested(reader, depth)?);
            }
            TaggedValue::List(items)
        }
        b'M' => {
            let depth = nest(depth)?;
            let count = reader.u32().ok_or(TaggedError::Truncated)?;
            // Every entry takes at least five bytes (key length + tag).
            let mut entries: Vec<(String, TaggedValue)> =
                Vec::with_capacity((count as usize).min(reader.remaining() / 5));
            for _ in 0..count {
                let key = read_text(reader)?;
                if let Some((previous, _)) = entries.last()
                    && previous.as_bytes() >= key.as_bytes()
                {
                    return Err(TaggedError::UnsortedMapKeys);
                }
                let value = read_nested(reader, depth)?;
                entries.push((key, value));
            }
            TaggedValue::Map(entries)
        }
        other => return Err(TaggedError::UnknownTag(other)),
    })
}

fn nest(depth: usize) -> Result<usize, TaggedError> {
    if depth >= MAX_NESTING {
        Err(TaggedError::TooDeep)
    } else {
        Ok(depth + 1)
    }
}

fn read_sized<'a>(reader: &mut Reader<'a>) -> Result<&'a [u8], TaggedError> {
    let len = reader.u32().ok_or(TaggedError::Truncated)?;
    reader.take(len as usize).ok_or(TaggedError::Truncated)
}

fn read_text(reader: &mut Reader<'_>) -> Result<String, TaggedError> {
    let bytes = read_sized(reader)?;
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|_| TaggedError::InvalidUtf8)
}

fn read_rational(reader: &mut Reader<'_>) -> Result<TaggedValue, TaggedError> {
    let text = read_text(reader)?;
    let (num, den) = match text.split_once('/') {
        None => (text.as_str(), "1"),
        Some((num, den)) => {
            // Go writes `num` alone when den = 1, and never a non-positive den.
            if den == "1" || den.starts_with('-') || den == "0" {
                return Err(TaggedError::InvalidRational);
            }
            (num, den)
        }
    };
    if !is_canonical_integer(num) || !is_canonical_integer(den) {
        return Err(TaggedError::InvalidRational);
    }
    if !in_lowest_terms(num, den) {
        return Err(TaggedError::InvalidRational);
    }
    Ok(TaggedValue::Rational {
        num: num.to_owned(),
        den: den.to_owned(),
    })
}

/// `-?(0|[1-9][0-9]*)` without `-0`: the text Go's `big.Int.String` produces.
fn is_canonical_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0"
}

/// Checked exactly when both fit in `u128`; beyond that the text is accepted as
/// written (lowest terms cannot be verified without arbitrary precision).
fn in_lowest_terms(num: &str, den: &str) -> bool {
    let num = num.strip_prefix('-').unwrap_or(num);
    match (num.parse::<u128>(), den.parse::<u128>()) {
        (Ok(n), Ok(d)) => gcd(n, d) == 1 || (n == 0 && d == 1),
        _ => true,
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

fn put_sized(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A byte quoted as Go's `%q` quotes it (as a rune): `'z'`, `'\''`, `'\x00'`, `'\u0080'`, `'é'`.
fn go_quote(tag: u8) -> String {
    let c = char::from(tag);
    let body = match c {
        '\'' => "\\'".to_owned(),
        '\\' => "\\\\".to_owned(),
        '\u{7}' => "\\a".to_owned(),
        '\u{8}' => "\\b".to_owned(),
        '\u{c}' => "\\f".to_owned(),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        '\t' => "\\t".to_owned(),
        '\u{b}' => "\\v".to_owned(),
        c if c < ' ' || c == '\u{7f}' => format!("\\x{tag:02x}"),
        // C1 controls, no-break space and soft hyphen are not printable in Go.
        c if ('\u{80}'..='\u{a0}').contains(&c) || c == '\u{ad}' => format!("\\u{tag:04x}"),
        c => c.to_string(),
    };
    format!("'{body}'")
}

impl fmt::Display for TaggedValue {
    /// A compact human rendering for snapshot dumps: `null`, `true`, `"text"`,
    /// `0x0102`, `5`, `5u64`, `1.5f32`, `1.5`, `8n` (big integer), `1/2`, `[…]`, `{k: v}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaggedValue::Null => f.write_str("null"),
            TaggedValue::Bool(b) => write!(f, "{b}"),
            TaggedValue::String(s) => write!(f, "{s:?}"),
            TaggedValue::Bytes(b) => write!(f, "0x{}", hex::encode(b)),
            TaggedValue::Int(v) => write!(f, "{v}"),
            TaggedValue::Uint64(v) => write!(f, "{v}u64"),
            TaggedValue::Float32(v) => write!(f, "{v:?}f32"),
            TaggedValue::Float64(v) => write!(f, "{v:?}"),
            TaggedValue::BigInt(v) => write!(f, "{v}n"),
            TaggedValue::Rational { num, den } => write!(f, "{num}/{den}"),
            TaggedValue::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            TaggedValue::Map(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key:?}: {value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_round_trips() {
        let value = TaggedValue::List(vec![
            TaggedValue::Null,
            TaggedValue::Bool(true),
            TaggedValue::Bool(false),
            TaggedValue::String("é".into()),
            TaggedValue::Bytes(vec![0, 255]),
            TaggedValue::Int(i64::MIN),
            TaggedValue::Uint64(u64::MAX),
            TaggedValue::Float32(-0.25),
            TaggedValue::Float64(f64::INFINITY),
            TaggedValue::BigInt("-123456789012345678901234567890".into()),
            TaggedValue::rational(-2, 4).unwrap(),
            TaggedValue::rational(6, 3).unwrap(),
            TaggedValue::Map(vec![("a".into(), TaggedValue::List(vec![]))]),
        ]);
        let bytes = value.encode();
        assert_eq!(TaggedValue::decode(&bytes), Ok(value));
    }

    #[test]
    fn rational_constructor_reduces() {
        assert_eq!(
            TaggedValue::rational(-2, 4).unwrap().encode(),
            [&b"R\0\0\0\x04"[..], b"-1/2"].concat()
        );
        assert_eq!(
            TaggedValue::rational(6, -3).unwrap().encode(),
            b"R\0\0\0\x02-2"
        );
        assert_eq!(
            TaggedValue::rational(0, 5).unwrap().encode(),
            b"R\0\0\0\x010"
        );
        assert_eq!(TaggedValue::rational(1, 0), None);
    }

    #[test]
    fn unknown_tags_are_quoted_like_go() {
        let msg = |b: u8| TaggedValue::decode(&[b]).unwrap_err().to_string();
        assert_eq!(msg(b'z'), "unknown snapshot value tag 'z'");
        assert_eq!(msg(0), "unknown snapshot value tag '\\x00'");
        assert_eq!(msg(b'\''), "unknown snapshot value tag '\\''");
        assert_eq!(msg(b'\n'), "unknown snapshot value tag '\\n'");
        assert_eq!(msg(0x85), "unknown snapshot value tag '\\u0085'");
        assert_eq!(msg(0xe9), "unknown snapshot value tag 'é'");
    }

    #[test]
    fn non_canonical_numbers_are_rejected() {
        let sized = |tag: u8, text: &str| {
            let mut out = Vec::new();
            put_sized(&mut out, tag, text.as_bytes());
            TaggedValue::decode(&out)
        };
        for text in ["", "+1", "01", "-0", "1.5", "1_000", " 1"] {
            assert_eq!(
                sized(b'I', text),
                Err(TaggedError::InvalidInteger),
                "{text}"
            );
        }
        for text in ["1/1", "2/4", "1/0", "1/-2", "-1/02", "1/2/3", "/2", "x"] {
            assert_eq!(
                sized(b'R', text),
                Err(TaggedError::InvalidRational),
                "{text}"
            );
        }
        assert!(sized(b'R', "-1/2").is_ok());
        assert_eq!(sized(b's', "\u{ff}").map(|_| ()), Ok(()));
        let mut bad_utf8 = vec![b's', 0, 0, 0, 1, 0xff];
        assert_eq!(
            TaggedValue::decode(&bad_utf8),
            Err(TaggedError::InvalidUtf8)
        );
        bad_utf8[0] = b'b';
        assert!(TaggedValue::decode(&bad_utf8).is_ok());
    }

    #[test]
    fn float32_must_be_a_widened_float32() {
        let mut bytes = vec![b'g'];
        bytes.extend_from_slice(&0.1f64.to_bits().to_be_bytes());
        assert_eq!(
            TaggedValue::decode(&bytes),
            Err(TaggedError::InvalidFloat32)
        );
        let nan = TaggedValue::Float32(f32::NAN).encode();
        assert!(matches!(TaggedValue::decode(&nan), Ok(TaggedValue::Float32(v)) if v.is_nan()));
    }

    #[test]
    fn map_keys_must_ascend() {
        let unsorted = [
            b'M', 0, 0, 0, 2, 0, 0, 0, 1, b'b', b'n', 0, 0, 0, 1, b'a', b'n',
        ];
        assert_eq!(
            TaggedValue::decode(&unsorted),
            Err(TaggedError::UnsortedMapKeys)
        );
        let duplicate = [
            b'M', 0, 0, 0, 2, 0, 0, 0, 1, b'a', b'n', 0, 0, 0, 1, b'a', b'n',
        ];
        assert_eq!(
            TaggedValue::decode(&duplicate),
            Err(TaggedError::UnsortedMapKeys)
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut bytes = Vec::new();
        for _ in 0..100_000 {
            bytes.extend_from_slice(&[b'L', 0, 0, 0, 1]);
        }
        bytes.push(b'n');
        assert_eq!(TaggedValue::decode(&bytes), Err(TaggedError::TooDeep));
    }

    #[test]
    fn huge_counts_do_not_allocate() {
        assert_eq!(
            TaggedValue::decode(&[b'L', 0xff, 0xff, 0xff, 0xff]),
            Err(TaggedError::Truncated)
        );
        assert_eq!(
            TaggedValue::decode(&[b'b', 0xff, 0xff, 0xff, 0xff, 1]),
            Err(TaggedError::Truncated)
        );
    }

    #[test]
    fn display_is_compact() {
        let value = TaggedValue::Map(vec![
            ("k".into(), TaggedValue::rational(1, 2).unwrap()),
            ("n".into(), TaggedValue::BigInt("8".into())),
        ]);
        assert_eq!(value.to_string(), "{\"k\": 1/2, \"n\": 8n}");
    }
}
