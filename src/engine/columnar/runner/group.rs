//! The consumer-group runner's core (semantics §7–8) over small traits: a
//! [`Consumer`], a [`Producer`] and a [`StateStore`], so that every rule is
//! tested with fakes; the rdkafka adapters implement the traits in `io`.
//!
//! One round: with a barrier group, refresh the pending cut and learn positions
//! ([`super::align`]); poll; held records go in front, each topic-partition is
//! truncated at the cut, and the next offset is recorded *before* processing (so
//! skip and dead-letter still commit past a failed record); run each logical
//! partition in ascending order from a snapshot of its prior state; on failure
//! restore it, then apply the error policy (fail or a retriable error: roll back
//! every partition of the round and return, nothing sent or committed; skip:
//! count; dead-letter: re-produce the inputs with the `krabka.*` headers). When
//! the barrier fires the commits are raised to the cut. Completion:
//! at-least-once sends, waits for the acks, saves the barrier snapshots, commits;
//! exactly-once does the same inside one producer transaction and sends the
//! offsets with the consumer group metadata (event order begin, snapshot,
//! send-offsets, commit). Any failure aborts the transaction, rolls back every
//! partition of the round and seeks the consumer back to the round's first
//! offsets, so a record read in a failed round is read again.
//! At-least-once without a barrier group and without per-round state saves
//! is pipelined instead: a round sends its outputs without waiting, seals them
//! as one producer batch and joins the rounds in flight; each round then commits
//! (asynchronously) the offsets of the oldest rounds whose batches, and every
//! earlier one, are acknowledged, so no offset is committed before its outputs
//! are written. A failed delivery rolls back every round in flight and rewinds
//! to the first of them. [`GroupRunner::drain`] waits for every acknowledgement
//! and commits synchronously: the caller drains before a revoke and on shutdown.
//! Rebalances load and save partition state under the live epoch (−1);
//! restoring to a cut lives in `group/restore.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use super::Metrics;
use super::align::{Aligner, Barrier, CutSource};
use super::offline::PROCESSING_ERROR_CLASS;
use crate::engine::columnar::headers::Header;
use crate::engine::columnar::topology::spec::{ErrorPolicy, Guarantee};
use crate::engine::columnar::topology::{BuiltTopology, OutRecord, Produced, Record, Refused};

/// The live (non-barrier) snapshot epoch of Java/Go file stores (formats §8.3).
pub const LIVE_EPOCH: i64 = -1;

pub use super::error::{Fence, RunnerError};
pub use crate::engine::topic_partition::TopicPartition;

/// The error of every transactional call on a producer without transactions.
pub const NO_TRANSACTIONS: &str = "producer does not support transactions";

/// What the runner needs from a Kafka consumer.
pub trait Consumer {
    fn poll(&mut self, timeout: Duration) -> Result<Vec<Record>, RunnerError>;
    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError>;
    fn assign(&mut self, tps: &[TopicPartition]) -> Result<(), RunnerError>;
    fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), RunnerError>;
    /// Next offsets of assigned topic-partitions, so an idle partition can reach
    /// a barrier (semantics §8 step 2); `None` when the consumer cannot report them.
    fn positions(
        &mut self,
        _tps: &[TopicPartition],
    ) -> Result<Option<BTreeMap<TopicPartition, i64>>, RunnerError> {
        Ok(None)
    }
    /// The group's committed offsets of these topic-partitions (absent = none), so
    /// a cut the group had already passed is recognised as late (D9).
    fn committed(
        &mut self,
        _tps: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        Ok(BTreeMap::new())
    }
    /// What the consumer's group is to a transactional producer (group, generation,
    /// member): the Kafka client's own value, opaque to the runner, handed as is to
    /// [`Producer::send_offsets_to_transaction`] of a producer that takes the same type.
    type GroupMetadata;
    /// The consumer group metadata for the next transactional commit; `None` when the
    /// consumer has none (not in a group).
    fn group_metadata(&self) -> Option<Self::GroupMetadata> {
        None
    }
    /// Commits without waiting for the broker's answer; a later commit of the
    /// same partitions supersedes one that fails.
    fn commit_async(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError> {
        self.commit(offsets)
    }
    /// Whether an asynchronous commit failed since the last call; the runner
    /// then commits its acknowledged offsets again.
    fn commit_failed(&mut self) -> bool {
        false
    }
}

