//! BARRIER-ALIGN-*, BARRIER-RESTORE* (read from `barrier.json`) and the rules
//! the vectors leave open (D9 late cuts, D15 missing snapshots, rewinds), with a
//! counting topology, fakes for the consumer, producer and store, and real cut
//! records folded by a [`CutLog`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use serde_json::Value;

use super::super::restore::{CutChoice, load_cut};
use super::super::*;
use super::orders;
use crate::engine::columnar::barrier::{
    BarrierCut, BarrierStateKey, ConsumedRecord, Cut, CutLog, CutOffset, CutStatus, CutTopic,
    InjectionStart, InjectionTarget, TopicPartition,
};
use crate::engine::columnar::ops::{OpError, Operator, Processor};
use crate::engine::columnar::runner::align::CutSource;
use crate::engine::columnar::topology::Topology;
use crate::engine::columnar::topology::spec::Guarantee;
use crate::engine::columnar::topology::tests::IpcValueCodec;

// ---- the counting topology ------------------------------------------------------------

/// Counts rows; its state is the count as u64 BE (a Go-style custom processor).
#[derive(Debug)]
struct Counting;

struct Counter(u64);

impl Operator for Counting {
    fn instantiate(&self) -> Box<dyn Processor> {
        Box::new(Counter(0))
    }
    fn output_schema(&self, input: &Schema) -> Result<SchemaRef, OpError> {
        Ok(Arc::new(input.clone()))
    }
    fn describe(&self) -> String {
        "count".into()
    }
}

impl Processor for Counter {
    fn process(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>, OpError> {
        self.0 += batch.num_rows() as u64;
        Ok(vec![batch.clone()])
    }
    fn snapshot(&self) -> Result<Vec<u8>, OpError> {
        Ok(self.0.to_be_bytes().to_vec())
    }
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError> {
        let bytes: [u8; 8] = snapshot
            .try_into()
            .map_err(|_| OpError::new("a counter is 8 bytes"))?;
        self.0 = u64::from_be_bytes(bytes);
        Ok(())
    }
}

fn counter_state(count: u64) -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([("counter".to_owned(), count.to_be_bytes().to_vec())])
}

// ---- fakes ----------------------------------------------------------------------------

type Events = Arc<Mutex<Vec<String>>>;

#[derive(Default)]
struct Consumer {
    polls: Vec<Vec<Record>>,
    commits: Vec<BTreeMap<TopicPartition, i64>>,
    seeks: Vec<(TopicPartition, i64)>,
    positions: Option<BTreeMap<TopicPartition, i64>>,
    position_calls: usize,
    committed: BTreeMap<TopicPartition, i64>,
}

impl super::super::Consumer for Consumer {
    fn poll(&mut self, _timeout: Duration) -> Result<Vec<Record>, RunnerError> {
        Ok(if self.polls.is_empty() {
            Vec::new()
        } else {
            self.polls.remove(0)
        })
    }
    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError> {
        self.commits.push(offsets.clone());
        Ok(())
    }
    fn assign(&mut self, _tps: &[TopicPartition]) -> Result<(), RunnerError> {
        Ok(())
    }
    fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), RunnerError> {
        self.seeks.push((tp.clone(), offset));
        Ok(())
    }
    fn positions(
        &mut self,
        tps: &[TopicPartition],
    ) -> Result<Option<BTreeMap<TopicPartition, i64>>, RunnerError> {
        self.position_calls += 1;
        Ok(self.positions.as_ref().map(|known| {
            known
                .iter()
                .filter(|(tp, _)| tps.contains(tp))
                .map(|(tp, o)| (tp.clone(), *o))
                .collect()
        }))
    }
    fn committed(
        &mut self,
        tps: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, RunnerError> {
        Ok(self
            .committed
            .iter()
            .filter(|(tp, _)| tps.contains(tp))
            .map(|(tp, o)| (tp.clone(), *o))
            .collect())
    }
    type GroupMetadata = &'static str;

    fn group_metadata(&self) -> Option<Self::GroupMetadata> {
        Some("group-metadata")
    }
}

#[derive(Default)]
struct Producer {
    transactional: bool,
    fail_send: bool,
    fail_commit: bool,
    sent: Vec<(String, OutRecord)>,
    events: Events,
}

impl Producer {
    fn event(&self, name: &str) {
        self.events.lock().unwrap().push(name.to_owned());
    }
    fn transactions(&self) -> Result<(), RunnerError> {
        if self.transactional {
            Ok(())
        } else {
            Err(RunnerError::new(NO_TRANSACTIONS))
        }
    }
}

