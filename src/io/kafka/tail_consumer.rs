//! The consumer behind `tail`: partitions and watermarks from metadata, offsets
//! for timestamps, manual assignment at resolved offsets or group subscription,
//! polling messages that are copied straight into a [`RawBatch`] arena (no owned
//! record per message), and pause/resume of single partitions (a partition whose
//! next record waits for a writer schema is paused, never the loop).
//!
//! Both modes take messages from one fetch queue (see `tail_context`), so every
//! partition-EOF event names its topic, partition and offset.

use std::time::Duration;

use rdkafka::bindings as rdsys;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::topic_partition_list::TopicPartitionListElem;
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::topic_partition::{PartitionOffset, TopicPartition};
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::fetch_queue::{FetchQueue, FetchWaker, NativeMessage};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::tail_context::{TailContext, locked};
use crate::io::kafka::topic_reader::partition_count;

/// One poll result.
pub enum Polled<'a> {
    Message(NativeMessage<'a>),
    /// Every record of the partition below `offset` was delivered (its high
    /// watermark, or last stable offset under read_committed, when fetched).
    PartitionEof {
        topic: &'a str,
        partition: i32,
        offset: i64,
    },
}

type TailClient = BaseConsumer<TailContext>;

/// How the consumer is set up.
#[derive(Debug, Clone)]
pub struct TailConsumerOptions {
    /// Consumer group (subscribe mode); `None` assigns partitions by hand.
    pub group: Option<String>,
    /// `read_committed` or `read_uncommitted`.
    pub isolation: String,
    /// Group mode: where partitions without a committed offset start (`earliest`/`latest`).
    pub auto_offset_reset: String,
    pub timeout: Duration,
}

pub struct TailConsumer {
    /// Its context holds the fetch queue of the assigned partitions.
    consumer: TailClient,
    timeout: Duration,
    group: bool,
}

impl Drop for TailConsumer {
    fn drop(&mut self) {
        // Our queue handle goes before the client it belongs to.
        drop(locked(&self.consumer.context().fetch).take());
        crate::io::kafka::prompt_close::close(&self.consumer);
    }
}

fn tp(topic: &str, partition: i32) -> TopicPartitionList {
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition(topic, partition);
    tpl
}

impl TailConsumer {
    pub fn new(settings: &KafkaSettings, opts: &TailConsumerOptions) -> Result<Self, KafkaIoError> {
        settings.refuse_dead_bootstrap()?;
        let consumer: TailClient = Self::client_config(settings, opts)
            .create_with_context(TailContext::default())
            .map_err(|e| KafkaIoError::failed(format!("create Kafka consumer: {e}")))?;
        // In place before any assignment: a group's is made in a poll, later.
        // SAFETY: the live client; `Drop for TailConsumer` destroys the queue first.
        let fetch = unsafe { FetchQueue::empty(consumer.client().native_ptr()) }?;
        *locked(&consumer.context().fetch) = Some(fetch);
        Ok(TailConsumer {
            consumer,
            timeout: opts.timeout,
            group: opts.group.is_some(),
        })
    }

    /// The librdkafka configuration of a tail's consumer (public so that a benchmark's
    /// bare consumer reads with exactly the same client settings).
    pub fn client_config(settings: &KafkaSettings, opts: &TailConsumerOptions) -> ClientConfig {
        let mut config = settings.streaming_consumer_config();
        config
            .set("enable.partition.eof", "true")
            .set("isolation.level", &opts.isolation)
            .set("auto.offset.reset", &opts.auto_offset_reset);
        match &opts.group {
            Some(g) => {
                config
                    .set("group.id", g)
                    .set("enable.auto.commit", "true")
                    .set("enable.auto.offset.store", "false");
            }
            None => {
                config
                    .set("group.id", "krabka-streams-tail-unused")
                    .set("enable.auto.commit", "false");
            }
        }
        config
    }

