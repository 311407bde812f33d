//! The group runner's producer over rdkafka: sends a round's records and
//! either flushes, waiting for every acknowledgement, or seals them as a
//! numbered batch whose acknowledgements the delivery reports count down, so a
//! pipelined runner learns which rounds are written without waiting. A delivery
//! that failed after the send returned is reported by the next flush or
//! acknowledgement check, so the runner never commits offsets past a record
//! that was not written. For exactly-once the
//! producer is transactional (`io::kafka::transactions`): the runner begins,
//! sends, adds the consumed offsets with the consumer group metadata and
//! commits; a fenced producer fails every later call and the run stops.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::ClientContext;
use rdkafka::consumer::ConsumerGroupMetadata;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};

use crate::engine::columnar::runner::group::{self, RunnerError, TopicPartition};
use crate::engine::columnar::topology::OutRecord;
use crate::io::kafka::error::is_unreachable_error;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::{test_hooks, transactions};

/// Remembers the first failed delivery since the last flush and counts the
/// unacknowledged sends of each batch (the delivery opaque is the batch ticket).
#[derive(Default)]
pub struct DeliveryContext {
    failure: Mutex<Option<String>>,
    outstanding: Mutex<BTreeMap<u64, usize>>,
    /// Acknowledged records per partition (where the partitioner put the keyless ones).
    per_partition: Mutex<BTreeMap<i32, u64>>,
}

impl ClientContext for DeliveryContext {
    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        crate::io::kafka::auth_failure::note(&error, reason);
        crate::io::kafka::client_log::error(&error, reason);
    }

    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        crate::io::kafka::client_log::log(level, fac, log_message);
    }
}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, ticket: usize) {
        use rdkafka::Message;
        match result {
            Err((e, message)) => {
                let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
                failure.get_or_insert_with(|| format!("cannot write to {}: {e}", message.topic()));
            }
            Ok(message) => {
                let mut counts = self.per_partition.lock().unwrap_or_else(|p| p.into_inner());
                *counts.entry(message.partition()).or_insert(0) += 1;
            }
        }
        self.delivered(ticket as u64);
    }
}

impl DeliveryContext {
    fn outstanding(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, usize>> {
        self.outstanding.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sending(&self, ticket: u64) {
        *self.outstanding().entry(ticket).or_insert(0) += 1;
    }

    fn delivered(&self, ticket: u64) {
        let mut outstanding = self.outstanding();
        if let Some(left) = outstanding.get_mut(&ticket) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                outstanding.remove(&ticket);
            }
        }
    }

    fn unacknowledged(&self) -> usize {
        self.outstanding().values().sum()
    }

    /// The oldest batch with a send not acknowledged yet.
    fn oldest_open(&self) -> Option<u64> {
        self.outstanding().keys().next().copied()
    }
}

pub struct RunnerProducer {
    producer: BaseProducer<DeliveryContext>,
    timeout: Duration,
    /// Set for an exactly-once runner (transactions initialised).
    transactional_id: Option<String>,
    /// The test hook's pause before each commit (`io::kafka::test_hooks`); `None` in production.
    pause_before_commit: Option<Duration>,
    /// The ticket of the batch being sent (sealed batches have lower ones).
    batch: u64,
}

