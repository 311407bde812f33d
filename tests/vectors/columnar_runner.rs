//! Runner and driver vectors (`columnar.json`: COL-RUNNER-*, COL-DRIVER-EMPTY) run
//! through the real `GroupRunner` and `TopologyDriver` over a fake consumer, producer
//! and state store (no broker is needed to show what the runner asks of them), with
//! every expected value read from the vector.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use krabka_streams::engine::columnar::headers::Header;
use krabka_streams::engine::columnar::ipc;
use krabka_streams::engine::columnar::runner::group::{
    Consumer, GroupRunner, Producer, RunnerError, StateStore, TopicPartition,
};
use krabka_streams::engine::columnar::topology::driver::{DriverError, TopologyDriver};
use krabka_streams::engine::columnar::topology::spec::ErrorPolicy;
use krabka_streams::engine::columnar::topology::{
    BatchCodec, BuiltTopology, CodecError, OutRecord, Record, Topology,
};
use serde_json::Value;

use crate::columnar_ops::{ArrowValues, sum_count, value};

#[derive(Default)]
struct FakeConsumer {
    polls: Vec<Vec<Record>>,
    commits: Vec<BTreeMap<TopicPartition, i64>>,
    seeks: Vec<(TopicPartition, i64)>,
}

impl Consumer for FakeConsumer {
    type GroupMetadata = ();

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
}

#[derive(Default)]
struct FakeProducer {
    sent: Vec<(String, OutRecord)>,
}

impl Producer for FakeProducer {
    type GroupMetadata = ();

    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError> {
        self.sent.push((topic.to_owned(), record.clone()));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
}

#[derive(Default)]
struct FakeStore {
    loads: Vec<(i32, i64)>,
    saves: Vec<(i32, i64)>,
}

impl StateStore for FakeStore {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        self.loads.push((partition, epoch));
        Ok(BTreeMap::new())
    }
    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        _state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        self.saves.push((partition, epoch));
        Ok(())
    }
}

/// A codec whose every decode is a retriable failure (a writer schema being fetched).
#[derive(Debug)]
struct PendingCodec;

impl BatchCodec for PendingCodec {
    fn decode(&self, _topic: &str, _records: &[Record]) -> Result<RecordBatch, CodecError> {
        Err(CodecError {
            message: "writer schema for id 7 is pending fetch".into(),
            retriable: true,
        })
    }
    fn encode(&self, _topic: &str, _batch: &RecordBatch) -> Result<Vec<OutRecord>, CodecError> {
        Ok(Vec::new())
    }
    fn name(&self) -> String {
        "pending".into()
    }
}

/// Source `in` → group-by user (sum, count) → sink `out`.
fn totals(codec: Arc<dyn BatchCodec>) -> BuiltTopology {
    let mut t = Topology::new();
    let source = t
        .add_source("source", vec!["in".into()], codec.clone())
        .unwrap();
    let g = t
        .add_operator("totals", Arc::new(sum_count()), source)
        .unwrap();
    t.add_sink("sink", "out", codec, g).unwrap();
    t.build().unwrap()
}

type Runner = GroupRunner<FakeConsumer, FakeProducer, FakeStore>;

fn runner(codec: Arc<dyn BatchCodec>, policy: ErrorPolicy) -> Runner {
    GroupRunner::new(
        totals(codec),
        FakeConsumer::default(),
        FakeProducer::default(),
        FakeStore::default(),
        policy,
    )
}

fn input(value: Vec<u8>, partition: i32, offset: i64, headers: Vec<Header>) -> Record {
    Record {
        topic: "in".into(),
        partition,
        offset,
        timestamp: 1,
        key: None,
        value: Some(value),
        headers,
    }
}

fn i64_at(v: &Value, what: &str) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{what} is not an integer: {v}"))
}

/// `"in/0"` → `("in", 0)`.
fn tp_of(text: &str) -> TopicPartition {
    let (topic, partition) = text.rsplit_once('/').expect("topic/partition");
    TopicPartition::new(topic, partition.parse().unwrap())
}

fn pairs(v: &Value) -> Vec<(i32, i64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (i64_at(&p[0], "partition") as i32, i64_at(&p[1], "epoch")))
        .collect()
}

fn col_runner_partition_once(v: &Value) {
    let (i, e) = (&v["inputs"], &v["expected"]);
    let offset = i64_at(&i["offset"], "offset");
    let mut r = runner(Arc::new(ArrowValues), ErrorPolicy::Fail);
    let records: Vec<Record> = i["records_at"]
        .as_array()
        .unwrap()
        .iter()
        .map(|at| input(value(&["a", "b"], &[1, 2]), 0, i64_at(at, "offset"), vec![]))
        .collect();
    r.consumer.polls.push(records);
    let (next, result) = r.run_partition_once("in", 0, offset);
    result.unwrap();
    assert_eq!(next, i64_at(&e["returns"], "returns"));
    let tp = TopicPartition::new("in", 0);
    assert_eq!(r.consumer.seeks, [(tp.clone(), i64_at(&e["seek"], "seek"))]);
    assert_eq!(
        r.consumer.commits,
        [BTreeMap::from([(tp, i64_at(&e["commit"], "commit"))])]
    );
    let out: Vec<&OutRecord> = r
        .producer
        .sent
        .iter()
        .filter(|(t, _)| t == "out")
        .map(|(_, o)| o)
        .collect();
    assert_eq!(
        out.len() as i64,
        i64_at(&e["produced_records"], "produced_records")
    );
    let rows = ipc::read_batches(out[0].value.as_deref().unwrap())
        .unwrap()
        .1[0]
        .num_rows();
    assert_eq!(rows as i64, i64_at(&e["produced_rows"], "produced_rows"));
    // An empty poll keeps the offset it was given.
    assert_eq!(
        r.run_partition_once("in", 0, 42).0,
        i64_at(&e["empty_poll_at_42_returns"], "empty_poll_at_42_returns")
    );
}

