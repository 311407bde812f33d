//! COL-RUNNER-* with a fake consumer, producer and state store.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::engine::columnar::ipc;
use crate::engine::columnar::ops::join::ipc_stream;
use crate::engine::columnar::ops::testing::transactions;
use crate::engine::columnar::snapshot::groupby::GroupByState;
use crate::engine::columnar::snapshot::tagged::TaggedValue;
use crate::engine::columnar::topology::tests::IpcValueCodec;
use crate::engine::columnar::topology::{BatchCodec, CodecError, Topology};

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
    refuse: Option<String>,
    reflected: Vec<BTreeMap<TopicPartition, i64>>,
    /// Every save fails with this (a broker that does not acknowledge).
    refuse_saves: Option<String>,
    /// What a load restores the input offsets to (an exactly-once Kafka store).
    restored: BTreeMap<TopicPartition, i64>,
    /// Saves go in the runner's transaction (an exactly-once Kafka store).
    transactional: bool,
}

impl StateStore for FakeStore {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        self.loads.push((partition, epoch));
        match &self.refuse {
            Some(why) => Err(RunnerError::new(why.clone())),
            None => Ok(BTreeMap::new()),
        }
    }
    fn reflect(&mut self, offsets: &BTreeMap<TopicPartition, i64>) {
        self.reflected.push(offsets.clone());
    }
    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        _state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        if let Some(why) = &self.refuse_saves {
            return Err(RunnerError::new(why.clone()));
        }
        self.saves.push((partition, epoch));
        Ok(())
    }
    fn restored_offsets(&mut self, partition: i32) -> BTreeMap<TopicPartition, i64> {
        self.restored
            .iter()
            .filter(|(tp, _)| tp.partition == partition)
            .map(|(tp, o)| (tp.clone(), *o))
            .collect()
    }
    fn saves_in_transaction(&self) -> bool {
        self.transactional
    }
}

#[derive(Debug)]
struct PendingCodec;

impl BatchCodec for PendingCodec {
    fn decode(
        &self,
        _topic: &str,
        _records: &[Record],
    ) -> Result<arrow_array::RecordBatch, CodecError> {
        Err(CodecError {
            message: "writer schema for id 7 is pending fetch".into(),
            retriable: true,
        })
    }
    fn encode(
        &self,
        _topic: &str,
        _batch: &arrow_array::RecordBatch,
    ) -> Result<Vec<OutRecord>, CodecError> {
        Ok(Vec::new())
    }
    fn name(&self) -> String {
        "pending".into()
    }
}

fn runner(
    codec: Arc<dyn BatchCodec>,
    policy: ErrorPolicy,
) -> GroupRunner<FakeConsumer, FakeProducer, FakeStore> {
    GroupRunner::new(
        topology(codec),
        FakeConsumer::default(),
        FakeProducer::default(),
        FakeStore::default(),
        policy,
    )
}

/// Source `in` → group-by `user` with `sum(amount) AS total` → sink `out`, and a pass-through sink `copy`.
fn topology(codec: Arc<dyn BatchCodec>) -> crate::engine::columnar::topology::BuiltTopology {
    let mut t = Topology::new();
    let source = t
        .add_source("source", vec!["in".into()], codec.clone())
        .unwrap();
    let group = crate::engine::columnar::ops::group_by::GroupBy::new(
        vec!["user".into()],
        vec![crate::engine::columnar::ops::group_by::Aggregation {
            input: "amount".into(),
            output: "total".into(),
            func: crate::engine::columnar::ops::group_by::AggFunc::Sum,
            output_type: None,
        }],
        None,
    );
    let g = t.add_operator("totals", Arc::new(group), source).unwrap();
    t.add_sink("sink", "out", codec.clone(), g).unwrap();
    t.add_pass_through_sink("copy", "copy", source).unwrap();
    t.build().unwrap()
}

fn orders(users: &[&str], amounts: &[i64]) -> Vec<u8> {
    ipc_stream(
        &transactions(users, amounts, &vec![0; users.len()], 0)
            .project(&[0, 1])
            .unwrap(),
    )
    .unwrap()
}

fn record(value: Vec<u8>, partition: i32, offset: i64) -> Record {
    Record {
        topic: "in".into(),
        partition,
        offset,
        timestamp: 1,
        key: None,
        value: Some(value),
        headers: vec![Header {
            key: "trace-id".into(),
            value: Some(b"t-1".to_vec()),
        }],
    }
}

