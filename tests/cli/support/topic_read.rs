//! Reading a topic back from the beginning in the end-to-end tests: a throwaway
//! consumer (its own group, nothing committed) assigned to every partition, polled
//! until the caller's condition holds for what was read or a deadline passes, so a
//! test that waits for a runner's output neither hangs nor races the first record.

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::BorrowedMessage;
use rdkafka::{Offset, TopicPartitionList};

use super::unique_name;

/// What to read: `partitions` partitions of `topic` from offset 0, for at most
/// `deadline` (30 s unless changed), `read_committed` (librdkafka's default, said
/// out loud because the exactly-once tests count on it).
pub struct TopicRead<'a> {
    bootstrap: &'a str,
    topic: &'a str,
    partitions: i32,
    deadline: Duration,
}

impl<'a> TopicRead<'a> {
    pub fn new(bootstrap: &'a str, topic: &'a str, partitions: i32) -> Self {
        TopicRead {
            bootstrap,
            topic,
            partitions,
            deadline: Duration::from_secs(30),
        }
    }

    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Every record read, each turned into a `T` by `convert` as it arrives, until
    /// `done` holds for all of them so far or the deadline passes.
    pub fn until<T>(
        self,
        convert: impl Fn(&BorrowedMessage<'_>) -> T,
        done: impl Fn(&[T]) -> bool,
    ) -> Vec<T> {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", self.bootstrap)
            .set("group.id", unique_name("reader"))
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            .create()
            .unwrap();
        let mut tpl = TopicPartitionList::new();
        for p in 0..self.partitions {
            tpl.add_partition_offset(self.topic, p, Offset::Beginning)
                .unwrap();
        }
        consumer.assign(&tpl).unwrap();
        let until = Instant::now() + self.deadline;
        let mut out = Vec::new();
        while Instant::now() < until && !done(&out) {
            match consumer.poll(Duration::from_millis(200)) {
                Some(Ok(m)) => out.push(convert(&m)),
                Some(Err(e)) => eprintln!("reader of {}: {e}", self.topic),
                None => {}
            }
        }
        out
    }
}
