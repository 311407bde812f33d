//! The poll side of the tail pipeline, on the calling thread: it alone touches the
//! consumer. It takes messages from librdkafka into an arena until the arena is full
//! or the fetch queue is drained, hands the arena to the decode side (a bounded
//! channel: a slow output slows the fetching, memory stays bounded), and between
//! fetches acts on what the decode side reports — pause or resume a held partition,
//! store written offsets — tracks stops, watches for outages and lost credentials,
//! and draws the progress line.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};

use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::topic_partition::{PartitionOffset, TopicPartition};
use crate::io::kafka::auth_failure;
use crate::ops::Error;
use crate::ops::tail::handoff::{BATCH_BYTES, Report, Shared};
use crate::ops::tail::outage::{Outage, round_failure};
use crate::ops::tail::source::{FetchSource, Fetched, FetchedMessage, PartitionControl};
use crate::ops::tail::{Progress, ProgressNumbers};

/// Most messages taken from the client in one call.
const POLL_CHUNK: usize = 1000;

/// A map keyed by partition, hashed cheaply (looked up per run of records).
type TpMap<V> = HashMap<TopicPartition, V, foldhash::fast::RandomState>;

/// Where each assigned partition stands relative to its stop. Every rule is per
/// topic-partition: partition 3 of one topic says nothing about partition 3 of another.
#[derive(Default)]
pub struct Stops {
    /// Exclusive stop offset per partition (bounded reads only).
    pub stop: TpMap<i64>,
    /// The tail stops (at the end offsets captured at start, or at given offsets or times).
    pub bounded: bool,
    pub done: BTreeSet<TopicPartition>,
    /// Next offset to fetch per partition (last received + 1).
    pub next: TpMap<i64>,
    /// Group mode with `-p`: only these partition numbers are read; the group's
    /// other partitions are paused and their records neither written nor committed.
    pub only: Option<BTreeSet<i32>>,
    /// Partitions outside `only` that delivered records: to be paused.
    pub unread: BTreeSet<TopicPartition>,
}

impl Stops {
    fn bounded(&self) -> bool {
        self.bounded
    }

    /// Registers a partition with its stop and, without a group, its start (with a
    /// group the committed offsets decide); `false` when there is nothing to fetch.
    pub fn add(&mut self, tp: TopicPartition, start: Option<i64>, stop: Option<i64>) -> bool {
        if let Some(s) = stop {
            self.stop.insert(tp.clone(), s);
        }
        let Some(start) = start else {
            return true;
        };
        if stop.is_some_and(|s| start >= s) {
            self.done.insert(tp);
            return false;
        }
        self.next.insert(tp, start);
        true
    }

    /// A partition-EOF event: every record of `topic`/`partition` below `offset`
    /// was delivered, so a stop at or below it is reached. That holds for a held
    /// (paused) partition too: its records are all with the decode side, which
    /// writes them once their schema comes, and the resume's seek finds nothing new.
    fn reached_end(&mut self, topic: &str, partition: i32, offset: i64) {
        let tp = TopicPartition::new(topic, partition);
        if self.stop.get(&tp).is_some_and(|s| offset >= *s) {
            self.done.insert(tp);
        }
    }

    /// Whether records of partition number `partition` are read at all.
    fn reads(&self, partition: i32) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.contains(&partition))
    }

    /// Records arrive in runs of one partition: its stop is looked up once per run.
    fn begin_run(&self, tp: TopicPartition) -> Run {
        Run {
            stop: self.stop.get(&tp).copied(),
            read: self.reads(tp.partition),
            tp,
            next: None,
            handle: std::ptr::null(),
            topic: 0,
        }
    }

    /// Takes record `offset` of the run's partition; `false` when it lies beyond the
    /// stop or the partition is not read.
    #[inline]
    fn observe(&mut self, run: &mut Run, offset: i64) -> bool {
        if !run.read {
            return false;
        }
        if run.stop.is_some_and(|s| offset >= s) {
            self.done.insert(run.tp.clone());
            return false;
        }
        run.next = Some(offset + 1);
        if run.stop.is_some_and(|s| offset + 1 >= s) {
            self.done.insert(run.tp.clone());
        }
        true
    }

    /// Records where the run's partition stands once its run ends.
    fn end_run(&mut self, run: Run) {
        if !run.read {
            self.unread.insert(run.tp);
            return;
        }
        if let Some(next) = run.next {
            match self.next.get_mut(&run.tp) {
                Some(n) => *n = next,
                None => {
                    self.next.insert(run.tp, next);
                }
            }
        }
    }
}