    /// Ends a wait of [`TailConsumer::poll_batch`] early, from any thread; does
    /// nothing once the consumer is gone.
    pub fn waker(&self) -> Option<FetchWaker> {
        locked(&self.consumer.context().fetch)
            .as_ref()
            .map(FetchQueue::waker)
    }

    /// The partitions of a topic; an error naming the topic when it does not exist.
    pub fn partitions(&self, topic: &str) -> Result<Vec<i32>, KafkaIoError> {
        match partition_count(&self.consumer, topic, self.timeout)? {
            Some(n) => Ok((0..n).collect()),
            None => Err(KafkaIoError::failed(format!(
                "topic {topic} does not exist"
            ))),
        }
    }

    /// (log start, high watermark) of one partition.
    pub fn watermarks(&self, topic: &str, partition: i32) -> Result<(i64, i64), KafkaIoError> {
        self.consumer
            .fetch_watermarks(topic, partition, self.timeout)
            .map_err(|e| {
                crate::io::kafka::auth_failure::serve_events(&self.consumer);
                KafkaIoError::from_kafka(format!("read watermarks of {topic}/{partition}"), &e)
            })
    }

    /// Watermarks with a short timeout, for progress displays; `None` on any failure.
    pub fn watermarks_quick(&self, topic: &str, partition: i32) -> Option<(i64, i64)> {
        self.consumer
            .fetch_watermarks(topic, partition, Duration::from_millis(300))
            .ok()
    }

    /// The first offset whose timestamp is at or after `ts_ms`; `None` when there is none.
    pub fn offset_for_time(
        &self,
        topic: &str,
        partition: i32,
        ts_ms: i64,
    ) -> Result<Option<i64>, KafkaIoError> {
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, partition, Offset::Offset(ts_ms))
            .map_err(|e| KafkaIoError::failed(e.to_string()))?;
        let found = self
            .consumer
            .offsets_for_times(tpl, self.timeout)
            .map_err(|e| {
                KafkaIoError::from_kafka(
                    format!("look up offsets by time in {topic}/{partition}"),
                    &e,
                )
            })?;
        let offset = found
            .find_partition(topic, partition)
            .map(|e: TopicPartitionListElem<'_>| e.offset());
        Ok(match offset {
            Some(Offset::Offset(o)) if o >= 0 => Some(o),
            _ => None,
        })
    }

    /// Assigns exactly these partitions at these offsets; their messages are then
    /// consumed in batches.
    pub fn assign(&mut self, at: &[PartitionOffset]) -> Result<(), KafkaIoError> {
        let rk = self.consumer.client().native_ptr();
        if let Some(fetch) = locked(&self.consumer.context().fetch).as_ref() {
            for at in at {
                // SAFETY: `rk` is the live client the queue was made with.
                unsafe { fetch.forward(rk, &at.tp.topic, at.tp.partition) }?;
            }
        }
        let mut tpl = TopicPartitionList::new();
        for at in at {
            tpl.add_partition_offset(&at.tp.topic, at.tp.partition, Offset::Offset(at.offset))
                .map_err(|e| KafkaIoError::failed(e.to_string()))?;
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| KafkaIoError::failed(format!("assign partitions: {e}")))
    }

    pub fn subscribe(&self, topics: &[String]) -> Result<(), KafkaIoError> {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        self.consumer
            .subscribe(&names)
            .map_err(|e| KafkaIoError::failed(format!("subscribe to {}: {e}", names.join(", "))))
    }

