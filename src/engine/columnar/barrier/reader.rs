//! The cut reader (semantics §8): drives a consumer of its own over every partition of
//! `__barrier_state` and folds what it reads into a [`CutLog`].
//!
//! Kafka is reached only through the small [`BarrierConsumer`] trait, so the reader is tested
//! with an in-memory fake and never names a Kafka client type. It joins no consumer group.
//!
//! * First use: assign partitions `0..n`, seek each to offset 0 (once for the reader's lifetime).
//! * Each read: capture the end offsets, then poll until every partition's position (the offset
//!   after the last record fetched) reaches its captured end (Java's rule), so a read at the end
//!   costs no poll and a read never waits for a trailing empty poll. The idle-poll rule
//!   (krabka-streams-go) is the fallback that always ends a read: `idle_polls` empty polls in a
//!   row stop it, which covers consumers that cannot report end offsets, offset gaps at the end
//!   of a partition and an unreachable broker. While a partition's captured end is known but not
//!   yet reached, the rule waits longer (`unreached_end_wait`): a first fetch on a loaded machine
//!   can take longer than one poll, and ending early would report a cut as missing. A partition
//!   that stays short of its end that long has a gap at its end (control records, compaction); its
//!   end is remembered, so later reads do not wait for that gap again.
//! * Later reads resume where the previous one stopped; cuts are kept for the reader's lifetime.
//! * A malformed record fails the read and resets the reader, so the next read starts again at
//!   offset 0 and fails the same way instead of silently skipping the record.

use std::collections::BTreeMap;
use std::time::Duration;

use super::cut_log::{BarrierCut, ConsumedRecord, CutLog, MalformedRecord};
use super::record::{BARRIER_STATE_TOPIC, TopicPartition};

/// Default timeout of one poll (Java uses 1 s).
pub const DEFAULT_CUT_POLL_TIMEOUT: Duration = Duration::from_millis(250);

/// Default number of empty polls in a row that end a read.
pub const DEFAULT_CUT_IDLE_POLLS: u32 = 1;

/// Default time a read waits, with no record arriving, for a known end offset it has not reached.
pub const DEFAULT_UNREACHED_END_WAIT: Duration = Duration::from_secs(10);

/// Whatever a consumer implementation reports as failure.
pub type ConsumerError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The consumer operations a [`CutReader`] needs. Give the reader a consumer of its own:
/// `assign` replaces the consumer's assignment.
pub trait BarrierConsumer {
    /// Replaces the assignment with exactly these partitions.
    fn assign(&mut self, partitions: &[TopicPartition]) -> Result<(), ConsumerError>;
    /// Moves the position of one assigned partition.
    fn seek(&mut self, partition: &TopicPartition, offset: i64) -> Result<(), ConsumerError>;
    /// Current log end offsets (high watermarks). A partition left out is unknown; an empty
    /// map means the consumer cannot report them and only the idle-poll rule ends a read.
    fn end_offsets(
        &mut self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError>;
    /// The next records of the assigned partitions, or none within `timeout`.
    fn poll(&mut self, timeout: Duration) -> Result<Vec<ConsumedRecord>, ConsumerError>;
}

/// Options of a [`CutReader`]; the defaults are those of semantics §8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutReaderOptions {
    pub topic: String,
    pub poll_timeout: Duration,
    pub idle_polls: u32,
    /// How long (counted in empty polls of `poll_timeout`) a read keeps polling for a partition
    /// whose end offset is known but not reached; never fewer than `idle_polls` polls.
    pub unreached_end_wait: Duration,
}

impl Default for CutReaderOptions {
    fn default() -> Self {
        CutReaderOptions {
            topic: BARRIER_STATE_TOPIC.to_owned(),
            poll_timeout: DEFAULT_CUT_POLL_TIMEOUT,
            idle_polls: DEFAULT_CUT_IDLE_POLLS,
            unreached_end_wait: DEFAULT_UNREACHED_END_WAIT,
        }
    }
}

/// Why a [`CutReader`] could not be built. (`a cut reader needs a consumer` cannot happen
/// here: the consumer is a required value, not a nullable reference.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CutReaderConfigError {
    #[error("a cut reader needs at least one partition")]
    NoPartitions,
    #[error("a cut reader needs at least one idle poll")]
    NoIdlePolls,
    #[error("a cut reader needs a topic")]
    NoTopic,
}

