//! COL-TOPOLOGY and COL-JOIN over a minimal Arrow-value codec (one IPC stream
//! per record value), standing in for the `tail` codecs.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch};
use arrow_schema::{FieldRef, Schema};

use super::*;
use crate::engine::columnar::expr::ParsedExpr;
use crate::engine::columnar::headers::encode_headers;
use crate::engine::columnar::ipc;
use crate::engine::columnar::metadata::{is_reserved, reserved_fields};
use crate::engine::columnar::ops::join::{JoinSpec, ipc_stream};
use crate::engine::columnar::ops::stateless::Filter;
use crate::engine::columnar::ops::testing::{int64s, transactions};

#[derive(Debug)]
pub(crate) struct IpcValueCodec;

impl BatchCodec for IpcValueCodec {
    fn decode(&self, _topic: &str, records: &[Record]) -> Result<RecordBatch, CodecError> {
        let mut payloads = Vec::new();
        let (mut keys, mut ts, mut parts, mut offsets, mut headers) =
            (vec![], vec![], vec![], vec![], vec![]);
        for r in records {
            let (_, batches) = ipc::read_batches(r.value.as_deref().unwrap_or_default())
                .map_err(|e| CodecError::new(e.to_string()))?;
            for b in batches {
                for _ in 0..b.num_rows() {
                    keys.push(r.key.clone());
                    ts.push(r.timestamp);
                    parts.push(r.partition);
                    offsets.push(r.offset);
                    headers.push(encode_headers(&r.headers));
                }
                payloads.push(b);
            }
        }
        let payload = arrow::compute::concat_batches(&payloads[0].schema(), &payloads)
            .map_err(|e| CodecError::new(e.to_string()))?;
        let mut fields: Vec<FieldRef> = payload.schema().fields().iter().cloned().collect();
        fields.extend(reserved_fields());
        let mut columns = payload.columns().to_vec();
        columns.push(Arc::new(BinaryArray::from(
            keys.iter().map(|k| k.as_deref()).collect::<Vec<_>>(),
        )) as ArrayRef);
        columns.push(Arc::new(Int64Array::from(ts)));
        columns.push(Arc::new(Int32Array::from(parts)));
        columns.push(Arc::new(Int64Array::from(offsets)));
        columns.push(Arc::new(BinaryArray::from_iter_values(headers.iter())));
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| CodecError::new(e.to_string()))
    }

    fn encode(&self, _topic: &str, batch: &RecordBatch) -> Result<Vec<OutRecord>, CodecError> {
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|i| !is_reserved(batch.schema().field(*i).name()))
            .collect();
        let payload = batch
            .project(&keep)
            .map_err(|e| CodecError::new(e.to_string()))?;
        Ok(vec![OutRecord {
            value: Some(ipc_stream(&payload).map_err(|e| CodecError::new(e.message))?),
            ..Default::default()
        }])
    }

    fn name(&self) -> String {
        "arrow".into()
    }
}

fn payload(users: &[&str], amounts: &[i64]) -> Vec<u8> {
    let batch = transactions(users, amounts, &vec![0; users.len()], 0);
    ipc_stream(&batch.project(&[0, 1]).unwrap()).unwrap()
}

fn record(value: Vec<u8>, timestamp: i64, partition: i32) -> Record {
    Record {
        topic: String::new(),
        partition,
        offset: 0,
        timestamp,
        key: None,
        value: Some(value),
        headers: Vec::new(),
    }
}

fn codec() -> Arc<dyn BatchCodec> {
    Arc::new(IpcValueCodec)
}

fn decode_value(produced: &Produced) -> RecordBatch {
    ipc::read_batches(produced.record.value.as_deref().unwrap())
        .unwrap()
        .1
        .remove(0)
}

#[test]
fn fan_out_reaches_every_sink_and_the_topology_is_reusable() {
    let mut t = Topology::new();
    let source = t.add_source("source", vec!["in".into()], codec()).unwrap();
    let filter = Filter::new(ParsedExpr::parse("amount > 4", false).unwrap());
    let f = t.add_operator("filter", Arc::new(filter), source).unwrap();
    t.add_sink("first", "out-a", codec(), f).unwrap();
    t.add_sink("second", "out-b", codec(), f).unwrap();
    let mut built = t.build().unwrap();
    let input = BTreeMap::from([(
        "in".to_owned(),
        vec![record(payload(&["a", "b", "c"], &[1, 5, 9]), 7, 0)],
    )]);
    let first = built.run_records(&input).unwrap();
    let topics: Vec<&str> = first.iter().map(|p| p.topic.as_str()).collect();
    assert_eq!(topics, ["out-a", "out-b"]);
    assert_eq!(decode_value(&first[0]).num_rows(), 2);
    assert_eq!(built.run_records(&input).unwrap().len(), 2, "reusable");
    let other = BTreeMap::from([("other".to_owned(), input["in"].clone())]);
    assert!(
        built.run_records(&other).unwrap().is_empty(),
        "an undeclared topic produces nothing"
    );
}

