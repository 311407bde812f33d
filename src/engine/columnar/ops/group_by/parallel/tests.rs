//! Threads 1, 2 and 4 fold random batches into the same outputs and state.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, Field, Schema};

use super::super::{AggFunc, Aggregation, GroupBy, Window};
use crate::engine::columnar::metadata::TIMESTAMP_COLUMN;
use crate::engine::columnar::ops::Operator;

/// A small deterministic generator (xorshift64*): random, reproducible inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn agg(func: AggFunc, input: &str, output: &str) -> Aggregation {
    Aggregation {
        input: input.into(),
        output: output.into(),
        func,
        output_type: None,
    }
}

/// Every aggregate over every payload column the batches carry.
fn aggregates() -> Vec<Aggregation> {
    vec![
        agg(AggFunc::Sum, "amount", "total"),
        agg(AggFunc::Count, "amount", "n"),
        agg(AggFunc::Min, "amount", "low"),
        agg(AggFunc::Max, "amount", "high"),
        agg(AggFunc::Min, "user", "first_user"),
        agg(AggFunc::Max, "user", "last_user"),
        agg(AggFunc::Sum, "price", "prices"),
        agg(AggFunc::Max, "price", "top_price"),
        agg(AggFunc::Sum, "small", "smalls"),
    ]
}

/// `rows` rows over `users` keys (nulls in keys and values when `nulls`),
/// timestamps from `ts_start` with jitter (some far behind: late rows).
fn batch(rng: &mut Rng, rows: usize, users: u64, nulls: bool, ts_start: i64) -> RecordBatch {
    let null = |rng: &mut Rng| nulls && rng.below(20) == 0;
    let user: StringArray = (0..rows)
        .map(|_| {
            if null(rng) {
                None
            } else {
                // Keys short and long (past the index's 16 inline bytes).
                let u = rng.below(users);
                Some(if u.is_multiple_of(3) {
                    format!("user-with-a-long-name-{u:06}")
                } else {
                    format!("u{u}")
                })
            }
        })
        .collect();
    let amount: Int64Array = (0..rows)
        .map(|_| (!null(rng)).then(|| rng.below(2_000) as i64 - 500))
        .collect();
    let price: Float64Array = (0..rows)
        .map(|_| (!null(rng)).then(|| rng.below(1_000_000) as f64 / 7.0))
        .collect();
    let small: Int32Array = (0..rows)
        .map(|_| (!null(rng)).then(|| rng.below(100) as i32))
        .collect();
    let region: Int32Array = (0..rows).map(|_| Some(rng.below(3) as i32)).collect();
    let ts: Int64Array = (0..rows)
        .map(|i| {
            let behind = if rng.below(50) == 0 { 40_000 } else { 0 };
            Some(ts_start + i as i64 - rng.below(100) as i64 - behind)
        })
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(user),
        Arc::new(amount),
        Arc::new(price),
        Arc::new(small),
        Arc::new(region),
        Arc::new(ts),
    ];
    let fields = vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new("price", DataType::Float64, true),
        Field::new("small", DataType::Int32, true),
        Field::new("region", DataType::Int32, true),
        Field::new(TIMESTAMP_COLUMN, DataType::Int64, true),
    ];
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// Every output batch and the final snapshot of `op` over `batches` (each
/// with an optional selection) at `threads`.
fn fold(
    op: &GroupBy,
    batches: &[(RecordBatch, Option<BooleanBuffer>)],
    threads: usize,
) -> (Vec<Result<RecordBatch, String>>, Vec<u8>) {
    let mut p = op.instantiate();
    p.set_threads(threads);
    let outputs = batches
        .iter()
        .map(|(b, selected)| {
            let out = match selected {
                Some(s) => p.process_selected(b, s),
                None => p.process(b),
            };
            out.map(|mut o| o.remove(0)).map_err(|e| e.message)
        })
        .collect();
    (outputs, p.snapshot().unwrap_or_default())
}

