//! The one error type of the barrier codecs (`__barrier_state` records and barrier markers).
//!
//! Display strings are frozen by formats §7: each names the part of the record that failed,
//! e.g. `truncated barrier state key` or `negative array length -1 in barrier state cut value`.
//! The bare strings are printed, without krabka-streams-rs's `malformed barrier state key:` prefix.

use std::fmt;

/// The encoded part a codec error is about; its display is the noun used in the frozen messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordPart {
    /// A `__barrier_state` key (every kind): `barrier state key`.
    Key,
    /// A kind 0 value: `barrier state group value`.
    GroupValue,
    /// A kind 1 value: `barrier state injection value`.
    InjectionValue,
    /// A kind 2 value: `barrier state cut value`.
    CutValue,
    /// The control key of a barrier marker: `barrier marker key`.
    MarkerKey,
    /// The value of a barrier marker: `barrier marker value`.
    MarkerValue,
}

impl fmt::Display for RecordPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordPart::Key => "barrier state key",
            RecordPart::GroupValue => "barrier state group value",
            RecordPart::InjectionValue => "barrier state injection value",
            RecordPart::CutValue => "barrier state cut value",
            RecordPart::MarkerKey => "barrier marker key",
            RecordPart::MarkerValue => "barrier marker value",
        })
    }
}

/// Why bytes could not be decoded as, or a value could not be encoded to, a barrier record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierCodecError {
    /// The buffer ended before a field.
    #[error("truncated {0}")]
    Truncated(RecordPart),
    /// Bytes were left after the last field.
    #[error("trailing bytes in {0}")]
    TrailingBytes(RecordPart),
    /// A kstring length below zero.
    #[error("negative string length {length} in {part}")]
    NegativeStringLength { part: RecordPart, length: i16 },
    /// An array count below zero.
    #[error("negative array length {length} in {part}")]
    NegativeArrayLength { part: RecordPart, length: i32 },
    /// A kstring whose bytes are not UTF-8 (strict decision; Java decodes leniently).
    #[error("non-UTF-8 string in {0}")]
    NonUtf8(RecordPart),
    /// A version other than 0 at the start of a key or value.
    #[error("unsupported {part} version {version}")]
    UnsupportedVersion { part: RecordPart, version: i16 },
    /// A cut status other than 0 (complete) or 1 (partial).
    #[error("unknown barrier cut status {0}")]
    UnknownCutStatus(i8),
    /// A marker key whose control type is not 1000 (Kafka's 0 ABORT and 1 COMMIT included).
    #[error("unexpected control type {0} in barrier marker key")]
    UnexpectedControlType(i16),
    /// Encoding only: a string longer than a kstring can hold (32767 bytes).
    #[error("string of {length} bytes is longer than 32767 in {part}")]
    StringTooLong { part: RecordPart, length: usize },
    /// Encoding only: more items than an `i32` count can hold.
    #[error("array of {length} items is longer than 2147483647 in {part}")]
    ArrayTooLong { part: RecordPart, length: usize },
}

impl BarrierCodecError {
    /// The part of the record the error is about.
    pub fn part(&self) -> RecordPart {
        match self {
            BarrierCodecError::Truncated(part)
            | BarrierCodecError::TrailingBytes(part)
            | BarrierCodecError::NonUtf8(part)
            | BarrierCodecError::NegativeStringLength { part, .. }
            | BarrierCodecError::NegativeArrayLength { part, .. }
            | BarrierCodecError::UnsupportedVersion { part, .. }
            | BarrierCodecError::StringTooLong { part, .. }
            | BarrierCodecError::ArrayTooLong { part, .. } => *part,
            BarrierCodecError::UnknownCutStatus(_) => RecordPart::CutValue,
            BarrierCodecError::UnexpectedControlType(_) => RecordPart::MarkerKey,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_the_frozen_strings_of_formats_section_7() {
        let cases = [
            (
                BarrierCodecError::Truncated(RecordPart::Key),
                "truncated barrier state key",
            ),
            (
                BarrierCodecError::Truncated(RecordPart::CutValue),
                "truncated barrier state cut value",
            ),
            (
                BarrierCodecError::NegativeStringLength {
                    part: RecordPart::Key,
                    length: -1,
                },
                "negative string length -1 in barrier state key",
            ),
            (
                BarrierCodecError::NegativeArrayLength {
                    part: RecordPart::CutValue,
                    length: -1,
                },
                "negative array length -1 in barrier state cut value",
            ),
            (
                BarrierCodecError::TrailingBytes(RecordPart::Key),
                "trailing bytes in barrier state key",
            ),
            (
                BarrierCodecError::TrailingBytes(RecordPart::CutValue),
                "trailing bytes in barrier state cut value",
            ),
            (
                BarrierCodecError::UnsupportedVersion {
                    part: RecordPart::Key,
                    version: 9,
                },
                "unsupported barrier state key version 9",
            ),
            (
                BarrierCodecError::UnsupportedVersion {
                    part: RecordPart::CutValue,
                    version: 1,
                },
                "unsupported barrier state cut value version 1",
            ),
            (
                BarrierCodecError::UnknownCutStatus(2),
                "unknown barrier cut status 2",
            ),
            (
                BarrierCodecError::NonUtf8(RecordPart::CutValue),
                "non-UTF-8 string in barrier state cut value",
            ),
            (
                BarrierCodecError::Truncated(RecordPart::GroupValue),
                "truncated barrier state group value",
            ),
            (
                BarrierCodecError::Truncated(RecordPart::InjectionValue),
                "truncated barrier state injection value",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn status_errors_belong_to_the_cut_value() {
        assert_eq!(
            BarrierCodecError::UnknownCutStatus(2).part(),
            RecordPart::CutValue
        );
    }
}