#[test]
fn merge_concatenates_and_pass_through_copies_bytes() {
    let mut t = Topology::new();
    let l = t
        .add_source("left", vec!["in-left".into()], codec())
        .unwrap();
    let r = t
        .add_source("right", vec!["in-right".into()], codec())
        .unwrap();
    let m = t.add_merge("merge", &[l, r]).unwrap();
    t.add_sink("sink", "out", codec(), m).unwrap();
    let mut built = t.build().unwrap();
    let value = payload(&["a"], &[1]);
    let out = built
        .run_records(&BTreeMap::from([
            ("in-left".to_owned(), vec![record(value.clone(), 1, 0)]),
            ("in-right".to_owned(), vec![record(value, 1, 0)]),
        ]))
        .unwrap();
    assert_eq!(decode_value(&out[0]).num_rows(), 2);

    let mut t = Topology::new();
    let raw = t.add_source("raw", vec!["raw-in".into()], codec()).unwrap();
    t.add_pass_through_sink("copy", "raw-out", raw).unwrap();
    let mut built = t.build().unwrap();
    let out = built
        .run_records(&BTreeMap::from([(
            "raw-in".to_owned(),
            vec![record(vec![1, 2, 3], 4, 0)],
        )]))
        .unwrap();
    assert_eq!(
        out[0].record.value.as_deref(),
        Some(&[1u8, 2, 3][..]),
        "bytes untouched, never decoded"
    );
}

#[test]
fn validation_messages_follow_the_builder() {
    assert!(
        Topology::new().build().is_err(),
        "an empty topology does not build"
    );
    let mut t = Topology::new();
    let s = t.add_source("same", vec!["in".into()], codec()).unwrap();
    t.add_sink("same", "out", codec(), s).unwrap();
    assert_eq!(t.build().unwrap_err().message, "duplicate node name `same`");
    let mut other = Topology::new();
    let foreign = other
        .add_source("foreign", vec!["in".into()], codec())
        .unwrap();
    assert_eq!(
        t.add_sink("x", "out", codec(), foreign)
            .unwrap_err()
            .message,
        "parent is not a node in this topology"
    );
    assert_eq!(
        t.add_merge("m", &[s]).unwrap_err().message,
        "a merge needs at least two parents"
    );
    assert_eq!(
        t.add_join(
            "j",
            JoinSpec::new("user", "user", 0, None, None).unwrap(),
            s,
            s
        )
        .unwrap_err()
        .message,
        "a join needs two different parents"
    );
    let sink = t.add_sink("sink2", "out", codec(), s).unwrap();
    assert_eq!(
        t.add_pass_through_sink("p", "out", sink)
            .unwrap_err()
            .message,
        "a pass-through sink must be attached directly to a source"
    );
    assert_eq!(
        t.add_source("s", vec![], codec()).unwrap_err().message,
        "a source needs at least one topic"
    );
    assert_eq!(
        JoinSpec::new("a", "b", -1, None, None).unwrap_err().message,
        "window must not be negative"
    );
    assert_eq!(
        JoinSpec::new("a", "b", 500_000, None, None)
            .unwrap_err()
            .message,
        "window must use millisecond precision"
    );
    assert_eq!(t.source_topics(), ["in"]);
}

fn join_topology() -> Topology {
    let mut t = Topology::new();
    let l = t.add_source("left", vec!["left".into()], codec()).unwrap();
    let r = t
        .add_source("right", vec!["right".into()], codec())
        .unwrap();
    let spec = JoinSpec::new("user", "user", 10_000_000, None, None).unwrap();
    let j = t.add_join("join", spec, l, r).unwrap();
    t.add_sink("sink", "out", codec(), j).unwrap();
    t
}

#[test]
fn a_join_restores_into_a_new_build_and_keeps_partitions_apart() {
    // COL-JOIN
    let t = join_topology();
    let mut built = t.build().unwrap();
    let left = BTreeMap::from([(
        "left".to_owned(),
        vec![record(payload(&["a"], &[5]), 100, 0)],
    )]);
    assert!(
        built.run_records(&left).unwrap().is_empty(),
        "left alone matches nothing"
    );
    let snapshot = built.snapshot_partition(0).unwrap();
    assert!(
        snapshot["join"].starts_with(&[0, 0, 0, 1]),
        "join layout version 1"
    );

    let mut restored = t.build().unwrap();
    restored.restore_partition(0, &snapshot).unwrap();
    let right = |p| {
        BTreeMap::from([(
            "right".to_owned(),
            vec![record(payload(&["a"], &[9]), 105, p)],
        )])
    };
    assert!(
        restored.run_records(&right(1)).unwrap().is_empty(),
        "state is per partition"
    );
    let out = restored.run_records(&right(0)).unwrap();
    assert_eq!(out.len(), 1);
    let joined = decode_value(&out[0]);
    let names: Vec<String> = joined
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        ["left_user", "left_amount", "right_user", "right_amount"]
    );
    assert_eq!(int64s(&joined, "left_amount"), [Some(5)]);
    assert_eq!(int64s(&joined, "right_amount"), [Some(9)]);
}

