//! The engine's [`BarrierConsumer`] over an rdkafka consumer, so a [`CutReader`] can follow
//! `__barrier_state` on a real broker (`barrier watch`, and later the runner's cut alignment).
//!
//! The consumer joins no group: it is assigned partitions explicitly and never commits.
//! `read_uncommitted`, since the broker writes the topic non-transactionally (decision D16).
//! End offsets come from one ListOffsets(latest) request per read (`offsets_for_times` with
//! timestamp −1), not one watermark query per partition, so following a 50-partition topic
//! stays cheap. Seeks are applied by re-assigning at the positions tracked here, which works
//! the same before and after the first fetch.
//!
//! [`CutReader`]: crate::engine::columnar::barrier::CutReader

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::consumer::Consumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::barrier::cut_log::ConsumedRecord;
use crate::engine::columnar::barrier::reader::{BarrierConsumer, ConsumerError};
use crate::engine::columnar::barrier::record::TopicPartition;
use crate::io::kafka::auth_failure;
use crate::io::kafka::error::{KafkaIoError, is_unreachable_error};
use crate::io::kafka::reader_context::{ReaderConsumer, ReaderContext};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::topic_reader::partition_count;

/// Most records one `poll` hands back; the rest stay queued for the next poll.
const MAX_RECORDS_PER_POLL: usize = 10_000;

/// A [`BarrierConsumer`] over an rdkafka consumer.
pub struct KafkaBarrierConsumer {
    consumer: ReaderConsumer,
    /// Timeout of metadata and end-offset requests.
    timeout: Duration,
    /// Next offset to read per assigned partition, as seeks and fetched records set it.
    positions: BTreeMap<TopicPartition, i64>,
}

impl KafkaBarrierConsumer {
    /// A consumer with `settings`; nothing is assigned yet.
    pub fn new(settings: &KafkaSettings, timeout: Duration) -> Result<Self, KafkaIoError> {
        settings.refuse_dead_bootstrap()?;
        let mut config = settings.client_config();
        config
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "false")
            .set("isolation.level", "read_uncommitted")
            .set("auto.offset.reset", "earliest")
            // Required by librdkafka for a consumer handle; never joined (assign only).
            .set("group.id", "krabka-streams-cut-reader-unused");
        let consumer = config
            .create_with_context(ReaderContext)
            .map_err(|e| KafkaIoError::failed(format!("create Kafka consumer: {e}")))?;
        Ok(KafkaBarrierConsumer {
            consumer,
            timeout,
            positions: BTreeMap::new(),
        })
    }

    /// The partition count of `topic` from metadata, or `None` when it does not exist.
    pub fn partition_count(&self, topic: &str) -> Result<Option<i32>, KafkaIoError> {
        partition_count(&self.consumer, topic, self.timeout)
    }

    fn reassign(&self) -> Result<(), KafkaIoError> {
        let mut tpl = TopicPartitionList::new();
        for (tp, offset) in &self.positions {
            tpl.add_partition_offset(&tp.topic, tp.partition, Offset::Offset(*offset))
                .map_err(|e| KafkaIoError::failed(format!("{tp}: {e}")))?;
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| KafkaIoError::from_kafka("assign", &e))
    }
}

impl BarrierConsumer for KafkaBarrierConsumer {
    fn assign(&mut self, partitions: &[TopicPartition]) -> Result<(), ConsumerError> {
        self.positions = partitions.iter().map(|tp| (tp.clone(), 0)).collect();
        Ok(self.reassign()?)
    }

    fn seek(&mut self, partition: &TopicPartition, offset: i64) -> Result<(), ConsumerError> {
        let Some(position) = self.positions.get_mut(partition) else {
            return Err(Box::new(KafkaIoError::failed(format!(
                "cannot seek {partition}: it is not assigned"
            ))));
        };
        if *position != offset {
            *position = offset;
            self.reassign()?;
        }
        Ok(())
    }

    fn end_offsets(
        &mut self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError> {
        let mut request = TopicPartitionList::new();
        for tp in partitions {
            // librdkafka reads the offset field as the timestamp to look up; `End` is −1,
            // which ListOffsets answers with the latest offset.
            request
                .add_partition_offset(&tp.topic, tp.partition, Offset::End)
                .map_err(|e| KafkaIoError::failed(format!("{tp}: {e}")))?;
        }
        let answer = self
            .consumer
            .offsets_for_times(request, self.timeout)
            .map_err(|e| {
                auth_failure::serve_events(&self.consumer);
                KafkaIoError::from_kafka("read end offsets", &e)
            })?;
        let mut ends = BTreeMap::new();
        for element in answer.elements() {
            let tp = TopicPartition::new(element.topic(), element.partition());
            if let Err(e) = element.error() {
                return Err(Box::new(KafkaIoError::from_kafka(
                    format!("read end offset of {tp}"),
                    &e,
                )));
            }
            if let Offset::Offset(end) = element.offset() {
                ends.insert(tp, end);
            }
        }
        Ok(ends)
    }

    fn poll(&mut self, timeout: Duration) -> Result<Vec<ConsumedRecord>, ConsumerError> {
        let mut records = Vec::new();
        let mut wait = timeout;
        while records.len() < MAX_RECORDS_PER_POLL {
            match self.consumer.poll(wait) {
                None => break,
                Some(Ok(message)) => {
                    let tp = TopicPartition::new(message.topic(), message.partition());
                    self.positions.insert(tp, message.offset() + 1);
                    records.push(ConsumedRecord {
                        partition: message.partition(),
                        offset: message.offset(),
                        key: message.key().map(<[u8]>::to_vec),
                        value: message.payload().map(<[u8]>::to_vec),
                    });
                    // Drain what is already fetched without waiting again.
                    wait = Duration::ZERO;
                }
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(e)) if is_unreachable_error(&e) => {
                    // librdkafka keeps retrying the connection; to the reader this is an
                    // empty poll, and its idle rule or the caller's timeout decides.
                    tracing::debug!("barrier state poll: {e}");
                    break;
                }
                Some(Err(e)) => {
                    auth_failure::serve_events(&self.consumer);
                    return Err(Box::new(KafkaIoError::from_kafka("poll", &e)));
                }
            }
        }
        Ok(records)
    }
}