#[test]
fn run_partition_once_commits_past_the_record_and_an_empty_poll_keeps_the_offset() {
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    r.consumer
        .polls
        .push(vec![record(orders(&["a", "b"], &[1, 2]), 0, 100)]);
    let (next, result) = r.run_partition_once("in", 0, 100);
    result.unwrap();
    assert_eq!(next, 101);
    assert_eq!(r.consumer.seeks, [(TopicPartition::new("in", 0), 100)]);
    assert_eq!(
        r.consumer.commits,
        [BTreeMap::from([(TopicPartition::new("in", 0), 101)])]
    );
    let out: Vec<&OutRecord> = r
        .producer
        .sent
        .iter()
        .filter(|(t, _)| t == "out")
        .map(|(_, rec)| rec)
        .collect();
    assert_eq!(out.len(), 1);
    let rows = ipc::read_batches(out[0].value.as_deref().unwrap())
        .unwrap()
        .1[0]
        .num_rows();
    assert_eq!(rows, 2);
    assert_eq!(r.run_partition_once("in", 0, 42).0, 42);
}

fn dead_letter_policy() -> ErrorPolicy {
    ErrorPolicy::DeadLetter {
        topic: "dlq".into(),
    }
}

/// [`runner`] with one poll: a record on partition 0 at `offset` that is no Arrow IPC.
fn junk_runner(
    policy: ErrorPolicy,
    offset: i64,
) -> GroupRunner<FakeConsumer, FakeProducer, FakeStore> {
    let mut r = runner(Arc::new(IpcValueCodec), policy);
    r.consumer
        .polls
        .push(vec![record(b"not arrow".to_vec(), 0, offset)]);
    r
}