fn assert_same_at_every_thread_count(
    op: &GroupBy,
    batches: &[(RecordBatch, Option<BooleanBuffer>)],
) {
    let (one, state) = fold(op, batches, 1);
    for threads in [2, 4] {
        let (many, many_state) = fold(op, batches, threads);
        assert_eq!(
            one,
            many,
            "outputs at {threads} threads ({})",
            op.describe()
        );
        assert_eq!(state, many_state, "state at {threads} threads");
    }
}

fn random_batches(seed: u64, users: u64, nulls: bool) -> Vec<RecordBatch> {
    let mut rng = Rng(seed);
    let mut ts = 1_000_000;
    (0..4)
        .map(|_| {
            let rows = [1, 5_000, 20_000, 33_333][rng.below(4) as usize];
            let b = batch(&mut rng, rows, users, nulls, ts);
            ts += rows as i64;
            b
        })
        .collect()
}

#[test]
fn a_string_key_gives_the_same_groups_and_aggregates_at_every_thread_count() {
    let op = GroupBy::new(vec!["user".into()], aggregates(), None);
    for (seed, users, nulls) in [
        (1, 7, false),
        (2, 5_000, false),
        (3, 40_000, false),
        (4, 300, true),
    ] {
        let batches: Vec<_> = random_batches(seed, users, nulls)
            .into_iter()
            .map(|b| (b, None))
            .collect();
        assert_same_at_every_thread_count(&op, &batches);
    }
}

#[test]
fn composite_keys_and_windows_give_the_same_result_at_every_thread_count() {
    let keys: Vec<String> = vec!["region".into(), "user".into()];
    for window in [None, Some(Window::new(1_000, Some(5_000)).unwrap())] {
        let op = GroupBy::new(keys.clone(), aggregates(), window);
        for (seed, users, nulls) in [(5, 11, false), (6, 2_000, true)] {
            let batches: Vec<_> = random_batches(seed, users, nulls)
                .into_iter()
                .map(|b| (b, None))
                .collect();
            assert_same_at_every_thread_count(&op, &batches);
        }
        let one_key = GroupBy::new(vec!["user".into()], aggregates(), window);
        let batches: Vec<_> = random_batches(7, 50, false)
            .into_iter()
            .map(|b| (b, None))
            .collect();
        assert_same_at_every_thread_count(&one_key, &batches);
    }
}

#[test]
fn a_filter_selection_is_folded_the_same_at_every_thread_count() {
    let op = GroupBy::new(vec!["user".into()], aggregates(), None);
    let mut rng = Rng(8);
    let batches: Vec<_> = random_batches(9, 3_000, false)
        .into_iter()
        .map(|b| {
            let keep: BooleanArray = (0..b.num_rows()).map(|_| Some(rng.below(3) > 0)).collect();
            let selected = keep.values().clone();
            (b, Some(selected))
        })
        .collect();
    assert_same_at_every_thread_count(&op, &batches);
}

#[test]
fn a_failing_batch_fails_with_the_same_message_at_every_thread_count() {
    let mut rng = Rng(10);
    let good = batch(&mut rng, 20_000, 100, false, 1_000_000);
    // A null event timestamp in the middle of a windowed batch.
    let mut columns = good.columns().to_vec();
    let ts: Int64Array = (0..good.num_rows())
        .map(|i| (i != 12_345).then_some(1_000_000 + i as i64))
        .collect();
    columns[5] = Arc::new(ts);
    let bad = RecordBatch::try_new(good.schema(), columns).unwrap();
    let op = GroupBy::new(
        vec!["user".into()],
        aggregates(),
        Some(Window::new(1_000, None).unwrap()),
    );
    let batches = [(good.clone(), None), (bad, None), (good, None)];
    let (outputs, _) = fold(&op, &batches, 4);
    assert_eq!(
        outputs[1].as_ref().unwrap_err(),
        "event timestamp is null at row 12345"
    );
    assert_same_at_every_thread_count(&op, &batches);
    // Past int64 on write-back: the same error from both paths.
    let mut columns = batch(&mut rng, 20_000, 3, false, 0).columns().to_vec();
    columns[1] = Arc::new(Int64Array::from(vec![i64::MAX / 4; 20_000]));
    let huge = RecordBatch::try_new(batches[0].0.schema(), columns).unwrap();
    let op = GroupBy::new(vec!["user".into()], aggregates(), None);
    let (outputs, _) = fold(&op, &[(huge.clone(), None)], 4);
    assert!(
        outputs[0]
            .as_ref()
            .unwrap_err()
            .starts_with("integer overflow")
    );
    assert_same_at_every_thread_count(&op, &[(huge, None)]);
}

