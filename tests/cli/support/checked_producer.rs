//! The tests' own producer, with its delivery reports read. rdkafka's `flush`
//! answers Ok even when a delivery failed (the report goes to a callback that
//! the default context only logs), so a test computing its truth from what it
//! sent would compare the tool's answer against a record the broker never
//! stored, and blame the tool. Here a failed record is sent again (callers
//! flush after each record or each batch, so the order holds) and a record the
//! broker refuses [`ATTEMPTS`] times fails the test, naming the broker's error.

use std::sync::Mutex;
use std::time::Duration;

use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Message, OwnedHeaders, ToBytes};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};

const TIMEOUT: Duration = Duration::from_secs(30);
/// Sends of one record before the test gives up on the broker.
const ATTEMPTS: usize = 5;

/// A record whose delivery failed, owned so that it can be sent again.
struct Failed {
    topic: String,
    partition: i32,
    key: Option<Vec<u8>>,
    payload: Option<Vec<u8>>,
    headers: Option<OwnedHeaders>,
    timestamp: Option<i64>,
    error: String,
}

/// Keeps the failed deliveries since the last flush.
#[derive(Default)]
pub struct Reports {
    failed: Mutex<Vec<Failed>>,
}

impl ClientContext for Reports {}

impl ProducerContext for Reports {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((error, m)) = result {
            self.failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Failed {
                    topic: m.topic().to_owned(),
                    partition: m.partition(),
                    key: m.key().map(<[u8]>::to_vec),
                    payload: m.payload().map(<[u8]>::to_vec),
                    headers: m.headers().map(|h| h.detach()),
                    timestamp: m.timestamp().to_millis(),
                    error: error.to_string(),
                });
        }
    }
}

/// A producer whose every record is acknowledged by the broker once
/// [`CheckedProducer::flush`] returns.
pub struct CheckedProducer {
    producer: BaseProducer<Reports>,
}

impl CheckedProducer {
    pub fn new(config: &ClientConfig) -> Self {
        CheckedProducer {
            producer: config
                .create_with_context(Reports::default())
                .expect("producer"),
        }
    }

    /// One record per batch on `bootstrap` (Tansu's high watermark is right only then).
    pub fn one_per_batch(bootstrap: &str) -> Self {
        Self::new(
            ClientConfig::new()
                .set("bootstrap.servers", bootstrap)
                .set("linger.ms", "0")
                .set("batch.num.messages", "1"),
        )
    }

    /// Queues the record, waiting while the local queue is full.
    pub fn send<K: ToBytes + ?Sized, P: ToBytes + ?Sized>(&self, mut record: BaseRecord<'_, K, P>) {
        loop {
            match self.producer.send(record) {
                Ok(()) => return,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    self.producer.poll(Duration::from_millis(50));
                    record = back;
                }
                Err((e, _)) => panic!("queue a record: {e}"),
            }
        }
    }

    /// Waits for every queued record's delivery; sends the failed ones again.
    pub fn flush(&self) {
        for attempt in 1..=ATTEMPTS {
            self.producer.flush(TIMEOUT).expect("flush");
            let failed = std::mem::take(
                &mut *self
                    .producer
                    .context()
                    .failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()),
            );
            if failed.is_empty() {
                return;
            }
            for f in &failed {
                assert!(
                    attempt < ATTEMPTS,
                    "the test's producer could not write to {}/{} in {ATTEMPTS} attempts: {}",
                    f.topic,
                    f.partition,
                    f.error
                );
                eprintln!(
                    "test producer: a record to {}/{} was not written ({}); sending it again",
                    f.topic, f.partition, f.error
                );
                let mut again = BaseRecord::<[u8], [u8]>::to(&f.topic);
                if f.partition >= 0 {
                    again = again.partition(f.partition);
                }
                if let Some(k) = &f.key {
                    again = again.key(k.as_slice());
                }
                if let Some(v) = &f.payload {
                    again = again.payload(v.as_slice());
                }
                if let Some(h) = &f.headers {
                    again = again.headers(h.clone());
                }
                if let Some(ts) = f.timestamp {
                    again = again.timestamp(ts);
                }
                self.send(again);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