impl super::super::Producer for Producer {
    type GroupMetadata = &'static str;

    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError> {
        if self.fail_send {
            return Err(RunnerError::new("broker refused the record"));
        }
        self.sent.push((topic.to_owned(), record.clone()));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
    fn begin_transaction(&mut self) -> Result<(), RunnerError> {
        self.transactions()?;
        self.event("begin");
        Ok(())
    }
    fn send_offsets_to_transaction(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        group: Option<&&'static str>,
    ) -> Result<(), RunnerError> {
        self.transactions()?;
        let group = group.copied();
        assert_eq!(group, Some("group-metadata"), "{offsets:?}");
        self.event("send-offsets");
        Ok(())
    }
    fn commit_transaction(&mut self) -> Result<(), RunnerError> {
        self.transactions()?;
        self.event("commit");
        if self.fail_commit {
            return Err(RunnerError::new("transaction commit timed out"));
        }
        Ok(())
    }
    fn abort_transaction(&mut self) -> Result<(), RunnerError> {
        self.transactions()?;
        self.event("abort");
        Ok(())
    }
}

#[derive(Default)]
struct Store {
    data: BTreeMap<(i32, i64), BTreeMap<String, Vec<u8>>>,
    loads: Vec<(i32, i64)>,
    saves: Vec<(i32, i64)>,
    lists_epochs: bool,
    events: Events,
}

impl StateStore for Store {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        self.loads.push((partition, epoch));
        Ok(self
            .data
            .get(&(partition, epoch))
            .cloned()
            .unwrap_or_default())
    }
    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        if epoch != LIVE_EPOCH {
            self.events.lock().unwrap().push("snapshot".into());
        }
        self.saves.push((partition, epoch));
        self.data.insert((partition, epoch), state.clone());
        Ok(())
    }
    fn epochs(&mut self, partition: i32) -> Result<Option<Vec<i64>>, RunnerError> {
        Ok(self.lists_epochs.then(|| {
            self.data
                .keys()
                .filter(|(p, e)| *p == partition && *e >= 0)
                .map(|(_, e)| *e)
                .collect()
        }))
    }
}

/// Cut records folded by the real [`CutLog`], so partial cuts behave as read from the
/// topic; tests append records while the runner runs through [`SharedLog`].
struct Cuts(SharedLog);

type SharedLog = Arc<Mutex<CutLog>>;

impl CutSource for Cuts {
    fn complete_cuts_after(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Vec<BarrierCut>, RunnerError> {
        Ok(self.0.lock().unwrap().complete_cuts_after(group, after))
    }
    fn complete_cut_at(
        &mut self,
        group: &str,
        epoch: i64,
    ) -> Result<Option<BarrierCut>, RunnerError> {
        Ok(self.0.lock().unwrap().complete_cut_at(group, epoch))
    }
    fn latest_complete_cut(&mut self, group: &str) -> Result<Option<BarrierCut>, RunnerError> {
        Ok(self.0.lock().unwrap().latest_complete_cut(group))
    }
    fn open_injection(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Option<(i64, Vec<InjectionTarget>)>, RunnerError> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .open_injection(group, after)
            .map(|(epoch, start)| (epoch, start.targets)))
    }
}

type Runner = GroupRunner<Consumer, Producer, Store>;

const GROUP: &str = "audit";

/// A cut to write: epoch, status, offsets, missing partitions.
type CutSpec = (
    i64,
    CutStatus,
    BTreeMap<TopicPartition, i64>,
    Vec<TopicPartition>,
);

fn runner(cuts: &[CutSpec]) -> Runner {
    runner_with_log(cuts).0
}

/// A runner and the cut log it reads, to append to while it runs.
fn runner_with_log(cuts: &[CutSpec]) -> (Runner, SharedLog) {
    let mut t = Topology::new();
    let codec = Arc::new(IpcValueCodec);
    let source = t
        .add_source("source", vec!["in".into()], codec.clone())
        .unwrap();
    let counter = t
        .add_operator("counter", Arc::new(Counting), source)
        .unwrap();
    t.add_sink("sink", "in", codec, counter).unwrap();
    let mut log = CutLog::new();
    for (offset, (epoch, status, offsets, missing)) in cuts.iter().enumerate() {
        log.apply(&cut_record(
            offset as i64,
            *epoch,
            *status,
            offsets,
            missing,
        ))
        .unwrap();
    }
    let events = Events::default();
    let producer = Producer {
        events: events.clone(),
        ..Producer::default()
    };
    let store = Store {
        events,
        ..Store::default()
    };
    let log = Arc::new(Mutex::new(log));
    let runner = GroupRunner::new(
        t.build().unwrap(),
        Consumer::default(),
        producer,
        store,
        ErrorPolicy::Fail,
    )
    .with_barrier(GROUP, Box::new(Cuts(log.clone())))
    .unwrap();
    (runner, log)
}

