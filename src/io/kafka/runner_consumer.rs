//! The group runner's consumer over rdkafka: subscribes the topology's source
//! topics with an ordinary consumer group, auto-commit off, commits exactly the
//! offsets the runner hands it, waiting for the broker or not (a failed
//! asynchronous commit is logged and reported, so the runner commits again).
//!
//! Rebalances happen inside librdkafka's poll, where the runner cannot be
//! reached, so the context queues them and [`RunnerConsumer::take_rebalances`]
//! hands them over; the caller applies them (load or save partition state)
//! before the next poll. A poll that sees a rebalance returns no records: what
//! it had gathered from partitions still owned is kept for the next poll, and
//! records of revoked or lost partitions are dropped (they were not committed,
//! so their next owner reads them again).
//!
//! Fetched messages are taken many per call, as `tail` takes them: each
//! partition's fetch queue is forwarded to a queue of ours when it is assigned
//! (in the rebalance callback, before librdkafka starts its fetch, which then
//! keeps the forward; an unassign drops it, so every assign forwards again) and
//! drained with `rd_kafka_consume_batch_queue`. The consumer's own queue, polled
//! without waiting every round (waiting only while nothing is assigned), keeps
//! the rebalances, commit results and client errors: batch-consuming it instead
//! would hand rebalances to librdkafka's default handling, since rdkafka-rs takes
//! them as events rather than through a rebalance callback. librdkafka drops
//! messages fetched before a revoke or seek from either queue (op versions).
//!
//! For barrier alignment it reports positions (capped at records it still
//! holds) and the group's committed offsets; for exactly-once it hands out the
//! consumer group metadata that transactional offset commits carry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rdkafka::bindings as rdsys;
use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, KafkaResult};
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::runner::group::{self, RunnerError, TopicPartition};
use crate::engine::columnar::topology::Record;
use crate::io::kafka::error::{KafkaIoError, is_unreachable_error};
use crate::io::kafka::fetch_queue::FetchQueue;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::topic_reader::partition_count;

/// A change of the group assignment, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RebalanceEvent {
    Assigned(Vec<TopicPartition>),
    Revoked(Vec<TopicPartition>),
    /// Taken away without a clean revoke (session lost): state is not saved.
    Lost(Vec<TopicPartition>),
}

/// Queues rebalances for the runner and forwards assigned partitions to its
/// fetch queue; logs librdkafka errors and failed commits.
#[derive(Default)]
pub struct RunnerContext {
    events: Mutex<Vec<RebalanceEvent>>,
    commit_failed: AtomicBool,
    /// Where assigned partitions' messages go; set once the consumer exists and
    /// taken out (destroyed) before it is.
    fetch: Mutex<Option<FetchQueue>>,
    /// The partitions assigned, so that an idle poll knows where to wait.
    assigned: Mutex<BTreeSet<TopicPartition>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn tps(list: &TopicPartitionList) -> Vec<TopicPartition> {
    list.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}

impl ClientContext for RunnerContext {
    fn error(&self, error: KafkaError, reason: &str) {
        crate::io::kafka::auth_failure::note(&error, reason);
        crate::io::kafka::client_log::error(&error, reason);
    }

    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        crate::io::kafka::client_log::log(level, fac, log_message);
    }
}

impl ConsumerContext for RunnerContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            self.forward(consumer.client().native_ptr(), &tps(list));
        }
        if let Rebalance::Revoke(list) = rebalance {
            let mut assigned = locked(&self.assigned);
            for tp in tps(list) {
                assigned.remove(&tp);
            }
            drop(assigned);
            let event = if consumer.assignment_lost() {
                RebalanceEvent::Lost(tps(list))
            } else {
                RebalanceEvent::Revoked(tps(list))
            };
            self.push(event);
        }
    }

    fn post_rebalance(&self, _: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(list) = rebalance {
            self.push(RebalanceEvent::Assigned(tps(list)));
        }
    }

    fn commit_callback(&self, result: KafkaResult<()>, _: &TopicPartitionList) {
        if let Err(e) = result {
            tracing::warn!("committing offsets failed (they are committed again): {e}");
            self.commit_failed.store(true, Ordering::Relaxed);
        }
    }
}

impl RunnerContext {
    fn push(&self, event: RebalanceEvent) {
        locked(&self.events).push(event);
    }

    fn take(&self) -> Vec<RebalanceEvent> {
        std::mem::take(&mut *locked(&self.events))
    }

    fn pending(&self) -> bool {
        !locked(&self.events).is_empty()
    }