#[test]
fn joined_batches_carry_the_left_rows_reserved_columns() {
    let spec = JoinSpec::new("user", "user", 10_000_000, None, None).unwrap();
    let mut join = spec.instantiate();
    let left = transactions(&["a", "b"], &[1, 2], &[100, 100], 0);
    let right = transactions(&["b", "a", "a"], &[10, 20, 30], &[150, 105, 200], 0);
    let out = join.process_sides(&[left], &[right]).unwrap();
    assert_eq!(out.len(), 1);
    let names: Vec<String> = out[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "left_user",
            "left_amount",
            "right_user",
            "right_amount",
            "__key",
            "__timestamp",
            "__partition",
            "__offset",
            "__headers"
        ]
    );
    assert_eq!(
        int64s(&out[0], "right_amount"),
        [Some(20)],
        "only a within 10 ms"
    );
    assert_eq!(int64s(&out[0], "__timestamp"), [Some(100)]);
    let collide = JoinSpec::new("user", "user", 0, Some("x".into()), Some("x".into())).unwrap();
    let err = collide
        .output_schema(
            &transactions(&["a"], &[1], &[1], 0).schema(),
            &transactions(&["a"], &[1], &[1], 0).schema(),
        )
        .unwrap_err();
    assert_eq!(err.message, "joined Arrow column name collides: xuser");
}

#[test]
fn partition_snapshots_name_every_operator_and_stateless_ones_refuse_state() {
    let mut t = Topology::new();
    let s = t.add_source("source", vec!["in".into()], codec()).unwrap();
    let filter = Filter::new(ParsedExpr::parse("amount > 0", false).unwrap());
    let f = t.add_operator("filter", Arc::new(filter), s).unwrap();
    t.add_sink("sink", "out", codec(), f).unwrap();
    let mut built = t.build().unwrap();
    assert!(
        built.snapshot_partition(3).unwrap().is_empty(),
        "untouched partition"
    );
    built
        .run_records(&BTreeMap::from([(
            "in".to_owned(),
            vec![record(payload(&["a"], &[1]), 1, 3)],
        )]))
        .unwrap();
    let snapshot = built.snapshot_partition(3).unwrap();
    assert_eq!(
        snapshot,
        BTreeMap::from([("filter".to_owned(), Vec::new())])
    );
    let err = built
        .restore_partition(3, &BTreeMap::from([("filter".to_owned(), vec![1])]))
        .unwrap_err();
    assert_eq!(
        err.message,
        "cannot restore state into a stateless operator"
    );
    built
        .restore_partition(3, &BTreeMap::from([("unknown".to_owned(), vec![1])]))
        .unwrap();
    built.release_partition(3);
    assert!(!built.has_partition(3));
}

#[test]
fn a_filter_read_by_a_sink_forwards_its_copy_and_one_read_by_a_group_by_only_its_selection_alike() {
    use crate::engine::columnar::ops::group_by::{AggFunc, Aggregation, GroupBy};
    let build = |with_kept_sink: bool| {
        let mut t = Topology::new();
        let source = t.add_source("source", vec!["in".into()], codec()).unwrap();
        let filter = Filter::new(ParsedExpr::parse("amount > 4", false).unwrap());
        let f = t.add_operator("filter", Arc::new(filter), source).unwrap();
        let sum = Aggregation {
            input: "amount".into(),
            output: "total".into(),
            func: AggFunc::Sum,
            output_type: None,
        };
        let by_user = GroupBy::new(vec!["user".into()], vec![sum], None);
        let g = t.add_operator("by-user", Arc::new(by_user), f).unwrap();
        t.add_sink("totals", "out-totals", codec(), g).unwrap();
        if with_kept_sink {
            t.add_sink("kept", "out-kept", codec(), f).unwrap();
        }
        t.build().unwrap()
    };
    let input = BTreeMap::from([(
        "in".to_owned(),
        vec![
            record(payload(&["a", "b", "a", "c"], &[5, 1, 9, 7]), 7, 0),
            record(payload(&["c", "a"], &[2, 6]), 8, 0),
        ],
    )]);
    let (mut lazy, mut copied) = (build(false), build(true));
    let by_selection = lazy.run_records(&input).unwrap();
    let by_copy = copied.run_records(&input).unwrap();
    assert_eq!(by_selection.len(), 1);
    let totals = decode_value(&by_selection[0]);
    assert_eq!(totals, decode_value(&by_copy[0]));
    assert_eq!(int64s(&totals, "total"), [Some(20), Some(7)]);
    assert_eq!(by_copy[1].topic, "out-kept");
    assert_eq!(decode_value(&by_copy[1]).num_rows(), 4);
}