#[test]
fn dead_letter_commits_past_the_failure_keeps_the_record_and_rolls_state_back() {
    let mut r = junk_runner(dead_letter_policy(), 0);
    let committed = r.run_once().unwrap();
    assert_eq!(
        committed,
        BTreeMap::from([(TopicPartition::new("in", 0), 1)])
    );
    let dlq: Vec<&OutRecord> = r
        .producer
        .sent
        .iter()
        .filter(|(t, _)| t == "dlq")
        .map(|(_, rec)| rec)
        .collect();
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].value.as_deref(), Some(&b"not arrow"[..]));
    assert_eq!(dlq[0].headers[0].key, "trace-id");
    let keys: Vec<&str> = dlq[0].headers.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(
        keys[1..],
        [
            "krabka.error.class",
            "krabka.error.message",
            "krabka.source.topic",
            "krabka.source.partition",
            "krabka.source.offset"
        ]
    );
    assert_eq!(
        (
            r.metrics.batches,
            r.metrics.input_records,
            r.metrics.failures,
            r.metrics.dead_letter_records
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(
        r.producer.sent.len(),
        1,
        "the failed partition's outputs are dropped"
    );
    assert!(
        r.topology.snapshot_partition(0).unwrap()["totals"].ends_with(&[0, 0, 0, 0]),
        "no group left behind"
    );
}

#[test]
fn a_retriable_error_fails_the_poll_without_producing_or_committing() {
    let mut r = runner(Arc::new(PendingCodec), ErrorPolicy::Skip);
    r.consumer
        .polls
        .push(vec![record(orders(&["a"], &[1]), 0, 0)]);
    let err = r.run_once().unwrap_err();
    assert!(err.retriable);
    assert!(r.producer.sent.is_empty());
    assert!(r.consumer.commits.is_empty());
}

#[test]
fn the_fail_policy_rolls_back_every_partition_of_the_round() {
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    r.consumer.polls.push(vec![
        record(orders(&["a"], &[5]), 0, 0),
        record(b"junk".to_vec(), 1, 0),
    ]);
    assert!(r.run_once().is_err());
    assert!(r.producer.sent.is_empty() && r.consumer.commits.is_empty());
    r.consumer
        .polls
        .push(vec![record(orders(&["a"], &[5]), 0, 0)]);
    r.run_once().unwrap();
    let out = r.producer.sent.iter().find(|(t, _)| t == "out").unwrap();
    let batch = ipc::read_batches(out.1.value.as_deref().unwrap())
        .unwrap()
        .1
        .remove(0);
    assert_eq!(
        crate::engine::columnar::ops::testing::int64s(&batch, "total"),
        [Some(5)],
        "partition 0 was rolled back"
    );
}

#[test]
fn a_rebalance_loads_and_saves_live_state() {
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    let tp = TopicPartition::new("in", 3);
    r.on_assigned(std::slice::from_ref(&tp));
    r.on_revoked(&[tp]);
    assert_eq!(r.store.loads, [(3, LIVE_EPOCH)]);
    assert_eq!(r.store.saves, [(3, LIVE_EPOCH)]);
    assert!(!r.topology.has_partition(3));
}

#[test]
fn a_state_that_cannot_be_loaded_on_assignment_fails_the_next_round_before_it_polls() {
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    r.store.refuse = Some("load partition 3 state: it holds the state of another group".into());
    r.consumer.polls = vec![vec![record(orders(&["a"], &[5]), 3, 0)]];
    r.on_assigned(&[TopicPartition::new("in", 3)]);
    let e = r.run_once().unwrap_err();
    assert_eq!(
        e.message,
        "load partition 3 state: it holds the state of another group"
    );
    assert!(!e.retriable);
    assert_eq!(r.consumer.polls.len(), 1, "nothing was polled");
    assert!(r.consumer.commits.is_empty() && r.producer.sent.is_empty());
}

#[test]
fn saving_each_round_stores_every_partition_the_round_processed() {
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    r.save_each_round = true;
    r.consumer.polls = vec![vec![
        record(orders(&["a"], &[5]), 1, 0),
        record(orders(&["b"], &[7]), 2, 0),
    ]];
    r.run_once().unwrap();
    assert_eq!(r.store.saves, [(1, LIVE_EPOCH), (2, LIVE_EPOCH)]);
    assert_eq!(r.consumer.commits.len(), 1);
    // The store learnt what the saved state reflects.
    assert_eq!(r.store.reflected, [r.consumer.commits[0].clone()]);
}

/// Partition 0's state bytes.
fn state_of(r: &GroupRunner<FakeConsumer, FakeProducer, FakeStore>) -> BTreeMap<String, Vec<u8>> {
    r.topology.snapshot_partition(0).unwrap()
}

/// 500 users on partition 0 at offset 0: the state a later round touches a little of.
fn many_users() -> (Vec<String>, Vec<i64>) {
    ((0..500).map(|u| format!("u{u:03}")).collect(), vec![3; 500])
}

#[test]
fn a_round_that_fails_after_touching_a_group_restores_exactly_the_bytes_it_started_from() {
    let (users, amounts) = many_users();
    let users: Vec<&str> = users.iter().map(String::as_str).collect();
    for save_each_round in [false, true] {
        let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
        r.save_each_round = save_each_round;
        r.consumer.polls = vec![
            vec![record(orders(&users, &amounts), 0, 0)],
            // Touches u007 (3 -> 1000003, longer bytes) and creates a group, then
            // partition 1 fails: the whole round rolls back.
            vec![
                record(orders(&["u007", "new"], &[1_000_000, 1]), 0, 1),
                record(b"junk".to_vec(), 1, 0),
            ],
        ];
        r.run_once().unwrap();
        r.drain().unwrap();
        let before = state_of(&r);
        assert!(r.run_once().is_err());
        assert_eq!(state_of(&r), before, "save_each_round {save_each_round}");
        let groups = GroupByState::decode(&before["totals"]).unwrap().groups;
        assert_eq!(groups.len(), 500, "no group left behind");
        assert_eq!(groups[7].aggregates, [TaggedValue::BigInt("3".into())]);
        // The next round starts from there: its state is what a run without
        // the failed round gives.
        r.consumer.polls = vec![vec![record(orders(&["u009"], &[4]), 0, 1)]];
        r.run_once().unwrap();
        let mut clean = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
        clean.consumer.polls = vec![
            vec![record(orders(&users, &amounts), 0, 0)],
            vec![record(orders(&["u009"], &[4]), 0, 1)],
        ];
        clean.run_once().unwrap();
        clean.run_once().unwrap();
        assert_eq!(state_of(&r), state_of(&clean));
    }
}

#[test]
fn a_save_that_fails_after_a_touched_group_restores_the_last_completed_rounds_state() {
    let (users, amounts) = many_users();
    let users: Vec<&str> = users.iter().map(String::as_str).collect();
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    r.save_each_round = true;
    r.consumer.polls = vec![
        vec![record(orders(&users, &amounts), 0, 0)],
        vec![record(orders(&["u100"], &[7]), 0, 1)],
        vec![record(orders(&["u200"], &[-2]), 0, 2)],
    ];
    r.run_once().unwrap();
    let completed = state_of(&r);
    // The round processed, its outputs went out, then the save failed: no commit.
    r.store.refuse_saves = Some("save partition 0 state: not acknowledged".into());
    let e = r.run_once().unwrap_err();
    assert!(e.message.contains("not acknowledged"), "{}", e.message);
    assert_eq!(r.consumer.commits.len(), 1);
    assert_eq!(state_of(&r), completed);
    assert_eq!(r.consumer.seeks, [(TopicPartition::new("in", 0), 1)]);
    // Read again after the rewind, the round saves and commits.
    r.store.refuse_saves = None;
    r.consumer
        .polls
        .insert(0, vec![record(orders(&["u100"], &[7]), 0, 1)]);
    r.run_once().unwrap();
    r.run_once().unwrap();
    let mut clean = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    clean.consumer.polls = vec![
        vec![record(orders(&users, &amounts), 0, 0)],
        vec![record(orders(&["u100"], &[7]), 0, 1)],
        vec![record(orders(&["u200"], &[-2]), 0, 2)],
    ];
    for _ in 0..3 {
        clean.run_once().unwrap();
    }
    assert_eq!(state_of(&r), state_of(&clean));
    assert_eq!(r.store.saves.len(), 3);
}

mod barrier;
mod pipelined;

/// Decodes like [`IpcValueCodec`]; encodes one record per row (value: the user)
/// and refuses alone every row whose amount is above 10.
#[derive(Debug)]
struct RefusingCodec;

impl BatchCodec for RefusingCodec {
    fn decode(
        &self,
        topic: &str,
        records: &[Record],
    ) -> Result<arrow_array::RecordBatch, CodecError> {
        IpcValueCodec.decode(topic, records)
    }
    fn encode(
        &self,
        topic: &str,
        batch: &arrow_array::RecordBatch,
    ) -> Result<Vec<OutRecord>, CodecError> {
        let encoded = self.encode_rows(topic, batch)?;
        match encoded.refused.first() {
            Some(row) => Err(CodecError::new(row.message.clone())),
            None => Ok(encoded.records),
        }
    }
    fn encode_rows(
        &self,
        _topic: &str,
        batch: &arrow_array::RecordBatch,
    ) -> Result<crate::engine::columnar::topology::Encoded, CodecError> {
        use arrow_array::cast::AsArray;
        use arrow_array::types::{Int32Type, Int64Type};
        let users = batch.column_by_name("user").unwrap().as_string::<i32>();
        let amounts = batch
            .column_by_name("amount")
            .unwrap()
            .as_primitive::<Int64Type>();
        let partitions = batch
            .column_by_name("__partition")
            .unwrap()
            .as_primitive::<Int32Type>();
        let offsets = batch
            .column_by_name("__offset")
            .unwrap()
            .as_primitive::<Int64Type>();
        let mut encoded = crate::engine::columnar::topology::Encoded::default();
        for row in 0..batch.num_rows() {
            let record = OutRecord {
                key: None,
                value: Some(users.value(row).as_bytes().to_vec()),
                timestamp: 1,
                headers: Vec::new(),
            };
            if amounts.value(row) > 10 {
                encoded
                    .refused
                    .push(crate::engine::columnar::topology::RefusedRow {
                        message: format!("refused {}", users.value(row)),
                        partition: Some(partitions.value(row)),
                        offset: Some(offsets.value(row)),
                        record,
                    });
            } else {
                encoded.records.push(record);
            }
        }
        Ok(encoded)
    }
    fn name(&self) -> String {
        "refusing".into()
    }
}

/// Source `in` → sink `out` with [`RefusingCodec`]; one poll of two records on
/// partition 0: offset 5 holds users a, b (refused), c; offset 6 holds d.
fn refusing_runner(policy: ErrorPolicy) -> GroupRunner<FakeConsumer, FakeProducer, FakeStore> {
    let mut t = Topology::new();
    let codec: Arc<dyn BatchCodec> = Arc::new(RefusingCodec);
    let source = t
        .add_source("source", vec!["in".into()], codec.clone())
        .unwrap();
    t.add_sink("sink", "out", codec, source).unwrap();
    let mut r = GroupRunner::new(
        t.build().unwrap(),
        FakeConsumer::default(),
        FakeProducer::default(),
        FakeStore::default(),
        policy,
    );
    r.consumer.polls.push(vec![
        record(orders(&["a", "b", "c"], &[1, 50, 2]), 0, 5),
        record(orders(&["d"], &[3]), 0, 6),
    ]);
    r
}

fn sent_to<'a>(
    r: &'a GroupRunner<FakeConsumer, FakeProducer, FakeStore>,
    topic: &str,
) -> Vec<&'a OutRecord> {
    r.producer
        .sent
        .iter()
        .filter(|(t, _)| t == topic)
        .map(|(_, rec)| rec)
        .collect()
}