    /// The partitions currently assigned (group mode changes them on rebalance).
    pub fn assignment(&self) -> Vec<TopicPartition> {
        self.consumer
            .assignment()
            .map(|tpl| {
                tpl.elements()
                    .iter()
                    .map(|e| TopicPartition::new(e.topic(), e.partition()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Takes up to `max` messages or events, waiting up to `timeout` for the first,
    /// and hands each to `f` in order; returns how many. `f` returns `false` to stop
    /// polling; messages already taken from librdkafka are still handed over (none is
    /// dropped). Client errors (a lost broker among them) come as `Err`.
    pub fn poll_batch(
        &mut self,
        timeout: Duration,
        max: usize,
        mut f: impl FnMut(Result<Polled<'_>, KafkaIoError>) -> bool,
    ) -> usize {
        // The consumer's own queue: client errors, logs, statistics, and a group's
        // rebalances (served here, which forwards the partitions they assign).
        let mut n = 0;
        if let Some(polled) = self.consumer.poll(Duration::ZERO) {
            n += 1;
            let go = match polled {
                // Forwarding is in place before any assignment: nothing of a
                // partition comes here unless it failed, which is reported below.
                Ok(m) => f(Ok(Polled::Message(unsafe {
                    // SAFETY: `m` is alive for the call.
                    NativeMessage::from_ptr(m.ptr())
                }))),
                Err(KafkaError::PartitionEOF(_)) => true,
                Err(e) => f(Err(KafkaIoError::from_kafka("consume", &e))),
            };
            if !go {
                return n;
            }
        }
        if let Some(why) = locked(&self.consumer.context().forward_failed).take() {
            f(Err(KafkaIoError::failed(format!(
                "{why}: the tail cannot tell which topic that partition's end belongs to"
            ))));
            return n + 1;
        }
        let mut fetch = locked(&self.consumer.context().fetch);
        let Some(fetch) = fetch.as_mut() else {
            return n;
        };
        n + fetch.consume(timeout, max, |m| {
            let item = match m.error() {
                rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR => Ok(Polled::Message(m)),
                rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__PARTITION_EOF => {
                    Ok(Polled::PartitionEof {
                        topic: m.topic(),
                        partition: m.partition(),
                        offset: m.offset(),
                    })
                }
                code => Err(KafkaIoError::from_kafka(
                    format!("consume {}/{}", m.topic(), m.partition()),
                    &KafkaError::MessageConsumption(code.into()),
                )),
            };
            f(item);
        })
    }

    /// Stops fetching one partition; records already delivered stay with the caller.
    pub fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError> {
        self.consumer
            .pause(&tp(topic, partition))
            .map_err(|e| KafkaIoError::failed(format!("pause {topic}/{partition}: {e}")))
    }

    /// Fetches one partition again from `next_offset`.
    pub fn resume(
        &self,
        topic: &str,
        partition: i32,
        next_offset: i64,
    ) -> Result<(), KafkaIoError> {
        self.consumer
            .resume(&tp(topic, partition))
            .map_err(|e| KafkaIoError::failed(format!("resume {topic}/{partition}: {e}")))?;
        self.consumer
            .seek(topic, partition, Offset::Offset(next_offset), self.timeout)
            .map_err(|e| KafkaIoError::from_kafka(format!("seek {topic}/{partition}"), &e))
    }

    /// Group mode: marks records up to `next_offset` (exclusive) as processed.
    pub fn store_offset(
        &self,
        topic: &str,
        partition: i32,
        next_offset: i64,
    ) -> Result<(), KafkaIoError> {
        if !self.group {
            return Ok(());
        }
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, partition, Offset::Offset(next_offset))
            .map_err(|e| KafkaIoError::failed(e.to_string()))?;
        self.consumer
            .store_offsets(&tpl)
            .map_err(|e| KafkaIoError::failed(format!("store offset of {topic}/{partition}: {e}")))
    }

    /// Group mode: commits the stored offsets now (at the end of a tail).
    pub fn commit_stored(&self) -> Result<(), KafkaIoError> {
        if !self.group {
            return Ok(());
        }
        match self.consumer.commit_consumer_state(CommitMode::Sync) {
            Ok(()) => Ok(()),
            // Nothing stored since the last commit.
            Err(KafkaError::ConsumerCommit(rdkafka::types::RDKafkaErrorCode::NoOffset)) => Ok(()),
            Err(e) => Err(KafkaIoError::from_kafka("commit offsets", &e)),
        }
    }
}

#[cfg(test)]
#[path = "tail_consumer_tests.rs"]
mod tests;
