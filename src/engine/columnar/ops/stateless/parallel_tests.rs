//! Filter and with_columns at 1, 2, 3 and 4 threads: the same bytes out (Arrow
//! IPC of every output batch), the same rows kept, the same errors.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use super::parallel::{RangeVerdict, evaluate_parallel};
use super::{Filter, WithColumns};
use crate::engine::columnar::expr::ParsedExpr;
use crate::engine::columnar::ops::Operator;

/// xorshift64*: reproducible random inputs.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// `rows` rows of user/amount/qty (nulls when `nulls`) with partition and
/// offset; the rows after a `head` of a larger batch, as a per-partition
/// split hands them over (buffers with an offset; after a head of 8 rows,
/// bitmaps whose last byte holds other rows' bits).
fn batch(rng: &mut Rng, rows: usize, nulls: bool) -> RecordBatch {
    sliced(rng, rows, nulls, 3)
}

fn sliced(rng: &mut Rng, rows: usize, nulls: bool, head: usize) -> RecordBatch {
    let total = rows + head + 5;
    let null = |rng: &mut Rng| nulls && rng.below(10) == 0;
    let users: StringArray = (0..total)
        .map(|_| {
            let v = format!("user-{}", rng.below(300));
            (!null(rng)).then_some(v)
        })
        .collect();
    let amounts: Int64Array = (0..total)
        .map(|_| {
            let v = rng.below(2000) as i64 - 500;
            (!null(rng)).then_some(v)
        })
        .collect();
    let qty: Int64Array = (0..total).map(|_| Some(rng.below(9) as i64 + 1)).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new("qty", DataType::Int64, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(users),
        Arc::new(amounts),
        Arc::new(qty),
        Arc::new(Int32Array::from(vec![0; total])),
        Arc::new(Int64Array::from_iter_values(0..total as i64)),
    ];
    RecordBatch::try_new(schema, columns)
        .unwrap()
        .slice(head, rows)
}

fn ipc(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    out
}

fn inputs() -> Vec<RecordBatch> {
    let mut rng = Rng(0x5eed);
    [50_000, 4_095, 8_193, 100_003, 0, 12_289]
        .into_iter()
        .enumerate()
        .map(|(i, rows)| sliced(&mut rng, rows, i % 2 == 0, [3, 8, 8][i % 3]))
        .collect()
}

/// Every output batch of one processor at `threads`, and the kept bits of a
/// second one's selections, over every input.
fn run(op: &dyn Operator, threads: usize) -> (Vec<u8>, Vec<Vec<bool>>) {
    let mut processor = op.instantiate();
    processor.set_threads(threads);
    let mut out = Vec::new();
    let mut selections = Vec::new();
    for input in inputs() {
        out.extend(processor.process(&input).unwrap());
        if let Some(kept) = processor.selection(&input) {
            selections.push(kept.unwrap().iter().collect());
        }
    }
    (ipc(&out), selections)
}

fn filter(text: &str) -> Filter {
    Filter::new(ParsedExpr::parse(text, false).unwrap())
}

fn with_columns(items: &[&str]) -> WithColumns {
    let derived = items
        .iter()
        .map(|text| {
            let parsed = ParsedExpr::parse(text, true).unwrap();
            (parsed.alias().unwrap().to_owned(), parsed)
        })
        .collect();
    WithColumns::new(derived).unwrap()
}

#[test]
fn a_filter_keeps_the_same_rows_and_bytes_at_every_thread_count() {
    for text in [
        "amount > 100",
        "amount > 100 AND user <> 'user-7'",
        "amount IS NULL OR qty > 4",
        "user LIKE 'user-1%'",
    ] {
        let op = filter(text);
        let (one, kept_one) = run(&op, 1);
        assert!(
            kept_one
                .iter()
                .any(|k| k.contains(&true) && k.contains(&false)),
            "{text}"
        );
        for threads in [2, 3, 4] {
            let (many, kept_many) = run(&op, threads);
            assert!(many == one, "`{text}` at {threads} threads: other bytes");
            assert_eq!(kept_many, kept_one, "`{text}` at {threads} threads");
        }
    }
}

