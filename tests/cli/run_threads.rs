//! `run --threads N` offline: the sink files of the shipped topologies are
//! byte-identical at 1, 2 and 4 threads (compared like `cmp`), over batches
//! large enough to be split across threads; a bad `--threads` is a usage error.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};

use crate::frame::bin;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/topologies")
        .join(name)
}

/// `rows` orders as `tail` writes them (payload, then the reserved columns),
/// from a fixed pseudo-random sequence: 2 000 users, six country spellings,
/// event times a millisecond apart with jitter, two partitions.
fn orders(seed: u64, first: i64, rows: usize) -> RecordBatch {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let countries = ["NL", " be", "DE ", "fr", "PL", "nl"];
    let mut users = Vec::with_capacity(rows);
    let mut country = Vec::with_capacity(rows);
    let mut amounts = Vec::with_capacity(rows);
    let mut ts = Vec::with_capacity(rows);
    let mut partitions = Vec::with_capacity(rows);
    for i in 0..rows as i64 {
        users.push(format!("user-{:05}", next() % 2_000));
        country.push(countries[(next() % 6) as usize]);
        amounts.push((next() % 1_000) as i64);
        ts.push(1_700_000_000_000 + first + i - (next() % 50) as i64);
        partitions.push((next() % 2) as i32);
    }
    let schema = Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("country", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
        Field::new("__key", DataType::Binary, true),
        Field::new("__timestamp", DataType::Int64, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
        Field::new("__headers", DataType::Binary, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(users)),
        Arc::new(StringArray::from(country)),
        Arc::new(Int64Array::from(amounts)),
        Arc::new(TimestampMillisecondArray::from(ts.clone()).with_timezone("UTC")),
        Arc::new(BinaryArray::from_opt_vec(vec![None; rows])),
        Arc::new(Int64Array::from(ts)),
        Arc::new(Int32Array::from(partitions)),
        Arc::new(Int64Array::from_iter_values(first..first + rows as i64)),
        Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
            [0u8; 4], rows,
        ))),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

fn write_orders(path: &Path) {
    let batches: Vec<RecordBatch> = (0..3)
        .map(|b| orders(b + 1, b as i64 * 40_000, 40_000))
        .collect();
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
    for b in &batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    std::fs::write(path, out).unwrap();
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .expect("spawn krabka-streams")
}

/// The sink file of `topology` at each thread count, after checking the run succeeded.
fn sink_at_threads(dir: &Path, topology: &str, sink: &str, ext: &str) -> Vec<Vec<u8>> {
    let topology = example(topology);
    [1, 2, 4]
        .iter()
        .map(|threads| {
            let out_name = format!("{sink}-{threads}.{ext}");
            let out = run(
                dir,
                &[
                    topology.to_str().unwrap(),
                    "--input",
                    "orders=orders.arrows",
                    "--sink",
                    &format!("{sink}={out_name}"),
                    "--threads",
                    &threads.to_string(),
                ],
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "--threads {threads}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::read(dir.join(out_name)).unwrap()
        })
        .collect()
}

#[test]
fn group_by_and_windowed_sinks_are_byte_identical_at_one_two_and_four_threads() {
    let dir = tempfile::tempdir().unwrap();
    write_orders(&dir.path().join("orders.arrows"));
    for (topology, sink) in [
        ("large-orders-by-user.yaml", "large-orders-by-user"),
        ("orders-per-minute.yaml", "orders-per-minute"),
    ] {
        for ext in ["arrows", "arrow"] {
            let files = sink_at_threads(dir.path(), topology, sink, ext);
            let rows: usize =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&files[0]), None)
                    .map(|r| r.map(|b| b.unwrap().num_rows()).sum())
                    .unwrap_or(1);
            assert!(rows > 0, "{topology}: the sink holds rows");
            for (i, threads) in [2, 4].iter().enumerate() {
                assert!(
                    files[0] == files[i + 1],
                    "{topology} .{ext}: --threads {threads} differs from --threads 1 \
                     ({} vs {} bytes)",
                    files[i + 1].len(),
                    files[0].len()
                );
            }
        }
    }
}

#[test]
fn a_parquet_sink_is_byte_identical_across_thread_counts_and_pyarrow_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    write_orders(&dir.path().join("orders.arrows"));
    let files = sink_at_threads(
        dir.path(),
        "large-orders-by-user.yaml",
        "large-orders-by-user",
        "parquet",
    );
    for (i, threads) in [2, 4].iter().enumerate() {
        assert!(
            files[0] == files[i + 1],
            "--threads {threads} Parquet differs from --threads 1"
        );
    }
    // Independent readers: pyarrow (min/max statistics on `total` kept) and DuckDB
    // read every emitted row.
    let script = "import sys, json, duckdb, pyarrow.parquet as pq\n\
        f = pq.ParquetFile(sys.argv[1])\n\
        s = f.metadata.row_group(0).column(f.schema_arrow.get_field_index('total')).statistics\n\
        con = duckdb.connect()\n\
        n = con.execute(f\"SELECT count(*) FROM read_parquet('{sys.argv[1]}')\").fetchone()[0]\n\
        print(json.dumps({'rows': f.metadata.num_rows, 'duckdb': n, 'min_max': bool(s is not None and s.has_min_max)}))\n";
    let path = dir.path().join("large-orders-by-user-1.parquet");
    let read = crate::support::venv_python(script, &[path]);
    assert_eq!(read["min_max"], true, "{read}");
    assert_eq!(read["rows"], read["duckdb"], "{read}");
    let rows = read["rows"].as_u64().unwrap();
    assert!(rows > 2_000, "{rows} rows: every batch re-emits the totals");
}