/// What the runner needs from a Kafka producer. The transactional calls are used
/// only with [`Guarantee::ExactlyOnce`]; a fenced producer is an error, never retriable.
pub trait Producer {
    /// The consumer group metadata [`Producer::send_offsets_to_transaction`] takes; the
    /// runner pairs a producer only with a consumer of the same type.
    type GroupMetadata;
    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError>;
    /// Sends to one partition (state records, whose reader reads one partition).
    fn send_to(
        &mut self,
        topic: &str,
        _partition: i32,
        _record: &OutRecord,
    ) -> Result<(), RunnerError> {
        Err(RunnerError::new(format!(
            "this producer cannot send to a chosen partition of {topic}"
        )))
    }
    /// Waits for every send to be acknowledged.
    fn flush(&mut self) -> Result<(), RunnerError>;
    /// Ends the batch of sends made since the last call and returns its ticket
    /// (ascending) without waiting for acknowledgements. A producer that cannot
    /// track batches waits here (flush) and calls every batch acknowledged.
    fn seal(&mut self) -> Result<u64, RunnerError> {
        self.flush()?;
        Ok(0)
    }
    /// Takes delivery reports without waiting: every send of every batch up to
    /// the returned ticket is acknowledged. A failed delivery is an error.
    fn acknowledged(&mut self) -> Result<u64, RunnerError> {
        Ok(u64::MAX)
    }
    fn begin_transaction(&mut self) -> Result<(), RunnerError> {
        Err(RunnerError::new(NO_TRANSACTIONS))
    }
    /// Adds the consumed next offsets to the open transaction.
    fn send_offsets_to_transaction(
        &mut self,
        _offsets: &BTreeMap<TopicPartition, i64>,
        _group: Option<&Self::GroupMetadata>,
    ) -> Result<(), RunnerError> {
        Err(RunnerError::new(NO_TRANSACTIONS))
    }
    fn commit_transaction(&mut self) -> Result<(), RunnerError> {
        Err(RunnerError::new(NO_TRANSACTIONS))
    }
    fn abort_transaction(&mut self) -> Result<(), RunnerError> {
        Err(RunnerError::new(NO_TRANSACTIONS))
    }
}

/// A state record for the runner to send: (topic, partition, record).
pub type StateOut = (String, i32, OutRecord);

/// Partition snapshots keyed by (logical partition, epoch).
pub trait StateStore {
    /// A missing snapshot loads as an empty map.
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError>;
    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError>;
    /// Saves the live state of every partition a round processed: a store
    /// that waits for acknowledgements can wait once for all of them instead
    /// of once per partition. Default: [`StateStore::save`] of each, in order.
    fn save_many(
        &mut self,
        epoch: i64,
        states: &[(i32, BTreeMap<String, Vec<u8>>)],
    ) -> Result<(), RunnerError> {
        states
            .iter()
            .try_for_each(|(partition, state)| self.save(*partition, epoch, state))
    }
    /// The barrier epochs stored for a partition, ascending; `None` when the
    /// store cannot tell (restores then load whatever `load` gives).
    fn epochs(&mut self, _partition: i32) -> Result<Option<Vec<i64>>, RunnerError> {
        Ok(None)
    }
    /// The next offsets a completed round consumed, told before its live saves,
    /// so a store that records what its snapshots reflect (the Kafka store) can.
    fn reflect(&mut self, _offsets: &BTreeMap<TopicPartition, i64>) {}
    /// Exactly-once: the records that save `state`, for the runner to send in
    /// its open transaction (topic, partition, record); `None` when this store
    /// saves by itself ([`StateStore::save`]).
    fn transactional_records(
        &mut self,
        _partition: i32,
        _epoch: i64,
        _state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<Option<Vec<StateOut>>, RunnerError> {
        Ok(None)
    }
    /// A round failed (its transaction aborted, or a save or commit failed):
    /// what the store assumed written since the last good round may not be,
    /// so a store that writes deltas against its last save starts over with
    /// full snapshots (docs/formats.md §8.7).
    fn forget_unconfirmed(&mut self) {}
    /// The partition left this member (after its last save): whatever the
    /// store kept in memory for it can go.
    fn release(&mut self, _partition: i32) {}
    /// The next offsets the state [`StateStore::load`] just returned for the
    /// live epoch reflects (empty when the store does not record them). Under
    /// exactly-once the runner skips records below them: the snapshot was
    /// committed with its transaction's offsets, which a broker may apply to
    /// the group late (Tansu), so the consumer can start before them.
    fn restored_offsets(&mut self, _partition: i32) -> BTreeMap<TopicPartition, i64> {
        BTreeMap::new()
    }
    /// Whether, under exactly-once, every round's state goes in the round's
    /// transaction ([`StateStore::transactional_records`]): the committed
    /// state then always matches the committed offsets, and a save outside
    /// the transaction (on revoke or close) is not made.
    fn saves_in_transaction(&self) -> bool {
        false
    }
}

/// A store chosen at run time (the online command's `state_store`).
impl<T: StateStore + ?Sized> StateStore for Box<T> {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        (**self).load(partition, epoch)
    }
    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        (**self).save(partition, epoch, state)
    }
    fn save_many(
        &mut self,
        epoch: i64,
        states: &[(i32, BTreeMap<String, Vec<u8>>)],
    ) -> Result<(), RunnerError> {
        (**self).save_many(epoch, states)
    }
    fn epochs(&mut self, partition: i32) -> Result<Option<Vec<i64>>, RunnerError> {
        (**self).epochs(partition)
    }
    fn reflect(&mut self, offsets: &BTreeMap<TopicPartition, i64>) {
        (**self).reflect(offsets)
    }
    fn transactional_records(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<Option<Vec<StateOut>>, RunnerError> {
        (**self).transactional_records(partition, epoch, state)
    }
    fn forget_unconfirmed(&mut self) {
        (**self).forget_unconfirmed()
    }
    fn release(&mut self, partition: i32) {
        (**self).release(partition)
    }
    fn restored_offsets(&mut self, partition: i32) -> BTreeMap<TopicPartition, i64> {
        (**self).restored_offsets(partition)
    }
    fn saves_in_transaction(&self) -> bool {
        (**self).saves_in_transaction()
    }
}

