//! An in-memory [`BarrierConsumer`] for tests: the engine's reader tests and the golden
//! vectors drive the cut reader through this one fake instead of a copy each. Not part of
//! the CLI's API (hidden from the docs); no real component can show a reader's exact
//! assign/seek/poll sequence, which is what the tests assert.

use std::collections::BTreeMap;
use std::time::Duration;

use super::cut_log::ConsumedRecord;
use super::reader::{BarrierConsumer, ConsumerError};
use super::record::TopicPartition;

/// One log per partition with consecutive offsets. Every poll returns at most `batch`
/// records per assigned partition, so reads take several polls; end offsets are reported
/// only when `report_ends` is set (otherwise only the idle-poll rule can end a read).
/// `fail_poll` makes every poll fail as an unreachable broker would; `slow_polls` makes that
/// many first polls return nothing (a slow first fetch); `end_gap` reports end offsets that
/// many offsets past the last record (control records or compaction at the end).
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct InMemoryConsumer {
    pub logs: BTreeMap<i32, Vec<ConsumedRecord>>,
    pub positions: BTreeMap<i32, i64>,
    pub assigned: Vec<TopicPartition>,
    pub seeks: Vec<(TopicPartition, i64)>,
    pub polls: usize,
    pub batch: usize,
    pub report_ends: bool,
    pub fail_poll: bool,
    pub slow_polls: usize,
    pub end_gap: i64,
}

impl InMemoryConsumer {
    /// An empty consumer returning one record per partition per poll.
    pub fn new(report_ends: bool) -> Self {
        InMemoryConsumer {
            batch: 1,
            report_ends,
            ..InMemoryConsumer::default()
        }
    }

    /// Appends a record at the next offset of `partition`.
    pub fn append(&mut self, partition: i32, key: Vec<u8>, value: Option<Vec<u8>>) {
        let log = self.logs.entry(partition).or_default();
        let offset = log.len() as i64;
        log.push(ConsumedRecord {
            partition,
            offset,
            key: Some(key),
            value,
        });
    }
}

impl BarrierConsumer for InMemoryConsumer {
    fn assign(&mut self, partitions: &[TopicPartition]) -> Result<(), ConsumerError> {
        self.assigned = partitions.to_vec();
        Ok(())
    }

    fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), ConsumerError> {
        self.seeks.push((tp.clone(), offset));
        self.positions.insert(tp.partition, offset);
        Ok(())
    }

    fn end_offsets(
        &mut self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError> {
        if !self.report_ends {
            return Ok(BTreeMap::new());
        }
        Ok(partitions
            .iter()
            .map(|tp| {
                let end = self.logs.get(&tp.partition).map_or(0, Vec::len);
                (tp.clone(), end as i64 + self.end_gap)
            })
            .collect())
    }

    fn poll(&mut self, _timeout: Duration) -> Result<Vec<ConsumedRecord>, ConsumerError> {
        self.polls += 1;
        if self.fail_poll {
            return Err("broker gone".into());
        }
        if self.polls <= self.slow_polls {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for tp in &self.assigned {
            let position = self.positions.entry(tp.partition).or_insert(0);
            let log = self.logs.get(&tp.partition).map_or(&[][..], Vec::as_slice);
            let fetched: Vec<_> = log
                .iter()
                .filter(|r| r.offset >= *position)
                .take(self.batch)
                .cloned()
                .collect();
            if let Some(last) = fetched.last() {
                *position = last.offset + 1;
            }
            out.extend(fetched);
        }
        Ok(out)
    }
}