    /// Forwards partitions about to be assigned to the fetch queue. One that
    /// fails keeps its messages on the consumer's queue, which polls serve too.
    fn forward(&self, rk: *mut rdsys::rd_kafka_t, list: &[TopicPartition]) {
        if let Some(fetch) = locked(&self.fetch).as_ref() {
            for TopicPartition { topic, partition } in list {
                // SAFETY: `rk` is the live client the queue was made with.
                if let Err(e) = unsafe { fetch.forward(rk, topic, *partition) } {
                    tracing::warn!("{e}; its records are polled one by one");
                }
            }
        }
        locked(&self.assigned).extend(list.iter().cloned());
    }

    fn has_assignment(&self) -> bool {
        !locked(&self.assigned).is_empty()
    }
}

/// The longest wait on the fetch queue before the consumer's queue is served
/// again (a rebalance waits at most this long while the assignment is idle).
const FETCH_WAIT: Duration = Duration::from_millis(50);

/// Group settings of an online run where neither `-X` nor `--command-config` sets
/// them (docs/semantics.md §7, "Group defaults"). librdkafka's 45 s session timeout
/// suits a consumer whose heartbeats wait on its processing; librdkafka heartbeats
/// from a thread of its own, so a member that died is noticed, and its partitions
/// move, after 10 s instead of 45 s, and a broker that holds a join for part of the
/// session timeout (Tansu: half of it) admits a new member sooner. 10 s is above
/// every Kafka broker's `group.min.session.timeout.ms` (6 s by default). Static
/// membership (`group.instance.id`) stays the user's choice: the id must be unique
/// per member, and two members that derive the same one fence each other.
pub const GROUP_DEFAULTS: &[(&str, &str)] = &[
    ("session.timeout.ms", "10000"),
    ("heartbeat.interval.ms", "3000"),
];

/// The [`GROUP_DEFAULTS`] not set in `settings`; none under the KIP-848 consumer
/// protocol (`group.protocol=consumer`), whose session and heartbeat the broker sets.
pub fn group_defaults(settings: &KafkaSettings) -> Vec<(&'static str, &'static str)> {
    if settings
        .get("group.protocol")
        .is_some_and(|p| p.eq_ignore_ascii_case("consumer"))
    {
        return Vec::new();
    }
    GROUP_DEFAULTS
        .iter()
        .copied()
        .filter(|(k, _)| settings.get(k).is_none())
        .collect()
}

/// How the consumer is set up.
#[derive(Debug, Clone)]
pub struct RunnerConsumerOptions {
    pub group: String,
    pub topics: Vec<String>,
    /// At most this many records per poll.
    pub max_records: usize,
    /// Bounds commits, assigns and seeks.
    pub timeout: Duration,
}

pub struct RunnerConsumer {
    consumer: BaseConsumer<RunnerContext>,
    context_events: Vec<RebalanceEvent>,
    /// Records gathered by a poll that saw a rebalance, for the next poll.
    held: Vec<Record>,
    max_records: usize,
    timeout: Duration,
    /// Errors already reported once (librdkafka repeats them on every poll).
    reported: BTreeSet<String>,
}

