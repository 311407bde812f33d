//! Columnar operator, join and topology vectors (`columnar.json`: COL-OPS-*,
//! COL-JOIN, COL-TOPOLOGY), run against the engine's public API with the
//! expected values read from the vector file. The runner and driver vectors are
//! checked in `columnar_runner.rs`; `columnar.rs` runs every check on its vector.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, FieldRef, Schema};
use krabka_streams::engine::columnar::expr::ParsedExpr;
use krabka_streams::engine::columnar::ipc;
use krabka_streams::engine::columnar::metadata::{is_reserved, reserved_fields};
use krabka_streams::engine::columnar::ops::group_by::{AggFunc, Aggregation, GroupBy, Window};
use krabka_streams::engine::columnar::ops::join::{JoinSpec, ipc_stream};
use krabka_streams::engine::columnar::ops::stateless::{Filter, Select, WithColumns};
use krabka_streams::engine::columnar::ops::{Operator, Processor};
use krabka_streams::engine::columnar::topology::{
    BatchCodec, CodecError, OutRecord, Produced, Record, Topology,
};
use serde_json::Value;

/// The checks of this file by vector id; `columnar.rs` runs each on its vector as read
/// from `columnar.json`.
pub(crate) const CHECKS: crate::support::Checks = &[
    (
        "COL-OPS-FILTER",
        col_ops_filter_keeps_matching_rows_and_the_reserved_columns,
    ),
    (
        "COL-OPS-SELECT",
        col_ops_select_keeps_named_then_reserved_columns,
    ),
    (
        "COL-OPS-WITHCOLUMNS",
        col_ops_with_columns_derives_values_and_refuses_reserved_names,
    ),
    ("COL-OPS-GROUPBY", col_ops_groupby_sums_and_counts_per_user),
    (
        "COL-OPS-GROUPBY-CUMULATIVE",
        col_ops_groupby_cumulative_and_fresh_instances,
    ),
    ("COL-OPS-OVERFLOW", col_ops_overflow_is_an_error),
    (
        "COL-OPS-WINDOWED",
        col_ops_windowed_counts_restores_and_prunes,
    ),
    (
        "COL-JOIN",
        col_join_matches_across_batches_only_within_the_partition,
    ),
    (
        "COL-TOPOLOGY",
        col_topology_fan_out_merge_pass_through_and_validation,
    ),
];

/// The Go tests' `transactions` + `annotate`: user, amount, then the reserved columns.
fn transactions(users: &[&str], amounts: &[i64], timestamps: &[i64]) -> RecordBatch {
    let n = users.len();
    let mut fields: Vec<FieldRef> = vec![
        Arc::new(Field::new("user", DataType::Utf8, true)),
        Arc::new(Field::new("amount", DataType::Int64, true)),
    ];
    fields.extend(reserved_fields());
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(users.to_vec())),
        Arc::new(Int64Array::from(amounts.to_vec())),
        Arc::new(BinaryArray::from_opt_vec(vec![None; n])),
        Arc::new(Int64Array::from(timestamps.to_vec())),
        Arc::new(Int32Array::from(vec![0; n])),
        Arc::new(Int64Array::from_iter_values(0..n as i64)),
        Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
            [0u8; 4], n,
        ))),
    ];
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn one(p: &mut Box<dyn Processor>, batch: &RecordBatch) -> RecordBatch {
    let mut out = p.process(batch).unwrap();
    assert_eq!(out.len(), 1, "built-ins forward exactly one batch");
    out.remove(0)
}