fn cut_record(
    offset: i64,
    epoch: i64,
    status: CutStatus,
    offsets: &BTreeMap<TopicPartition, i64>,
    missing: &[TopicPartition],
) -> ConsumedRecord {
    let mut topics: Vec<CutTopic> = Vec::new();
    for (TopicPartition { topic, partition }, o) in offsets {
        if topics.last().is_none_or(|t| &t.topic != topic) {
            topics.push(CutTopic {
                topic: topic.clone(),
                partitions: Vec::new(),
            });
        }
        topics.last_mut().unwrap().partitions.push(CutOffset {
            partition: *partition,
            offset: *o,
        });
    }
    let cut = Cut {
        triggered_at: 1,
        completed_at: 2,
        status,
        topics,
        missing: missing.to_vec(),
    };
    ConsumedRecord {
        partition: 0,
        offset,
        key: Some(BarrierStateKey::cut(GROUP, epoch).encode().unwrap()),
        value: Some(cut.encode().unwrap()),
    }
}

fn count(r: &Runner, partition: i32) -> u64 {
    let state = r.topology.snapshot_partition(partition).unwrap();
    u64::from_be_bytes(state["counter"].as_slice().try_into().unwrap())
}

// ---- reading the vectors --------------------------------------------------------------

fn vector(id: &str) -> Value {
    // The repository's copy of the golden vectors (docs/vectors.md).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/data/barrier.json");
    let all: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("cannot read {}: {e}", path.display());
        }))
        .unwrap();
    all.into_iter()
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("{id} missing from barrier.json"))
}

fn tp(text: &str) -> TopicPartition {
    let (topic, partition) = text.rsplit_once('/').unwrap();
    TopicPartition::new(topic, partition.parse().unwrap())
}

fn tp_map(v: &Value) -> BTreeMap<TopicPartition, i64> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, o)| (tp(k), o.as_i64().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

fn tps(v: &Value) -> Vec<TopicPartition> {
    v.as_array()
        .map(|a| a.iter().map(|t| tp(t.as_str().unwrap())).collect())
        .unwrap_or_default()
}

fn pairs(v: &Value) -> Vec<(i32, i64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_i64().unwrap() as i32, p[1].as_i64().unwrap()))
        .collect()
}

/// The vector's cut as (epoch, status, offsets, missing).
fn vector_cut(v: &Value) -> CutSpec {
    let cut = &v["inputs"]["cut"];
    let status = match cut["status"].as_str() {
        Some("partial") => CutStatus::Partial,
        _ => CutStatus::Complete,
    };
    (
        cut["epoch"].as_i64().unwrap(),
        status,
        tp_map(&cut["offsets"]),
        tps(&cut["missing"]),
    )
}

/// One poll per entry: `{"in/0": [offsets]}`, one row per record.
fn vector_polls(v: &Value) -> Vec<Vec<Record>> {
    v["inputs"]["polls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|poll| {
            let mut records = Vec::new();
            for (name, offsets) in poll.as_object().unwrap() {
                let TopicPartition { topic, partition } = tp(name);
                for offset in offsets.as_array().unwrap() {
                    records.push(Record {
                        topic: topic.clone(),
                        partition,
                        offset: offset.as_i64().unwrap(),
                        timestamp: 1,
                        value: Some(orders(&["a"], &[1])),
                        ..Record::default()
                    });
                }
            }
            records
        })
        .collect()
}

fn vector_runner(v: &Value) -> Runner {
    let mut r = runner(&[vector_cut(v)]);
    r.consumer.polls = vector_polls(v);
    let assigned = tps(&v["inputs"]["assigned"]);
    if !assigned.is_empty() {
        r.on_assigned(&assigned);
    }
    if v["inputs"]["positions"].is_object() {
        r.consumer.positions = Some(tp_map(&v["inputs"]["positions"]));
    }
    r
}

fn barrier_saves(r: &Runner) -> Vec<(i32, i64)> {
    r.store
        .saves
        .iter()
        .filter(|(_, e)| *e != LIVE_EPOCH)
        .copied()
        .collect()
}