fn col_runner_dead_letter(v: &Value) {
    let e = &v["expected"];
    let mut r = runner(
        Arc::new(ArrowValues),
        ErrorPolicy::DeadLetter {
            topic: "dlq".into(),
        },
    );
    // First a good round, so there is state a failure must leave untouched.
    r.consumer
        .polls
        .push(vec![input(value(&["a"], &[5]), 0, 0, vec![])]);
    r.run_once().unwrap();
    let before = r.topology.snapshot_partition(0).unwrap();
    r.producer.sent.clear();
    r.metrics = Default::default();
    let trace = Header {
        key: "trace-id".into(),
        value: Some(b"t-1".to_vec()),
    };
    // The failing record, in/0 @ 0 again after a rewind: no Arrow IPC.
    r.consumer.polls.push(vec![input(
        b"not arrow".to_vec(),
        0,
        0,
        vec![trace.clone()],
    )]);
    let committed = r.run_once().unwrap();
    let want: BTreeMap<TopicPartition, i64> = e["commit"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, o)| (tp_of(k), i64_at(o, "commit")))
        .collect();
    assert_eq!(committed, want);
    let dlq: Vec<&OutRecord> = r
        .producer
        .sent
        .iter()
        .filter(|(t, _)| t == "dlq")
        .map(|(_, o)| o)
        .collect();
    assert_eq!(dlq.len() as i64, i64_at(&e["dlq_records"], "dlq_records"));
    assert_eq!(
        r.producer.sent.len(),
        dlq.len(),
        "the failed batch's outputs are dropped"
    );
    let keeps: Vec<&str> = e["dlq_keeps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(
        keeps,
        ["value", "trace-id header"],
        "the vector names what this check checks"
    );
    assert_eq!(dlq[0].value.as_deref(), Some(&b"not arrow"[..]));
    assert_eq!(dlq[0].headers[0], trace);
    let metrics = &e["metrics"];
    assert_eq!(
        [
            r.metrics.batches,
            r.metrics.input_records,
            r.metrics.failures,
            r.metrics.dead_letter_records
        ],
        ["Batches", "InputRecords", "Failures", "DeadLetterRecords"]
            .map(|m| i64_at(&metrics[m], m) as u64)
    );
    assert_eq!(e["state"], "rolled back");
    assert_eq!(
        r.topology.snapshot_partition(0).unwrap(),
        before,
        "state rolled back"
    );
}

fn col_runner_retriable(v: &Value) {
    let e = &v["expected"];
    // Even under skip, a retriable error fails the round.
    let mut r = runner(Arc::new(PendingCodec), ErrorPolicy::Skip);
    r.consumer
        .polls
        .push(vec![input(value(&["a"], &[1]), 0, 0, vec![])]);
    let result = r.run_once();
    assert_eq!(result.is_err(), e["returns_error"].as_bool().unwrap());
    assert!(result.unwrap_err().retriable);
    assert_eq!(
        r.producer.sent.len() as i64,
        i64_at(&e["produced"], "produced")
    );
    assert_eq!(
        r.consumer.commits.len() as i64,
        i64_at(&e["committed"], "committed")
    );
}

fn col_runner_rebalance(v: &Value) {
    let e = &v["expected"];
    let mut r = runner(Arc::new(ArrowValues), ErrorPolicy::Fail);
    let loads = pairs(&e["loads"]);
    let tp = TopicPartition::new("in", loads[0].0);
    r.on_assigned(std::slice::from_ref(&tp));
    r.on_revoked(&[tp]);
    assert_eq!(r.store.loads, loads);
    assert_eq!(r.store.saves, pairs(&e["saves"]));
    assert!(
        !r.topology.has_partition(loads[0].0),
        "a revoked partition is released"
    );
}

fn col_driver_empty(v: &Value) {
    let topic = v["inputs"]["topic"].as_str().unwrap();
    let message = v["expected"]["error_message"].as_str().unwrap();
    let mut driver = TopologyDriver::new(totals(Arc::new(ArrowValues)));
    let err = driver.read_output(topic).unwrap_err();
    assert_eq!(err, DriverError::NoOutput(topic.to_owned()));
    assert_eq!(err.to_string(), message);
    // One record in, one out, then the queue is empty again.
    let records = BTreeMap::from([(
        "in".to_owned(),
        vec![input(value(&["a"], &[3]), 0, 0, vec![])],
    )]);
    driver.pipe(&records).unwrap();
    assert!(driver.read_output(topic).is_ok());
    assert_eq!(driver.read_output(topic).unwrap_err().to_string(), message);
}

/// The checks of this file by vector id; `columnar.rs` runs each on its vector as read
/// from `columnar.json`.
pub(crate) const CHECKS: crate::support::Checks = &[
    ("COL-RUNNER-PARTITION-ONCE", col_runner_partition_once),
    ("COL-RUNNER-DEAD-LETTER", col_runner_dead_letter),
    ("COL-RUNNER-RETRIABLE", col_runner_retriable),
    ("COL-RUNNER-REBALANCE", col_runner_rebalance),
    ("COL-DRIVER-EMPTY", col_driver_empty),
];
