use super::*;
use crate::engine::columnar::ops::testing::{int64s, strings, transactions};
use crate::engine::columnar::snapshot::groupby::GroupState;

fn sum_and_count() -> GroupBy {
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

fn run(p: &mut Box<dyn Processor>, batch: &RecordBatch) -> Result<RecordBatch, OpError> {
    let mut out = p.process(batch)?;
    assert_eq!(out.len(), 1, "a built-in forwards exactly one batch");
    Ok(out.remove(0))
}

#[test]
fn groups_come_out_in_first_appearance_order_with_keys_then_aggregates() {
    let mut p = sum_and_count().instantiate();
    let out = run(
        &mut p,
        &transactions(&["a", "a", "b"], &[5, 3, 9], &[1, 2, 3], 0),
    )
    .unwrap();
    let names: Vec<String> = out
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        ["user", "total", "count"],
        "reserved columns are dropped"
    );
    assert_eq!(strings(&out, "user"), [Some("a".into()), Some("b".into())]);
    assert_eq!(int64s(&out, "total"), [Some(8), Some(9)]);
    assert_eq!(int64s(&out, "count"), [Some(2), Some(1)]);
}

#[test]
fn sums_accumulate_across_batches_and_a_fresh_instance_starts_clean() {
    let op = sum_and_count();
    let mut p = op.instantiate();
    run(&mut p, &transactions(&["a"], &[5], &[1], 0)).unwrap();
    let second = transactions(&["a"], &[3], &[2], 0);
    assert_eq!(int64s(&run(&mut p, &second).unwrap(), "total"), [Some(8)]);
    assert_eq!(
        int64s(&run(&mut op.instantiate(), &second).unwrap(), "total"),
        [Some(3)]
    );
}

#[test]
fn an_integer_sum_past_int64_fails_on_write_back() {
    let mut p = sum_and_count().instantiate();
    run(&mut p, &transactions(&["a"], &[i64::MAX], &[1], 0)).unwrap();
    let err = run(&mut p, &transactions(&["a"], &[1], &[2], 0)).unwrap_err();
    assert_eq!(err.message, "integer overflow: 9223372036854775808");
}

#[test]
fn the_snapshot_is_the_go_group_by_payload() {
    let mut p = sum_and_count().instantiate();
    run(
        &mut p,
        &transactions(&["a", "b", "a"], &[5, 9, 3], &[1, 2, 3], 0),
    )
    .unwrap();
    let bytes = p.snapshot().unwrap();
    let state = GroupByState::decode(&bytes).unwrap();
    assert_eq!(state.stream_time, i64::MIN);
    assert_eq!(state.groups[0].parts, [TaggedValue::String("a".into())]);
    assert_eq!(
        state.groups[0].aggregates,
        [TaggedValue::BigInt("8".into()), TaggedValue::Int(2)],
        "integer sums are stored as `I`, counts as `i`"
    );
    let mut restored = sum_and_count().instantiate();
    restored.restore(&bytes).unwrap();
    assert_eq!(restored.snapshot().unwrap(), bytes);
    let out = run(&mut restored, &transactions(&["b"], &[1], &[4], 0)).unwrap();
    assert_eq!(int64s(&out, "total"), [Some(8), Some(10)]);
    assert!(
        restored
            .restore(&[2])
            .unwrap_err()
            .message
            .contains("unsupported snapshot")
    );
}

#[test]
fn min_max_skip_nulls_and_all_null_sums_are_null() {
    let op = GroupBy::new(
        vec!["user".into()],
        ["min", "max", "sum"]
            .iter()
            .map(|f| Aggregation {
                input: "amount".into(),
                output: (*f).into(),
                func: match *f {
                    "min" => AggFunc::Min,
                    "max" => AggFunc::Max,
                    _ => AggFunc::Sum,
                },
                output_type: None,
            })
            .collect(),
        None,
    );
    let mut batch = transactions(&["a", "a", "b"], &[5, 3, 0], &[1, 2, 3], 0);
    let amounts: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), Some(3), None]));
    let mut columns = batch.columns().to_vec();
    columns[1] = amounts;
    batch = RecordBatch::try_new(batch.schema(), columns).unwrap();
    let out = run(&mut op.instantiate(), &batch).unwrap();
    assert_eq!(int64s(&out, "min"), [Some(3), None]);
    assert_eq!(int64s(&out, "max"), [Some(5), None]);
    assert_eq!(int64s(&out, "sum"), [Some(8), None]);
}

fn windowed(size: i64) -> GroupBy {
    GroupBy::new(
        vec!["user".into()],
        vec![Aggregation {
            input: "amount".into(),
            output: "total".into(),
            func: AggFunc::Sum,
            output_type: None,
        }],
        Some(Window::new(size, None).unwrap()),
    )
}