// ---- the vectors ----------------------------------------------------------------------

#[test]
fn barrier_align_hold_holds_records_at_the_cut_and_processes_them_next_round() {
    let v = vector("BARRIER-ALIGN-HOLD");
    let (one, two) = (&v["expected"]["round1"], &v["expected"]["round2"]);
    let barriers = Arc::new(Mutex::new(Vec::new()));
    let mut r = vector_runner(&v);
    let seen = barriers.clone();
    r.listener = Some(Box::new(move |b: &Barrier| {
        seen.lock().unwrap().push(b.clone())
    }));

    assert_eq!(r.run_once().unwrap(), tp_map(&one["commit"]));
    let barrier = barriers.lock().unwrap().pop().expect("round 1 fires");
    assert_eq!(
        barrier.partitions,
        one["barrier"]["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_i64().unwrap() as i32)
            .collect::<Vec<_>>()
    );
    assert_eq!(barrier.offsets, tp_map(&one["barrier"]["offsets"]));
    assert_eq!(barrier_saves(&r), pairs(&one["saved"]));
    assert_eq!(count(&r, 0), one["counter"].as_u64().unwrap());
    assert_eq!(
        r.consumer.position_calls as u64,
        one["positions_calls_before_assignment"].as_u64().unwrap()
    );
    assert_eq!(
        r.store.data[&(0, 5)],
        counter_state(2),
        "the snapshot holds the state at the cut"
    );

    let saved_before = barrier_saves(&r).len();
    assert_eq!(r.run_once().unwrap(), tp_map(&two["commit"]));
    assert_eq!(count(&r, 0), two["counter"].as_u64().unwrap());
    assert_eq!(barrier_saves(&r)[saved_before..], pairs(&two["saved"])[..]);
    assert!(barriers.lock().unwrap().is_empty());
}

#[test]
fn barrier_align_wait_all_waits_for_every_aligned_partition() {
    let v = vector("BARRIER-ALIGN-WAIT-ALL");
    let (one, two) = (&v["expected"]["round1"], &v["expected"]["round2"]);
    let mut r = vector_runner(&v);
    assert_eq!(r.run_once().unwrap(), tp_map(&one["commit"]));
    assert_eq!(barrier_saves(&r), pairs(&one["saved"]));
    assert_eq!(r.run_once().unwrap(), tp_map(&two["commit"]));
    assert_eq!(barrier_saves(&r), pairs(&two["saved"]));
}

#[test]
fn barrier_align_idle_positions_lets_a_reported_position_reach_the_cut() {
    let v = vector("BARRIER-ALIGN-IDLE-POSITIONS");
    let mut r = vector_runner(&v);
    assert_eq!(r.run_once().unwrap(), tp_map(&v["expected"]["commit"]));
    assert_eq!(
        barrier_saves(&r).len() as u64,
        v["expected"]["saves"].as_u64().unwrap()
    );
}

#[test]
fn barrier_align_lost_a_revoked_partition_never_holds_the_barrier() {
    let v = vector("BARRIER-ALIGN-LOST");
    assert_eq!(v["inputs"]["then"], "revoke in/1");
    let two = &v["expected"]["round2"];
    let mut r = vector_runner(&v);
    r.run_once().unwrap();
    assert!(v["expected"]["round1"]["barrier"].is_null());
    assert!(barrier_saves(&r).is_empty(), "round 1 does not fire");
    r.on_revoked(&[tp("in/1")]);
    assert_eq!(r.run_once().unwrap(), tp_map(&two["commit"]));
    let last = *barrier_saves(&r).last().expect("round 2 fires");
    assert_eq!(vec![last], pairs(&serde_json::json!([two["last_save"]])));
    assert_eq!(r.aligner().unwrap().last_epoch(), 5);
}

#[test]
fn barrier_align_partial_ignored_never_aligns_on_a_partial_cut() {
    let v = vector("BARRIER-ALIGN-PARTIAL-IGNORED");
    let mut r = vector_runner(&v);
    assert_eq!(r.run_once().unwrap(), tp_map(&v["expected"]["commit"]));
    assert_eq!(barrier_saves(&r), pairs(&v["expected"]["saved"]));
}

#[test]
fn barrier_restore_loads_the_epoch_snapshot_and_seeks_to_the_cut() {
    let v = vector("BARRIER-RESTORE");
    let e = &v["expected"];
    assert_eq!(
        v["inputs"]["calls"],
        serde_json::json!(["RestoreToEpoch(5)", "RestoreToLatestCut()"])
    );
    for choice in [CutChoice::Epoch(5), CutChoice::Latest] {
        let mut r = runner(&[vector_cut(&v)]);
        let stored = v["inputs"]["store"]["(0,5)"]["counter"].as_u64().unwrap();
        r.store.data.insert((0, 5), counter_state(stored));
        let cut = r.restore_to(choice).unwrap();
        assert_eq!(cut.epoch, e["returns_cut"].as_i64().unwrap());
        assert_eq!(
            r.consumer.seeks,
            tp_map(&e["seek"]).into_iter().collect::<Vec<_>>()
        );
        assert_eq!(count(&r, 0), e["counter"].as_u64().unwrap());
        assert_eq!(r.store.loads, pairs(&e["loads"]));
        assert_eq!(r.aligner().unwrap().last_epoch(), 5);
    }
}

#[test]
fn barrier_restore_partial_fails_naming_the_missing_complete_cut() {
    let v = vector("BARRIER-RESTORE-PARTIAL");
    let mut r = runner(&[(5, CutStatus::Partial, BTreeMap::new(), vec![tp("in/1")])]);
    let by_epoch = r.restore_to_epoch(5).unwrap_err().message;
    let expected = v["expected"]["RestoreToEpoch(5)_error_contains"]
        .as_str()
        .unwrap();
    assert!(by_epoch.contains(expected), "{by_epoch}");
    assert_eq!(
        by_epoch,
        "barrier group audit has no complete cut at epoch 5"
    );
    let latest = r.restore_to_latest_cut().unwrap_err().message;
    let expected = v["expected"]["RestoreToLatestCut_error_contains"]
        .as_str()
        .unwrap();
    assert!(latest.contains(expected), "{latest}");
}

fn hold_runner_transactional() -> Runner {
    let mut r = vector_runner(&vector("BARRIER-ALIGN-HOLD"));
    r.guarantee = Guarantee::ExactlyOnce;
    r.producer.transactional = true;
    r
}

#[test]
fn barrier_align_transactional_snapshots_inside_the_transaction_before_the_offsets() {
    let v = vector("BARRIER-ALIGN-TRANSACTIONAL");
    let order: Vec<String> = serde_json::from_value(v["expected"]["order"].clone()).unwrap();
    let mut r = hold_runner_transactional();
    r.run_once().unwrap();
    assert_eq!(*r.producer.events.lock().unwrap(), order);
    assert!(
        r.consumer.commits.is_empty(),
        "offsets go through the transaction"
    );
}

#[test]
fn barrier_align_transactional_a_failed_commit_aborts_and_keeps_the_epoch_open() {
    let v = vector("BARRIER-ALIGN-TRANSACTIONAL");
    let order: Vec<String> =
        serde_json::from_value(v["expected"]["order_when_commit_fails"].clone()).unwrap();
    let mut r = hold_runner_transactional();
    r.producer.fail_commit = true;
    let err = r.run_once().unwrap_err();
    assert!(!err.retriable);
    assert_eq!(*r.producer.events.lock().unwrap(), order);
    assert_eq!(r.aligner().unwrap().pending_epoch(), Some(5));
    assert_eq!(r.aligner().unwrap().last_epoch(), -1);
    assert_eq!(count(&r, 0), 0, "state rolled back");
    assert_eq!(
        r.consumer.seeks,
        [(tp("in/0"), 0)],
        "the round is read again"
    );
}

// ---- rules the vectors leave open -----------------------------------------------------

fn record(partition: i32, offset: i64) -> Record {
    Record {
        topic: "in".into(),
        partition,
        offset,
        timestamp: 1,
        value: Some(orders(&["a"], &[1])),
        ..Record::default()
    }
}

#[test]
fn exactly_once_without_a_transactional_producer_fails_before_sending() {
    let mut r = runner(&[]);
    r.guarantee = Guarantee::ExactlyOnce;
    r.consumer.polls.push(vec![record(0, 0)]);
    let err = r.run_once().unwrap_err();
    assert_eq!(err.message, NO_TRANSACTIONS);
    assert!(r.producer.sent.is_empty() && r.consumer.commits.is_empty());
    assert_eq!(count(&r, 0), 0);
}

#[test]
fn exactly_once_a_failed_send_aborts_rolls_back_and_the_retry_counts_each_record_once() {
    let mut r = runner(&[]);
    r.guarantee = Guarantee::ExactlyOnce;
    r.producer.transactional = true;
    r.producer.fail_send = true;
    r.consumer.polls.push(vec![record(0, 7), record(0, 8)]);
    let err = r.run_once().unwrap_err();
    assert!(err.message.contains("broker refused the record"), "{err}");
    assert_eq!(*r.producer.events.lock().unwrap(), ["begin", "abort"]);
    assert_eq!(r.consumer.seeks, [(tp("in/0"), 7)]);
    // The consumer re-delivers from the rewound offset.
    r.producer.fail_send = false;
    r.consumer.polls.push(vec![record(0, 7), record(0, 8)]);
    r.run_once().unwrap();
    assert_eq!(count(&r, 0), 2);
    assert_eq!(
        r.producer.events.lock().unwrap()[2..],
        ["begin", "send-offsets", "commit"]
    );
}

#[test]
fn at_least_once_a_failed_send_rewinds_the_consumer_to_the_round_start() {
    let mut r = runner(&[]);
    r.producer.fail_send = true;
    r.consumer
        .polls
        .push(vec![record(0, 3), record(1, 9), record(0, 4)]);
    assert!(r.run_once().is_err());
    assert_eq!(r.consumer.seeks, [(tp("in/0"), 3), (tp("in/1"), 9)]);
    assert!(r.consumer.commits.is_empty());
    assert_eq!((count(&r, 0), count(&r, 1)), (0, 0));
}

#[test]
fn a_cut_the_group_had_already_passed_saves_no_snapshot_and_never_lowers_a_commit() {
    let (mut r, log) = runner_with_log(&[]);
    r.on_assigned(&[tp("in/0")]);
    r.consumer.committed = BTreeMap::from([(tp("in/0"), 10)]);
    // The run starts with no cut; the cut arrives after the group passed it.
    assert_eq!(r.run_once().unwrap(), BTreeMap::new());
    let cut = BTreeMap::from([(tp("in/0"), 2)]);
    append_cut(&log, 1, CutStatus::Complete, &cut);
    r.consumer.polls.push(vec![record(0, 10), record(0, 11)]);
    let committed = r.run_once().unwrap();
    assert!(barrier_saves(&r).is_empty(), "no snapshot for a late epoch");
    assert!(
        committed.get(&tp("in/0")).is_none_or(|o| *o >= 10),
        "{committed:?}"
    );
    assert_eq!(
        r.take_warnings(),
        ["barrier epoch 1 began after in-0 passed offset 2"]
    );
    assert_eq!(
        r.aligner().unwrap().last_epoch(),
        1,
        "the epoch is consumed"
    );
    // The held records are processed in the next round.
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 12)]));
    assert_eq!(count(&r, 0), 2);
}