/// The consumer step that failed during a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerStep {
    Assign,
    Seek,
    EndOffsets,
    Poll,
}

impl std::fmt::Display for ConsumerStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ConsumerStep::Assign => "assign",
            ConsumerStep::Seek => "seek",
            ConsumerStep::EndOffsets => "end offsets",
            ConsumerStep::Poll => "poll",
        })
    }
}

/// Why a read of the barrier state topic failed.
#[derive(Debug, thiserror::Error)]
pub enum CutReadError {
    /// A record's key or cut value is malformed; the whole read fails.
    #[error(transparent)]
    Malformed(#[from] MalformedRecord),
    /// The consumer failed.
    #[error("cut reader {step} on {topic} failed: {error}")]
    Consumer {
        step: ConsumerStep,
        topic: String,
        error: ConsumerError,
    },
}

/// Reads the cuts of a barrier state topic through its own consumer.
#[derive(Debug)]
pub struct CutReader<C> {
    consumer: C,
    partitions: Vec<TopicPartition>,
    poll_timeout: Duration,
    idle_polls: u32,
    /// Empty polls in a row that end a read while a known end is not reached.
    unreached_idle_polls: u32,
    positioned: bool,
    /// partition → next offset to read, as learned from fetched records.
    next: BTreeMap<i32, i64>,
    /// partition → an end offset a read gave up on (a gap at the end of the partition).
    gap_ends: BTreeMap<i32, i64>,
    log: CutLog,
}

impl<C: BarrierConsumer> CutReader<C> {
    /// A reader over partitions `0..partitions` of the options' topic; `partitions` is the
    /// topic's partition count from metadata.
    pub fn new(
        consumer: C,
        partitions: i32,
        options: CutReaderOptions,
    ) -> Result<Self, CutReaderConfigError> {
        if partitions < 1 {
            return Err(CutReaderConfigError::NoPartitions);
        }
        if options.idle_polls < 1 {
            return Err(CutReaderConfigError::NoIdlePolls);
        }
        if options.topic.is_empty() {
            return Err(CutReaderConfigError::NoTopic);
        }
        let partitions = (0..partitions)
            .map(|p| TopicPartition::new(options.topic.clone(), p))
            .collect();
        Ok(CutReader {
            consumer,
            partitions,
            poll_timeout: options.poll_timeout,
            idle_polls: options.idle_polls,
            unreached_idle_polls: unreached_idle_polls(&options),
            positioned: false,
            next: BTreeMap::new(),
            gap_ends: BTreeMap::new(),
            log: CutLog::new(),
        })
    }

    /// The partitions the reader assigns.
    pub fn partitions(&self) -> &[TopicPartition] {
        &self.partitions
    }

    /// What was read so far, without reading more.
    pub fn log(&self) -> &CutLog {
        &self.log
    }

    pub fn consumer(&self) -> &C {
        &self.consumer
    }

    pub fn consumer_mut(&mut self) -> &mut C {
        &mut self.consumer
    }

    pub fn into_consumer(self) -> C {
        self.consumer
    }

    /// Reads up to the end of every partition (see the module documentation).
    pub fn read(&mut self) -> Result<&CutLog, CutReadError> {
        if !self.positioned {
            self.consumer
                .assign(&self.partitions)
                .map_err(|e| self.consumer_error(ConsumerStep::Assign, e))?;
            for tp in &self.partitions {
                self.consumer
                    .seek(tp, 0)
                    .map_err(|e| consumer_error(&self.partitions, ConsumerStep::Seek, e))?;
            }
            self.next = self.partitions.iter().map(|tp| (tp.partition, 0)).collect();
            self.positioned = true;
        }
        let ends = self
            .consumer
            .end_offsets(&self.partitions)
            .map_err(|e| self.consumer_error(ConsumerStep::EndOffsets, e))?;
        let mut idle = 0;
        while !self.reached(&ends) {
            let records = self
                .consumer
                .poll(self.poll_timeout)
                .map_err(|e| self.consumer_error(ConsumerStep::Poll, e))?;
            if records.is_empty() {
                idle += 1;
                let limit = if self.short_of_a_known_end(&ends) {
                    self.unreached_idle_polls
                } else {
                    self.idle_polls
                };
                if idle >= limit {
                    self.remember_gaps(&ends);
                    break;
                }
                continue;
            }
            idle = 0;
            for record in &records {
                if let Err(error) = self.log.apply(record) {
                    self.reset();
                    return Err(error.into());
                }
                let next = self.next.entry(record.partition).or_insert(0);
                *next = (*next).max(record.offset.saturating_add(1));
            }
        }
        Ok(&self.log)
    }