/// [`refusing_runner`]'s rows a, c and d went to `out` and b's source record
/// (offset 5) alone to `dlq`; the dead letters.
fn assert_b_alone_dead_lettered(
    r: &GroupRunner<FakeConsumer, FakeProducer, FakeStore>,
) -> Vec<&OutRecord> {
    let out: Vec<&[u8]> = sent_to(r, "out")
        .iter()
        .map(|rec| rec.value.as_deref().unwrap())
        .collect();
    assert_eq!(out, [&b"a"[..], b"c", b"d"]);
    let dlq = sent_to(r, "dlq");
    assert_eq!(dlq.len(), 1);
    assert_eq!(
        dlq[0].value.as_deref(),
        Some(&orders(&["a", "b", "c"], &[1, 50, 2])[..])
    );
    dlq
}

#[test]
fn a_sink_row_refused_alone_is_dead_lettered_as_its_source_record_and_the_batchs_other_rows_are_produced()
 {
    let mut r = refusing_runner(dead_letter_policy());
    let committed = r.run_once().unwrap();
    assert_eq!(
        committed,
        BTreeMap::from([(TopicPartition::new("in", 0), 7)])
    );
    let dlq = assert_b_alone_dead_lettered(&r);
    let header = |key: &str| {
        dlq[0]
            .headers
            .iter()
            .find(|h| h.key == key)
            .and_then(|h| h.value.clone())
            .map(|v| String::from_utf8(v).unwrap())
    };
    assert_eq!(header("trace-id").as_deref(), Some("t-1"));
    assert_eq!(header("krabka.source.offset").as_deref(), Some("5"));
    assert_eq!(
        header("krabka.error.message").as_deref(),
        Some("node `sink`: refused b")
    );
    assert_eq!(
        (
            r.metrics.output_records,
            r.metrics.failures,
            r.metrics.dead_letter_records
        ),
        (3, 1, 1)
    );
}