#[test]
fn restoring_an_epoch_the_store_does_not_hold_fails_listing_the_epochs_it_has() {
    let cut = BTreeMap::from([(tp("in/0"), 2), (tp("in/1"), 4)]);
    let mut r = runner(&[(9, CutStatus::Complete, cut, vec![])]);
    r.store.lists_epochs = true;
    r.store.data.insert((0, 7), counter_state(1));
    r.store.data.insert((0, 8), counter_state(1));
    r.store.data.insert((1, 9), counter_state(1));
    let err = r.restore_to_epoch(9).unwrap_err();
    assert_eq!(
        err.message,
        "snapshot epoch 9 is not retained; available epochs by partition: {0=[7, 8], 1=[9]}"
    );
    assert!(r.consumer.seeks.is_empty(), "nothing moved");
    assert_eq!(
        r.restore_to_epoch(-1).unwrap_err().message,
        "barrier epoch must not be negative"
    );
}

#[test]
fn a_runner_without_a_barrier_group_cannot_restore() {
    let mut r = runner(&[]);
    r.barrier = None;
    assert_eq!(
        r.restore_to_latest_cut().unwrap_err().message,
        "restoring to a cut requires a barrier group"
    );
}

#[test]
fn a_runner_started_from_a_cut_keeps_the_cut_state_when_first_assigned() {
    let offsets = BTreeMap::from([(tp("in/0"), 2), (tp("in/1"), 4)]);
    let mut r = runner(&[(3, CutStatus::Complete, offsets, vec![])]);
    r.store.lists_epochs = true;
    r.store.data.insert((0, 3), counter_state(5));
    r.store.data.insert((1, 3), counter_state(6));
    r.store.data.insert((0, LIVE_EPOCH), counter_state(99));
    let cut = r.aligner_cut(3);
    let states = load_cut(&mut r.store, &cut).unwrap();
    r.adopt_cut(&cut, &states).unwrap();
    r.on_assigned(&[tp("in/0"), tp("in/1")]);
    assert_eq!((count(&r, 0), count(&r, 1)), (5, 6), "not the live state");
    assert_eq!(r.aligner().unwrap().last_epoch(), 3);
    // Revoked and assigned again, a partition loads the live state it saved.
    r.store.data.insert((0, LIVE_EPOCH), counter_state(99));
    r.on_lost(&[tp("in/0")]);
    r.on_assigned(&[tp("in/0")]);
    assert_eq!(count(&r, 0), 99);
    r.store.data.remove(&(1, 3));
    let err = load_cut(&mut r.store, &cut).unwrap_err();
    assert_eq!(
        err.message,
        "snapshot epoch 3 is not retained; available epochs by partition: {0=[3], 1=[]}"
    );
}

