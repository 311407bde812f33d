//! Wire primitives shared by the barrier codecs: a strict cursor that maps every failure to
//! the part being decoded, and writers for kstrings and `i32` counts (formats §0).
//!
//! Private to the barrier module; nothing here allocates from an untrusted count up front,
//! so a hostile count fails as truncation instead of exhausting memory.

use super::error::{BarrierCodecError, RecordPart};
use crate::engine::bytes::Reader;

/// The only version of every barrier key and value.
pub(super) const VERSION: i16 = 0;

/// A strict big-endian cursor over one part of a record.
pub(super) struct PartReader<'a> {
    bytes: Reader<'a>,
    part: RecordPart,
}

impl<'a> PartReader<'a> {
    pub(super) fn new(buf: &'a [u8], part: RecordPart) -> Self {
        PartReader {
            bytes: Reader::new(buf),
            part,
        }
    }

    fn truncated(&self) -> BarrierCodecError {
        BarrierCodecError::Truncated(self.part)
    }

    pub(super) fn i8(&mut self) -> Result<i8, BarrierCodecError> {
        self.bytes.i8().ok_or_else(|| self.truncated())
    }

    pub(super) fn i16(&mut self) -> Result<i16, BarrierCodecError> {
        self.bytes.i16().ok_or_else(|| self.truncated())
    }

    pub(super) fn i32(&mut self) -> Result<i32, BarrierCodecError> {
        self.bytes.i32().ok_or_else(|| self.truncated())
    }

    pub(super) fn i64(&mut self) -> Result<i64, BarrierCodecError> {
        self.bytes.i64().ok_or_else(|| self.truncated())
    }

    /// Reads the leading `i16` version and rejects anything but 0.
    pub(super) fn version(&mut self) -> Result<(), BarrierCodecError> {
        let version = self.i16()?;
        if version != VERSION {
            return Err(BarrierCodecError::UnsupportedVersion {
                part: self.part,
                version,
            });
        }
        Ok(())
    }

    /// Reads a kstring: `i16` length, then that many UTF-8 bytes.
    pub(super) fn kstring(&mut self) -> Result<String, BarrierCodecError> {
        let length = self.i16()?;
        if length < 0 {
            return Err(BarrierCodecError::NegativeStringLength {
                part: self.part,
                length,
            });
        }
        let raw = self
            .bytes
            .take(length as usize)
            .ok_or_else(|| self.truncated())?;
        std::str::from_utf8(raw)
            .map(str::to_owned)
            .map_err(|_| BarrierCodecError::NonUtf8(self.part))
    }

    /// Reads an `i32` array count and rejects negative ones.
    pub(super) fn count(&mut self) -> Result<usize, BarrierCodecError> {
        let length = self.i32()?;
        if length < 0 {
            return Err(BarrierCodecError::NegativeArrayLength {
                part: self.part,
                length,
            });
        }
        Ok(length as usize)
    }

    /// Succeeds only when every byte was consumed.
    pub(super) fn finish(self) -> Result<(), BarrierCodecError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(BarrierCodecError::TrailingBytes(self.part))
        }
    }
}

/// Appends a kstring, refusing strings longer than 32767 bytes.
pub(super) fn put_kstring(
    out: &mut Vec<u8>,
    text: &str,
    part: RecordPart,
) -> Result<(), BarrierCodecError> {
    let length = i16::try_from(text.len()).map_err(|_| BarrierCodecError::StringTooLong {
        part,
        length: text.len(),
    })?;
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

/// Appends an `i32` array count, refusing lengths beyond `i32::MAX`.
pub(super) fn put_count(
    out: &mut Vec<u8>,
    length: usize,
    part: RecordPart,
) -> Result<(), BarrierCodecError> {
    let count =
        i32::try_from(length).map_err(|_| BarrierCodecError::ArrayTooLong { part, length })?;
    out.extend_from_slice(&count.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kstring_is_i16_length_then_plain_utf8() {
        let mut out = Vec::new();
        put_kstring(&mut out, "röle", RecordPart::Key).unwrap();
        assert_eq!(hex::encode(&out), "000572c3b66c65");
        let mut r = PartReader::new(&out, RecordPart::Key);
        assert_eq!(r.kstring().unwrap(), "röle");
        r.finish().unwrap();
    }

    #[test]
    fn kstring_longer_than_32767_bytes_is_refused() {
        let mut out = Vec::new();
        let long = "x".repeat(32768);
        assert_eq!(
            put_kstring(&mut out, &long, RecordPart::CutValue),
            Err(BarrierCodecError::StringTooLong {
                part: RecordPart::CutValue,
                length: 32768
            })
        );
        put_kstring(&mut out, &long[1..], RecordPart::CutValue).unwrap();
    }

    #[test]
    fn huge_count_fails_as_truncation_not_allocation() {
        let mut r = PartReader::new(&[0x7f, 0xff, 0xff, 0xff], RecordPart::CutValue);
        assert_eq!(r.count().unwrap(), i32::MAX as usize);
        assert_eq!(
            r.kstring(),
            Err(BarrierCodecError::Truncated(RecordPart::CutValue))
        );
    }
}
