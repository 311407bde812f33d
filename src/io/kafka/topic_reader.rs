//! Reading a whole topic: every partition (discovered through metadata, never a
//! fixed count) from the start to the end offsets captured when the read starts,
//! with partition-EOF events and an idle rule as fallbacks for log gaps left by
//! control records (barrier markers, transaction markers).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};

use crate::io::kafka::auth_failure;
use crate::io::kafka::error::{KafkaIoError, is_unreachable_error};
use crate::io::kafka::headers::message_headers;
use crate::io::kafka::reader_context::{ReaderConsumer, ReaderContext};
use crate::io::kafka::settings::KafkaSettings;

/// One record as fetched, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub timestamp: Option<i64>,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

impl RawRecord {
    fn from_message(m: &BorrowedMessage<'_>) -> Self {
        RawRecord {
            topic: m.topic().to_string(),
            partition: m.partition(),
            offset: m.offset(),
            timestamp: m.timestamp().to_millis(),
            key: m.key().map(<[u8]>::to_vec),
            value: m.payload().map(<[u8]>::to_vec),
            headers: message_headers(m),
        }
    }
}

/// Metadata of `topic` within `timeout`. librdkafka retries a refused SASL login (and a
/// refused certificate) until the timeout, so the request is made in growing slices with
/// the client's error events served between them: a refused login ends the wait at once
/// (exit 1 naming it), a refused certificate too (exit 4 naming it), instead of after
/// the whole `--timeout`.
fn fetch_metadata<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    timeout: Duration,
) -> Result<rdkafka::metadata::Metadata, KafkaIoError> {
    let deadline = Instant::now() + timeout;
    let mut slice = Duration::from_millis(250);
    loop {
        let started = Instant::now();
        let left = deadline.saturating_duration_since(started);
        match consumer.fetch_metadata(Some(topic), slice.min(left)) {
            Ok(md) => return Ok(md),
            Err(e) => {
                auth_failure::serve_events(consumer);
                let again = is_unreachable_error(&e)
                    && !auth_failure::ends_the_wait()
                    && Instant::now() < deadline;
                if !again {
                    return Err(KafkaIoError::from_kafka(
                        format!("read metadata of {topic}"),
                        &e,
                    ));
                }
                // A request that failed at once is not repeated in a tight loop.
                let pause = Duration::from_millis(50).saturating_sub(started.elapsed());
                std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                slice = (slice * 2).min(Duration::from_secs(4));
            }
        }
    }
}

/// Number of partitions of `topic`, or `None` when the topic does not exist.
pub fn partition_count<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    topic: &str,
    timeout: Duration,
) -> Result<Option<i32>, KafkaIoError> {
    let md = fetch_metadata(consumer, topic, timeout)?;
    partitions_in(&md, topic)
}

/// Number of partitions of `topic` in fetched metadata, or `None` when it does not exist.
pub fn partitions_in(
    md: &rdkafka::metadata::Metadata,
    topic: &str,
) -> Result<Option<i32>, KafkaIoError> {
    let Some(t) = md.topics().iter().find(|t| t.name() == topic) else {
        return Ok(None);
    };
    if let Some(err) = t.error() {
        let code = RDKafkaErrorCode::from(err);
        if code == RDKafkaErrorCode::UnknownTopicOrPartition
            || code == RDKafkaErrorCode::UnknownTopic
        {
            return Ok(None);
        }
        return Err(KafkaIoError::failed(format!(
            "read metadata of {topic}: {code}"
        )));
    }
    if t.partitions().is_empty() {
        return Ok(None);
    }
    Ok(Some(t.partitions().len() as i32))
}

/// A consumer without a group, assigned to every partition of one topic.
pub struct TopicReader {
    consumer: ReaderConsumer,
    topic: String,
    partitions: Vec<i32>,
    timeout: Duration,
}

