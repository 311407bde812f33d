//! The consumer-group runner's core (behaviour §7) over small traits: a
//! [`Consumer`], a [`Producer`] and a [`StateStore`], so that every rule is
//! tested with fakes; the rdkafka adapters implement the traits in `io`.
//!
//! One round: poll; per topic-partition record the next offset *before*
//! processing (so skip and dead-letter still commit past a failed record); run
//! each logical partition in ascending order from a snapshot of its prior state;
//! on failure restore it, then apply the error policy (fail or a retriable error:
//! roll back every partition of the round and return, nothing sent or
//! committed; skip: count; dead-letter: re-produce the inputs with the
//! `krabka.*` headers); send everything, wait for the acks, commit.
//! Rebalances load and save partition state under the live epoch (−1).
//! Not here yet: transactions (exactly-once) and barrier alignment (§8).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::Metrics;
use super::offline::PROCESSING_ERROR_CLASS;
use crate::engine::columnar::headers::Header;
use crate::engine::columnar::topology::spec::ErrorPolicy;
use crate::engine::columnar::topology::{BuiltTopology, OutRecord, Produced, Record};

/// The live (non-barrier) snapshot epoch of Java/Go file stores (formats §8.3).
pub const LIVE_EPOCH: i64 = -1;

/// A topic-partition.
pub type Tp = (String, i32);

/// A runner failure; `retriable` ones (a pending schema fetch) leave everything
/// to be consumed again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RunnerError {
    pub message: String,
    pub retriable: bool,
}

impl RunnerError {
    pub fn new(message: impl Into<String>) -> Self {
        RunnerError {
            message: message.into(),
            retriable: false,
        }
    }
}

/// What the runner needs from a Kafka consumer.
pub trait Consumer {
    fn poll(&mut self, timeout: Duration) -> Result<Vec<Record>, RunnerError>;
    fn commit(&mut self, offsets: &BTreeMap<Tp, i64>) -> Result<(), RunnerError>;
    fn assign(&mut self, tps: &[Tp]) -> Result<(), RunnerError>;
    fn seek(&mut self, tp: &Tp, offset: i64) -> Result<(), RunnerError>;
}

/// What the runner needs from a Kafka producer.
pub trait Producer {
    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError>;
    /// Waits for every send to be acknowledged.
    fn flush(&mut self) -> Result<(), RunnerError>;
}

/// Partition snapshots keyed by (logical partition, epoch).
pub trait StateStore {
    /// A missing snapshot loads as an empty map.
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError>;
    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError>;
}

/// The group runner.
pub struct GroupRunner<C, P, S> {
    pub topology: BuiltTopology,
    pub consumer: C,
    pub producer: P,
    pub store: S,
    pub policy: ErrorPolicy,
    pub poll_timeout: Duration,
    pub metrics: Metrics,
    /// Save the live state of every partition a round processed after the
    /// flush and before the commit, so that a crash never leaves state behind
    /// committed offsets (at-least-once for state too). Java and Go save only
    /// on rebalance and close; off by default.
    pub save_each_round: bool,
    owned: BTreeSet<Tp>,
}

fn dead_letter(record: &Record, error: &str) -> OutRecord {
    let mut headers = record.headers.clone();
    for (key, value) in [
        ("krabka.error.class", PROCESSING_ERROR_CLASS.to_owned()),
        ("krabka.error.message", error.to_owned()),
        ("krabka.source.topic", record.topic.clone()),
        ("krabka.source.partition", record.partition.to_string()),
        ("krabka.source.offset", record.offset.to_string()),
    ] {
        headers.push(Header {
            key: key.to_owned(),
            value: Some(value.into_bytes()),
        });
    }
    OutRecord {
        key: record.key.clone(),
        value: record.value.clone(),
        timestamp: record.timestamp,
        headers,
    }
}

impl<C: Consumer, P: Producer, S: StateStore> GroupRunner<C, P, S> {
    pub fn new(
        topology: BuiltTopology,
        consumer: C,
        producer: P,
        store: S,
        policy: ErrorPolicy,
    ) -> Self {
        GroupRunner {
            topology,
            consumer,
            producer,
            store,
            policy,
            poll_timeout: Duration::from_millis(100),
            metrics: Metrics::default(),
            save_each_round: false,
            owned: BTreeSet::new(),
        }
    }

    fn owned_partitions(&self) -> BTreeSet<i32> {
        self.owned.iter().map(|(_, p)| *p).collect()
    }

    /// Newly assigned topic-partitions: a logical partition not owned before loads its live state.
    pub fn on_assigned(&mut self, tps: &[Tp]) {
        let before = self.owned_partitions();
        self.owned.extend(tps.iter().cloned());
        for partition in self.owned_partitions().difference(&before) {
            if let Ok(state) = self.store.load(*partition, LIVE_EPOCH) {
                let _ = self.topology.restore_partition(*partition, &state);
            }
        }
    }

    /// Revoked topic-partitions: a logical partition no longer owned is saved and released.
    pub fn on_revoked(&mut self, tps: &[Tp]) {
        self.forget(tps, true);
    }

    /// Lost topic-partitions: released without saving.
    pub fn on_lost(&mut self, tps: &[Tp]) {
        self.forget(tps, false);
    }

    fn forget(&mut self, tps: &[Tp], save: bool) {
        let before = self.owned_partitions();
        for tp in tps {
            self.owned.remove(tp);
        }
        for partition in before.difference(&self.owned_partitions()) {
            if save && let Ok(state) = self.topology.snapshot_partition(*partition) {
                let _ = self.store.save(*partition, LIVE_EPOCH, &state);
            }
            self.topology.release_partition(*partition);
        }
    }

