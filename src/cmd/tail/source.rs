//! What the poll side needs of a consumer, as a trait: batches of fetched messages
//! and end-of-partition events, pause and resume of one partition, offset stores
//! for a group's commit, and the group's assignment. `TailConsumer` is the real
//! one; the unit tests of the stop, position and commit rules drive the poll side
//! with a fake (several topics, empty partitions, events in any order, holds).

use std::time::Duration;

use crate::cmd::tail::decode_side::Tp;
use crate::engine::columnar::raw_batch::RawBatch;
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

/// The consumer as the poll side uses it.
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
    fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError>;
    /// Fetches the partition again from `next`.
    fn resume(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError>;
    /// Group mode: records before `next` may be committed.
    fn store_offset(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError>;
    /// The partitions a group assigned to this consumer (none without a group).
    fn assignment(&self) -> Vec<Tp>;
    /// Watermarks with a short timeout (progress, outage checks); `None` on failure.
    fn watermarks_quick(&self, topic: &str, partition: i32) -> Option<(i64, i64)>;
}

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
    fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError> {
        TailConsumer::pause(self, topic, partition)
    }
    fn resume(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        TailConsumer::resume(self, topic, partition, next)
    }
    fn store_offset(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        TailConsumer::store_offset(self, topic, partition, next)
    }
    fn assignment(&self) -> Vec<Tp> {
        TailConsumer::assignment(self)
    }
    fn watermarks_quick(&self, topic: &str, partition: i32) -> Option<(i64, i64)> {
        TailConsumer::watermarks_quick(self, topic, partition)
    }
}