/// The partition whose records are arriving, its stop, and its next offset so far.
struct Run {
    tp: TopicPartition,
    stop: Option<i64>,
    /// `false`: a group partition outside `-p`, whose records are dropped.
    read: bool,
    next: Option<i64>,
    /// The client's topic handle of the run's messages.
    handle: *const std::ffi::c_void,
    /// The topic's number in the arena.
    topic: u32,
}

/// The poll side: the consumer, where partitions stand, and the hand-off's ends.
pub struct PollSide<'a, S: FetchSource + PartitionControl> {
    pub consumer: &'a mut S,
    pub stops: Stops,
    /// Partitions assigned without a group (with a group, the consumer knows).
    pub assignment: Vec<PartitionOffset>,
    pub all_partitions: Vec<TopicPartition>,
    pub group: bool,
    pub batch_records: usize,
    pub timeout: Duration,
    pub cancelled: &'a AtomicBool,
    pub shared: &'a Shared,
    pub progress: Option<Box<dyn Progress>>,
    /// Bytes of keys and values fetched.
    pub bytes: u64,
}

impl<S: FetchSource + PartitionControl> PollSide<'_, S> {
    /// Fetches until every partition reached its stop, the decode side ended, or a
    /// signal or an error ends the tail (returned; the caller aborts the decode side).
    pub fn fetch(
        &mut self,
        work: &SyncSender<RawBatch>,
        free: &Receiver<RawBatch>,
        reports: &Receiver<Report>,
    ) -> crate::ops::Result<()> {
        let started = Instant::now();
        let mut last_lag = Instant::now() - Duration::from_secs(10);
        let mut lag: Option<i64> = None;
        let mut outage = Outage::default();
        // Partitions the decode side holds (paused here).
        let mut paused: BTreeSet<TopicPartition> = BTreeSet::new();
        // An arena that came back empty from a fetch, for the next one.
        let mut spare: Option<RawBatch> = None;
        loop {
            if self.cancelled.load(Ordering::SeqCst) {
                return Err(Error::cancelled());
            }
            if self.shared.over.load(Ordering::SeqCst) {
                return Ok(());
            }
            for report in reports.try_iter() {
                self.act_on(report, &mut paused)?;
            }
            if self.stops.bounded() && self.pending().is_empty() {
                return Ok(());
            }
            // After the first batches every arena has grown: a message costs a copy
            // into it, no allocation.
            let mut batch = spare
                .take()
                .or_else(|| free.try_recv().ok())
                .unwrap_or_default();
            batch.clear();
            self.fill(&mut batch, &mut outage)?;
            outage.check(self.timeout, || {
                self.all_partitions.first().is_some_and(
                    |TopicPartition {
                         topic: t,
                         partition: p,
                     }| self.consumer.watermarks_quick(t, *p).is_some(),
                )
            })?;
            if batch.is_empty() {
                spare = Some(batch);
                continue;
            }
            self.bytes += batch.payload_bytes() as u64;
            if work.send(batch).is_err() {
                // The decode side ended: its outcome decides.
                return Ok(());
            }
            if let Some(bar) = &self.progress {
                if last_lag.elapsed() > Duration::from_secs(2) {
                    last_lag = Instant::now();
                    lag = compute_lag(self.consumer, &self.stops);
                }
                let records = self.shared.records.load(Ordering::Relaxed);
                let secs = started.elapsed().as_secs_f64().max(0.001);
                bar.show(&ProgressNumbers {
                    records,
                    bytes: self.bytes,
                    records_per_second: records as f64 / secs,
                    lag,
                });
            }
        }
    }

    /// Applies one report of the decode side.
    pub fn act_on(
        &mut self,
        report: Report,
        paused: &mut BTreeSet<TopicPartition>,
    ) -> crate::ops::Result<()> {
        match report {
            Report::Pause(tp) => {
                self.consumer.pause(&tp.topic, tp.partition)?;
                paused.insert(tp);
            }
            Report::Resume(tp) => {
                paused.remove(&tp);
                // Everything delivered so far went to the decode side: go on after it.
                let next = self.stops.next.get(&tp).copied().unwrap_or_default();
                self.consumer.resume(&tp.topic, tp.partition, next)?;
            }
            Report::Processed(offsets) => {
                for (
                    TopicPartition {
                        topic: t,
                        partition: p,
                    },
                    next,
                ) in offsets
                {
                    self.consumer.store_offset(&t, p, next)?;
                }
            }
        }
        Ok(())
    }

    /// Partitions still short of their stop (bounded reads only).
    fn pending(&self) -> Vec<TopicPartition> {
        if self.group {
            // Only partitions this tail reads (-p) and was given count; none yet: wait.
            let a = self.consumer.assignment();
            if a.is_empty() {
                return vec![TopicPartition::new("", -1)];
            }
            a.into_iter()
                .filter(|tp| self.stops.stop.contains_key(tp) && !self.stops.done.contains(tp))
                .collect()
        } else {
            self.assignment
                .iter()
                .map(|at| at.tp.clone())
                .filter(|tp| !self.stops.done.contains(tp))
                .collect()
        }
    }

    /// Takes messages into `batch` until it is full or the client has none ready.
    fn fill(&mut self, batch: &mut RawBatch, outage: &mut Outage) -> crate::ops::Result<()> {
        let mut wait = Duration::from_millis(100);
        let mut run: Option<Run> = None;
        let mut round_over = false;
        let mut fatal = None;
        let stops = &mut self.stops;
        while !round_over && batch.len() < self.batch_records && batch.payload_bytes() < BATCH_BYTES
        {
            // Messages taken from the client must all be kept: take at most the records
            // left, and about the bytes left at the batch's average record size.
            let (rows, bytes) = (batch.len(), batch.payload_bytes());
            let average = match rows {
                0 => 1024,
                n => (bytes / n).max(1),
            };
            let max = (self.batch_records - rows)
                .min(((BATCH_BYTES - bytes) / average).max(1))
                .min(POLL_CHUNK);
            let taken = self.consumer.poll_batch(wait, max, |polled| {
                match polled {
                    // A lost broker is retried by the client; it fails the tail only when
                    // it lasts the whole timeout (see `outage`).
                    Err(e) if e.unreachable => {
                        outage.observe(&e);
                        round_over = true;
                    }
                    Err(e) => {
                        fatal.get_or_insert(e);
                        round_over = true;
                    }
                    Ok(Fetched::End {
                        topic,
                        partition,
                        offset,
                    }) => {
                        outage.clear();
                        stops.reached_end(topic, partition, offset);
                    }
                    Ok(Fetched::Message(m)) => {
                        outage.clear();
                        let (handle, partition) = (m.topic_handle(), m.partition());
                        // The topic's name is read and looked up once per run of messages.
                        if !run.as_ref().is_some_and(|run| {
                            run.tp.partition == partition && run.handle == handle
                        }) {
                            if let Some(ended) = run.take() {
                                stops.end_run(ended);
                            }
                            let topic = m.topic();
                            let mut started =
                                stops.begin_run(TopicPartition::new(topic, partition));
                            started.handle = handle;
                            started.topic = batch.topic_index(topic);
                            run = Some(started);
                        }
                        let run = run.as_mut().expect("set above");
                        if stops.observe(run, m.offset()) {
                            m.append_to(run.topic, batch);
                        }
                    }
                }
                !round_over
            });
            if taken == 0 {
                break;
            }
            wait = Duration::ZERO;
        }
        if let Some(ended) = run.take() {
            stops.end_run(ended);
        }
        for TopicPartition {
            topic: t,
            partition: p,
        } in std::mem::take(&mut stops.unread)
        {
            self.consumer.pause(&t, p)?;
        }
        // Credentials rotated or a certificate expired mid-tail: librdkafka would retry
        // the login for ever, and the outage clock would call it unreachable.
        if let Some(e) = round_failure(fatal, &auth_failure::WATCH) {
            return Err(e.into());
        }
        Ok(())
    }
}

fn compute_lag<S: FetchSource>(consumer: &S, stops: &Stops) -> Option<i64> {
    let mut lag = 0;
    for (tp, next) in &stops.next {
        let end = match stops.stop.get(tp) {
            Some(s) => *s,
            None => consumer.watermarks_quick(&tp.topic, tp.partition)?.1,
        };
        lag += (end - next).max(0);
    }
    Some(lag)
}

#[cfg(test)]
#[path = "poll_side_tests.rs"]
mod tests;