#[test]
fn windows_split_by_event_time_restore_and_prune() {
    // COL-OPS-WINDOWED
    for (size, windows, total) in [(10, 2, 7), (20, 1, 10)] {
        let mut p = windowed(size).instantiate();
        let first = run(&mut p, &transactions(&["a", "a"], &[5, 3], &[1, 12], 0)).unwrap();
        assert_eq!(first.num_rows(), windows);
        let names: Vec<String> = first
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, ["user", "__window_start", "__window_end", "total"]);
        let mut restored = windowed(size).instantiate();
        restored.restore(&p.snapshot().unwrap()).unwrap();
        let next = run(&mut restored, &transactions(&["a"], &[2], &[2], 0)).unwrap();
        assert_eq!(int64s(&next, "total")[0], Some(total));
        assert_eq!(int64s(&next, "__window_start")[0], Some(0));
        let far = run(&mut restored, &transactions(&["a"], &[1], &[100], 0)).unwrap();
        assert_eq!(far.num_rows(), 1, "expired windows are pruned");
        let later = run(&mut restored, &transactions(&["a"], &[1], &[101], 0)).unwrap();
        assert_eq!(later.num_rows(), 1, "the open window is retained");
    }
}

#[test]
fn late_rows_are_dropped_and_window_rules_are_checked() {
    let mut p = windowed(10).instantiate();
    run(&mut p, &transactions(&["a"], &[1], &[100], 0)).unwrap();
    let out = run(&mut p, &transactions(&["a"], &[1], &[5], 0)).unwrap();
    assert_eq!(
        int64s(&out, "__window_start"),
        [Some(100)],
        "the row at 5 is late"
    );
    assert_eq!(
        Window::new(0, None).unwrap_err().message,
        "windowSize must be at least one millisecond"
    );
    assert_eq!(
        Window::new(10, Some(5)).unwrap_err().message,
        "retention must not be shorter than windowSize"
    );
    let negative = run(
        &mut windowed(10).instantiate(),
        &transactions(&["a"], &[1], &[-1], 0),
    )
    .unwrap();
    assert_eq!(
        int64s(&negative, "__window_start"),
        [Some(-10)],
        "floor division for negatives"
    );
}

#[test]
fn no_keys_is_an_error() {
    let op = GroupBy::new(Vec::new(), Vec::new(), None);
    let err = op
        .instantiate()
        .process(&transactions(&["a"], &[1], &[1], 0))
        .unwrap_err();
    assert_eq!(err.message, "groupBy requires at least one key column");
}

#[test]
fn each_output_lists_every_group_whether_its_key_cells_were_built_earlier_or_in_this_batch() {
    let op = sum_and_count();
    let mut p = op.instantiate();
    let batches: [(&[&str], &[i64]); 4] = [
        (&["a", "b"], &[1, 2]),
        (&["b"], &[3]),
        (&["c", "a"], &[4, 5]),
        (&["c"], &[6]),
    ];
    for (users, amounts) in batches {
        let ts: Vec<i64> = (0..users.len() as i64).collect();
        let out = run(&mut p, &transactions(users, amounts, &ts, 0)).unwrap();
        // An instance restored from the snapshot builds every key cell anew.
        let mut fresh = op.instantiate();
        fresh.restore(&p.snapshot().unwrap()).unwrap();
        let rebuilt = run(&mut fresh, &transactions(&[], &[], &[], 0)).unwrap();
        assert_eq!(out, rebuilt, "after {users:?}");
    }
    let last = run(&mut p, &transactions(&["d"], &[7], &[9], 0)).unwrap();
    assert_eq!(
        strings(&last, "user"),
        ["a", "b", "c", "d"].map(|u| Some(u.to_string()))
    );
    assert_eq!(
        int64s(&last, "total"),
        [Some(6), Some(5), Some(10), Some(7)]
    );
}

#[test]
fn restored_aggregates_the_typed_accumulators_cannot_hold_keep_their_exact_values() {
    // A count of 0 and a null sum restored from another runner's state: the
    // typed vectors use 0 for "nothing yet", so these stay generic and come out as stored.
    let state = GroupByState {
        stream_time: NO_STREAM_TIME,
        groups: vec![
            GroupState {
                parts: vec![TaggedValue::String("a".into())],
                aggregates: vec![TaggedValue::Null, TaggedValue::Int(0)],
            },
            GroupState {
                parts: vec![TaggedValue::String("b".into())],
                aggregates: vec![TaggedValue::BigInt("-4".into()), TaggedValue::Int(-1)],
            },
        ],
    };
    let mut p = sum_and_count().instantiate();
    p.restore(&state.encode()).unwrap();
    let out = run(&mut p, &transactions(&["c", "b"], &[2, 4], &[1, 2], 0)).unwrap();
    assert_eq!(int64s(&out, "total"), [None, Some(0), Some(2)]);
    assert_eq!(int64s(&out, "count"), [Some(0), Some(0), Some(1)]);
    assert_eq!(
        GroupByState::decode(&p.snapshot().unwrap()).unwrap().groups[0].aggregates,
        [TaggedValue::Null, TaggedValue::Int(0)]
    );
}