impl RunnerProducer {
    /// Records acknowledged so far, per partition.
    pub fn delivered_per_partition(&self) -> BTreeMap<i32, u64> {
        self.producer
            .context()
            .per_partition
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The native librdkafka handle, for `io::kafka::exit_flush`.
    pub fn native(&self) -> *mut rdkafka::bindings::rd_kafka_t {
        self.producer.client().native_ptr()
    }

    /// A producer with the shared settings; `timeout` bounds one flush.
    pub fn new(settings: &KafkaSettings, timeout: Duration) -> Result<Self, RunnerError> {
        let mut config = settings.client_config();
        // Every record of a round must be acknowledged by all in-sync replicas before the commit.
        if settings.get("acks").is_none() {
            config.set("acks", "all");
        }
        // Keyed records land where the Java client would put them (murmur2 of the key).
        if settings.get("partitioner").is_none() {
            config.set("partitioner", "murmur2_random");
        }
        let producer = config
            .create_with_context(DeliveryContext::default())
            .map_err(|e| RunnerError::new(format!("create Kafka producer: {e}")))?;
        Ok(RunnerProducer {
            producer,
            timeout,
            transactional_id: None,
            pause_before_commit: None,
            batch: 1,
        })
    }

    /// A transactional producer under `transactional_id`, transactions initialised:
    /// this fences any earlier producer with the same id and aborts its open transaction.
    pub fn transactional(
        settings: &KafkaSettings,
        timeout: Duration,
        transactional_id: &str,
    ) -> Result<Self, RunnerError> {
        let mut config = settings.client_config();
        transactions::configure(&mut config, transactional_id);
        if settings.get("partitioner").is_none() {
            config.set("partitioner", "murmur2_random");
        }
        let producer: BaseProducer<DeliveryContext> = config
            .create_with_context(DeliveryContext::default())
            .map_err(|e| RunnerError::new(format!("create transactional producer: {e}")))?;
        producer.init_transactions(timeout).map_err(|e| {
            transactions::transaction_error("initialising transactions", transactional_id, &e)
        })?;
        Ok(RunnerProducer {
            producer,
            timeout,
            transactional_id: Some(transactional_id.to_owned()),
            pause_before_commit: test_hooks::pause_before_commit(),
            batch: 1,
        })
    }

    /// Number of partitions of `topic`, or `None` when it does not exist (`produce`
    /// picks partitions itself, so it needs the count before the first send).
    pub fn partition_count(
        &self,
        topic: &str,
    ) -> Result<Option<i32>, crate::io::kafka::error::KafkaIoError> {
        let md = self
            .producer
            .client()
            .fetch_metadata(Some(topic), self.timeout)
            .map_err(|e| {
                crate::io::kafka::error::KafkaIoError::from_kafka(
                    format!("read metadata of {topic}"),
                    &e,
                )
            })?;
        crate::io::kafka::topic_reader::partitions_in(&md, topic)
    }

    /// The transactional id, or the engine's "no transactions" error.
    fn transactional_id(&self) -> Result<&str, RunnerError> {
        self.transactional_id
            .as_deref()
            .ok_or_else(|| RunnerError::new(group::NO_TRANSACTIONS))
    }

    fn transaction_step(
        &self,
        step: &str,
        result: rdkafka::error::KafkaResult<()>,
    ) -> Result<(), RunnerError> {
        let id = self.transactional_id()?;
        result.map_err(|e| transactions::transaction_error(step, id, &e))
    }

    /// A transactional producer in librdkafka's fatal state (fenced by a newer
    /// instance of its transactional id): every later call fails, so the error
    /// says the member was fenced and the run rejoins with a new producer.
    fn fatal(&self) -> Option<RunnerError> {
        let id = self.transactional_id.as_deref()?;
        let (code, reason) = self.producer.client().fatal_error()?;
        Some(RunnerError::fenced(
            group::Fence::Producer,
            format!(
                "producer fenced: another runner now uses transactional.id {id} ({code}: {reason})"
            ),
        ))
    }

    fn take_failure(&self) -> Option<String> {
        self.producer
            .context()
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

fn headers(record: &OutRecord) -> Option<OwnedHeaders> {
    if record.headers.is_empty() {
        return None;
    }
    let mut out = OwnedHeaders::new_with_capacity(record.headers.len());
    for h in &record.headers {
        out = out.insert(KafkaHeader {
            key: &h.key,
            value: h.value.as_deref(),
        });
    }
    Some(out)
}

impl RunnerProducer {
    /// Sends to the partition the partitioner picks, or to `partition`.
    fn send_at(
        &mut self,
        topic: &str,
        partition: Option<i32>,
        record: &OutRecord,
    ) -> Result<(), RunnerError> {
        let mut base: BaseRecord<'_, [u8], [u8], usize> =
            BaseRecord::with_opaque_to(topic, self.batch as usize);
        if let Some(partition) = partition {
            base = base.partition(partition);
        }
        if let Some(k) = record.key.as_deref() {
            base = base.key(k);
        }
        if let Some(v) = record.value.as_deref() {
            base = base.payload(v);
        }
        // A batch without `__timestamp` (e.g. a group-by's output) carries 0: let the producer stamp it.
        if record.timestamp > 0 {
            base = base.timestamp(record.timestamp);
        }
        if let Some(h) = headers(record) {
            base = base.headers(h);
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            // Counted before the send: its delivery report may come in the next poll.
            self.producer.context().sending(self.batch);
            match self.producer.send(base) {
                Ok(()) => return Ok(()),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                    if Instant::now() < deadline =>
                {
                    self.producer.context().delivered(self.batch);
                    // The local queue drains as acknowledgements arrive.
                    self.producer.poll(Duration::from_millis(50));
                    base = back;
                }
                Err((e, _)) => {
                    self.producer.context().delivered(self.batch);
                    if let Some(fenced) = self.fatal() {
                        return Err(fenced);
                    }
                    return Err(RunnerError {
                        message: format!("cannot send a record to {topic}: {e}"),
                        retriable: false,
                        fenced: None,
                    });
                }
            }
        }
    }
}

impl group::Producer for RunnerProducer {
    type GroupMetadata = ConsumerGroupMetadata;

    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError> {
        self.send_at(topic, None, record)
    }

    fn send_to(
        &mut self,
        topic: &str,
        partition: i32,
        record: &OutRecord,
    ) -> Result<(), RunnerError> {
        self.send_at(topic, Some(partition), record)
    }

    fn flush(&mut self) -> Result<(), RunnerError> {
        let flushed = self.producer.flush(self.timeout);
        if let Some(failure) = self.take_failure() {
            return Err(self.fatal().unwrap_or_else(|| RunnerError::new(failure)));
        }
        flushed.map_err(|e| RunnerError {
            message: format!(
                "the producer flush did not finish within {:?}: {e}",
                self.timeout
            ),
            retriable: is_unreachable_error(&e),
            fenced: None,
        })
    }

    fn seal(&mut self) -> Result<u64, RunnerError> {
        let ticket = self.batch;
        self.batch += 1;
        Ok(ticket)
    }

    fn acknowledged(&mut self) -> Result<u64, RunnerError> {
        // One poll serves one event (a batch of delivery reports): poll until
        // nothing changes.
        let context = self.producer.context();
        loop {
            let before = context.unacknowledged();
            if before == 0 {
                break;
            }
            self.producer.poll(Duration::ZERO);
            if context.unacknowledged() == before {
                break;
            }
        }
        if let Some(failure) = self.take_failure() {
            return Err(RunnerError::new(failure));
        }
        Ok(match context.oldest_open() {
            Some(open) => open - 1,
            None => self.batch - 1,
        })
    }

    fn begin_transaction(&mut self) -> Result<(), RunnerError> {
        self.transactional_id()?;
        let result = self.producer.begin_transaction();
        self.transaction_step("beginning a transaction", result)
    }

    fn send_offsets_to_transaction(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        group: Option<&ConsumerGroupMetadata>,
    ) -> Result<(), RunnerError> {
        self.transactional_id()?;
        let metadata = group.ok_or_else(|| {
            RunnerError::new(
                "exactly-once needs the consumer group metadata of the runner's consumer",
            )
        })?;
        let list = transactions::offsets_list(offsets)?;
        let result = self
            .producer
            .send_offsets_to_transaction(&list, metadata, self.timeout);
        self.transaction_step("sending the consumed offsets", result)
    }

    fn commit_transaction(&mut self) -> Result<(), RunnerError> {
        self.transactional_id()?;
        if let Some(pause) = self.pause_before_commit {
            tracing::warn!("{} ({pause:?})", test_hooks::PAUSE_BEFORE_COMMIT_LOG);
            std::thread::sleep(pause);
        }
        let result = self.producer.commit_transaction(self.timeout);
        if let Some(failure) = self.take_failure() {
            return Err(self.fatal().unwrap_or_else(|| RunnerError::new(failure)));
        }
        self.transaction_step("committing", result)
    }

    fn abort_transaction(&mut self) -> Result<(), RunnerError> {
        self.transactional_id()?;
        // Failed deliveries of the aborted transaction are void.
        self.take_failure();
        let result = self.producer.abort_transaction(self.timeout);
        self.transaction_step("aborting", result)
    }
}