impl Runner {
    fn aligner_cut(&mut self, epoch: i64) -> BarrierCut {
        let aligner = self.barrier.as_mut().unwrap();
        aligner
            .source
            .complete_cut_at(GROUP, epoch)
            .unwrap()
            .unwrap()
    }
}

#[test]
fn a_cut_naming_none_of_the_owned_partitions_fires_at_once_without_a_snapshot() {
    let cut = BTreeMap::from([(tp("other/0"), 5)]);
    let mut r = runner(&[(4, CutStatus::Complete, cut, vec![])]);
    let barriers = Arc::new(Mutex::new(Vec::new()));
    let seen = barriers.clone();
    r.listener = Some(Box::new(move |b: &Barrier| {
        seen.lock().unwrap().push(b.clone())
    }));
    r.on_assigned(&[tp("in/0")]);
    assert_eq!(r.run_once().unwrap(), BTreeMap::new());
    let fired = barriers.lock().unwrap().pop().expect("D10: fires at once");
    assert!(fired.partitions.is_empty() && fired.offsets.is_empty());
    assert!(barrier_saves(&r).is_empty());
    assert_eq!(r.aligner().unwrap().last_epoch(), 4);
}

// ---- a caught-up runner and a restarted one -------------------------------------------

fn append_cut(
    log: &SharedLog,
    epoch: i64,
    status: CutStatus,
    offsets: &BTreeMap<TopicPartition, i64>,
) {
    let mut log = log.lock().unwrap();
    let missing = if status == CutStatus::Partial {
        offsets.keys().cloned().collect()
    } else {
        Vec::new()
    };
    log.apply(&cut_record(100 + epoch, epoch, status, offsets, &missing))
        .unwrap();
}