#[test]
fn a_thread_count_that_is_not_a_positive_number_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let topology = example("large-orders-by-user.yaml");
    for bad in ["0", "-1", "many", "100000"] {
        let out = run(
            dir.path(),
            &[
                topology.to_str().unwrap(),
                "--input",
                "orders=orders.arrows",
                "--sink",
                "large-orders-by-user=out.arrows",
                &format!("--threads={bad}"),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "--threads {bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("thread count"), "{stderr}");
    }
    // Online runs have no use for it: refused, not ignored.
    let out = run(dir.path(), &[topology.to_str().unwrap(), "--threads", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads belongs to offline runs"));
}

/// `rows` orders (`payments` false) or their payments, as `tail` writes them:
/// order ids `order-N` from `first`, payments shuffled within the batch and up
/// to a minute after their order, two partitions by id, some ids paid twice.
fn join_side(payments: bool, first: i64, rows: usize) -> RecordBatch {
    let mut state = 0x9e37_79b9_u64 + first as u64 + u64::from(payments);
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let mut ids: Vec<i64> = (first..first + rows as i64).collect();
    if payments {
        for i in (1..ids.len()).rev() {
            ids.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        for i in (0..ids.len()).step_by(7) {
            ids[i] = first + (next() % rows as u64) as i64;
        }
    }
    let ts: Vec<i64> = ids
        .iter()
        .map(|id| {
            1_700_000_000_000
                + id
                + if payments {
                    (next() % 60_000) as i64
                } else {
                    0
                }
        })
        .collect();
    let (name, text, number) = if payments {
        ("method", "paid", ["card", "ideal", "paypal"])
    } else {
        ("user", "amount", ["u-1", "u-2", "u-3"])
    };
    let schema = Schema::new(vec![
        Field::new("order_id", DataType::Utf8, true),
        Field::new(name, DataType::Utf8, true),
        Field::new(text, DataType::Int64, true),
        Field::new("__key", DataType::Binary, true),
        Field::new("__timestamp", DataType::Int64, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
        Field::new("__headers", DataType::Binary, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            ids.iter().map(|i| format!("order-{i}")),
        )),
        Arc::new(StringArray::from_iter_values(
            (0..rows).map(|_| number[(next() % 3) as usize]),
        )),
        Arc::new(Int64Array::from_iter_values(
            (0..rows).map(|_| (next() % 1_000) as i64),
        )),
        Arc::new(BinaryArray::from_opt_vec(vec![None; rows])),
        Arc::new(Int64Array::from(ts)),
        Arc::new(Int32Array::from_iter_values(
            ids.iter().map(|i| (i % 2) as i32),
        )),
        Arc::new(Int64Array::from_iter_values(first..first + rows as i64)),
        Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
            [0u8; 4], rows,
        ))),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

#[test]
fn a_join_sink_is_byte_identical_at_one_two_and_four_threads() {
    let dir = tempfile::tempdir().unwrap();
    for (payments, file) in [(false, "orders.arrows"), (true, "payments.arrows")] {
        let batches: Vec<RecordBatch> = (0..3)
            .map(|b| join_side(payments, b * 40_000, 40_000))
            .collect();
        let mut out = Vec::new();
        let mut w =
            arrow_ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        std::fs::write(dir.path().join(file), out).unwrap();
    }
    let topology = example("orders-with-payments.yaml");
    let files: Vec<Vec<u8>> = [1, 2, 4]
        .iter()
        .map(|threads| {
            let name = format!("paid-{threads}.arrows");
            let out = run(
                dir.path(),
                &[
                    topology.to_str().unwrap(),
                    "--input",
                    "orders=orders.arrows",
                    "--input",
                    "payments=payments.arrows",
                    "--sink",
                    &format!("paid-orders={name}"),
                    "--threads",
                    &threads.to_string(),
                ],
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "--threads {threads}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::read(dir.path().join(name)).unwrap()
        })
        .collect();
    let rows: usize =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&files[0]), None)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
    assert!(rows > 20_000, "{rows} joined rows");
    for (i, threads) in [2, 4].iter().enumerate() {
        assert!(
            files[0] == files[i + 1],
            "--threads {threads} join sink differs from --threads 1"
        );
    }
}