#[test]
fn merging_refuses_what_the_one_thread_fold_might_answer_differently() {
    use super::super::Slot;
    use super::super::accumulators::Accumulators;
    // A sum near the i128 range: the row-by-row fold may overflow on the way.
    let mut near = Accumulators::from_slots(AggFunc::Sum, vec![Slot::Int(i128::MAX - 1)]);
    let part = Accumulators::from_slots(AggFunc::Sum, vec![Slot::Int(-1)]);
    assert!(!near.merge(AggFunc::Sum, &[&part]));
    assert!(
        matches!(near.slot(0), Slot::Int(n) if n == i128::MAX - 1),
        "unchanged"
    );
    // A count past i64::MAX is the fold's error, not a merge.
    let mut full = Accumulators::from_slots(AggFunc::Count, vec![Slot::Count(i64::MAX)]);
    let one = Accumulators::from_slots(AggFunc::Count, vec![Slot::Count(1)]);
    assert!(!full.merge(AggFunc::Count, &[&one]));
    // Floats and decimals are never merged: their sums depend on the order.
    let sums = Accumulators::with_groups(AggFunc::Sum, 1);
    assert!(!sums.merges_exactly(AggFunc::Sum, &DataType::Float64));
    assert!(!sums.merges_exactly(AggFunc::Sum, &DataType::Decimal128(10, 2)));
    assert!(sums.merges_exactly(AggFunc::Sum, &DataType::Int64));
}

#[test]
fn a_large_batch_takes_the_parallel_path_and_one_it_cannot_read_does_not() {
    use super::super::accumulators::Accumulators;
    use super::super::encoded::Encoded;
    use super::super::index::GroupIndex;
    use super::super::{GroupByProcessor, KeyArrays, NO_STREAM_TIME};
    let op = GroupBy::new(vec!["user".into()], aggregates(), None);
    let mut p = GroupByProcessor {
        index: GroupIndex::default(),
        parts: Vec::new(),
        accs: op
            .aggregations
            .iter()
            .map(|a| Accumulators::new(a.func))
            .collect(),
        stream_time: NO_STREAM_TIME,
        key_arrays: KeyArrays::default(),
        threads: 2,
        encoded: std::cell::RefCell::new(Encoded::new()),
        op,
    };
    let b = batch(&mut Rng(11), 20_000, 500, true, 0);
    let columns = |names: &[&str]| -> Vec<ArrayRef> {
        names
            .iter()
            .map(|n| b.column_by_name(n).unwrap().clone())
            .collect()
    };
    let inputs = columns(&[
        "amount", "amount", "amount", "amount", "user", "user", "price", "price", "small",
    ]);
    assert!(
        p.fold_parallel(&b, &columns(&["user"]), &inputs, None, i64::MIN)
            .unwrap()
    );
    assert!(!p.parts.is_empty());
    // Too few rows for two threads: left to the one-thread path, nothing changed.
    let groups = p.parts.len();
    let small = b.slice(0, 100);
    let small_inputs: Vec<ArrayRef> = inputs.iter().map(|c| c.slice(0, 100)).collect();
    let key = vec![small.column_by_name("user").unwrap().clone()];
    assert!(
        !p.fold_parallel(&small, &key, &small_inputs, None, i64::MIN)
            .unwrap()
    );
    assert_eq!(p.parts.len(), groups);
}
