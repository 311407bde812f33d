//! Confluent wire framing of registry-encoded keys and values (formats §2).
//!
//! A frame is the magic byte `00`, the schema id as four big-endian bytes and the
//! body; Protobuf frames carry a message-index path (zigzag LEB128 varints)
//! between the id and the body. The id is written from an unsigned value and read
//! back as a signed `i32`, as the registry clients do. This module knows nothing
//! of Arrow, Avro or Protobuf bodies: it only cuts and joins bytes. A null
//! (absent) record value is a tombstone and never reaches these functions.

use crate::engine::bytes::Reader;

/// The first byte of every frame.
pub const MAGIC_BYTE: u8 = 0x00;

/// Magic byte plus schema id.
pub const FRAME_HEADER_LEN: usize = 5;

/// A varint may take at most this many bytes (64 bits of payload).
const MAX_VARINT_BYTES: usize = 10;

/// Why a frame could not be read or written. The messages are frozen (formats §2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("schema frame is shorter than 5 bytes")]
    Short,
    #[error("invalid schema frame magic byte 0x{0:02x}")]
    InvalidMagic(u8),
    #[error("truncated Protobuf message-index varint")]
    TruncatedVarint,
    #[error("Protobuf message-index varint is too long")]
    VarintTooLong,
    #[error("invalid Protobuf message-index count: {0}")]
    InvalidIndexCount(i64),
    #[error("Protobuf message index is outside the int32 range")]
    IndexOutOfRange,
    #[error("messageIndexes must not be empty")]
    EmptyMessageIndexes,
}

/// A decoded frame: the schema id and the body that follows the header
/// (and, for Protobuf, the message-index path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The id as the registry clients read it back: signed.
    pub schema_id: i32,
    /// The Protobuf message-index path; `None` for Avro and JSON Schema frames.
    pub message_indexes: Option<Vec<i32>>,
    pub body: &'a [u8],
}

impl Frame<'_> {
    /// The id as registry URLs print it (unsigned 32-bit).
    pub fn schema_id_unsigned(&self) -> u32 {
        self.schema_id as u32
    }
}

/// Frames an Avro or JSON Schema body: `00`, id (u32 BE), body.
pub fn encode(schema_id: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + body.len());
    out.push(MAGIC_BYTE);
    out.extend_from_slice(&schema_id.to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// Frames a Protobuf body with its message-index path.
pub fn encode_protobuf(
    schema_id: u32,
    message_indexes: &[i32],
    body: &[u8],
) -> Result<Vec<u8>, FramingError> {
    let path = encode_message_indexes(message_indexes)?;
    let mut out = Vec::with_capacity(FRAME_HEADER_LEN + path.len() + body.len());
    out.push(MAGIC_BYTE);
    out.extend_from_slice(&schema_id.to_be_bytes());
    out.extend_from_slice(&path);
    out.extend_from_slice(body);
    Ok(out)
}

/// Encodes a message-index path: `[0]` is the single byte `00`; any other path
/// is zigzag-varint(count) followed by zigzag-varint(index) per level.
pub fn encode_message_indexes(message_indexes: &[i32]) -> Result<Vec<u8>, FramingError> {
    if message_indexes.is_empty() {
        return Err(FramingError::EmptyMessageIndexes);
    }
    if message_indexes == [0] {
        return Ok(vec![0x00]);
    }
    let mut out = Vec::with_capacity(MAX_VARINT_BYTES * (message_indexes.len() + 1));
    put_zigzag_varint(&mut out, message_indexes.len() as i64);
    for &index in message_indexes {
        put_zigzag_varint(&mut out, i64::from(index));
    }
    Ok(out)
}

/// Splits an Avro or JSON Schema frame into id and body.
pub fn decode(data: &[u8]) -> Result<Frame<'_>, FramingError> {
    let mut reader = Reader::new(data);
    let schema_id = read_header(&mut reader)?;
    Ok(Frame {
        schema_id,
        message_indexes: None,
        body: reader.rest(),
    })
}

/// Splits a Protobuf frame into id, message-index path and body.
pub fn decode_protobuf(data: &[u8]) -> Result<Frame<'_>, FramingError> {
    let mut reader = Reader::new(data);
    let schema_id = read_header(&mut reader)?;
    let message_indexes = read_message_indexes(&mut reader)?;
    Ok(Frame {
        schema_id,
        message_indexes: Some(message_indexes),
        body: reader.rest(),
    })
}