    /// Releases every owned partition with a save.
    pub fn close(&mut self) {
        let all: Vec<Tp> = self.owned.iter().cloned().collect();
        self.forget(&all, true);
    }

    /// One poll round; returns the committed offsets.
    pub fn run_once(&mut self) -> Result<BTreeMap<Tp, i64>, RunnerError> {
        let records = self.consumer.poll(self.poll_timeout)?;
        if records.is_empty() {
            return Ok(BTreeMap::new());
        }
        let mut offsets: BTreeMap<Tp, i64> = BTreeMap::new();
        let mut by_partition: BTreeMap<i32, BTreeMap<String, Vec<Record>>> = BTreeMap::new();
        for mut record in records {
            record.value.get_or_insert_with(Vec::new);
            let next = offsets
                .entry((record.topic.clone(), record.partition))
                .or_insert(0);
            *next = (*next).max(record.offset + 1);
            by_partition
                .entry(record.partition)
                .or_default()
                .entry(record.topic.clone())
                .or_default()
                .push(record);
        }
        let mut produced: Vec<Produced> = Vec::new();
        let mut processed: Vec<(i32, BTreeMap<String, Vec<u8>>)> = Vec::new();
        for (partition, input) in &by_partition {
            let prior = self
                .topology
                .snapshot_partition(*partition)
                .map_err(|e| RunnerError::new(e.to_string()))?;
            self.metrics.batches += 1;
            let rows: u64 = input.values().map(|r| r.len() as u64).sum();
            self.metrics.input_records += rows;
            let started = Instant::now();
            let result = self.topology.run_partition_records(*partition, input);
            self.metrics.processing_nanos += started.elapsed().as_nanos() as u64;
            match result {
                Ok(out) => {
                    self.metrics.output_records += out.len() as u64;
                    produced.extend(out);
                    processed.push((*partition, prior));
                }
                Err(failure) => {
                    self.restore(*partition, &prior);
                    if failure.retriable || self.policy == ErrorPolicy::Fail {
                        for (p, state) in processed.iter().rev() {
                            self.restore(*p, state);
                        }
                        return Err(RunnerError {
                            message: failure.to_string(),
                            retriable: failure.retriable,
                        });
                    }
                    self.metrics.failures += 1;
                    if let ErrorPolicy::DeadLetter { topic } = &self.policy {
                        for records in input.values() {
                            for record in records {
                                produced.push(Produced {
                                    topic: topic.clone(),
                                    record: dead_letter(record, &failure.to_string()),
                                });
                                self.metrics.dead_letter_records += 1;
                            }
                        }
                    }
                }
            }
        }
        let sent = produced
            .iter()
            .try_for_each(|p| self.producer.send(&p.topic, &p.record))
            .and_then(|_| self.producer.flush());
        if let Err(e) = sent {
            for (p, state) in processed.iter().rev() {
                self.restore(*p, state);
            }
            return Err(e);
        }
        if self.save_each_round {
            for (p, _) in &processed {
                let state = self
                    .topology
                    .snapshot_partition(*p)
                    .map_err(|e| RunnerError::new(e.to_string()))?;
                self.store.save(*p, LIVE_EPOCH, &state)?;
            }
        }
        self.consumer.commit(&offsets)?;
        Ok(offsets)
    }

    fn restore(&mut self, partition: i32, state: &BTreeMap<String, Vec<u8>>) {
        self.topology.release_partition(partition);
        let _ = self.topology.restore_partition(partition, state);
    }

    /// Assign, seek, poll one batch of one topic-partition and process it;
    /// returns the next offset (`offset` itself when nothing was read or on error).
    pub fn run_partition_once(
        &mut self,
        topic: &str,
        partition: i32,
        offset: i64,
    ) -> (i64, Result<(), RunnerError>) {
        let tp: Tp = (topic.to_owned(), partition);
        if let Err(e) = self
            .consumer
            .assign(std::slice::from_ref(&tp))
            .and_then(|_| self.consumer.seek(&tp, offset))
        {
            return (offset, Err(e));
        }
        let records = match self.consumer.poll(self.poll_timeout) {
            Ok(r) => r,
            Err(e) => return (offset, Err(e)),
        };
        let records: Vec<Record> = records
            .into_iter()
            .filter(|r| r.topic == topic && r.partition == partition)
            .collect();
        let Some(last) = records.iter().map(|r| r.offset).max() else {
            return (offset, Ok(()));
        };
        let next = offset.max(last + 1);
        let prior = match self.topology.snapshot_partition(partition) {
            Ok(s) => s,
            Err(e) => return (offset, Err(RunnerError::new(e.to_string()))),
        };
        let input = BTreeMap::from([(topic.to_owned(), records)]);
        let result = self
            .topology
            .run_partition_records(partition, &input)
            .map_err(|e| RunnerError {
                message: e.to_string(),
                retriable: e.retriable,
            })
            .and_then(|produced| {
                produced
                    .iter()
                    .try_for_each(|p| self.producer.send(&p.topic, &p.record))?;
                self.producer.flush()
            })
            .and_then(|_| self.consumer.commit(&BTreeMap::from([(tp.clone(), next)])));
        match result {
            Ok(()) => (next, Ok(())),
            Err(e) => {
                self.restore(partition, &prior);
                (offset, Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests;