/// The broker's injection start of `epoch` on topic `in` with two partitions.
fn append_injection(log: &SharedLog, epoch: i64) {
    let start = InjectionStart {
        coordinator_epoch: 1,
        triggered_at: 1,
        targets: vec![InjectionTarget {
            topic: "in".into(),
            partition_count: 2,
        }],
    };
    log.lock()
        .unwrap()
        .apply(&ConsumedRecord {
            partition: 0,
            offset: 200 + epoch,
            key: Some(BarrierStateKey::injection(GROUP, epoch).encode().unwrap()),
            value: Some(start.encode().unwrap()),
        })
        .unwrap();
}

#[test]
fn a_caught_up_runner_holds_an_announced_cuts_partitions_and_snapshots_at_the_cut() {
    let (mut r, log) = runner_with_log(&[]);
    r.on_assigned(&[tp("in/0")]);
    r.consumer
        .polls
        .push(vec![record(0, 0), record(0, 1), record(0, 2)]);
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 3)]));
    // The broker starts injecting epoch 1; records keep arriving before the cut is published.
    append_injection(&log, 1);
    r.consumer.polls.push(vec![record(0, 3), record(0, 4)]);
    assert_eq!(
        r.run_once().unwrap(),
        BTreeMap::new(),
        "held, not processed"
    );
    assert_eq!(count(&r, 0), 3);
    let notices = r.take_notices();
    assert!(notices[0].starts_with("barrier epoch 1 of group audit is being injected"));
    assert_eq!(notices[1], "holding in-0 from offset 3 for barrier epoch 1");
    // The cut puts the marker at offset 3: nothing was processed past it.
    append_cut(
        &log,
        1,
        CutStatus::Complete,
        &BTreeMap::from([(tp("in/0"), 3)]),
    );
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 3)]));
    assert_eq!(barrier_saves(&r), [(0, 1)]);
    assert_eq!(r.store.data[&(0, 1)], counter_state(3));
    assert!(r.take_warnings().is_empty(), "not late");
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 5)]));
    assert_eq!(count(&r, 0), 5);
}