fn int64s(batch: &RecordBatch, name: &str) -> Vec<i64> {
    batch
        .column_by_name(name)
        .unwrap()
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

fn filtered() -> RecordBatch {
    let filter = Filter::new(ParsedExpr::parse("amount > 4", false).unwrap());
    one(
        &mut filter.instantiate(),
        &transactions(&["a", "a", "b"], &[5, 3, 9], &[1, 2, 3]),
    )
}

fn col_ops_filter_keeps_matching_rows_and_the_reserved_columns(v: &Value) {
    let out = filtered();
    assert_eq!(
        out.num_rows() as i64,
        v["expected"]["rows"].as_i64().unwrap()
    );
    assert_eq!(
        out.schema().field(2).name(),
        v["expected"]["column_2"].as_str().unwrap()
    );
}

fn col_ops_select_keeps_named_then_reserved_columns(v: &Value) {
    let out = one(
        &mut Select::new(vec!["user".into()]).instantiate(),
        &filtered(),
    );
    assert_eq!(
        out.num_columns() as i64,
        v["expected"]["columns"].as_i64().unwrap()
    );
    assert!(out.column_by_name("amount").is_none());
    let err = Select::new(vec!["nope".into()])
        .instantiate()
        .process(&filtered())
        .unwrap_err();
    assert_eq!(err.message, "Arrow column does not exist: nope");
}

fn col_ops_with_columns_derives_values_and_refuses_reserved_names(v: &Value) {
    let op = WithColumns::new(vec![(
        "double_amount".into(),
        ParsedExpr::parse("amount * 2", true).unwrap(),
    )])
    .unwrap();
    let out = one(&mut op.instantiate(), &filtered());
    let expected: Vec<i64> = v["expected"]["double_amount"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    assert_eq!(int64s(&out, "double_amount"), expected);
    let err = WithColumns::new(vec![(
        "__key".into(),
        ParsedExpr::parse("1", true).unwrap(),
    )])
    .unwrap_err();
    assert!(
        err.message.contains("reserved metadata column"),
        "{}",
        err.message
    );
}

pub(crate) fn sum_count() -> GroupBy {
    GroupBy::new(
        vec!["user".into()],
        vec![
            Aggregation {
                input: "amount".into(),
                output: "total".into(),
                func: AggFunc::Sum,
                output_type: None,
            },
            Aggregation {
                input: "amount".into(),
                output: "count".into(),
                func: AggFunc::Count,
                output_type: None,
            },
        ],
        None,
    )
}

fn col_ops_groupby_sums_and_counts_per_user(v: &Value) {
    let out = one(
        &mut sum_count().instantiate(),
        &transactions(&["a", "a", "b"], &[5, 3, 9], &[1, 2, 3]),
    );
    let users = out.column_by_name("user").unwrap().as_string::<i32>();
    let (total, count) = (int64s(&out, "total"), int64s(&out, "count"));
    let rows = v["expected"]["rows"].as_array().unwrap();
    assert_eq!(out.num_rows(), rows.len());
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(users.value(i), row[0].as_str().unwrap());
        assert_eq!(total[i], row[1].as_i64().unwrap());
        assert_eq!(count[i], row[2].as_i64().unwrap());
    }
}

fn col_ops_groupby_cumulative_and_fresh_instances(v: &Value) {
    let batches: Vec<i64> = v["inputs"]["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[0].as_i64().unwrap())
        .collect();
    let op = sum_count();
    let mut p = op.instantiate();
    let mut last = None;
    for amount in &batches {
        last = Some(one(&mut p, &transactions(&["a"], &[*amount], &[1])));
    }
    assert_eq!(
        int64s(&last.unwrap(), "total")[0],
        v["expected"]["sum"].as_i64().unwrap()
    );
    let fresh = one(
        &mut op.instantiate(),
        &transactions(&["a"], &[batches[1]], &[1]),
    );
    assert_eq!(
        int64s(&fresh, "total")[0],
        v["expected"]["fresh_instance_after_second_batch_only"]
            .as_i64()
            .unwrap()
    );
}

fn col_ops_overflow_is_an_error(v: &Value) {
    let mut p = sum_count().instantiate();
    one(&mut p, &transactions(&["a"], &[i64::MAX], &[1]));
    let err = p.process(&transactions(&["a"], &[1], &[2])).unwrap_err();
    assert!(
        err.message
            .contains(v["expected"]["error_contains"].as_str().unwrap()),
        "{}",
        err.message
    );
}

fn col_ops_windowed_counts_restores_and_prunes(v: &Value) {
    let e = &v["expected"];
    for (i, size) in v["inputs"]["window_ms"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let size = size.as_i64().unwrap();
        let op = GroupBy::new(
            vec!["user".into()],
            vec![Aggregation {
                input: "amount".into(),
                output: "total".into(),
                func: AggFunc::Sum,
                output_type: None,
            }],
            Some(Window::new(size, None).unwrap()),
        );
        let mut p = op.instantiate();
        let first = one(&mut p, &transactions(&["a", "a"], &[5, 3], &[1, 12]));
        assert_eq!(
            first.num_rows() as i64,
            e["window_rows"][i].as_i64().unwrap()
        );
        let mut restored = op.instantiate();
        restored.restore(&p.snapshot().unwrap()).unwrap();
        let next = one(&mut restored, &transactions(&["a"], &[2], &[2]));
        assert_eq!(
            int64s(&next, "total")[0],
            e["after_restore_row_ts_2_totals"][i].as_i64().unwrap()
        );
        let far = one(&mut restored, &transactions(&["a"], &[1], &[100]));
        assert_eq!(
            far.num_rows() as i64,
            e["row_ts_100_keeps"].as_i64().unwrap()
        );
        let later = one(&mut restored, &transactions(&["a"], &[1], &[101]));
        assert_eq!(
            later.num_rows() as i64,
            e["row_ts_101_keeps"].as_i64().unwrap()
        );
    }
}

/// One IPC stream per record value; reserved columns from the record (the Go tests' blob codec).
#[derive(Debug)]
pub(crate) struct ArrowValues;

impl BatchCodec for ArrowValues {
    fn decode(&self, _topic: &str, records: &[Record]) -> Result<RecordBatch, CodecError> {
        let mut parts = Vec::new();
        let mut meta = Vec::new();
        for r in records {
            let (_, batches) = ipc::read_batches(r.value.as_deref().unwrap_or_default())
                .map_err(|e| CodecError::new(e.to_string()))?;
            for b in batches {
                meta.extend(std::iter::repeat_n(r, b.num_rows()));
                parts.push(b);
            }
        }
        let payload = arrow::compute::concat_batches(&parts[0].schema(), &parts).unwrap();
        let mut fields: Vec<FieldRef> = payload.schema().fields().iter().cloned().collect();
        fields.extend(reserved_fields());
        let mut columns = payload.columns().to_vec();
        columns.push(Arc::new(BinaryArray::from(
            meta.iter().map(|r| r.key.as_deref()).collect::<Vec<_>>(),
        )));
        columns.push(Arc::new(Int64Array::from_iter_values(
            meta.iter().map(|r| r.timestamp),
        )));
        columns.push(Arc::new(Int32Array::from_iter_values(
            meta.iter().map(|r| r.partition),
        )));
        columns.push(Arc::new(Int64Array::from_iter_values(
            meta.iter().map(|r| r.offset),
        )));
        columns.push(Arc::new(BinaryArray::from_iter_values(
            meta.iter().map(|_| [0u8; 4]),
        )));
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap())
    }

    fn encode(&self, _topic: &str, batch: &RecordBatch) -> Result<Vec<OutRecord>, CodecError> {
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|i| !is_reserved(batch.schema().field(*i).name()))
            .collect();
        let value =
            ipc_stream(&batch.project(&keep).unwrap()).map_err(|e| CodecError::new(e.message))?;
        Ok(vec![OutRecord {
            value: Some(value),
            ..Default::default()
        }])
    }

    fn name(&self) -> String {
        "arrow".into()
    }
}

