//! The group runner's producer over rdkafka: sends a round's records and
//! flushes, waiting for every acknowledgement; a delivery that failed after
//! the send returned is reported by the next flush, so the runner never
//! commits offsets past a record that was not written.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::ClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header as KafkaHeader, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};

use crate::engine::columnar::runner::group::{self, RunnerError};
use crate::engine::columnar::topology::OutRecord;
use crate::io::kafka::error::is_unreachable_error;
use crate::io::kafka::settings::KafkaSettings;

/// Remembers the first failed delivery since the last flush.
#[derive(Default)]
pub struct DeliveryContext {
    failure: Mutex<Option<String>>,
}

impl ClientContext for DeliveryContext {}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, message)) = result {
            use rdkafka::Message;
            let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            failure.get_or_insert_with(|| format!("cannot write to {}: {e}", message.topic()));
        }
    }
}

pub struct RunnerProducer {
    producer: BaseProducer<DeliveryContext>,
    timeout: Duration,
}

impl RunnerProducer {
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
        Ok(RunnerProducer { producer, timeout })
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

impl group::Producer for RunnerProducer {
    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError> {
        let mut base: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic);
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
            match self.producer.send(base) {
                Ok(()) => return Ok(()),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                    if Instant::now() < deadline =>
                {
                    // The local queue drains as acknowledgements arrive.
                    self.producer.poll(Duration::from_millis(50));
                    base = back;
                }
                Err((e, _)) => {
                    return Err(RunnerError {
                        message: format!("cannot send a record to {topic}: {e}"),
                        retriable: false,
                    });
                }
            }
        }
    }

    fn flush(&mut self) -> Result<(), RunnerError> {
        let flushed = self.producer.flush(self.timeout);
        if let Some(failure) = self.take_failure() {
            return Err(RunnerError::new(failure));
        }
        flushed.map_err(|e| RunnerError {
            message: format!(
                "the producer flush did not finish within {:?}: {e}",
                self.timeout
            ),
            retriable: is_unreachable_error(&e),
        })
    }
}
