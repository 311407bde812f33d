//! The `__headers` cell: a Kafka header list packed into one Binary value (formats §3),
//! and the names of the headers appended to dead-lettered records (formats §10).
//!
//! Layout: `u32` count, then per header `u32` key length, UTF-8 key, `u32` value
//! length (`ffffffff` = null value) and the value bytes. Order is kept, keys may
//! repeat and a null value differs from an empty one. No headers is `00000000`,
//! never a null cell. Decoding is strict; lengths are read as signed `i32`.

use crate::engine::bytes::Reader;

/// Dead-letter header: the error's class (or kind) name, UTF-8.
pub const DLQ_ERROR_CLASS: &str = "krabka.error.class";
/// Dead-letter header: the error message, UTF-8.
pub const DLQ_ERROR_MESSAGE: &str = "krabka.error.message";
/// Dead-letter header: the topic the record was read from.
pub const DLQ_SOURCE_TOPIC: &str = "krabka.source.topic";
/// Dead-letter header: the source partition, decimal text.
pub const DLQ_SOURCE_PARTITION: &str = "krabka.source.partition";
/// Dead-letter header: the source offset, decimal text.
pub const DLQ_SOURCE_OFFSET: &str = "krabka.source.offset";

/// The dead-letter headers in the order they are appended after the record's own headers.
pub const DEAD_LETTER_HEADER_NAMES: [&str; 5] = [
    DLQ_ERROR_CLASS,
    DLQ_ERROR_MESSAGE,
    DLQ_SOURCE_TOPIC,
    DLQ_SOURCE_PARTITION,
    DLQ_SOURCE_OFFSET,
];

/// The value length that marks a null header value.
const NULL_VALUE_LEN: i32 = -1;

/// Smallest encoded header: key length plus value length.
const MIN_HEADER_LEN: usize = 8;

/// One Kafka record header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub key: String,
    /// `None` is a null value, distinct from `Some(vec![])`.
    pub value: Option<Vec<u8>>,
}

impl Header {
    pub fn new(key: impl Into<String>, value: Option<Vec<u8>>) -> Self {
        Header {
            key: key.into(),
            value,
        }
    }
}

/// Why a `__headers` cell could not be decoded. The messages are frozen (formats §3),
/// except `InvalidKey`, which enforces the strict UTF-8 rule of formats §0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadersError {
    #[error("invalid Kafka header count")]
    InvalidCount,
    #[error("negative Kafka header key length")]
    NegativeKeyLength,
    #[error("invalid Kafka header value length")]
    InvalidValueLength,
    #[error("truncated Kafka headers")]
    Truncated,
    #[error("trailing bytes in Kafka headers")]
    Trailing,
    #[error("invalid UTF-8 in Kafka header key")]
    InvalidKey,
}

/// Encodes a header list; an empty list gives `00000000`.
///
/// Keys and values longer than `i32::MAX` bytes cannot be represented; Kafka
/// records are far smaller, so lengths are written as given.
pub fn encode_headers(headers: &[Header]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_headers_into(&mut out, headers);
    out
}

/// Encodes a header list into `out` (cleared first), so a caller encoding one cell per
/// record reuses one buffer.
pub fn encode_headers_into(out: &mut Vec<u8>, headers: &[Header]) {
    out.clear();
    let size: usize = 4 + headers
        .iter()
        .map(|h| MIN_HEADER_LEN + h.key.len() + h.value.as_ref().map_or(0, Vec::len))
        .sum::<usize>();
    out.reserve(size);
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    for header in headers {
        out.extend_from_slice(&(header.key.len() as u32).to_be_bytes());
        out.extend_from_slice(header.key.as_bytes());
        match &header.value {
            None => out.extend_from_slice(&NULL_VALUE_LEN.to_be_bytes()),
            Some(value) => {
                out.extend_from_slice(&(value.len() as u32).to_be_bytes());
                out.extend_from_slice(value);
            }
        }
    }
}

/// Appends one `__headers` cell to a buffer header by header, for a reader that
/// sees headers one at a time (the count is written when it finishes).
pub struct HeadersCellWriter<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    count: u32,
}

