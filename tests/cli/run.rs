//! `run` offline: topology files over Arrow IPC files and pipes written here
//! with arrow-ipc, `--check` and `--explain`, line-precise errors, and failed
//! runs that leave no output behind. No broker is involved.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
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

/// Orders as `tail` writes them: payload, then the five reserved columns.
fn orders(users: &[&str], amounts: &[i64], partitions: &[i32]) -> RecordBatch {
    let n = users.len();
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
    let ts: Vec<i64> = (0..n as i64).map(|i| 1_000 + i).collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(users.to_vec())),
        Arc::new(StringArray::from(vec!["NL"; n])),
        Arc::new(Int64Array::from(amounts.to_vec())),
        Arc::new(TimestampMillisecondArray::from(ts.clone()).with_timezone("UTC")),
        Arc::new(BinaryArray::from_opt_vec(vec![None; n])),
        Arc::new(Int64Array::from(ts)),
        Arc::new(Int32Array::from(partitions.to_vec())),
        Arc::new(Int64Array::from_iter_values(0..n as i64)),
        Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
            [0u8; 4], n,
        ))),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

fn ipc_stream(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

fn read_stream(bytes: &[u8]) -> Vec<RecordBatch> {
    arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// `run large-orders-by-user.yaml --input orders=INPUT --sink large-orders-by-user=SINK` in `dir`.
fn run_large_orders(dir: &Path, input: &str, sink: &str) -> Output {
    let topology = example("large-orders-by-user.yaml");
    let input = format!("orders={input}");
    let sink = format!("large-orders-by-user={sink}");
    let args = [
        topology.to_str().unwrap(),
        "--input",
        &input,
        "--sink",
        &sink,
    ];
    run_in(dir, &args, None)
}

fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = bin();
    cmd.current_dir(dir).arg("run").args(args);
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn krabka-streams");
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn totals(batch: &RecordBatch) -> Vec<(String, i64, i64)> {
    let users = batch.column_by_name("user").unwrap().as_string::<i32>();
    let total = batch
        .column_by_name("total")
        .unwrap()
        .as_primitive::<Int64Type>();
    let n = batch
        .column_by_name("n")
        .unwrap()
        .as_primitive::<Int64Type>();
    (0..batch.num_rows())
        .map(|i| (users.value(i).to_owned(), total.value(i), n.value(i)))
        .collect()
}

#[test]
fn an_ipc_file_runs_through_filter_and_group_by_batch_by_batch() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orders.arrows");
    let batches = [
        orders(&["a", "b", "a"], &[150, 50, 200], &[0, 0, 0]),
        orders(&["b", "a"], &[300, 101], &[0, 0]),
    ];
    std::fs::write(&input, ipc_stream(&batches)).unwrap();
    let out = run_large_orders(dir.path(), "orders.arrows", "totals.arrows");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("Processed a total of 5 records"),
        "{stderr}"
    );
    assert!(
        stderr.contains("batches 2, records in 5, records out 3"),
        "{stderr}"
    );
    let written = read_stream(&std::fs::read(dir.path().join("totals.arrows")).unwrap());
    assert_eq!(written.len(), 2, "one cumulative batch per input batch");
    assert_eq!(totals(&written[0]), [("a".into(), 350, 2)]);
    assert_eq!(
        totals(&written[1]),
        [("a".into(), 451, 3), ("b".into(), 300, 1)]
    );
}

