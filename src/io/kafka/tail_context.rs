//! The client context of `tail`'s consumer: logs as every reader does (`ReaderContext`)
//! and owns the queue that assigned partitions' fetch queues are forwarded to — by
//! hand for a manual assignment, in the rebalance callback for a group (before
//! librdkafka starts the fetch, which then keeps the forward; an unassign drops it,
//! so every assign forwards again).
//!
//! Everything a partition delivers, its end-of-partition events included, then comes
//! through that queue as a native message naming its topic: the consumer's own queue
//! would turn a partition EOF into `KafkaError::PartitionEOF(partition)`, which loses
//! the topic, and with several topics partition 3 of one cannot be told from
//! partition 3 of another.

use std::sync::{Mutex, MutexGuard};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::KafkaError;

use crate::io::kafka::fetch_queue::FetchQueue;
use crate::io::kafka::reader_context::ReaderContext;

/// Forwards assigned partitions to the tail's fetch queue; remembers a partition
/// that could not be forwarded (its events would lose their topic), which fails the tail.
#[derive(Default)]
pub struct TailContext {
    /// Set once the consumer exists; taken out (destroyed) before the consumer is.
    pub(crate) fetch: Mutex<Option<FetchQueue>>,
    pub(crate) forward_failed: Mutex<Option<String>>,
}

pub(crate) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ClientContext for TailContext {
    fn error(&self, error: KafkaError, reason: &str) {
        ReaderContext.error(error, reason);
    }

    // librdkafka's log lines go through the readers' collapsing logger too.
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        ReaderContext.log(level, fac, log_message);
    }
}

impl ConsumerContext for TailContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            let rk = consumer.client().native_ptr();
            let fetch = locked(&self.fetch);
            let Some(fetch) = fetch.as_ref() else {
                return;
            };
            for e in list.elements() {
                // SAFETY: `rk` is the live client the queue was made with.
                if let Err(err) = unsafe { fetch.forward(rk, e.topic(), e.partition()) } {
                    locked(&self.forward_failed).get_or_insert(err.to_string());
                }
            }
        }
    }
}