#[test]
fn a_sink_row_refused_alone_is_dropped_under_skip_and_fails_the_round_under_fail() {
    let mut r = refusing_runner(ErrorPolicy::Skip);
    r.run_once().unwrap();
    assert_eq!(sent_to(&r, "out").len(), 3);
    assert_eq!(r.producer.sent.len(), 3);
    assert_eq!((r.metrics.failures, r.metrics.dead_letter_records), (1, 0));

    let mut r = refusing_runner(ErrorPolicy::Fail);
    let e = r.run_once().unwrap_err();
    assert_eq!(e.message, "node `sink`: refused b");
    assert!(r.producer.sent.is_empty());
    assert!(r.consumer.commits.is_empty());
}

/// semantics §7: `RunPartitionOnce` applies no error policy (the Go and Java seams run a
/// built topology, not a runner's policy): a row the sink refuses or a batch that fails
/// restores the partition's state and answers `offset` with the error, whatever the
/// runner's policy; nothing is produced or committed.
#[test]
fn run_partition_once_fails_on_a_refused_row_or_a_failed_batch_under_every_policy() {
    let policies: [fn() -> ErrorPolicy; 3] = [
        || ErrorPolicy::Fail,
        || ErrorPolicy::Skip,
        dead_letter_policy,
    ];
    for policy in policies {
        let mut r = refusing_runner(policy());
        let (next, result) = r.run_partition_once("in", 0, 5);
        assert_eq!(result.unwrap_err().message, "node `sink`: refused b");
        assert_eq!(next, 5);
        assert!(r.producer.sent.is_empty() && r.consumer.commits.is_empty());

        let mut r = junk_runner(policy(), 3);
        let (next, result) = r.run_partition_once("in", 0, 3);
        assert!(result.is_err());
        assert_eq!(next, 3);
        assert!(r.producer.sent.is_empty() && r.consumer.commits.is_empty());
        assert!(
            r.topology.snapshot_partition(0).unwrap()["totals"].ends_with(&[0, 0, 0, 0]),
            "no group left behind"
        );
    }
}