#[test]
fn stdin_to_stdout_pipes_an_arrow_stream_and_keeps_partitions_apart() {
    let dir = tempfile::tempdir().unwrap();
    let input = ipc_stream(&[orders(&["a", "a", "a"], &[150, 200, 300], &[1, 0, 1])]);
    let topology = example("large-orders-by-user.yaml");
    let out = run_in(
        dir.path(),
        &[
            topology.to_str().unwrap(),
            "--input",
            "orders=-",
            "--sink",
            "large-orders-by-user=-",
            "--output",
            "json",
        ],
        Some(&input),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = read_stream(&out.stdout);
    // Partition 0 first, then partition 1, each with its own state.
    assert_eq!(totals(&written[0]), [("a".into(), 200, 1)]);
    assert_eq!(totals(&written[1]), [("a".into(), 450, 2)]);
    let report: serde_json::Value = serde_json::from_str(text(&out.stderr).trim()).unwrap();
    assert_eq!(report["data"]["metrics"]["input_records"], 3);
    assert_eq!(report["data"]["outcome"], "completed");
}

#[test]
fn check_and_explain_validate_before_any_data_flows() {
    let topology = example("large-orders-by-user.yaml");
    let out = run_in(
        Path::new("."),
        &["--check", topology.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("valid (4 nodes)"));
    let out = run_in(
        Path::new("."),
        &["--explain", topology.to_str().unwrap(), "--output", "json"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = doc["data"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    assert_eq!(nodes[2]["name"], "by-user");
    assert_eq!(nodes[2]["parents"][0], "large-orders");
    let columns: Vec<&str> = nodes[2]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["user", "total", "n"]);
    for name in ["orders-per-minute.yaml", "orders-with-payments.yaml"] {
        let out = run_in(
            Path::new("."),
            &["--check", example(name).to_str().unwrap()],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    }
}

fn check_file(content: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.yaml");
    std::fs::write(&file, content).unwrap();
    let out = run_in(dir.path(), &["--check", "t.yaml"], None);
    (out.status.code(), text(&out.stderr))
}

const HEAD: &str = "version: 1
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns:
      user: utf8
      amount: int64
";

#[test]
fn invalid_files_and_expressions_name_the_line_and_column() {
    let (code, err) = check_file(&format!(
        "{HEAD}  - filter: large\n    parent: orders\n    where: amount > 100 AND amont < 5\n  - sink: out\n    parent: large\n    topic: out\n    value: json\n"
    ));
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("t.yaml:11:29: Arrow column does not exist: amont"),
        "{err}"
    );

    let (code, err) = check_file(&format!(
        "{HEAD}  - filter: large\n    parent: orders\n    where: \"user > 5\"\n  - sink: out\n    parent: large\n    topic: out\n    value: json\n"
    ));
    assert_eq!(code, Some(3));
    assert!(
        err.contains("t.yaml:11:13: cannot compare utf8 with int64"),
        "{err}"
    );

    let (_, err) = check_file(&format!(
        "{HEAD}  - group_by: g\n    parent: orders\n    keys: [user]\n    aggregates: [median(amount) AS m]\n  - sink: out\n    parent: g\n    topic: out\n    value: json\n"
    ));
    assert!(
        err.contains("t.yaml:12:18: unknown aggregate `median`"),
        "{err}"
    );

    let (_, err) = check_file(&format!(
        "{HEAD}  - sink: out\n    parent: nowhere\n    topic: out\n    value: json\n"
    ));
    assert!(
        err.contains("t.yaml:10:13: parent is not a node in this topology"),
        "{err}"
    );

    let (_, err) = check_file(&format!(
        "{HEAD}  - sink: orders\n    parent: orders\n    topic: out\n    value: json\n"
    ));
    assert!(
        err.contains("t.yaml:9:11: duplicate node name `orders`"),
        "{err}"
    );

    let (_, err) = check_file("version: 1\nnodes:\n  - source: s\n    topics: [a\n");
    assert!(err.contains("t.yaml:5:1: invalid YAML"), "{err}");

    let (_, err) = check_file(&format!(
        "{HEAD}  - sink: out\n    parent: orders\n    topic: out\n    value: xml\n"
    ));
    assert!(err.contains("t.yaml:12:12: unknown codec `xml`"), "{err}");
}

#[test]
fn a_failing_batch_stops_the_run_and_writes_no_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("orders.arrows"),
        ipc_stream(&[
            orders(&["a"], &[i64::MAX], &[0]),
            orders(&["a"], &[200], &[0]),
        ]),
    )
    .unwrap();
    let out = run_large_orders(dir.path(), "orders.arrows", "totals.arrows");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("node `by-user`: integer overflow: 9223372036854776007"),
        "{err}"
    );
    assert!(
        !dir.path().join("totals.arrows").exists(),
        "nothing half-written"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn an_input_that_contradicts_the_declared_columns_is_refused_at_the_declaration() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Schema::new(vec![Field::new("amount", DataType::Int32, true)]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    std::fs::write(dir.path().join("in.arrows"), ipc_stream(&[batch])).unwrap();
    let out = run_large_orders(dir.path(), "in.arrows", "o.arrows");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("large-orders-by-user.yaml:22:7: the input has no column `user`"),
        "{err}"
    );
}

#[test]
fn usage_errors_name_the_known_nodes() {
    let topology = example("large-orders-by-user.yaml");
    let out = run_in(
        Path::new("."),
        &[topology.to_str().unwrap(), "--input", "nope=x.arrows"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("--input nope: no source node or topic of that name (known: orders)")
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("o.arrows"),
        ipc_stream(&[orders(&["a"], &[1], &[0])]),
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[topology.to_str().unwrap(), "--input", "orders=o.arrows"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("needs at least one --sink"),
        "{}",
        text(&out.stderr)
    );
    let out = run_in(
        dir.path(),
        &[
            topology.to_str().unwrap(),
            "--input",
            "orders=missing.arrows",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot open missing.arrows"));
    std::fs::write(dir.path().join("junk.arrows"), b"not arrow at all").unwrap();
    let out = run_in(
        dir.path(),
        &[
            topology.to_str().unwrap(),
            "--input",
            "orders=junk.arrows",
            "--sink",
            "large-orders-by-user=x.arrows",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot read junk.arrows"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_parquet_sink_holds_the_totals_and_appears_only_when_the_run_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let batches = [
        orders(&["a", "b", "a"], &[150, 50, 200], &[0, 0, 0]),
        orders(&["b", "a"], &[300, 101], &[0, 0]),
    ];
    std::fs::write(dir.path().join("orders.arrows"), ipc_stream(&batches)).unwrap();
    let out = run_large_orders(dir.path(), "orders.arrows", "totals.parquet");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The file follows the tool's mode rule (io::atomic_file::mode), not the temp file's 0600.
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir.path().join("totals.parquet"))
            .unwrap()
            .permissions()
            .mode()
    };
    // The binary inherits this process's umask (read without changing it).
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
        .unwrap();
    assert_eq!(
        mode & 0o7777,
        0o664 & !umask & !0o002,
        "mode {mode:o}, umask {umask:o}"
    );
    let file = std::fs::File::open(dir.path().join("totals.parquet")).unwrap();
    let read: Vec<RecordBatch> =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    // Both batches' cumulative rows, in order.
    let rows: Vec<(String, i64, i64)> = read.iter().flat_map(totals).collect();
    assert_eq!(
        rows,
        [
            ("a".to_owned(), 350, 2),
            ("a".to_owned(), 451, 3),
            ("b".to_owned(), 300, 1)
        ]
    );

    // A run that fails (the input is not Arrow) leaves no Parquet file behind.
    std::fs::write(dir.path().join("bad.arrows"), b"not arrow").unwrap();
    let out = run_large_orders(dir.path(), "bad.arrows", "failed.parquet");
    assert_ne!(out.status.code(), Some(0));
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("failed") || n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_stream_file_read_column_by_column_gives_the_totals_and_a_cut_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let batches = [
        orders(&["a", "b", "a"], &[150, 50, 200], &[0, 0, 0]),
        orders(&["b", "a"], &[300, 101], &[0, 0]),
        orders(&["c"], &[500], &[0]),
    ];
    let bytes = ipc_stream(&batches);
    std::fs::write(dir.path().join("orders.arrows"), &bytes).unwrap();
    let out = run_large_orders(dir.path(), "orders.arrows", "totals.arrows");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = read_stream(&std::fs::read(dir.path().join("totals.arrows")).unwrap());
    assert_eq!(
        totals(written.last().unwrap()),
        [
            ("a".to_owned(), 451, 3),
            ("b".to_owned(), 300, 1),
            ("c".to_owned(), 500, 1)
        ]
    );
    // Cut inside the last batch's last column, one the topology never reads.
    std::fs::write(dir.path().join("cut.arrows"), &bytes[..bytes.len() - 12]).unwrap();
    let out = run_large_orders(dir.path(), "cut.arrows", "cut-totals.arrows");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot read cut.arrows")
            && stderr.contains("truncated Arrow IPC message (message at byte"),
        "{stderr}"
    );
    assert!(!dir.path().join("cut-totals.arrows").exists());
}