#[test]
fn without_the_announcement_the_same_caught_up_runner_is_late() {
    let (mut r, log) = runner_with_log(&[]);
    r.on_assigned(&[tp("in/0")]);
    r.consumer
        .polls
        .push(vec![record(0, 0), record(0, 1), record(0, 2)]);
    r.run_once().unwrap();
    r.consumer.polls.push(vec![record(0, 3), record(0, 4)]);
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 5)]));
    append_cut(
        &log,
        1,
        CutStatus::Complete,
        &BTreeMap::from([(tp("in/0"), 3)]),
    );
    r.run_once().unwrap();
    assert!(barrier_saves(&r).is_empty());
    assert_eq!(
        r.take_warnings(),
        ["barrier epoch 1 began after in-0 passed offset 3"]
    );
}

#[test]
fn a_runner_exactly_at_the_cut_offset_is_aligned_not_late() {
    let (mut r, log) = runner_with_log(&[]);
    r.on_assigned(&[tp("in/0")]);
    r.consumer.committed = BTreeMap::from([(tp("in/0"), 3)]);
    r.consumer.positions = Some(BTreeMap::from([(tp("in/0"), 3)]));
    r.run_once().unwrap();
    append_cut(
        &log,
        1,
        CutStatus::Complete,
        &BTreeMap::from([(tp("in/0"), 3)]),
    );
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 3)]));
    assert_eq!(barrier_saves(&r), [(0, 1)]);
    assert!(r.take_warnings().is_empty());
}

#[test]
fn an_announced_cut_that_ends_partial_releases_the_held_records() {
    let (mut r, log) = runner_with_log(&[]);
    r.on_assigned(&[tp("in/0")]);
    append_injection(&log, 1);
    r.consumer.polls.push(vec![record(0, 0), record(0, 1)]);
    assert_eq!(r.run_once().unwrap(), BTreeMap::new());
    append_cut(
        &log,
        1,
        CutStatus::Partial,
        &BTreeMap::from([(tp("in/0"), 1)]),
    );
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 2)]));
    assert_eq!(count(&r, 0), 2);
    assert!(barrier_saves(&r).is_empty());
}

#[test]
fn an_announced_cut_stops_holding_after_the_hold_limit_with_a_warning() {
    let (mut r, log) = runner_with_log(&[]);
    r.barrier.as_mut().unwrap().hold_limit = Duration::ZERO;
    r.on_assigned(&[tp("in/0"), tp("other/0")]);
    append_injection(&log, 1);
    r.consumer.polls.push(vec![record(0, 0)]);
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp("in/0"), 1)]));
    assert_eq!(
        r.take_warnings(),
        [
            "barrier epoch 1 of group audit: no cut was published within 0ns of its injection \
             start; its partitions' records are processed again"
        ]
    );
}

#[test]
fn a_restart_skips_the_cuts_the_group_had_passed_with_one_notice_and_aligns_on_the_next() {
    let at = |o| BTreeMap::from([(tp("in/0"), o)]);
    let (mut r, log) = runner_with_log(&[
        (1, CutStatus::Complete, at(2), vec![]),
        (2, CutStatus::Complete, at(4), vec![]),
        (3, CutStatus::Complete, at(6), vec![]),
        (4, CutStatus::Complete, at(11), vec![]),
    ]);
    r.consumer.committed = at(10);
    r.on_assigned(&[tp("in/0")]);
    r.consumer.polls.push(vec![record(0, 10), record(0, 11)]);
    assert_eq!(r.run_once().unwrap(), at(11));
    assert_eq!(
        r.take_notices(),
        [
            "barrier group audit: the consumer group had committed past 3 complete cut(s) up \
             to epoch 3 before this run started; they get no snapshot, alignment begins with the \
             next cut"
        ]
    );
    assert!(
        r.take_warnings().is_empty(),
        "no old epoch is reported late"
    );
    assert_eq!(barrier_saves(&r), [(0, 4)], "epoch 4 is aligned");
    assert_eq!(r.store.data[&(0, 4)], counter_state(1));
    append_cut(&log, 5, CutStatus::Complete, &at(12));
    assert_eq!(r.run_once().unwrap(), at(12));
    assert_eq!(barrier_saves(&r), [(0, 4), (0, 5)]);
}