/// A producer whose every send fails, to show a failed send rolls the partition back.
#[derive(Default)]
struct RefusingProducer;

impl Producer for RefusingProducer {
    type GroupMetadata = ();

    fn send(&mut self, _topic: &str, _record: &OutRecord) -> Result<(), RunnerError> {
        Err(RunnerError::new("broker down"))
    }
    fn flush(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
}

#[test]
fn run_partition_once_restores_state_and_keeps_the_offset_when_a_send_fails_under_any_policy() {
    let mut r = GroupRunner::new(
        topology(Arc::new(IpcValueCodec)),
        FakeConsumer::default(),
        RefusingProducer,
        FakeStore::default(),
        ErrorPolicy::Skip,
    );
    r.consumer
        .polls
        .push(vec![record(orders(&["a"], &[5]), 0, 8)]);
    let (next, result) = r.run_partition_once("in", 0, 8);
    assert_eq!(result.unwrap_err().message, "broker down");
    assert_eq!(next, 8);
    assert!(r.consumer.commits.is_empty());
    assert!(
        r.topology.snapshot_partition(0).unwrap()["totals"].ends_with(&[0, 0, 0, 0]),
        "no group left behind"
    );
}

/// A transactional producer whose commit fails with `commit`, and whose abort
/// fails with `abort` when set.
struct TxnProducer {
    commit: RunnerError,
    abort: Option<RunnerError>,
    aborts: usize,
}

impl Producer for TxnProducer {
    type GroupMetadata = ();