/// Called on the runner's thread after a barrier commit.
pub type BarrierListener = Box<dyn FnMut(&Barrier) + Send>;

/// The group runner.
pub struct GroupRunner<C, P, S> {
    pub topology: BuiltTopology,
    pub consumer: C,
    pub producer: P,
    pub store: S,
    pub policy: ErrorPolicy,
    pub guarantee: Guarantee,
    pub poll_timeout: Duration,
    pub metrics: Metrics,
    /// Save the live state of every partition a round processed after the
    /// flush and before the commit, so that a crash never leaves state behind
    /// committed offsets (at-least-once for state too). Java and Go save only
    /// on rebalance and close; off by default.
    pub save_each_round: bool,
    pub listener: Option<BarrierListener>,
    /// Pipelined rounds waiting for acknowledgements at most; one more and the
    /// runner waits for all of them (each holds its partitions' prior state).
    pub max_in_flight: usize,
    in_flight: VecDeque<InFlight>,
    /// The next offsets of acknowledged rounds per owned topic-partition: what
    /// the group may commit.
    acked: BTreeMap<TopicPartition, i64>,
    /// `acked` changed (or its commit failed) since it was last committed.
    commit_due: bool,
    owned: BTreeSet<TopicPartition>,
    /// Partitions holding state adopted from a cut, kept on their first assignment.
    adopted: BTreeSet<i32>,
    barrier: Option<Aligner>,
    warnings: Vec<String>,
    /// A partition's state that could not be loaded on assignment: the next
    /// round fails with it instead of running that partition from nothing.
    fatal: Option<RunnerError>,
    /// Exactly-once: per topic-partition, the next offset the restored state
    /// already reflects; records below it were committed with that state.
    resume: BTreeMap<TopicPartition, i64>,
}

/// A pipelined round whose outputs were sent but not all acknowledged.
struct InFlight {
    ticket: u64,
    first: BTreeMap<TopicPartition, i64>,
    offsets: BTreeMap<TopicPartition, i64>,
    prior: Vec<(i32, BTreeMap<String, Vec<u8>>)>,
}

/// What one round read, produced and will commit.
#[derive(Default)]
struct Round {
    /// The first offset read per topic-partition (held records included): where a failed round rewinds to.
    first: BTreeMap<TopicPartition, i64>,
    offsets: BTreeMap<TopicPartition, i64>,
    outputs: Vec<Produced>,
    prior: Vec<(i32, BTreeMap<String, Vec<u8>>)>,
    barrier: Option<Barrier>,
}

fn dead_letter(record: &Record, error: &str) -> OutRecord {
    let mut headers = record.headers.clone();
    for (key, value) in [
        ("krabka.error.class", PROCESSING_ERROR_CLASS.to_owned()),
        ("krabka.error.message", error.to_owned()),
        ("krabka.source.topic", record.topic.clone()),
        ("krabka.source.partition", record.partition.to_string()),
        ("krabka.source.offset", record.offset.to_string()),
    ] {
        headers.push(Header {
            key: key.to_owned(),
            value: Some(value.into_bytes()),
        });
    }
    OutRecord {
        key: record.key.clone(),
        value: record.value.clone(),
        timestamp: record.timestamp,
        headers,
    }
}