fn read_header(reader: &mut Reader<'_>) -> Result<i32, FramingError> {
    if reader.remaining() < FRAME_HEADER_LEN {
        return Err(FramingError::Short);
    }
    let magic = reader.u8().ok_or(FramingError::Short)?;
    if magic != MAGIC_BYTE {
        return Err(FramingError::InvalidMagic(magic));
    }
    reader.i32().ok_or(FramingError::Short)
}

fn read_message_indexes(reader: &mut Reader<'_>) -> Result<Vec<i32>, FramingError> {
    let count = read_zigzag_varint(reader)?;
    if count < 0 || count > i64::from(i32::MAX) {
        return Err(FramingError::InvalidIndexCount(count));
    }
    if count == 0 {
        return Ok(vec![0]);
    }
    // Every index takes at least one byte: never reserve more than the input holds.
    let capacity = (count as usize).min(reader.remaining());
    let mut indexes = Vec::with_capacity(capacity);
    for _ in 0..count {
        let index = read_zigzag_varint(reader)?;
        let index = i32::try_from(index).map_err(|_| FramingError::IndexOutOfRange)?;
        indexes.push(index);
    }
    Ok(indexes)
}

fn put_zigzag_varint(out: &mut Vec<u8>, value: i64) {
    let mut v = ((value << 1) ^ (value >> 63)) as u64;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_zigzag_varint(reader: &mut Reader<'_>) -> Result<i64, FramingError> {
    let mut value: u64 = 0;
    for i in 0..MAX_VARINT_BYTES {
        let byte = reader.u8().ok_or(FramingError::TruncatedVarint)?;
        if i == MAX_VARINT_BYTES - 1 && byte > 0x01 {
            return Err(FramingError::VarintTooLong);
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
        }
    }
    // Unreachable in practice: the tenth byte either ends the varint or is rejected above.
    Err(FramingError::VarintTooLong)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips_extremes() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            i64::from(i32::MAX),
            i64::MIN,
            i64::MAX,
        ] {
            let mut out = Vec::new();
            put_zigzag_varint(&mut out, v);
            assert!(out.len() <= MAX_VARINT_BYTES);
            let mut r = Reader::new(&out);
            assert_eq!(read_zigzag_varint(&mut r), Ok(v));
            assert!(r.is_empty());
        }
    }

    #[test]
    fn index_path_zero_is_a_single_byte() {
        assert_eq!(encode_message_indexes(&[0]).unwrap(), vec![0]);
        assert_eq!(encode_message_indexes(&[1, 0]).unwrap(), vec![4, 2, 0]);
    }

    #[test]
    fn count_zero_decodes_as_first_message() {
        let frame = decode_protobuf(&[0, 0, 0, 0, 7, 0, 0xaa]).unwrap();
        assert_eq!(frame.message_indexes, Some(vec![0]));
        assert_eq!(frame.body, &[0xaa]);
    }

    #[test]
    fn negative_indexes_round_trip() {
        let bytes = encode_protobuf(5, &[-3, i32::MIN, i32::MAX], b"z").unwrap();
        let frame = decode_protobuf(&bytes).unwrap();
        assert_eq!(frame.message_indexes, Some(vec![-3, i32::MIN, i32::MAX]));
        assert_eq!(frame.body, b"z");
    }

    #[test]
    fn huge_count_does_not_allocate_beyond_the_input() {
        // count = i32::MAX, then nothing: truncated, with no huge reservation.
        let mut bytes = vec![0, 0, 0, 0, 1];
        put_zigzag_varint(&mut bytes, i64::from(i32::MAX));
        assert_eq!(decode_protobuf(&bytes), Err(FramingError::TruncatedVarint));
        let mut too_many = vec![0, 0, 0, 0, 1];
        put_zigzag_varint(&mut too_many, i64::from(i32::MAX) + 1);
        assert_eq!(
            decode_protobuf(&too_many),
            Err(FramingError::InvalidIndexCount(2_147_483_648))
        );
    }

    #[test]
    fn tenth_varint_byte_one_is_accepted() {
        // 64-bit all-ones zigzag = i64::MIN; its varint ends with 01 as the tenth byte.
        let mut bytes = vec![0, 0, 0, 0, 1];
        put_zigzag_varint(&mut bytes, i64::MIN);
        assert_eq!(bytes.len(), 15);
        assert_eq!(
            decode_protobuf(&bytes),
            Err(FramingError::InvalidIndexCount(i64::MIN))
        );
    }
}