impl<'a> HeadersCellWriter<'a> {
    /// Starts a cell at the end of `out` (nothing before it is touched).
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        let start = out.len();
        out.extend_from_slice(&0u32.to_be_bytes());
        HeadersCellWriter {
            out,
            start,
            count: 0,
        }
    }

    pub fn push(&mut self, key: &str, value: Option<&[u8]>) {
        self.out
            .extend_from_slice(&(key.len() as u32).to_be_bytes());
        self.out.extend_from_slice(key.as_bytes());
        match value {
            None => self.out.extend_from_slice(&NULL_VALUE_LEN.to_be_bytes()),
            Some(value) => {
                self.out
                    .extend_from_slice(&(value.len() as u32).to_be_bytes());
                self.out.extend_from_slice(value);
            }
        }
        self.count += 1;
    }

    /// Writes the count; the cell is `out[start..]`.
    pub fn finish(self) {
        self.out[self.start..self.start + 4].copy_from_slice(&self.count.to_be_bytes());
    }
}

/// Decodes a `__headers` cell strictly.
pub fn decode_headers(cell: &[u8]) -> Result<Vec<Header>, HeadersError> {
    let mut reader = Reader::new(cell);
    let count = reader.i32().ok_or(HeadersError::Truncated)?;
    if count < 0 || count as usize > reader.remaining() / MIN_HEADER_LEN {
        return Err(HeadersError::InvalidCount);
    }
    let mut headers = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let key_len = reader.i32().ok_or(HeadersError::Truncated)?;
        if key_len < 0 {
            return Err(HeadersError::NegativeKeyLength);
        }
        let key = reader
            .take(key_len as usize)
            .ok_or(HeadersError::Truncated)?;
        let key = std::str::from_utf8(key).map_err(|_| HeadersError::InvalidKey)?;
        let value_len = reader.i32().ok_or(HeadersError::Truncated)?;
        let value = match value_len {
            NULL_VALUE_LEN => None,
            len if len < NULL_VALUE_LEN => return Err(HeadersError::InvalidValueLength),
            len => Some(
                reader
                    .take(len as usize)
                    .ok_or(HeadersError::Truncated)?
                    .to_vec(),
            ),
        };
        headers.push(Header::new(key, value));
    }
    if !reader.is_empty() {
        return Err(HeadersError::Trailing);
    }
    Ok(headers)
}

/// The headers to put on a record built back from a batch row: a null or
/// malformed `__headers` cell means "no headers".
pub fn headers_or_none(cell: Option<&[u8]>) -> Vec<Header> {
    cell.and_then(|bytes| decode_headers(bytes).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_empty_values_stay_distinct_in_order() {
        let headers = vec![
            Header::new("a", None),
            Header::new("a", Some(vec![])),
            Header::new("b", Some(b"x".to_vec())),
        ];
        let cell = encode_headers(&headers);
        assert_eq!(decode_headers(&cell).unwrap(), headers);
    }

    #[test]
    fn empty_list_is_four_zero_bytes() {
        assert_eq!(encode_headers(&[]), vec![0, 0, 0, 0]);
        assert_eq!(decode_headers(&[0, 0, 0, 0]).unwrap(), vec![]);
    }

    #[test]
    fn count_is_bounded_by_remaining_over_eight() {
        // count 1 with 7 bytes left is rejected as a count, not as truncation.
        let cell = [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(decode_headers(&cell), Err(HeadersError::InvalidCount));
        let huge = [0x7f, 0xff, 0xff, 0xff];
        assert_eq!(decode_headers(&huge), Err(HeadersError::InvalidCount));
    }

    #[test]
    fn non_utf8_key_is_rejected() {
        let cell = [0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0, 0, 0, 0];
        assert_eq!(decode_headers(&cell), Err(HeadersError::InvalidKey));
    }

    #[test]
    fn null_or_malformed_cell_means_no_headers() {
        assert!(headers_or_none(None).is_empty());
        assert!(headers_or_none(Some(&[0, 0, 0])).is_empty());
        let cell = encode_headers(&[Header::new("k", None)]);
        assert_eq!(headers_or_none(Some(&cell)), vec![Header::new("k", None)]);
    }
}