    /// Reads, then returns the complete cut of the group with the highest epoch, if any.
    pub fn latest_complete_cut(&mut self, group: &str) -> Result<Option<BarrierCut>, CutReadError> {
        Ok(self.read()?.latest_complete_cut(group))
    }

    /// Reads, then returns the group's complete cuts with an epoch above `after`, oldest first
    /// (`after` = [`super::NO_EPOCH`] for all). Partial cuts are never returned.
    pub fn complete_cuts_after(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Vec<BarrierCut>, CutReadError> {
        Ok(self.read()?.complete_cuts_after(group, after))
    }

    /// Reads, then returns the group's complete cut of exactly `epoch`, if any.
    pub fn complete_cut_at(
        &mut self,
        group: &str,
        epoch: i64,
    ) -> Result<Option<BarrierCut>, CutReadError> {
        Ok(self.read()?.complete_cut_at(group, epoch))
    }

    /// Reads, then returns every cut of every group, partial ones included.
    pub fn all_cuts(&mut self) -> Result<Vec<BarrierCut>, CutReadError> {
        Ok(self.read()?.all_cuts())
    }

    /// Whether every partition's position has reached a known end offset.
    fn reached(&self, ends: &BTreeMap<TopicPartition, i64>) -> bool {
        self.partitions.iter().all(|tp| match ends.get(tp) {
            Some(end) => self.reached_end(tp.partition, *end),
            None => false,
        })
    }

    /// Whether `partition` is at `end`, or `end` is one an earlier read found unreachable.
    fn reached_end(&self, partition: i32, end: i64) -> bool {
        self.next.get(&partition).copied().unwrap_or(0) >= end
            || self.gap_ends.get(&partition) == Some(&end)
    }

    /// Whether some partition has a known end offset that it has not reached.
    fn short_of_a_known_end(&self, ends: &BTreeMap<TopicPartition, i64>) -> bool {
        self.partitions.iter().any(|tp| {
            ends.get(tp)
                .is_some_and(|end| !self.reached_end(tp.partition, *end))
        })
    }

    fn remember_gaps(&mut self, ends: &BTreeMap<TopicPartition, i64>) {
        for tp in &self.partitions {
            if let Some(end) = ends.get(tp)
                && !self.reached_end(tp.partition, *end)
            {
                self.gap_ends.insert(tp.partition, *end);
            }
        }
    }

    /// Forgets everything, so the next read assigns, seeks to 0 and reads from scratch.
    fn reset(&mut self) {
        self.positioned = false;
        self.next.clear();
        self.gap_ends.clear();
        self.log = CutLog::new();
    }

    fn consumer_error(&self, step: ConsumerStep, error: ConsumerError) -> CutReadError {
        consumer_error(&self.partitions, step, error)
    }
}

/// `unreached_end_wait` as a number of empty polls, at least `idle_polls`.
fn unreached_idle_polls(options: &CutReaderOptions) -> u32 {
    let poll_ms = options.poll_timeout.as_millis().max(1);
    let polls = options.unreached_end_wait.as_millis().div_ceil(poll_ms);
    u32::try_from(polls)
        .unwrap_or(u32::MAX)
        .max(options.idle_polls)
}

fn consumer_error(
    partitions: &[TopicPartition],
    step: ConsumerStep,
    error: ConsumerError,
) -> CutReadError {
    CutReadError::Consumer {
        step,
        topic: partitions
            .first()
            .map(|tp| tp.topic.clone())
            .unwrap_or_default(),
        error,
    }
}

#[cfg(test)]
mod tests;