fn record_of<M: Message>(m: &M) -> Record {
    Record {
        topic: m.topic().to_owned(),
        partition: m.partition(),
        offset: m.offset(),
        timestamp: m.timestamp().to_millis().unwrap_or(0),
        key: m.key().map(<[u8]>::to_vec),
        value: m.payload().map(<[u8]>::to_vec),
        headers: m
            .headers()
            .map(|hs| {
                hs.iter()
                    .map(|h| Header::new(h.key, h.value.map(<[u8]>::to_vec)))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

impl RunnerConsumer {
    /// Creates the consumer and subscribes the group to `topics`, which must
    /// exist (an unreachable cluster is told apart from a missing topic).
    pub fn subscribe(
        settings: &KafkaSettings,
        opts: &RunnerConsumerOptions,
    ) -> Result<Self, KafkaIoError> {
        settings.refuse_dead_bootstrap()?;
        let mut config = settings.streaming_consumer_config();
        config
            .set("group.id", &opts.group)
            // The runner commits after the producer flush; nothing else may.
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false");
        if settings.get("auto.offset.reset").is_none() {
            config.set("auto.offset.reset", "earliest");
        }
        for (key, value) in group_defaults(settings) {
            config.set(key, value);
        }
        let consumer: BaseConsumer<RunnerContext> = config
            .create_with_context(RunnerContext::default())
            .map_err(|e| KafkaIoError::failed(format!("create Kafka consumer: {e}")))?;
        for topic in &opts.topics {
            if partition_count(&consumer, topic, opts.timeout)?.is_none() {
                return Err(KafkaIoError::failed(format!(
                    "source topic {topic} does not exist"
                )));
            }
        }
        let names: Vec<&str> = opts.topics.iter().map(String::as_str).collect();
        consumer
            .subscribe(&names)
            .map_err(|e| KafkaIoError::failed(format!("subscribe to {}: {e}", names.join(", "))))?;
        // Rebalances are served by polls only, so the queue is in place before any
        // assignment even when it is made after subscribing; made last, no error
        // path drops the consumer while the context still holds it.
        let rk = consumer.client().native_ptr();
        // SAFETY: `rk` is the live client; `Drop for RunnerConsumer` destroys the
        // queue before the consumer.
        let fetch = unsafe { FetchQueue::empty(rk) }?;
        *locked(&consumer.context().fetch) = Some(fetch);
        Ok(RunnerConsumer {
            consumer,
            context_events: Vec::new(),
            held: Vec::new(),
            max_records: opts.max_records.max(1),
            timeout: opts.timeout,
            reported: BTreeSet::new(),
        })
    }

    /// The rebalances seen since the last call, oldest first.
    pub fn take_rebalances(&mut self) -> Vec<RebalanceEvent> {
        let mut events = std::mem::take(&mut self.context_events);
        events.extend(self.consumer.context().take());
        events
    }

    /// Moves queued rebalances out of the context and drops held records of
    /// partitions they take away.
    fn absorb_rebalances(&mut self, gathered: &mut Vec<Record>) {
        let events = self.consumer.context().take();
        let gone: BTreeSet<TopicPartition> = events
            .iter()
            .flat_map(|e| match e {
                RebalanceEvent::Revoked(t) | RebalanceEvent::Lost(t) => t.clone(),
                RebalanceEvent::Assigned(_) => Vec::new(),
            })
            .collect();
        self.context_events.extend(events);
        let keep = |r: &Record| !gone.contains(&TopicPartition::new(r.topic.clone(), r.partition));
        self.held.retain(keep);
        gathered.retain(keep);
    }

    /// Closes the group membership cleanly (revokes are queued as rebalances).
    pub fn close(&mut self) {
        self.consumer.unsubscribe();
        // Serve the revoke callback of the unsubscribe.
        let _ = self.consumer.poll(Duration::from_millis(100));
    }

    fn commit_in(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        mode: CommitMode,
    ) -> Result<(), RunnerError> {
        if offsets.is_empty() {
            return Ok(());
        }
        let mut list = TopicPartitionList::new();
        for (TopicPartition { topic, partition }, offset) in offsets {
            list.add_partition_offset(topic, *partition, Offset::Offset(*offset))
                .map_err(|e| RunnerError::new(e.to_string()))?;
        }
        self.consumer.commit(&list, mode).map_err(|e| RunnerError {
            message: format!("commit offsets: {e}"),
            retriable: true,
            fenced: None,
        })
    }

    /// Takes up to `max` fetched messages into `gathered`, waiting up to `wait`
    /// for the first (`FetchQueue::consume`); returns how many were taken, errors included.
    fn take_fetched(&mut self, wait: Duration, max: usize, gathered: &mut Vec<Record>) -> usize {
        let mut errors = Vec::new();
        let got = match locked(&self.consumer.context().fetch).as_mut() {
            Some(queue) => queue.consume(wait, max, |m| match m.error() {
                rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR => {
                    gathered.push(m.to_record(m.topic()))
                }
                rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR__PARTITION_EOF => {}
                code => errors.push(format!(
                    "consume {}/{}: {}",
                    m.topic(),
                    m.partition(),
                    KafkaError::MessageConsumption(code.into())
                )),
            }),
            None => 0,
        };
        for e in errors {
            self.note(e);
        }
        got
    }

    fn note(&mut self, what: String) {
        if self.reported.insert(what.clone()) {
            tracing::warn!("{what}");
        }
    }
}

impl Drop for RunnerConsumer {
    fn drop(&mut self) {
        // Our queue handle goes before the client it belongs to.
        drop(locked(&self.consumer.context().fetch).take());
        crate::io::kafka::prompt_close::close(&self.consumer);
    }
}

impl group::Consumer for RunnerConsumer {
    fn poll(&mut self, timeout: Duration) -> Result<Vec<Record>, RunnerError> {
        if !self.context_events.is_empty() {
            // The caller has not applied the last rebalance yet.
            return Ok(Vec::new());
        }
        let mut gathered = std::mem::take(&mut self.held);
        let deadline = Instant::now() + timeout;
        loop {
            // Nothing assigned: only the consumer's queue can bring anything (the assignment).
            let idle = gathered.is_empty() && !self.consumer.context().has_assignment();
            let wait = if idle {
                deadline.saturating_duration_since(Instant::now())
            } else {
                Duration::ZERO
            };
            let polled = self.consumer.poll(wait);
            if self.consumer.context().pending() {
                if let Some(Ok(m)) = &polled {
                    gathered.push(record_of(m));
                }
                self.absorb_rebalances(&mut gathered);
                self.held = gathered;
                return Ok(Vec::new());
            }
            match polled {
                // A partition whose forward failed.
                Some(Ok(m)) => gathered.push(record_of(&m)),
                Some(Err(KafkaError::PartitionEOF(_))) | None => {}
                // Missing topics, broker restarts: librdkafka keeps retrying.
                Some(Err(e)) => self.note(format!("consume: {e}")),
            }
            let room = self.max_records.saturating_sub(gathered.len());
            if room == 0 {
                break;
            }
            let wait = if gathered.is_empty() {
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(FETCH_WAIT)
            } else {
                Duration::ZERO
            };
            let got = self.take_fetched(wait, room, &mut gathered);
            if got == 0 && (!gathered.is_empty() || Instant::now() >= deadline) {
                break;
            }
        }
        Ok(gathered)
    }

    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError> {
        self.commit_in(offsets, CommitMode::Sync)
    }

    fn commit_async(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError> {
        self.commit_in(offsets, CommitMode::Async)
    }

    fn commit_failed(&mut self) -> bool {
        self.consumer
            .context()
            .commit_failed
            .swap(false, Ordering::Relaxed)
    }

    fn assign(&mut self, tps: &[TopicPartition]) -> Result<(), RunnerError> {
        let mut list = TopicPartitionList::new();
        for TopicPartition { topic, partition } in tps {
            list.add_partition(topic, *partition);
        }
        let context = self.consumer.context();
        locked(&context.assigned).clear();
        context.forward(self.consumer.client().native_ptr(), tps);
        self.consumer
            .assign(&list)
            .map_err(|e| RunnerError::new(format!("assign partitions: {e}")))
    }

    fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), RunnerError> {
        self.consumer
            .seek(
                &tp.topic,
                tp.partition,
                Offset::Offset(offset),
                self.timeout,
            )
            .map_err(|e| RunnerError {
                message: format!("seek {}/{} to {offset}: {e}", tp.topic, tp.partition),
                retriable: is_unreachable_error(&e),
                fenced: None,
            })
    }

    fn positions(
        &mut self,
        tps: &[TopicPartition],
    ) -> Result<Option<BTreeMap<TopicPartition, i64>>, RunnerError> {
        let list = self.consumer.position().map_err(|e| RunnerError {
            message: format!("read consumer positions: {e}"),
            retriable: true,
            fenced: None,
        })?;
        let mut out = BTreeMap::new();
        for e in list.elements() {
            let tp = TopicPartition::new(e.topic(), e.partition());
            // A partition not fetched from yet has no position (OFFSET_INVALID).
            if let Offset::Offset(o) = e.offset()
                && tps.contains(&tp)
            {
                out.insert(tp, o);
            }
        }
        // Records kept back by a poll that saw a rebalance have not reached the
        // runner yet: its position on such a partition is the first of them.
        for r in &self.held {
            if let Some(p) = out.get_mut(&TopicPartition::new(r.topic.clone(), r.partition)) {
                *p = (*p).min(r.offset);
            }
        }
        Ok(Some(out))
    }

    fn committed(
        &mut self,
        tps: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        let mut list = TopicPartitionList::new();
        for TopicPartition { topic, partition } in tps {
            list.add_partition(topic, *partition);
        }
        let committed = self
            .consumer
            .committed_offsets(list, self.timeout)
            .map_err(|e| RunnerError {
                message: format!("read committed offsets: {e}"),
                retriable: is_unreachable_error(&e),
                fenced: None,
            })?;
        Ok(committed
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => Some((TopicPartition::new(e.topic(), e.partition()), o)),
                _ => None,
            })
            .collect())
    }

    type GroupMetadata = rdkafka::consumer::ConsumerGroupMetadata;

    fn group_metadata(&self) -> Option<Self::GroupMetadata> {
        self.consumer.group_metadata()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_defaults_fill_only_what_the_user_left_unset() {
        let none = KafkaSettings::new();
        assert_eq!(group_defaults(&none), GROUP_DEFAULTS.to_vec());
        let mut set = KafkaSettings::new();
        set.set("session.timeout.ms", "6000");
        assert_eq!(
            group_defaults(&set),
            vec![("heartbeat.interval.ms", "3000")]
        );
        // The consumer protocol refuses client-side session settings at creation.
        let mut kip848 = KafkaSettings::new();
        kip848.set("group.protocol", "CONSUMER");
        assert!(group_defaults(&kip848).is_empty());
    }
}