    fn send(&mut self, _topic: &str, _record: &OutRecord) -> Result<(), RunnerError> {
        Ok(())
    }
    fn flush(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
    fn begin_transaction(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
    fn send_offsets_to_transaction(
        &mut self,
        _offsets: &BTreeMap<TopicPartition, i64>,
        _group: Option<&()>,
    ) -> Result<(), RunnerError> {
        Ok(())
    }
    fn commit_transaction(&mut self) -> Result<(), RunnerError> {
        Err(self.commit.clone())
    }
    fn abort_transaction(&mut self) -> Result<(), RunnerError> {
        self.aborts += 1;
        self.abort.clone().map_or(Ok(()), Err)
    }
}

/// Issue 19: a fenced member rejoins instead of exiting. The runner says so
/// with `fenced`: a fenced producer or a stale group generation, and a
/// transaction it could not abort (its outcome is the broker's to tell, as
/// when Tansu times out the commit of a producer whose id was taken over);
/// not an ordinary failure whose abort went through.
#[test]
fn an_exactly_once_round_that_was_fenced_or_could_not_be_aborted_says_the_member_must_rejoin() {
    let cases = [
        (
            RunnerError::fenced(Fence::Producer, "producer fenced while committing"),
            None,
            Some(Fence::Producer),
        ),
        (
            RunnerError::new("transaction failed while committing: timed out"),
            Some(RunnerError::new("conflicting commit_transaction API call")),
            Some(Fence::Unresolved),
        ),
        (
            RunnerError::new("transaction failed while committing: the broker said no"),
            None,
            None,
        ),
    ];
    for (commit, abort, fenced) in cases {
        let mut r = GroupRunner::new(
            topology(Arc::new(IpcValueCodec)),
            FakeConsumer::default(),
            TxnProducer {
                commit: commit.clone(),
                abort,
                aborts: 0,
            },
            FakeStore::default(),
            ErrorPolicy::Fail,
        );
        r.guarantee = Guarantee::ExactlyOnce;
        r.consumer
            .polls
            .push(vec![record(orders(&["a"], &[5]), 0, 40)]);
        let err = r.run_once().unwrap_err();
        assert_eq!(err.fenced, fenced, "{err}");
        assert!(
            !err.retriable && err.message.starts_with(&commit.message),
            "{err}"
        );
        assert_eq!(r.producer.aborts, 1);
        // Rolled back and rewound either way: nothing of the round is kept.
        assert_eq!(r.consumer.seeks, [(TopicPartition::new("in", 0), 40)]);
        assert!(r.consumer.commits.is_empty());
    }
}

/// A transactional producer whose transactions all commit; keeps what was sent.
#[derive(Default)]
struct CommittingProducer {
    sent: Vec<(String, OutRecord)>,
    offsets: Vec<BTreeMap<TopicPartition, i64>>,
}

impl Producer for CommittingProducer {
    type GroupMetadata = ();

    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError> {
        self.sent.push((topic.to_owned(), record.clone()));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
    fn begin_transaction(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
    fn send_offsets_to_transaction(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        _group: Option<&()>,
    ) -> Result<(), RunnerError> {
        self.offsets.push(offsets.clone());
        Ok(())
    }
    fn commit_transaction(&mut self) -> Result<(), RunnerError> {
        Ok(())
    }
}

/// Issue #19 (wt-eosjoin19), the sequence on Tansu: member c commits the
/// transaction of in-0 records 30..=34 (outputs, state reflecting 35, offset
/// 35), then is killed with its next transaction open. Tansu applies a
/// committed transaction's offsets only once every overlapping transaction has
/// ended, so the group still says 30 when the partition is assigned again.
/// The store restores c's committed state (35); the consumer starts at 30.
/// Records 30..=34 are in that state and their outputs are committed: the
/// runner must not process them again, which output every join of them twice.
#[test]
fn an_exactly_once_partition_restored_ahead_of_the_group_commit_skips_what_the_state_holds() {
    let tp = TopicPartition::new("in", 0);
    let mut r = GroupRunner::new(
        topology(Arc::new(IpcValueCodec)),
        FakeConsumer::default(),
        CommittingProducer::default(),
        FakeStore {
            restored: BTreeMap::from([(tp.clone(), 35)]),
            transactional: true,
            ..FakeStore::default()
        },
        ErrorPolicy::Fail,
    );
    r.guarantee = Guarantee::ExactlyOnce;
    r.on_assigned(std::slice::from_ref(&tp));
    // The consumer reads from the lagging group commit: 30..=34 again, then 35.
    r.consumer.polls.push(
        (30..=35)
            .map(|o| record(orders(&["a"], &[o]), 0, o))
            .collect(),
    );
    let committed = r.run_once().unwrap();
    assert_eq!(committed, BTreeMap::from([(tp.clone(), 36)]));
    let copies = r
        .producer
        .sent
        .iter()
        .filter(|(topic, _)| topic == "copy")
        .count();
    assert_eq!(copies, 1, "only record 35 is processed");
    // Past the resume offset nothing is skipped any more (a rewound round reads 35 again).
    r.consumer
        .polls
        .push(vec![record(orders(&["a"], &[36]), 0, 36)]);
    assert_eq!(r.run_once().unwrap(), BTreeMap::from([(tp.clone(), 37)]));
    // A revoke saves nothing outside the transaction: every round's state went in its own.
    r.on_revoked(std::slice::from_ref(&tp));
    assert!(r.store.saves.is_empty(), "{:?}", r.store.saves);
}

/// At-least-once keeps its revoke save and reads every record it is given.
#[test]
fn at_least_once_ignores_restored_offsets_and_saves_on_revoke() {
    let tp = TopicPartition::new("in", 0);
    let mut r = runner(Arc::new(IpcValueCodec), ErrorPolicy::Fail);
    r.store.restored = BTreeMap::from([(tp.clone(), 35)]);
    r.on_assigned(std::slice::from_ref(&tp));
    r.consumer
        .polls
        .push(vec![record(orders(&["a"], &[1]), 0, 30)]);
    r.run_once().unwrap();
    r.drain().unwrap();
    assert_eq!(
        r.consumer.commits.last(),
        Some(&BTreeMap::from([(tp.clone(), 31)]))
    );
    r.on_revoked(std::slice::from_ref(&tp));
    assert_eq!(r.store.saves, [(0, LIVE_EPOCH)]);
}
