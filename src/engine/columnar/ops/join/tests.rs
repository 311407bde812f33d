use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use super::JoinSpec;
use super::side::Limits;

/// xorshift64*: deterministic test data without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// `rows` rows: a key (utf8 or int64, about 1 in 10 null) from a small range so
/// keys repeat within and across batches, a timestamp near `base` (some null),
/// and a row id.
fn batch(rng: &mut Rng, rows: usize, base: i64, text_keys: bool, id_base: i64) -> RecordBatch {
    let keys: Vec<Option<i64>> = (0..rows)
        .map(|_| (rng.below(10) != 0).then(|| rng.below(40) as i64))
        .collect();
    let key: ArrayRef = if text_keys {
        Arc::new(StringArray::from_iter(
            keys.iter().map(|k| k.map(|k| format!("k{k}"))),
        ))
    } else {
        Arc::new(Int64Array::from(keys))
    };
    let ts = Int64Array::from_iter(
        (0..rows).map(|_| (rng.below(20) != 0).then(|| base + rng.below(3_000) as i64)),
    );
    let id = Int64Array::from_iter_values(id_base..id_base + rows as i64);
    let schema = Schema::new(vec![
        Field::new("k", key.data_type().clone(), true),
        Field::new("id", DataType::Int64, false),
        Field::new("__timestamp", DataType::Int64, true),
    ]);
    RecordBatch::try_new(Arc::new(schema), vec![key, Arc::new(id), Arc::new(ts)]).unwrap()
}

/// The key of a row as text (both key types), `None` when null.
fn key_at(batch: &RecordBatch, row: usize) -> Option<String> {
    let k = batch.column(0);
    if k.is_null(row) {
        return None;
    }
    Some(match k.data_type() {
        DataType::Utf8 => k.as_string::<i32>().value(row).to_owned(),
        _ => k.as_primitive::<Int64Type>().value(row).to_string(),
    })
}

fn ts_at(batch: &RecordBatch, row: usize) -> Option<i64> {
    let t = batch.column(2).as_primitive::<Int64Type>();
    (!t.is_null(row)).then(|| t.value(row))
}