pub(crate) fn value(users: &[&str], amounts: &[i64]) -> Vec<u8> {
    ipc_stream(
        &transactions(users, amounts, &vec![0; users.len()])
            .project(&[0, 1])
            .unwrap(),
    )
    .unwrap()
}

pub(crate) fn record(value: Vec<u8>, timestamp: i64, partition: i32) -> Record {
    Record {
        partition,
        timestamp,
        value: Some(value),
        ..Default::default()
    }
}

pub(crate) fn decoded(p: &Produced) -> RecordBatch {
    ipc::read_batches(p.record.value.as_deref().unwrap())
        .unwrap()
        .1
        .remove(0)
}

fn col_join_matches_across_batches_only_within_the_partition(v: &Value) {
    let (l, r, e) = (&v["inputs"]["left"], &v["inputs"]["right"], &v["expected"]);
    let codec: Arc<dyn BatchCodec> = Arc::new(ArrowValues);
    let mut t = Topology::new();
    let left = t
        .add_source("left", vec!["left".into()], codec.clone())
        .unwrap();
    let right = t
        .add_source("right", vec!["right".into()], codec.clone())
        .unwrap();
    let join = t
        .add_join(
            "join",
            JoinSpec::new("user", "user", 10_000_000, None, None).unwrap(),
            left,
            right,
        )
        .unwrap();
    t.add_sink("sink", "out", codec, join).unwrap();

    let mut built = t.build().unwrap();
    let left_input = record(
        value(
            &[l["user"].as_str().unwrap()],
            &[l["amount"].as_i64().unwrap()],
        ),
        l["ts"].as_i64().unwrap(),
        l["partition"].as_i64().unwrap() as i32,
    );
    let out = built
        .run_records(&BTreeMap::from([("left".into(), vec![left_input])]))
        .unwrap();
    assert_eq!(out.len() as i64, e["left_alone"].as_i64().unwrap());
    let snapshot = built.snapshot_partition(0).unwrap();

    let mut restored = t.build().unwrap();
    restored.restore_partition(0, &snapshot).unwrap();
    let right_on = |p| {
        BTreeMap::from([(
            "right".to_owned(),
            vec![record(
                value(
                    &[r["user"].as_str().unwrap()],
                    &[r["amount"].as_i64().unwrap()],
                ),
                r["ts"].as_i64().unwrap(),
                p,
            )],
        )])
    };
    assert_eq!(
        restored.run_records(&right_on(1)).unwrap().len() as i64,
        e["right_on_p1"].as_i64().unwrap()
    );
    let out = restored.run_records(&right_on(0)).unwrap();
    assert_eq!(out.len() as i64, e["right_on_p0"].as_i64().unwrap());
    let payload = decoded(&out[0]);
    let expected: Vec<&str> = e["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let payload_names: Vec<String> = payload
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        payload_names,
        expected[..4],
        "the sink drops the reserved columns"
    );
    assert_eq!(
        int64s(&payload, "left_amount")[0],
        e["amounts"][0].as_i64().unwrap()
    );
    assert_eq!(
        int64s(&payload, "right_amount")[0],
        e["amounts"][1].as_i64().unwrap()
    );

    // Before the sink, the joined batch has the five reserved columns of the left row.
    let mut join = JoinSpec::new("user", "user", 10_000_000, None, None)
        .unwrap()
        .instantiate();
    let joined = join
        .process_sides(
            &[transactions(&["a"], &[5], &[100])],
            &[transactions(&["a"], &[9], &[105])],
        )
        .unwrap();
    let names: Vec<String> = joined[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, expected);
}

