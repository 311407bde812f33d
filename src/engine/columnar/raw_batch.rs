//! One fetched batch of raw records in a single arena: every key, value and
//! encoded headers cell of the batch lives in one byte buffer, and each record is a
//! row of spans into it. A consumer copies each message straight from its client's
//! buffers into the arena (no allocation per record once the arena has grown), and
//! the batch — owned and `Send` — can move to another thread for decoding.
//! [`RawSelection`] hands a subset of its rows to a batch decoder.

use std::ops::Range;

use crate::engine::columnar::headers::HeadersCellWriter;
use crate::engine::columnar::record::{HeadersRef, Record, RecordView, Records};

/// Where one record's parts are in the arena.
#[derive(Debug, Clone)]
struct Row {
    /// Index into `topics`.
    topic: u32,
    partition: i32,
    offset: i64,
    timestamp: i64,
    key: Option<Range<usize>>,
    value: Option<Range<usize>>,
    /// The encoded `__headers` cell.
    headers: Range<usize>,
}

/// Records of one fetch, their bytes in one buffer.
#[derive(Debug, Clone, Default)]
pub struct RawBatch {
    /// The distinct topics of the batch (a tail reads few).
    topics: Vec<String>,
    data: Vec<u8>,
    rows: Vec<Row>,
    /// Bytes of keys and values (not headers).
    payload_bytes: usize,
}

impl RawBatch {
    pub fn new() -> Self {
        RawBatch::default()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Bytes of keys and values held.
    pub fn payload_bytes(&self) -> usize {
        self.payload_bytes
    }

    /// Empties the batch, keeping its buffers for the next fetch.
    pub fn clear(&mut self) {
        self.data.clear();
        self.rows.clear();
        self.payload_bytes = 0;
    }

    /// The number of `topic` in this batch (kept across [`clear`](Self::clear)), for
    /// [`push_indexed`](Self::push_indexed).
    pub fn topic_index(&mut self, topic: &str) -> u32 {
        // Records come in runs of one partition: the last topic is nearly always it.
        if let Some(last) = self.rows.last()
            && self.topics[last.topic as usize] == topic
        {
            return last.topic;
        }
        match self.topics.iter().position(|t| t == topic) {
            Some(i) => i as u32,
            None => {
                self.topics.push(topic.to_owned());
                (self.topics.len() - 1) as u32
            }
        }
    }

    fn copy(&mut self, bytes: Option<&[u8]>) -> Option<Range<usize>> {
        bytes.map(|b| {
            let start = self.data.len();
            self.data.extend_from_slice(b);
            self.payload_bytes += b.len();
            start..self.data.len()
        })
    }

    /// Appends a record; `headers` writes its headers into the cell it is given
    /// (push nothing for a record without headers).
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        topic: &str,
        partition: i32,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: impl FnOnce(&mut HeadersCellWriter<'_>),
    ) {
        let topic = self.topic_index(topic);
        self.push_indexed(topic, partition, offset, timestamp, key, value, headers);
    }

    /// [`push`](Self::push) under a topic number from [`topic_index`](Self::topic_index).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push_indexed(
        &mut self,
        topic: u32,
        partition: i32,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: impl FnOnce(&mut HeadersCellWriter<'_>),
    ) {
        debug_assert!((topic as usize) < self.topics.len());
        let key = self.copy(key);
        let value = self.copy(value);
        let start = self.data.len();
        let mut cell = HeadersCellWriter::new(&mut self.data);
        headers(&mut cell);
        cell.finish();
        let headers = start..self.data.len();
        self.rows.push(Row {
            topic,
            partition,
            offset,
            timestamp,
            key,
            value,
            headers,
        });
    }

    /// Appends a copy of an owned record (records held back and retried).
    pub fn push_record(&mut self, r: &Record) {
        self.push(
            &r.topic,
            r.partition,
            r.offset,
            r.timestamp,
            r.key.as_deref(),
            r.value.as_deref(),
            |cell| {
                for h in &r.headers {
                    cell.push(&h.key, h.value.as_deref());
                }
            },
        );
    }

    /// Removes the last record (one read past its partition's stop).
    pub fn pop(&mut self) {
        if let Some(row) = self.rows.pop() {
            let len = |r: &Option<Range<usize>>| r.as_ref().map_or(0, |r| r.len());
            self.payload_bytes -= len(&row.key) + len(&row.value);
            let start = row
                .key
                .as_ref()
                .or(row.value.as_ref())
                .map_or(row.headers.start, |r| r.start);
            self.data.truncate(start);
        }
    }

    /// Record `index` (< `len()`).
    pub fn get(&self, index: usize) -> RecordView<'_> {
        let row = &self.rows[index];
        let span = |r: &Option<Range<usize>>| r.clone().map(|r| &self.data[r]);
        RecordView {
            topic: &self.topics[row.topic as usize],
            partition: row.partition,
            offset: row.offset,
            timestamp: row.timestamp,
            key: span(&row.key),
            value: span(&row.value),
            headers: HeadersRef::Cell(&self.data[row.headers.clone()]),
        }
    }