#[test]
fn thousands_of_long_keys_sharing_their_first_sixteen_bytes_stay_apart_across_batches() {
    let users: Vec<String> = (0..3000).map(|i| format!("a-shared-prefix-{i}")).collect();
    let names: Vec<&str> = users.iter().map(String::as_str).collect();
    let amounts: Vec<i64> = (0..3000).collect();
    let ts = vec![0; 3000];
    let mut p = sum_and_count().instantiate();
    run(&mut p, &transactions(&names, &amounts, &ts, 0)).unwrap();
    let mut reversed = names.clone();
    reversed.reverse();
    let out = run(&mut p, &transactions(&reversed, &amounts, &ts, 0)).unwrap();
    assert_eq!(out.num_rows(), 3000);
    let totals = int64s(&out, "total");
    for (i, total) in totals.iter().enumerate() {
        // Group i got amount i in the first batch and 2999 - i in the second.
        assert_eq!(*total, Some(2999), "group {i}");
    }
    assert_eq!(strings(&out, "user")[2999], Some(users[2999].clone()));
    assert!(int64s(&out, "count").iter().all(|c| *c == Some(2)));
}

/// Users of every length around the 16-byte inline key head, repeated.
fn mixed_users(rows: usize) -> Vec<String> {
    (0..rows)
        .map(|i| "u".repeat(1 + (i * 7) % 23) + &(i % 37).to_string())
        .collect()
}

#[test]
fn a_selection_folds_exactly_the_rows_of_the_filtered_copy() {
    let users = mixed_users(2000);
    let names: Vec<&str> = users.iter().map(String::as_str).collect();
    let amounts: Vec<i64> = (0..2000).collect();
    let batch = transactions(&names, &amounts, &vec![0; 2000], 0);
    let keep: Vec<bool> = (0..2000).map(|i| i % 3 != 0 && i % 11 != 0).collect();
    let mask = BooleanArray::from(keep.clone());
    let (mut selected, mut copied) = (sum_and_count().instantiate(), sum_and_count().instantiate());
    for _ in 0..2 {
        let by_selection = selected
            .process_selected(&batch, &BooleanBuffer::from(keep.clone()))
            .unwrap();
        let filtered = arrow::compute::filter_record_batch(&batch, &mask).unwrap();
        let by_copy = copied.process(&filtered).unwrap();
        assert_eq!(by_selection, by_copy);
        assert_eq!(selected.snapshot().unwrap(), copied.snapshot().unwrap());
    }
}

#[test]
fn a_selection_over_keys_the_string_path_cannot_take_equals_the_filtered_copy() {
    let batch = transactions(&["a", "b", "a"], &[1, 2, 3], &[0, 60_000, 120_000], 0);
    let with_null = {
        let mut columns = batch.columns().to_vec();
        columns[0] = Arc::new(arrow_array::StringArray::from(vec![
            Some("a"),
            None,
            Some("a"),
        ]));
        RecordBatch::try_new(batch.schema(), columns).unwrap()
    };
    let keep = [true, false, true];
    let mask = BooleanArray::from(keep.to_vec());
    for (op, input) in [(sum_and_count(), &with_null), (windowed(60_000), &batch)] {
        let (mut selected, mut copied) = (op.instantiate(), op.instantiate());
        let by_selection = selected
            .process_selected(input, &BooleanBuffer::from(keep.to_vec()))
            .unwrap();
        let filtered = arrow::compute::filter_record_batch(input, &mask).unwrap();
        assert_eq!(by_selection, copied.process(&filtered).unwrap());
    }
}