fn col_topology_fan_out_merge_pass_through_and_validation(v: &Value) {
    let e = &v["expected"];
    let codec: Arc<dyn BatchCodec> = Arc::new(ArrowValues);

    let mut t = Topology::new();
    let source = t
        .add_source("source", vec!["in".into()], codec.clone())
        .unwrap();
    let filter = t
        .add_operator(
            "filter",
            Arc::new(Filter::new(ParsedExpr::parse("amount > 4", false).unwrap())),
            source,
        )
        .unwrap();
    t.add_sink("first", "out-a", codec.clone(), filter).unwrap();
    t.add_sink("second", "out-b", codec.clone(), filter)
        .unwrap();
    let mut built = t.build().unwrap();
    let input = BTreeMap::from([(
        "in".to_owned(),
        vec![record(value(&["a", "b", "c"], &[1, 5, 9]), 7, 0)],
    )]);
    let first = built.run_records(&input).unwrap();
    let topics: Vec<&str> = first.iter().map(|p| p.topic.as_str()).collect();
    let expected: Vec<&str> = e["fan_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(topics, expected);
    assert_eq!(built.run_records(&input).unwrap().len(), 2, "reusable");
    let other = BTreeMap::from([("other".to_owned(), input["in"].clone())]);
    assert_eq!(
        built.run_records(&other).unwrap().len() as i64,
        e["undeclared_topic_output"].as_i64().unwrap()
    );

    let mut t = Topology::new();
    let l = t
        .add_source("left", vec!["in-left".into()], codec.clone())
        .unwrap();
    let r = t
        .add_source("right", vec!["in-right".into()], codec.clone())
        .unwrap();
    let m = t.add_merge("merge", &[l, r]).unwrap();
    t.add_sink("sink", "out", codec.clone(), m).unwrap();
    let out = t
        .build()
        .unwrap()
        .run_records(&BTreeMap::from([
            (
                "in-left".to_owned(),
                vec![record(value(&["a"], &[1]), 1, 0)],
            ),
            (
                "in-right".to_owned(),
                vec![record(value(&["a"], &[1]), 1, 0)],
            ),
        ]))
        .unwrap();
    assert_eq!(
        decoded(&out[0]).num_rows() as i64,
        e["merge_rows"].as_i64().unwrap()
    );

    let bytes = hex::decode(e["pass_through_bytes_hex"].as_str().unwrap()).unwrap();
    let mut t = Topology::new();
    let raw = t
        .add_source("raw", vec!["raw-in".into()], codec.clone())
        .unwrap();
    t.add_pass_through_sink("copy", "raw-out", raw).unwrap();
    let out = t
        .build()
        .unwrap()
        .run_records(&BTreeMap::from([(
            "raw-in".to_owned(),
            vec![record(bytes.clone(), 4, 0)],
        )]))
        .unwrap();
    assert_eq!(out[0].record.value.as_deref(), Some(bytes.as_slice()));

    assert!(Topology::new().build().is_err(), "{}", e["empty_topology"]);
    let mut t = Topology::new();
    let s = t
        .add_source("same", vec!["in".into()], codec.clone())
        .unwrap();
    t.add_sink("same", "out", codec.clone(), s).unwrap();
    assert!(
        t.build()
            .unwrap_err()
            .message
            .contains(e["duplicate"].as_str().unwrap())
    );
    let mut foreign = Topology::new();
    let f = foreign
        .add_source("foreign", vec!["in".into()], codec.clone())
        .unwrap();
    let err = t.add_sink("foreign-sink", "out", codec, f).unwrap_err();
    assert!(err.message.contains(e["foreign_parent"].as_str().unwrap()));
}
