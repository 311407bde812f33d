//! A Kafka record as the columnar codecs see it: owned key, value, timestamp,
//! source partition and offset, and the header list.

use crate::engine::columnar::headers::Header;

/// One consumed record (decode input).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// Epoch milliseconds.
    pub timestamp: i64,
    /// `None` for a keyless record.
    pub key: Option<Vec<u8>>,
    /// `None` for a tombstone.
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

impl Record {
    /// Bytes of key and value, for throughput counters.
    pub fn payload_len(&self) -> usize {
        self.key.as_ref().map_or(0, Vec::len) + self.value.as_ref().map_or(0, Vec::len)
    }
}

/// A record encoded back from a batch (encode output): no partition or offset.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutRecord {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub timestamp: i64,
    pub headers: Vec<Header>,
}

impl OutRecord {
    /// A pass-through copy: raw key, value, timestamp and headers.
    pub fn copy_of(record: &Record) -> OutRecord {
        OutRecord {
            key: record.key.clone(),
            value: record.value.clone(),
            timestamp: record.timestamp,
            headers: record.headers.clone(),
        }
    }
}
