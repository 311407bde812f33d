//! The group runner's consumer over rdkafka: subscribes the topology's source
//! topics with an ordinary consumer group, auto-commit off, commits exactly the
//! offsets the runner hands it.
//!
//! Rebalances happen inside librdkafka's poll, where the runner cannot be
//! reached, so the context queues them and [`RunnerConsumer::take_rebalances`]
//! hands them over; the caller applies them (load or save partition state)
//! before the next poll. A poll that sees a rebalance returns no records: what
//! it had gathered from partitions still owned is kept for the next poll, and
//! records of revoked or lost partitions are dropped (they were not committed,
//! so their next owner reads them again).
//!
//! For barrier alignment it reports positions (capped at records it still
//! holds) and the group's committed offsets; for exactly-once it hands out the
//! consumer group metadata that transactional offset commits carry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::KafkaError;
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::runner::group::{self, RunnerError, Tp};
use crate::engine::columnar::topology::Record;
use crate::io::kafka::error::{KafkaIoError, is_unreachable_error};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::topic_reader::partition_count;

/// A change of the group assignment, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RebalanceEvent {
    Assigned(Vec<Tp>),
    Revoked(Vec<Tp>),
    /// Taken away without a clean revoke (session lost): state is not saved.
    Lost(Vec<Tp>),
}

/// Queues rebalances for the runner; logs librdkafka errors.
#[derive(Default)]
pub struct RunnerContext {
    events: Mutex<Vec<RebalanceEvent>>,
}

fn tps(list: &TopicPartitionList) -> Vec<Tp> {
    list.elements()
        .iter()
        .map(|e| (e.topic().to_owned(), e.partition()))
        .collect()
}

impl ClientContext for RunnerContext {
    fn error(&self, error: KafkaError, reason: &str) {
        crate::io::kafka::auth_failure::note(&error, reason);
        tracing::warn!("librdkafka: {error}: {reason}");
    }

    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        crate::io::kafka::auth_failure::log(level, fac, log_message);
    }
}

impl ConsumerContext for RunnerContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(list) = rebalance {
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
}

impl RunnerContext {
    fn push(&self, event: RebalanceEvent) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event);
    }

    fn take(&self) -> Vec<RebalanceEvent> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn pending(&self) -> bool {
        !self
            .events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }
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
        let mut config = settings.client_config();
        config
            .set("group.id", &opts.group)
            // The runner commits after the producer flush; nothing else may.
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false");
        if settings.get("auto.offset.reset").is_none() {
            config.set("auto.offset.reset", "earliest");
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
        let gone: BTreeSet<Tp> = events
            .iter()
            .flat_map(|e| match e {
                RebalanceEvent::Revoked(t) | RebalanceEvent::Lost(t) => t.clone(),
                RebalanceEvent::Assigned(_) => Vec::new(),
            })
            .collect();
        self.context_events.extend(events);
        let keep = |r: &Record| !gone.contains(&(r.topic.clone(), r.partition));
        self.held.retain(keep);
        gathered.retain(keep);
    }

    /// Closes the group membership cleanly (revokes are queued as rebalances).
    pub fn close(&mut self) {
        self.consumer.unsubscribe();
        // Serve the revoke callback of the unsubscribe.
        let _ = self.consumer.poll(Duration::from_millis(100));
    }

    fn note(&mut self, what: String) {
        if self.reported.insert(what.clone()) {
            tracing::warn!("{what}");
        }
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
        while gathered.len() < self.max_records {
            let wait = if gathered.is_empty() {
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
                Some(Ok(m)) => gathered.push(record_of(&m)),
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(e)) => {
                    // Missing topics, broker restarts: librdkafka keeps retrying.
                    self.note(format!("consume: {e}"));
                    break;
                }
                None => break,
            }
            if wait.is_zero() && Instant::now() >= deadline {
                break;
            }
        }
        Ok(gathered)
    }

    fn commit(&mut self, offsets: &BTreeMap<Tp, i64>) -> Result<(), RunnerError> {
        if offsets.is_empty() {
            return Ok(());
        }
        let mut list = TopicPartitionList::new();
        for ((topic, partition), offset) in offsets {
            list.add_partition_offset(topic, *partition, Offset::Offset(*offset))
                .map_err(|e| RunnerError::new(e.to_string()))?;
        }
        self.consumer
            .commit(&list, CommitMode::Sync)
            .map_err(|e| RunnerError {
                message: format!("commit offsets: {e}"),
                retriable: true,
            })
    }

    fn assign(&mut self, tps: &[Tp]) -> Result<(), RunnerError> {
        let mut list = TopicPartitionList::new();
        for (topic, partition) in tps {
            list.add_partition(topic, *partition);
        }
        self.consumer
            .assign(&list)
            .map_err(|e| RunnerError::new(format!("assign partitions: {e}")))
    }

    fn seek(&mut self, tp: &Tp, offset: i64) -> Result<(), RunnerError> {
        self.consumer
            .seek(&tp.0, tp.1, Offset::Offset(offset), self.timeout)
            .map_err(|e| RunnerError {
                message: format!("seek {}/{} to {offset}: {e}", tp.0, tp.1),
                retriable: is_unreachable_error(&e),
            })
    }

    fn positions(&mut self, tps: &[Tp]) -> Result<Option<BTreeMap<Tp, i64>>, RunnerError> {
        let list = self.consumer.position().map_err(|e| RunnerError {
            message: format!("read consumer positions: {e}"),
            retriable: true,
        })?;
        let mut out = BTreeMap::new();
        for e in list.elements() {
            let tp = (e.topic().to_owned(), e.partition());
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
            if let Some(p) = out.get_mut(&(r.topic.clone(), r.partition)) {
                *p = (*p).min(r.offset);
            }
        }
        Ok(Some(out))
    }

    fn committed(&mut self, tps: &[Tp]) -> Result<BTreeMap<Tp, i64>, RunnerError> {
        let mut list = TopicPartitionList::new();
        for (topic, partition) in tps {
            list.add_partition(topic, *partition);
        }
        let committed = self
            .consumer
            .committed_offsets(list, self.timeout)
            .map_err(|e| RunnerError {
                message: format!("read committed offsets: {e}"),
                retriable: is_unreachable_error(&e),
            })?;
        Ok(committed
            .elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => Some(((e.topic().to_owned(), e.partition()), o)),
                _ => None,
            })
            .collect())
    }

    fn group_metadata(&self) -> Option<Box<dyn std::any::Any + Send>> {
        self.consumer
            .group_metadata()
            .map(|m| Box::new(m) as Box<dyn std::any::Any + Send>)
    }
}