#[test]
fn a_string_key_finds_its_group_whether_restored_or_first_seen_as_large_utf8() {
    let users = mixed_users(500);
    let names: Vec<&str> = users.iter().map(String::as_str).collect();
    let amounts: Vec<i64> = (0..500).collect();
    let batch = transactions(&names, &amounts, &vec![0; 500], 0);
    let large = {
        let mut columns = batch.columns().to_vec();
        columns[0] = arrow::compute::cast(&columns[0], &DataType::LargeUtf8).unwrap();
        let mut fields: Vec<FieldRef> = batch.schema().fields().iter().cloned().collect();
        fields[0] = Arc::new(Field::new("user", DataType::LargeUtf8, true));
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    };
    let mut reference = sum_and_count().instantiate();
    run(&mut reference, &batch).unwrap();
    let expected = run(&mut reference, &batch).unwrap();

    let mut restored = sum_and_count().instantiate();
    restored.restore(&reference.snapshot().unwrap()).unwrap();
    let mut from_large = sum_and_count().instantiate();
    run(&mut from_large, &large).unwrap();
    let after_large = run(&mut from_large, &batch).unwrap();
    assert_eq!(after_large.num_rows(), expected.num_rows());
    assert_eq!(int64s(&after_large, "total"), int64s(&expected, "total"));
    assert_eq!(int64s(&after_large, "count"), int64s(&expected, "count"));
    // The restored state holds two batches: one more makes it three of each.
    let out = run(&mut restored, &batch).unwrap();
    assert_eq!(out.num_rows(), expected.num_rows());
    let counts = int64s(&out, "count");
    let twice = int64s(&expected, "count");
    for (three, two) in counts.iter().zip(&twice) {
        assert_eq!(three.unwrap() * 2, two.unwrap() * 3);
    }
}

/// Runs `batches` on a fresh instance and takes one snapshot: every group
/// encoded from scratch, the reference a reused snapshot must equal.
fn fresh_snapshot(op: &GroupBy, threads: usize, batches: &[RecordBatch]) -> Vec<u8> {
    let mut p = op.instantiate();
    p.set_threads(threads);
    for batch in batches {
        run(&mut p, batch).unwrap();
    }
    p.snapshot().unwrap()
}

#[test]
fn a_snapshot_after_a_few_touched_groups_is_byte_for_byte_a_fresh_encoding() {
    let users: Vec<String> = (0..3_000).map(|u| format!("user-{u:05}")).collect();
    let all: Vec<&str> = users.iter().map(String::as_str).collect();
    let ones = vec![1; all.len()];
    let batches = [
        transactions(&all, &ones, &vec![0; all.len()], 0),
        // Same length: sums 1 -> 2.
        transactions(&["user-00007", "user-02999"], &[1, 1], &[1, 2], 0),
        // Longer and shorter values (1 -> 1000001, 1 -> -5), repeats, and new groups.
        transactions(
            &["user-00000", "new-1", "user-01500", "user-01500", "new-2"],
            &[1_000_000, 4, -3, -3, 9],
            &[3, 4, 5, 6, 7],
            0,
        ),
        // Nothing touched but the stream time.
        transactions(&[], &[], &[], 0),
        // Most groups touched: encoded whole again.
        transactions(&all, &ones, &vec![8; all.len()], 0),
    ];
    for (op, threads) in [(sum_and_count(), 1), (sum_and_count(), 4), (windowed(5), 1)] {
        let mut p = op.instantiate();
        p.set_threads(threads);
        for (i, batch) in batches.iter().enumerate() {
            run(&mut p, batch).unwrap();
            let kept = p.snapshot().unwrap();
            assert_eq!(
                kept,
                fresh_snapshot(&op, threads, &batches[..=i]),
                "after batch {i}, {threads} threads, windowed {}",
                op.window.is_some()
            );
            // A second snapshot with nothing touched in between is the same.
            assert_eq!(p.snapshot().unwrap(), kept);
        }
    }
}

#[test]
fn a_reused_snapshot_follows_a_restore_and_a_pruned_window() {
    let op = windowed(10);
    let first = transactions(&["a", "b", "c"], &[1, 2, 3], &[1, 2, 3], 0);
    let mut p = op.instantiate();
    run(&mut p, &first).unwrap();
    let before = p.snapshot().unwrap();
    let touch = transactions(&["b"], &[100], &[4], 0);
    run(&mut p, &touch).unwrap();
    let touched = p.snapshot().unwrap();
    assert_ne!(touched, before);
    // Back to the earlier state (the runner's rollback), then a different round.
    p.restore(&before).unwrap();
    assert_eq!(p.snapshot().unwrap(), before);
    let other = transactions(&["c"], &[5], &[5], 0);
    run(&mut p, &other).unwrap();
    assert_eq!(
        p.snapshot().unwrap(),
        fresh_snapshot(&op, 1, &[first.clone(), other.clone()])
    );
    // A later window closes the first: its groups go, the rest is re-encoded.
    let later = transactions(&["a", "d"], &[1, 1], &[30, 31], 0);
    run(&mut p, &later).unwrap();
    let pruned = p.snapshot().unwrap();
    assert_eq!(pruned, fresh_snapshot(&op, 1, &[first, other, later]));
    assert_eq!(GroupByState::decode(&pruned).unwrap().groups.len(), 2);
}
