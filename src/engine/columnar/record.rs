//! A Kafka record as the columnar codecs see it: owned key, value, timestamp,
//! source partition and offset, and the header list; and the borrowed view of one
//! ([`RecordView`]) that batch decoding reads, so that records held in other shapes
//! (a [`RawBatch`](crate::engine::columnar::raw_batch::RawBatch) arena) decode
//! without an owned copy each.

use crate::engine::columnar::headers::{Header, HeadersError, decode_headers};

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

    pub fn view(&self) -> RecordView<'_> {
        RecordView {
            topic: &self.topic,
            partition: self.partition,
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.as_deref(),
            value: self.value.as_deref(),
            headers: HeadersRef::List(&self.headers),
        }
    }
}

/// A record's headers as its holder keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadersRef<'a> {
    /// A header list.
    List(&'a [Header]),
    /// An encoded `__headers` cell (formats §3), as written by
    /// [`HeadersCellWriter`](crate::engine::columnar::headers::HeadersCellWriter).
    Cell(&'a [u8]),
}

impl HeadersRef<'_> {
    /// The header list (a cell is decoded: for filters and dead letters, not the hot path).
    pub fn to_list(&self) -> Result<Vec<Header>, HeadersError> {
        match self {
            HeadersRef::List(list) => Ok(list.to_vec()),
            HeadersRef::Cell(cell) => decode_headers(cell),
        }
    }
}

/// One record, borrowed from whatever holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    pub topic: &'a str,
    pub partition: i32,
    pub offset: i64,
    /// Epoch milliseconds.
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: HeadersRef<'a>,
}

impl RecordView<'_> {
    /// Bytes of key and value, for throughput counters.
    pub fn payload_len(&self) -> usize {
        self.key.map_or(0, <[u8]>::len) + self.value.map_or(0, <[u8]>::len)
    }

    /// An owned copy. A headers cell that does not decode (never one this crate
    /// wrote) becomes no headers.
    pub fn to_record(&self) -> Record {
        Record {
            topic: self.topic.to_owned(),
            partition: self.partition,
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self.headers.to_list().unwrap_or_default(),
        }
    }
}

/// Records a batch decoder reads by index, whatever holds them.
pub trait Records {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Record `index` (< `len()`).
    fn get(&self, index: usize) -> RecordView<'_>;
}

impl Records for [&Record] {
    fn len(&self) -> usize {
        <[&Record]>::len(self)
    }

    fn get(&self, index: usize) -> RecordView<'_> {
        self[index].view()
    }
}

impl Records for [Record] {
    fn len(&self) -> usize {
        <[Record]>::len(self)
    }

    fn get(&self, index: usize) -> RecordView<'_> {
        self[index].view()
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