impl<C: Consumer, P: Producer<GroupMetadata = C::GroupMetadata>, S: StateStore>
    GroupRunner<C, P, S>
{
    pub fn new(
        topology: BuiltTopology,
        consumer: C,
        producer: P,
        store: S,
        policy: ErrorPolicy,
    ) -> Self {
        GroupRunner {
            topology,
            consumer,
            producer,
            store,
            policy,
            guarantee: Guarantee::AtLeastOnce,
            poll_timeout: Duration::from_millis(100),
            metrics: Metrics::default(),
            save_each_round: false,
            listener: None,
            max_in_flight: 4,
            in_flight: VecDeque::new(),
            acked: BTreeMap::new(),
            commit_due: false,
            owned: BTreeSet::new(),
            adopted: BTreeSet::new(),
            barrier: None,
            warnings: Vec::new(),
            fatal: None,
            resume: BTreeMap::new(),
        }
    }

    /// Aligns the runner on the cuts of a barrier group read from `source`.
    pub fn with_barrier(
        mut self,
        group: &str,
        source: Box<dyn CutSource + Send>,
    ) -> Result<Self, RunnerError> {
        if group.is_empty() {
            return Err(RunnerError::new(
                "a barrier group needs both a name and a cut reader",
            ));
        }
        self.barrier = Some(Aligner::new(group.to_owned(), source));
        Ok(self)
    }

    /// The barrier group's alignment state, if the runner has one.
    pub fn aligner(&self) -> Option<&Aligner> {
        self.barrier.as_ref()
    }

    fn owned_partitions(&self) -> BTreeSet<i32> {
        self.owned
            .iter()
            .map(|TopicPartition { partition: p, .. }| *p)
            .collect()
    }

    /// Newly assigned topic-partitions: a logical partition not owned before loads
    /// its live state, unless it holds state adopted from a cut.
    pub fn on_assigned(&mut self, tps: &[TopicPartition]) {
        let before = self.owned_partitions();
        self.owned.extend(tps.iter().cloned());
        if let Some(aligner) = self.barrier.as_mut() {
            // Another member may have consumed these meanwhile: ask the group again.
            aligner.forget_accepted(tps);
        }
        for partition in self.owned_partitions().difference(&before) {
            if self.adopted.remove(partition) {
                continue;
            }
            // Unlike Java and Go, a state that cannot be loaded stops the run: starting
            // the partition from nothing would silently compute wrong totals.
            let loaded = self.store.load(*partition, LIVE_EPOCH).and_then(|state| {
                self.topology
                    .restore_partition(*partition, &state)
                    .map_err(|e| {
                        RunnerError::new(format!("restore partition {partition} state: {e}"))
                    })
            });
            if let Err(e) = loaded {
                self.fatal.get_or_insert(e);
                continue;
            }
            if self.guarantee == Guarantee::ExactlyOnce {
                self.resume.extend(self.store.restored_offsets(*partition));
            }
        }
    }

    /// Revoked topic-partitions: the rounds in flight are drained (their
    /// offsets committed while the group still counts this member), then a
    /// logical partition no longer owned is saved and released.
    pub fn on_revoked(&mut self, tps: &[TopicPartition]) {
        self.drain_or_warn();
        self.forget(tps, true);
    }

    /// [`Self::drain`], a failure kept as a warning: nothing unacknowledged was
    /// committed, and a failed delivery rewound the partitions still owned.
    fn drain_or_warn(&mut self) {
        if let Err(e) = self.drain() {
            self.warnings.push(format!(
                "committing before the partitions go: {}",
                e.message
            ));
        }
    }

    /// Lost topic-partitions: released without saving. Their offsets in flight
    /// are never committed (the group has moved on; the next owner reads them).
    pub fn on_lost(&mut self, tps: &[TopicPartition]) {
        self.forget(tps, false);
        // Nor are they rolled back or rewound should a delivery fail later.
        let owned = self.owned_partitions();
        for round in &mut self.in_flight {
            for tp in tps {
                round.offsets.remove(tp);
                round.first.remove(tp);
            }
            round.prior.retain(|(p, _)| owned.contains(p));
        }
    }

    fn forget(&mut self, tps: &[TopicPartition], save: bool) {
        let before = self.owned_partitions();
        for tp in tps {
            self.owned.remove(tp);
            self.acked.remove(tp);
        }
        // Exactly-once with a store that saves in the transaction: the last
        // committed transaction holds the state of the committed offsets. A
        // save here would go outside any transaction, so it would count even
        // when it follows a round that was rolled back.
        let save = save
            && !(self.guarantee == Guarantee::ExactlyOnce && self.store.saves_in_transaction());
        for partition in before.difference(&self.owned_partitions()) {
            self.resume.retain(|tp, _| tp.partition != *partition);
            if save && let Ok(state) = self.topology.snapshot_partition(*partition) {
                let _ = self.store.save(*partition, LIVE_EPOCH, &state);
            }
            self.store.release(*partition);
            self.topology.release_partition(*partition);
        }
    }

    /// Drains the rounds in flight, then releases every owned partition with a save.
    pub fn close(&mut self) {
        self.drain_or_warn();
        let all: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        self.forget(&all, true);
    }

    /// One poll round (semantics §7–8); returns the committed offsets. A failed
    /// round rolls state back and seeks every topic-partition it read back to
    /// where the round began, so nothing it read is lost.
    pub fn run_once(&mut self) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        if let Some(e) = self.fatal.take() {
            return Err(e);
        }
        if self.pipelined() {
            return self.run_pipelined();
        }
        self.prepare_barrier()?;
        let records = self.consumer.poll(self.poll_timeout)?;
        let mut round = Round::default();
        if let Err(e) = self.process(records, &mut round) {
            return Err(self.fail(&round, e, None));
        }
        if round.outputs.is_empty() && round.offsets.is_empty() && round.barrier.is_none() {
            return Ok(BTreeMap::new());
        }
        let completed = match self.guarantee {
            Guarantee::AtLeastOnce => self.complete(&round).map_err(|e| (e, None)),
            Guarantee::ExactlyOnce => {
                if let Err(e) = self.producer.begin_transaction() {
                    return Err(self.fail(&round, e, None));
                }
                self.complete_transactional(&round).map_err(|e| {
                    let abort = self.producer.abort_transaction().err();
                    (e, Some(abort))
                })
            }
        };
        if let Err((e, abort)) = completed {
            return Err(self.fail(&round, e, abort));
        }
        if let Some(aligner) = self.barrier.as_mut() {
            aligner.observe_committed(&round.offsets);
            if let Some(barrier) = &round.barrier {
                aligner.finish(barrier);
                if let Some(late) = &barrier.late {
                    self.warnings.push(late.clone());
                }
                if let Some(listener) = self.listener.as_mut() {
                    listener(barrier);
                }
            }
        }
        Ok(round.offsets)
    }

    /// Whether rounds are pipelined (see the module documentation): barrier
    /// commits and transactions complete in their round, and per-round state
    /// saves must not run ahead of the commits they pair with.
    fn pipelined(&self) -> bool {
        self.guarantee == Guarantee::AtLeastOnce && self.barrier.is_none() && !self.save_each_round
    }

    /// A pipelined round: poll, process, send without waiting, then commit what
    /// is acknowledged; returns the offsets committed now (of earlier rounds too).
    fn run_pipelined(&mut self) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        let records = self.consumer.poll(self.poll_timeout)?;
        let mut round = Round::default();
        if let Err(e) = self.process(records, &mut round) {
            return Err(self.fail(&round, e, None));
        }
        if !round.outputs.is_empty() || !round.offsets.is_empty() {
            let sent = round
                .outputs
                .iter()
                .try_for_each(|p| self.producer.send(&p.topic, &p.record))
                .and_then(|_| self.producer.seal());
            let ticket = match sent {
                Ok(ticket) => ticket,
                Err(e) => return Err(self.fail(&round, e, None)),
            };
            self.in_flight.push_back(InFlight {
                ticket,
                first: round.first,
                offsets: round.offsets,
                prior: round.prior,
            });
            if self.in_flight.len() > self.max_in_flight.max(1)
                && let Err(e) = self.producer.flush()
            {
                return Err(self.fail_in_flight(e));
            }
        }
        self.settle(false)
    }

    /// Moves the acknowledged rounds in flight into `acked` and commits it
    /// (`sync`: waiting for the broker); returns the offsets of those rounds.
    fn settle(&mut self, sync: bool) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        let acknowledged = match self.producer.acknowledged() {
            Ok(ticket) => ticket,
            Err(e) => return Err(self.fail_in_flight(e)),
        };
        let mut done: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        while self
            .in_flight
            .front()
            .is_some_and(|r| r.ticket <= acknowledged)
        {
            let Some(round) = self.in_flight.pop_front() else {
                break;
            };
            for (tp, offset) in round.offsets {
                let next = done.entry(tp).or_insert(offset);
                *next = (*next).max(offset);
            }
        }
        for (tp, offset) in &done {
            let next = self.acked.entry(tp.clone()).or_insert(*offset);
            *next = (*next).max(*offset);
            self.commit_due = true;
        }
        if self.consumer.commit_failed() {
            self.commit_due = true;
        }
        if (self.commit_due || sync) && !self.acked.is_empty() {
            let committed = if sync {
                self.consumer.commit(&self.acked)
            } else {
                self.consumer.commit_async(&self.acked)
            };
            match committed {
                Ok(()) => self.commit_due = false,
                // Nothing is lost: the offsets stay due and the next round commits them.
                Err(e) if !sync => self.warnings.push(e.message),
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Waits for every round in flight to be acknowledged and commits the
    /// acknowledged offsets synchronously: before partitions are revoked and on
    /// shutdown. Does nothing when rounds are not pipelined.
    pub fn drain(&mut self) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        if !self.pipelined() {
            return Ok(BTreeMap::new());
        }
        if !self.in_flight.is_empty()
            && let Err(e) = self.producer.flush()
        {
            return Err(self.fail_in_flight(e));
        }
        self.settle(true)
    }

    /// A delivery of some round in flight failed: rolls every round in flight
    /// back (newest first, so each partition ends at its oldest prior state) and
    /// rewinds each topic-partition to the first offset any of them read.
    fn fail_in_flight(&mut self, error: RunnerError) -> RunnerError {
        let rounds: Vec<InFlight> = self.in_flight.drain(..).collect();
        let mut first: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        for round in rounds.iter().rev() {
            for (partition, state) in round.prior.iter().rev() {
                self.restore(*partition, state);
            }
        }
        for round in &rounds {
            for (tp, offset) in &round.first {
                let at = first.entry(tp.clone()).or_insert(*offset);
                *at = (*at).min(*offset);
            }
        }
        let failed = Round {
            first,
            ..Round::default()
        };
        self.fail(&failed, error, None)
    }

    /// Steps 1–2 of alignment: refresh the pending cut, learn positions.
    fn prepare_barrier(&mut self) -> Result<(), RunnerError> {
        let Some(aligner) = self.barrier.as_mut() else {
            return Ok(());
        };
        if aligner.needs_start() {
            let consumer = &mut self.consumer;
            aligner.start(|tps| consumer.committed(tps))?;
        }
        aligner.refresh(&self.owned)?;
        let aligned = aligner.aligned_tps();
        if self.owned.is_empty() || aligned.is_empty() {
            return Ok(());
        }
        let unknown = aligner.unknown_accepted(&aligned);
        if !unknown.is_empty() {
            let mut committed = self.consumer.committed(&unknown)?;
            // Nothing committed is a known answer too: ask once per partition.
            for tp in unknown {
                committed.entry(tp).or_insert(0);
            }
            aligner.observe_committed(&committed);
        }
        if let Some(positions) = self.consumer.positions(&aligned)? {
            aligner.observe_positions(&positions);
        }
        Ok(())
    }

    /// The poll cycle: held records first, truncation at the cut, processing by
    /// logical partition, error policy, barrier commits.
    fn process(&mut self, mut records: Vec<Record>, round: &mut Round) -> Result<(), RunnerError> {
        if !self.resume.is_empty() {
            // Below its resume offset a record is already in the restored state,
            // and its outputs were committed with it; a partition read up to
            // there is no longer checked.
            let mut reached = BTreeSet::new();
            records.retain(|r| {
                let tp = TopicPartition::new(r.topic.clone(), r.partition);
                match self.resume.get(&tp) {
                    Some(next) if r.offset < *next => false,
                    Some(_) => {
                        reached.insert(tp);
                        true
                    }
                    None => true,
                }
            });
            self.resume.retain(|tp, _| !reached.contains(tp));
        }
        let mut by_tp: BTreeMap<TopicPartition, Vec<Record>> = match self.barrier.as_mut() {
            Some(aligner) => aligner.take_held(),
            None => BTreeMap::new(),
        };
        // Records come in runs of one topic-partition: one map entry (and one
        // copy of the topic name) per run, not per record.
        let mut run: Vec<Record> = Vec::new();
        for record in records {
            if run
                .last()
                .is_some_and(|r| r.partition != record.partition || r.topic != record.topic)
            {
                let first = &run[0];
                by_tp
                    .entry(TopicPartition::new(first.topic.clone(), first.partition))
                    .or_default()
                    .append(&mut run);
            }
            run.push(record);
        }
        if let Some(first) = run.first() {
            by_tp
                .entry(TopicPartition::new(first.topic.clone(), first.partition))
                .or_default()
                .append(&mut run);
        }
        let mut by_partition: BTreeMap<i32, BTreeMap<String, Vec<Record>>> = BTreeMap::new();
        for (tp, mut records) in by_tp {
            if let Some(first) = records.iter().map(|r| r.offset).min() {
                round.first.insert(tp.clone(), first);
            }
            for record in &mut records {
                record.value.get_or_insert_with(Vec::new);
            }
            if let Some(aligner) = self.barrier.as_mut() {
                records = aligner.accept(&tp, records);
            }
            let Some(last) = records.iter().map(|r| r.offset).max() else {
                continue;
            };
            round.offsets.insert(tp.clone(), last + 1);
            by_partition
                .entry(tp.partition)
                .or_default()
                .insert(tp.topic, records);
        }
        for (partition, input) in &by_partition {
            self.process_partition(*partition, input, round)?;
        }
        if let Some(aligner) = self.barrier.as_ref()
            && aligner.fired()
        {
            round.barrier = aligner.barrier(&mut round.offsets);
        }
        Ok(())
    }

    /// Runs one logical partition's input under the error policy: its outputs
    /// and prior state go into the round; a failure restores the prior state and
    /// is returned under fail (or when retriable), else counted and, under
    /// dead-letter, the input re-produced with the `krabka.*` headers. The poll
    /// round and [`Self::run_partition_once`] share it, so both honour the policy.
    fn process_partition(
        &mut self,
        partition: i32,
        input: &BTreeMap<String, Vec<Record>>,
        round: &mut Round,
    ) -> Result<(), RunnerError> {
        let prior = self
            .topology
            .snapshot_partition(partition)
            .map_err(|e| RunnerError::new(e.to_string()))?;
        self.metrics.batches += 1;
        let rows: u64 = input.values().map(|r| r.len() as u64).sum();
        self.metrics.input_records += rows;
        let started = Instant::now();
        // Under skip and dead-letter, a sink row its codec refuses alone is
        // treated alone; under fail it fails the partition like any error.
        let result = if self.policy == ErrorPolicy::Fail {
            self.topology
                .run_partition_records(partition, input)
                .map(|out| (out, Vec::new()))
        } else {
            self.topology.run_partition_records_by_row(partition, input)
        };
        self.metrics.processing_nanos += started.elapsed().as_nanos() as u64;
        match result {
            Ok((out, refused)) => {
                self.metrics.output_records += out.len() as u64;
                round.outputs.extend(out);
                round.prior.push((partition, prior));
                for row in refused {
                    self.refuse_row(partition, input, &row, round);
                }
            }
            Err(failure) => {
                self.restore(partition, &prior);
                if failure.retriable || self.policy == ErrorPolicy::Fail {
                    return Err(RunnerError {
                        message: failure.to_string(),
                        retriable: failure.retriable,
                        fenced: None,
                    });
                }
                self.metrics.failures += 1;
                if let ErrorPolicy::DeadLetter { topic } = &self.policy {
                    for records in input.values() {
                        for record in records {
                            round.outputs.push(Produced {
                                topic: topic.clone(),
                                record: dead_letter(record, &failure.to_string()),
                            });
                            self.metrics.dead_letter_records += 1;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A sink row refused alone under skip or dead-letter: counted as a failure
    /// and, under dead-letter, the source record it came from (found by its
    /// partition and offset cells) re-produced with the `krabka.*` headers — or,
    /// when no single source record is named (an aggregate's row), the refused
    /// row itself with them.
    fn refuse_row(
        &mut self,
        partition: i32,
        input: &BTreeMap<String, Vec<Record>>,
        refused: &Refused,
        round: &mut Round,
    ) {
        self.metrics.failures += 1;
        let ErrorPolicy::DeadLetter { topic } = &self.policy else {
            return;
        };
        let message = refused.failure().to_string();
        let row = &refused.row;
        let sources: Vec<&Record> = match row.offset {
            Some(offset) if row.partition.is_none_or(|p| p == partition) => input
                .values()
                .flatten()
                .filter(|r| r.offset == offset)
                .collect(),
            _ => Vec::new(),
        };
        let record = match sources.as_slice() {
            [source] => dead_letter(source, &message),
            _ => {
                let topics: Vec<&String> = input.keys().collect();
                let source = Record {
                    topic: match topics.as_slice() {
                        [only] => (*only).clone(),
                        _ => String::new(),
                    },
                    partition,
                    offset: row.offset.unwrap_or(-1),
                    timestamp: row.record.timestamp,
                    key: row.record.key.clone(),
                    value: row.record.value.clone(),
                    headers: row.record.headers.clone(),
                };
                let mut record = dead_letter(&source, &message);
                if row.offset.is_none() {
                    // No source offset is known: the header says so by being empty.
                    for h in &mut record.headers {
                        if h.key == "krabka.source.offset" {
                            h.value = Some(Vec::new());
                        }
                    }
                }
                record
            }
        };
        round.outputs.push(Produced {
            topic: topic.clone(),
            record,
        });
        self.metrics.dead_letter_records += 1;
    }

    /// Non-transactional completion: send and wait for every ack, save the
    /// barrier snapshots, commit.
    fn complete(&mut self, round: &Round) -> Result<(), RunnerError> {
        self.send_all(&round.outputs)?;
        self.save_barrier(round)?;
        self.save_round(round)?;
        if !round.offsets.is_empty() {
            self.consumer.commit(&round.offsets)?;
        }
        Ok(())
    }

    /// Transactional completion inside the begun transaction: send, save the
    /// barrier snapshots, send the offsets with the group metadata, commit.
    fn complete_transactional(&mut self, round: &Round) -> Result<(), RunnerError> {
        self.send_all(&round.outputs)?;
        self.save_barrier(round)?;
        self.save_round(round)?;
        if !round.offsets.is_empty() {
            let group = self.consumer.group_metadata();
            self.producer
                .send_offsets_to_transaction(&round.offsets, group.as_ref())?;
        }
        self.producer.commit_transaction()
    }

    fn send_all(&mut self, outputs: &[Produced]) -> Result<(), RunnerError> {
        outputs
            .iter()
            .try_for_each(|p| self.producer.send(&p.topic, &p.record))?;
        self.producer.flush()
    }

    /// With `save_each_round`, saves the live state of every partition the round
    /// processed, after the flush and before the commit.
    fn save_round(&mut self, round: &Round) -> Result<(), RunnerError> {
        if !self.save_each_round {
            return Ok(());
        }
        self.store.reflect(&round.offsets);
        let mut states = Vec::with_capacity(round.prior.len());
        for (partition, _) in &round.prior {
            let state = self
                .topology
                .snapshot_partition(*partition)
                .map_err(|e| RunnerError::new(e.to_string()))?;
            if self.guarantee == Guarantee::ExactlyOnce {
                self.save_state(*partition, LIVE_EPOCH, &state)?;
            } else {
                states.push((*partition, state));
            }
        }
        // At-least-once: one wait for every partition's acknowledgements.
        if states.is_empty() {
            return Ok(());
        }
        self.store.save_many(LIVE_EPOCH, &states)
    }

    /// Saves one partition's state: under exactly-once, a store that writes
    /// records has the runner send them in the open transaction, so they commit
    /// or abort with the outputs and the offsets.
    fn save_state(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        if self.guarantee == Guarantee::ExactlyOnce
            && let Some(records) = self.store.transactional_records(partition, epoch, state)?
        {
            return records
                .iter()
                .try_for_each(|(topic, p, record)| self.producer.send_to(topic, *p, record));
        }
        self.store.save(partition, epoch, state)
    }

    /// Saves every barrier partition under the cut epoch, unless the cut came too late (D9).
    fn save_barrier(&mut self, round: &Round) -> Result<(), RunnerError> {
        let Some(barrier) = round.barrier.as_ref().filter(|b| b.late.is_none()) else {
            return Ok(());
        };
        for partition in &barrier.partitions {
            let state = self
                .topology
                .snapshot_partition(*partition)
                .map_err(|e| RunnerError::new(e.to_string()))?;
            self.save_state(*partition, barrier.cut.epoch, &state)?;
        }
        Ok(())
    }

    /// Rolls back every partition of the round and rewinds the consumer to the
    /// round's first offsets; `abort` carries the outcome of a transaction abort.
    fn fail(
        &mut self,
        round: &Round,
        error: RunnerError,
        abort: Option<Option<RunnerError>>,
    ) -> RunnerError {
        self.store.forget_unconfirmed();
        for (partition, state) in round.prior.iter().rev() {
            self.restore(*partition, state);
        }
        let mut error = error;
        if let Some(Some(abort)) = abort {
            error.message = format!("{}; abort failed: {}", error.message, abort.message);
            error.retriable = false;
            // A producer that cannot abort (fenced, or its commit's outcome
            // unknown: Tansu times out the commit of a producer whose id was
            // taken over) is of no further use: only a new producer, which
            // ends whatever it left open, and a rejoin from the committed
            // offsets and state get the member back to what the broker kept.
            error.fenced = error.fenced.or(Some(Fence::Unresolved));
        }
        for (tp, offset) in &round.first {
            if let Err(e) = self.consumer.seek(tp, *offset) {
                error.message = format!(
                    "{}; rewinding {}-{} to offset {offset} failed: {}",
                    error.message, tp.topic, tp.partition, e.message
                );
                error.retriable = false;
            }
            if let Some(aligner) = self.barrier.as_mut() {
                aligner.rewound(tp, *offset);
            }
        }
        error
    }

    /// Warnings since the last call (late barrier epochs, D9; an announced cut that never came).
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut self.warnings);
        if let Some(aligner) = self.barrier.as_mut() {
            warnings.extend(aligner.take_warnings());
        }
        warnings
    }

    /// Informational messages since the last call (old cuts skipped at start, announced cuts).
    pub fn take_notices(&mut self) -> Vec<String> {
        self.barrier
            .as_mut()
            .map(Aligner::take_notices)
            .unwrap_or_default()
    }

    fn restore(&mut self, partition: i32, state: &BTreeMap<String, Vec<u8>>) {
        self.topology.release_partition(partition);
        let _ = self.topology.restore_partition(partition, state);
    }

    /// Assign, seek, poll one batch of one topic-partition and process it as a poll
    /// round does, but under no error policy; returns the next offset (`offset`
    /// itself when nothing was read, or with the error after any failure, which
    /// rolls the partition's state back).
    pub fn run_partition_once(
        &mut self,
        topic: &str,
        partition: i32,
        offset: i64,
    ) -> (i64, Result<(), RunnerError>) {
        let tp: TopicPartition = TopicPartition::new(topic, partition);
        if let Err(e) = self
            .consumer
            .assign(std::slice::from_ref(&tp))
            .and_then(|_| self.consumer.seek(&tp, offset))
        {
            return (offset, Err(e));
        }
        let records = match self.consumer.poll(self.poll_timeout) {
            Ok(r) => r,
            Err(e) => return (offset, Err(e)),
        };
        let records: Vec<Record> = records
            .into_iter()
            .filter(|r| r.topic == topic && r.partition == partition)
            .collect();
        let Some(last) = records.iter().map(|r| r.offset).max() else {
            return (offset, Ok(()));
        };
        let next = offset.max(last + 1);
        let input = BTreeMap::from([(topic.to_owned(), records)]);
        let mut round = Round::default();
        // semantics §7: no error policy here (the Go and Java seams run a built
        // topology): any failure restores the state and answers `offset`.
        let policy = std::mem::replace(&mut self.policy, ErrorPolicy::Fail);
        let processed = self.process_partition(partition, &input, &mut round);
        self.policy = policy;
        let result = processed
            .and_then(|()| self.send_all(&round.outputs))
            .and_then(|()| self.consumer.commit(&BTreeMap::from([(tp, next)])));
        match result {
            Ok(()) => (next, Ok(())),
            // The round holds no first offsets: `fail` only rolls its partition back.
            Err(e) => (offset, Err(self.fail(&round, e, None))),
        }
    }
}

pub mod restore;

#[cfg(test)]
mod tests;