impl TopicReader {
    /// Opens a reader, or `None` when the topic does not exist.
    pub fn open(
        settings: &KafkaSettings,
        topic: &str,
        timeout: Duration,
    ) -> Result<Option<Self>, KafkaIoError> {
        settings.refuse_dead_bootstrap()?;
        let mut config = settings.client_config();
        config
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "true")
            .set("isolation.level", "read_uncommitted")
            .set("auto.offset.reset", "earliest")
            .set("group.id", "krabka-streams-reader-unused");
        let consumer: ReaderConsumer = config
            .create_with_context(ReaderContext)
            .map_err(|e| KafkaIoError::failed(format!("create Kafka consumer: {e}")))?;
        let Some(n) = partition_count(&consumer, topic, timeout)? else {
            return Ok(None);
        };
        Ok(Some(TopicReader {
            consumer,
            topic: topic.to_string(),
            partitions: (0..n).collect(),
            timeout,
        }))
    }

    pub fn partitions(&self) -> &[i32] {
        &self.partitions
    }

    /// End offsets (high watermarks) of every partition, now.
    pub fn end_offsets(&self) -> Result<BTreeMap<i32, i64>, KafkaIoError> {
        let mut out = BTreeMap::new();
        for &p in &self.partitions {
            let (_, high) = self
                .consumer
                .fetch_watermarks(&self.topic, p, self.timeout)
                .map_err(|e| {
                    KafkaIoError::from_kafka(format!("read end offset of {}-{p}", self.topic), &e)
                })?;
            out.insert(p, high);
        }
        Ok(out)
    }

    /// Reads every partition from the start to the end offsets captured now, in
    /// fetch order (offset order within a partition), handing each record to `f`.
    pub fn read_to_end<E>(
        &self,
        mut f: impl FnMut(RawRecord) -> Result<(), E>,
    ) -> Result<Result<(), E>, KafkaIoError> {
        let ends = self.end_offsets()?;
        let mut pending: BTreeSet<i32> = ends
            .iter()
            .filter(|(_, e)| **e > 0)
            .map(|(p, _)| *p)
            .collect();
        if pending.is_empty() {
            return Ok(Ok(()));
        }
        let mut tpl = TopicPartitionList::new();
        for &p in &pending {
            tpl.add_partition_offset(&self.topic, p, Offset::Beginning)
                .map_err(|e| KafkaIoError::failed(e.to_string()))?;
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| KafkaIoError::failed(format!("assign {}: {e}", self.topic)))?;
        let deadline = Instant::now() + self.timeout;
        while !pending.is_empty() {
            if Instant::now() >= deadline {
                return Err(KafkaIoError::unreachable(format!(
                    "timed out reading {} partitions {:?} to their end offsets",
                    self.topic, pending
                )));
            }
            match self.consumer.poll(Duration::from_millis(200)) {
                None => {}
                Some(Ok(m)) => {
                    let rec = RawRecord::from_message(&m);
                    let p = rec.partition;
                    let next = rec.offset + 1;
                    if let Err(e) = f(rec) {
                        return Ok(Err(e));
                    }
                    if ends.get(&p).is_some_and(|end| next >= *end) {
                        pending.remove(&p);
                    }
                }
                Some(Err(KafkaError::PartitionEOF(p))) => {
                    pending.remove(&p);
                }
                Some(Err(e)) => {
                    return Err(KafkaIoError::from_kafka(format!("read {}", self.topic), &e));
                }
            }
        }
        Ok(Ok(()))
    }

    /// Follows the topic from the current end offsets, handing new records to `f`
    /// until it returns `false` or `stop` is true.
    pub fn follow(
        &self,
        from_start: bool,
        stop: &dyn Fn() -> bool,
        mut f: impl FnMut(RawRecord) -> bool,
    ) -> Result<(), KafkaIoError> {
        let mut tpl = TopicPartitionList::new();
        for &p in &self.partitions {
            let offset = if from_start {
                Offset::Beginning
            } else {
                Offset::End
            };
            tpl.add_partition_offset(&self.topic, p, offset)
                .map_err(|e| KafkaIoError::failed(e.to_string()))?;
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| KafkaIoError::failed(format!("assign {}: {e}", self.topic)))?;
        while !stop() {
            match self.consumer.poll(Duration::from_millis(200)) {
                None | Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Ok(m)) => {
                    if !f(RawRecord::from_message(&m)) {
                        return Ok(());
                    }
                }
                Some(Err(e)) => {
                    return Err(KafkaIoError::from_kafka(format!("read {}", self.topic), &e));
                }
            }
        }
        Ok(())
    }
}