#[test]
fn derived_columns_are_the_same_bytes_at_every_thread_count() {
    for items in [
        &["amount * qty AS total"][..],
        &["amount + 1 AS amount", "upper(user) AS shout"],
        &["qty * 3 AS triple", "concat(user, '-', qty) AS label"],
        &["coalesce(amount, 0) AS filled", "amount > 0 AS positive"],
    ] {
        let op = with_columns(items);
        let (one, _) = run(&op, 1);
        for threads in [2, 3, 4] {
            let (many, _) = run(&op, threads);
            assert!(many == one, "{items:?} at {threads} threads: other bytes");
        }
    }
}

#[test]
fn an_error_names_the_same_row_at_every_thread_count() {
    let mut rng = Rng(7);
    let mut input = batch(&mut rng, 50_000, false);
    // Row 40,000 (in the last range at any count) divides by zero.
    let qty: Int64Array = (0..input.num_rows())
        .map(|i| Some(if i == 40_000 { 0 } else { 2 }))
        .collect();
    input = RecordBatch::try_new(input.schema(), {
        let mut columns = input.columns().to_vec();
        columns[2] = Arc::new(qty);
        columns
    })
    .unwrap();
    let failing: [Box<dyn Operator>; 2] = [
        Box::new(filter("amount / qty > 1")),
        Box::new(with_columns(&["amount / qty AS ratio"])),
    ];
    for op in failing {
        let error = |threads: usize| {
            let mut processor = op.instantiate();
            processor.set_threads(threads);
            processor.process(&input).unwrap_err().message
        };
        let one = error(1);
        assert!(one.contains("row 40000"), "{one}");
        for threads in [2, 4] {
            assert_eq!(error(threads), one);
        }
    }
}

fn compiled(text: &str, input: &RecordBatch) -> crate::engine::columnar::expr::Expression {
    ParsedExpr::parse(text, true)
        .unwrap()
        .compile(&input.schema())
        .unwrap()
}

#[test]
fn ranges_are_joined_only_where_that_keeps_the_bytes() {
    let mut rng = Rng(11);
    let clean = batch(&mut rng, 50_000, false);
    let expression = compiled("qty * 3 AS triple", &clean);
    let mut verdict = RangeVerdict::Try;
    let joined = evaluate_parallel(&expression, &clean, 4, &mut verdict).unwrap();
    assert_eq!(
        verdict,
        RangeVerdict::Try,
        "no nulls: the ranges are joined"
    );
    assert_eq!(
        joined.to_data(),
        expression.evaluate(&clean).unwrap().to_data()
    );

    // With nulls the whole batch is evaluated, and later batches skip the ranges:
    // joined ranges would write other bitmap bytes (the input is a slice).
    let nullable = sliced(&mut rng, 50_003, true, 8);
    let expression = compiled("amount + 1 AS next", &nullable);
    let whole = expression.evaluate(&nullable).unwrap();
    let parts: Vec<ArrayRef> = [0..25_000, 25_000..50_003]
        .into_iter()
        .map(|r| {
            expression
                .evaluate(&nullable.slice(r.start, r.len()))
                .unwrap()
        })
        .collect();
    let naive = arrow::compute::concat(&[parts[0].as_ref(), parts[1].as_ref()]).unwrap();
    let as_batch = |a: ArrayRef| RecordBatch::try_from_iter([("next", a)]).unwrap();
    assert_eq!(naive.to_data(), whole.to_data(), "the same values");
    assert!(
        ipc(&[as_batch(naive)]) != ipc(&[as_batch(whole.clone())]),
        "joined ranges write other bytes"
    );
    let mut verdict = RangeVerdict::Try;
    let out = evaluate_parallel(&expression, &nullable, 4, &mut verdict).unwrap();
    assert_eq!(verdict, RangeVerdict::Whole);
    assert!(ipc(&[as_batch(out)]) == ipc(&[as_batch(whole)]));
}