    /// Topic number ([`topic_name`](Self::topic_name)), partition and offset of record
    /// `index` (< `len()`), without building a view.
    #[inline]
    pub fn position(&self, index: usize) -> (u32, i32, i64) {
        let row = &self.rows[index];
        (row.topic, row.partition, row.offset)
    }

    /// The name of topic number `topic` (< the number of topics pushed).
    pub fn topic_name(&self, topic: u32) -> &str {
        &self.topics[topic as usize]
    }

    /// How many distinct topics were pushed since the batch was made.
    pub fn topic_count(&self) -> usize {
        self.topics.len()
    }

    /// The batch's rows in order.
    pub fn iter(&self) -> impl Iterator<Item = RecordView<'_>> {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl Records for RawBatch {
    fn len(&self) -> usize {
        RawBatch::len(self)
    }

    fn get(&self, index: usize) -> RecordView<'_> {
        RawBatch::get(self, index)
    }
}

/// Some rows of a batch, in the order given.
#[derive(Debug, Clone, Copy)]
pub struct RawSelection<'a> {
    pub batch: &'a RawBatch,
    pub rows: &'a [u32],
}

impl Records for RawSelection<'_> {
    fn len(&self) -> usize {
        self.rows.len()
    }

    fn get(&self, index: usize) -> RecordView<'_> {
        self.batch.get(self.rows[index] as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::headers::{Header, encode_headers};

    fn record(topic: &str, offset: i64, headers: Vec<Header>) -> Record {
        Record {
            topic: topic.into(),
            partition: 2,
            offset,
            timestamp: 1_700_000_000_000 + offset,
            key: (offset % 2 == 0).then(|| format!("k{offset}").into_bytes()),
            value: (offset % 3 != 0).then(|| vec![offset as u8; offset as usize]),
            headers,
        }
    }

    #[test]
    fn records_read_back_from_the_arena_equal_the_records_pushed() {
        let records = vec![
            record("a", 0, vec![]),
            record("a", 1, vec![Header::new("h", Some(b"v".to_vec()))]),
            record(
                "b",
                2,
                vec![Header::new("n", None), Header::new("e", Some(vec![]))],
            ),
            record("a", 3, vec![]),
            record("b", 4, vec![]),
        ];
        let mut batch = RawBatch::new();
        for r in &records {
            batch.push_record(r);
        }
        assert_eq!(batch.len(), records.len());
        let back: Vec<Record> = batch.iter().map(|v| v.to_record()).collect();
        assert_eq!(back, records);
        assert_eq!(
            batch.payload_bytes(),
            records.iter().map(Record::payload_len).sum::<usize>()
        );
        for (i, r) in records.iter().enumerate() {
            assert_eq!(
                batch.get(i).headers,
                HeadersRef::Cell(&encode_headers(&r.headers)),
                "the arena's cell is the cell formats §3 defines"
            );
        }
    }

    #[test]
    fn pop_removes_the_last_record_and_its_bytes() {
        let mut batch = RawBatch::new();
        batch.push_record(&record("a", 1, vec![]));
        let one = (batch.data.len(), batch.payload_bytes());
        batch.push_record(&record("a", 2, vec![Header::new("h", None)]));
        batch.pop();
        assert_eq!((batch.data.len(), batch.payload_bytes()), one);
        batch.push_record(&record("a", 3, vec![]));
        batch.pop();
        assert_eq!((batch.data.len(), batch.payload_bytes()), one);
        assert_eq!(batch.get(0).to_record(), record("a", 1, vec![]));
    }

    #[test]
    fn a_selection_reads_the_chosen_rows_in_the_given_order() {
        let mut batch = RawBatch::new();
        for o in 0..4 {
            batch.push_record(&record("a", o, vec![]));
        }
        let rows = [3, 1];
        let sel = RawSelection {
            batch: &batch,
            rows: &rows,
        };
        assert_eq!(Records::len(&sel), 2);
        assert_eq!(sel.get(0).offset, 3);
        assert_eq!(sel.get(1).offset, 1);
    }
}
