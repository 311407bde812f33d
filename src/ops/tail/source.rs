//! What the tail needs of a consumer, as three small traits, so the pipeline runs
//! against `TailConsumer` in the product and against a fake in the unit tests:
//!
//! - [`FetchSource`]: batches of fetched messages and end-of-partition events (and a
//!   cheap watermark probe for the outage clock and the lag);
//! - [`PartitionControl`]: pause and resume of one partition, offset stores and the
//!   final commit of a group, the group's assignment;
//! - [`PositionLookup`]: partitions, watermarks and offsets for times, and the
//!   assignment or subscription that positions the consumer before the pipeline runs.

use std::time::Duration;

use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::topic_partition::{PartitionOffset, TopicPartition};
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::fetch_queue::NativeMessage;
use crate::io::kafka::tail_consumer::{Polled, TailConsumer};

/// One fetched record, copied into an arena only when it is kept.
pub trait FetchedMessage {
    /// Equal for messages of one topic within a poll (compared instead of names).
    fn topic_handle(&self) -> *const std::ffi::c_void;
    fn topic(&self) -> &str;
    fn partition(&self) -> i32;
    fn offset(&self) -> i64;
    /// Copies the record into `batch` under its topic number `topic`.
    fn append_to(&self, topic: u32, batch: &mut RawBatch);
}

/// One thing a poll hands over.
pub enum Fetched<'a, M> {
    Message(M),
    /// Every record of the partition below `offset` was delivered.
    End {
        topic: &'a str,
        partition: i32,
        offset: i64,
    },
}

/// The consumer as the poll side reads it.
pub trait FetchSource {
    type Message<'m>: FetchedMessage
    where
        Self: 'm;

    /// Takes up to `max` messages or events, waiting up to `wait` for the first, and
    /// hands each to `f` in fetch order (all of them, even after `f` said `false`,
    /// which only stops taking more); returns how many.
    fn poll_batch<F>(&mut self, wait: Duration, max: usize, f: F) -> usize
    where
        F: FnMut(Result<Fetched<'_, Self::Message<'_>>, KafkaIoError>) -> bool;
    /// Watermarks with a short timeout (progress, outage checks); `None` on failure.
    fn watermarks_quick(&self, topic: &str, partition: i32) -> Option<(i64, i64)>;
    /// What ends a `poll_batch` wait from another thread, when the source has one (the
    /// decode side wakes the poll side once the output is complete).
    fn waker(&self) -> Option<crate::io::kafka::fetch_queue::FetchWaker> {
        None
    }
}

/// The consumer as the pipeline steers it.
pub trait PartitionControl {
    fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError>;
    /// Fetches the partition again from `next`.
    fn resume(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError>;
    /// Group mode: records before `next` may be committed.
    fn store_offset(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError>;
    /// Group mode: commits the stored offsets (nothing without a group).
    fn commit_stored(&self) -> Result<(), KafkaIoError>;
    /// The partitions a group assigned to this consumer (none without a group).
    fn assignment(&self) -> Vec<TopicPartition>;
}

/// The consumer as the tail positions it before the pipeline runs.
pub trait PositionLookup {
    fn partitions(&self, topic: &str) -> Result<Vec<i32>, KafkaIoError>;
    /// Low and high watermark.
    fn watermarks(&self, topic: &str, partition: i32) -> Result<(i64, i64), KafkaIoError>;
    /// The first offset at or after `timestamp_ms`, `None` when there is none.
    fn offset_for_time(
        &self,
        topic: &str,
        partition: i32,
        timestamp_ms: i64,
    ) -> Result<Option<i64>, KafkaIoError>;
    /// Without a group: reads exactly these partitions from these offsets.
    fn assign(&mut self, at: &[PartitionOffset]) -> Result<(), KafkaIoError>;
    /// With a group: joins it for these topics.
    fn subscribe(&self, topics: &[String]) -> Result<(), KafkaIoError>;
}

/// Everything the tail does with a consumer.
pub trait TailClient: FetchSource + PartitionControl + PositionLookup {}

impl<C: FetchSource + PartitionControl + PositionLookup> TailClient for C {}

impl FetchedMessage for NativeMessage<'_> {
    fn topic_handle(&self) -> *const std::ffi::c_void {
        NativeMessage::topic_handle(self)
    }
    fn topic(&self) -> &str {
        NativeMessage::topic(self)
    }
    fn partition(&self) -> i32 {
        NativeMessage::partition(self)
    }
    fn offset(&self) -> i64 {
        NativeMessage::offset(self)
    }
    fn append_to(&self, topic: u32, batch: &mut RawBatch) {
        NativeMessage::append_to(self, topic, batch)
    }
}

impl FetchSource for TailConsumer {
    type Message<'m> = NativeMessage<'m>;

    fn poll_batch<F>(&mut self, wait: Duration, max: usize, mut f: F) -> usize
    where
        F: FnMut(Result<Fetched<'_, NativeMessage<'_>>, KafkaIoError>) -> bool,
    {
        TailConsumer::poll_batch(self, wait, max, |polled| {
            f(polled.map(|p| match p {
                Polled::Message(m) => Fetched::Message(m),
                Polled::PartitionEof {
                    topic,
                    partition,
                    offset,
                } => Fetched::End {
                    topic,
                    partition,
                    offset,
                },
            }))
        })
    }
    fn watermarks_quick(&self, topic: &str, partition: i32) -> Option<(i64, i64)> {
        TailConsumer::watermarks_quick(self, topic, partition)
    }
    fn waker(&self) -> Option<crate::io::kafka::fetch_queue::FetchWaker> {
        TailConsumer::waker(self)
    }
}

impl PartitionControl for TailConsumer {
    fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError> {
        TailConsumer::pause(self, topic, partition)
    }
    fn resume(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        TailConsumer::resume(self, topic, partition, next)
    }
    fn store_offset(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        TailConsumer::store_offset(self, topic, partition, next)
    }
    fn commit_stored(&self) -> Result<(), KafkaIoError> {
        TailConsumer::commit_stored(self)
    }
    fn assignment(&self) -> Vec<TopicPartition> {
        TailConsumer::assignment(self)
    }
}

impl PositionLookup for TailConsumer {
    fn partitions(&self, topic: &str) -> Result<Vec<i32>, KafkaIoError> {
        TailConsumer::partitions(self, topic)
    }
    fn watermarks(&self, topic: &str, partition: i32) -> Result<(i64, i64), KafkaIoError> {
        TailConsumer::watermarks(self, topic, partition)
    }
    fn offset_for_time(
        &self,
        topic: &str,
        partition: i32,
        timestamp_ms: i64,
    ) -> Result<Option<i64>, KafkaIoError> {
        TailConsumer::offset_for_time(self, topic, partition, timestamp_ms)
    }
    fn assign(&mut self, at: &[PartitionOffset]) -> Result<(), KafkaIoError> {
        TailConsumer::assign(self, at)
    }
    fn subscribe(&self, topics: &[String]) -> Result<(), KafkaIoError> {
        TailConsumer::subscribe(self, topics)
    }
}