fn ids(batch: &RecordBatch, column: &str) -> Vec<i64> {
    batch
        .column_by_name(column)
        .unwrap()
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

/// The specified behaviour, written as plainly as possible: per pair of
/// batches (new left × stored then new right, new right × stored left), every
/// left row in order against every right row in order.
struct Reference {
    window: i64,
    stream_time: i64,
    left: Vec<(i64, RecordBatch)>,
    right: Vec<(i64, RecordBatch)>,
}

impl Reference {
    fn pair(&self, left: &RecordBatch, right: &RecordBatch, out: &mut Vec<Vec<(i64, i64)>>) {
        let mut rows = Vec::new();
        for l in 0..left.num_rows() {
            for r in 0..right.num_rows() {
                let (Some(lk), Some(rk), Some(lt), Some(rt)) = (
                    key_at(left, l),
                    key_at(right, r),
                    ts_at(left, l),
                    ts_at(right, r),
                ) else {
                    continue;
                };
                if lk == rk && (lt - rt).abs() <= self.window {
                    rows.push((ids(left, "id")[l], ids(right, "id")[r]));
                }
            }
        }
        if !rows.is_empty() {
            out.push(rows);
        }
    }

    fn process(
        &mut self,
        new_left: &[RecordBatch],
        new_right: &[RecordBatch],
    ) -> Vec<Vec<(i64, i64)>> {
        let max = |b: &RecordBatch| arrow::compute::max(b.column(2).as_primitive::<Int64Type>());
        for b in new_left.iter().chain(new_right) {
            if let Some(m) = max(b) {
                self.stream_time = self.stream_time.max(m);
            }
        }
        let cutoff = self.stream_time.saturating_sub(self.window);
        self.left.retain(|(m, _)| *m >= cutoff);
        self.right.retain(|(m, _)| *m >= cutoff);
        let mut out = Vec::new();
        for l in new_left {
            for (_, r) in &self.right {
                self.pair(l, r, &mut out);
            }
            for r in new_right {
                self.pair(l, r, &mut out);
            }
        }
        for r in new_right {
            for (_, l) in &self.left {
                self.pair(l, r, &mut out);
            }
        }
        for b in new_left {
            self.left.push((max(b).unwrap_or(i64::MIN), b.clone()));
        }
        for b in new_right {
            self.right.push((max(b).unwrap_or(i64::MIN), b.clone()));
        }
        out
    }
}

fn pairs_of(out: &[RecordBatch]) -> Vec<Vec<(i64, i64)>> {
    out.iter()
        .map(|b| {
            ids(b, "left_id")
                .into_iter()
                .zip(ids(b, "right_id"))
                .collect()
        })
        .collect()
}

fn agrees_with_the_pairwise_reference(text_keys: bool) {
    let spec = JoinSpec::new("k", "k", 4_000_000_000, None, None).unwrap();
    let mut join = spec.instantiate();
    let mut reference = Reference {
        window: 4_000,
        stream_time: i64::MIN,
        left: Vec::new(),
        right: Vec::new(),
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut id = 0;
    let mut matched = 0;
    for round in 0..40 {
        let base = round * 1_000 - rng.below(2_000) as i64;
        let mut side = |rng: &mut Rng| {
            (0..rng.below(3))
                .map(|_| {
                    let rows = rng.below(30) as usize;
                    id += 1_000;
                    batch(rng, rows, base, text_keys, id)
                })
                .collect::<Vec<_>>()
        };
        let (left, right) = (side(&mut rng), side(&mut rng));
        let got = pairs_of(&join.process_sides(&left, &right).unwrap());
        assert_eq!(got, reference.process(&left, &right), "round {round}");
        matched += got.iter().map(Vec::len).sum::<usize>();
        if round == 20 {
            // A restored join indexes its stored batches again.
            let mut restored = spec.instantiate();
            restored.restore(&join.snapshot().unwrap()).unwrap();
            join = restored;
        }
    }
    assert!(
        matched > 200,
        "only {matched} joined rows: the data does not exercise the join"
    );
}

#[test]
fn the_shared_side_tables_give_the_pairwise_join_rows_in_pairwise_order_for_int_keys() {
    agrees_with_the_pairwise_reference(false);
}

#[test]
fn the_shared_side_tables_give_the_pairwise_join_rows_in_pairwise_order_for_text_keys() {
    agrees_with_the_pairwise_reference(true);
}

#[test]
fn a_rollback_to_a_checkpoint_joins_the_next_batches_as_if_the_rolled_back_run_never_happened() {
    let spec = JoinSpec::new("k", "k", 4_000_000_000, None, None).unwrap();
    let mut rng = Rng(7);
    let mut id = 0;
    let mut next = |rng: &mut Rng, base: i64| {
        id += 1_000;
        batch(rng, 25, base, true, id)
    };
    let (l1, r1) = (next(&mut rng, 0), next(&mut rng, 0));
    let (l2, r2) = (next(&mut rng, 3_000), next(&mut rng, 3_000));
    let (l3, r3) = (next(&mut rng, 5_000), next(&mut rng, 5_000));
    let mut straight = spec.instantiate();
    straight
        .process_sides(std::slice::from_ref(&l1), std::slice::from_ref(&r1))
        .unwrap();
    let expected = pairs_of(
        &straight
            .process_sides(std::slice::from_ref(&l3), std::slice::from_ref(&r3))
            .unwrap(),
    );

    let mut rolled = spec.instantiate();
    rolled.process_sides(&[l1], &[r1]).unwrap();
    let checkpoint = rolled.checkpoint();
    rolled.process_sides(&[l2], &[r2]).unwrap();
    rolled.rollback(checkpoint).unwrap();
    assert_eq!(
        pairs_of(&rolled.process_sides(&[l3], &[r3]).unwrap()),
        expected
    );
    assert!(!expected.is_empty());
}

#[test]
fn a_side_past_its_index_limits_is_an_error_naming_the_limit_and_leaves_the_join_usable() {
    let spec = JoinSpec::new("k", "k", 4_000_000_000, None, None).unwrap();
    let mut rng = Rng(11);
    let rows = Limits {
        rows: 40,
        key_bytes: usize::MAX,
    };
    let mut join = spec.instantiate().with_limits(rows);
    let (l1, r1) = (
        batch(&mut rng, 40, 0, true, 0),
        batch(&mut rng, 40, 0, true, 1_000),
    );
    join.process_sides(&[l1], &[r1]).unwrap();
    let checkpoint = join.checkpoint();
    let r2 = batch(&mut rng, 40, 10, true, 2_000);
    let err = join
        .process_sides(&[], std::slice::from_ref(&r2))
        .unwrap_err();
    assert!(
        err.message.contains("more than 40 rows within one window"),
        "{}",
        err.message
    );
    join.rollback(checkpoint).unwrap();
    // Still within the limit once the stored right batch has left the window.
    let r3 = batch(&mut rng, 40, 9_000, true, 3_000);
    join.process_sides(&[], &[r3]).unwrap();

    let bytes = Limits {
        rows: usize::MAX,
        key_bytes: 100,
    };
    let mut join = spec.instantiate().with_limits(bytes);
    // Keys held inline in the table take none of that limit; longer ones do.
    let short = batch(&mut rng, 40, 0, true, 0);
    join.process_sides(std::slice::from_ref(&short), &[])
        .unwrap();
    let long: ArrayRef =
        Arc::new(StringArray::from_iter((0..40).map(|i| {
            Some(format!("a key longer than the inline bytes {i}"))
        })));
    let mut columns = short.columns().to_vec();
    columns[0] = long;
    let long = RecordBatch::try_new(short.schema(), columns).unwrap();
    let err = join.process_sides(&[long], &[]).unwrap_err();
    assert!(
        err.message.contains("exceed 100 bytes within one window"),
        "{}",
        err.message
    );
}

/// Arrow IPC of every batch, schema first (empty when there are none).
fn ipc_bytes(batches: &[RecordBatch]) -> Vec<u8> {
    let Some(first) = batches.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut out, &first.schema()).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    out
}

#[test]
fn the_join_writes_the_same_bytes_and_keeps_the_same_state_at_every_thread_count() {
    let spec = JoinSpec::new("k", "k", 500_000_000, None, None).unwrap();
    for text_keys in [false, true] {
        // Batches big enough to be split (keys repeat: many matches per row),
        // arriving on both sides, some on one side only, time moving on.
        let mut rng = Rng(if text_keys { 3 } else { 4 });
        let rounds: Vec<(Vec<RecordBatch>, Vec<RecordBatch>)> = (0..4)
            .map(|round| {
                let base = round * 1_500;
                let mut side = |rows: usize, ids: i64| batch(&mut rng, rows, base, text_keys, ids);
                let left = if round == 3 {
                    vec![]
                } else {
                    vec![side(8_300 + round as usize, round * 100_000)]
                };
                let right = if round == 1 {
                    vec![]
                } else {
                    vec![side(8_200, round * 100_000 + 50_000)]
                };
                (left, right)
            })
            .collect();
        let run = |threads: usize| {
            let mut join = spec.instantiate();
            join.set_threads(threads);
            let mut bytes = Vec::new();
            let mut rows = 0;
            for (left, right) in &rounds {
                let out = join.process_sides(left, right).unwrap();
                rows += out.iter().map(RecordBatch::num_rows).sum::<usize>();
                bytes.push(ipc_bytes(&out));
            }
            (bytes, rows, join.snapshot().unwrap())
        };
        let (one, rows, state) = run(1);
        assert!(rows > 10_000, "{rows} joined rows: too few to split");
        for threads in [2, 4] {
            let (many, many_rows, many_state) = run(threads);
            assert_eq!(many_rows, rows);
            assert!(
                many == one,
                "text keys {text_keys}, {threads} threads: other bytes"
            );
            assert!(
                many_state == state,
                "text keys {text_keys}, {threads} threads: other state"
            );
        }
    }
}
