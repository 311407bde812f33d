//! `barrier verify` against committed offsets of a real consumer group, snapshot directories
//! in both layouts and Arrow inputs, and every way a cut can fail to verify.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{BinaryArray, Int32Array, Int64Array, RecordBatch};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType, Field, Schema};
use krabka_streams::engine::columnar::barrier::{Cut, CutOffset, CutStatus, CutTopic};
use krabka_streams::engine::columnar::snapshot::container;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use super::fixture::{Cluster, TIMEOUT, assert_code, binary, cut, json_data, run, stderr, stdout};
use crate::support::unique_name;

const GROUP: &str = "audit";

/// `orders` with 3 partitions holding 6, 4 and 0 records; cut 1 at {0: 4, 1: 3, 2: 0};
/// cut 2 partial; cut 3 complete at the ends.
struct World {
    c: Cluster,
    topic: String,
}

fn world() -> World {
    let mut c = Cluster::start();
    c.create_barrier_state(7);
    let topic = unique_name("orders");
    c.create_topic(&topic, 3, false);
    for i in 0..6 {
        c.send(&topic, 0, Some(b"k"), Some(format!("v{i}").as_bytes()));
    }
    for i in 0..4 {
        c.send(&topic, 1, Some(b"k"), Some(format!("v{i}").as_bytes()));
    }
    c.write_group(GROUP, &[&topic], 3);
    c.write_cut(GROUP, 1, &cut(&topic, &[(0, 4), (1, 3), (2, 0)], &[]));
    c.write_cut(GROUP, 2, &cut(&topic, &[(0, 5)], &[1, 2]));
    c.write_cut(GROUP, 3, &cut(&topic, &[(0, 6), (1, 4), (2, 0)], &[]));
    World { c, topic }
}

fn verify(w: &World, epoch: &str, checks: &[&str]) -> std::process::Output {
    verify_cut(&w.c, GROUP, epoch, checks)
}

/// `barrier verify --group GROUP --epoch EPOCH CHECKS…` against `c`.
fn verify_cut(c: &Cluster, group: &str, epoch: &str, checks: &[&str]) -> std::process::Output {
    let mut args = vec!["barrier", "verify", "--group", group, "--epoch", epoch];
    args.extend_from_slice(checks);
    c.run(&args)
}

/// Writes `rows` as one `tail`-shaped batch in an Arrow IPC stream.
fn write_stream(path: &Path, rows: &[(i32, i64)]) {
    std::fs::write(path, arrow_stream(&[tail_batch(rows)])).unwrap();
}

#[test]
fn a_consumer_group_that_committed_exactly_the_cut_verifies() {
    let w = world();
    let cg = unique_name("app");
    w.c.commit_as_group_member(&cg, &w.topic, &[(0, 4), (1, 3), (2, 0)]);
    let out = verify(&w, "1", &["--consumer-group", &cg, "--output", "json"]);
    assert_code(&out, 0);
    let data = json_data(&out);
    assert_eq!(data["verified"], true);
    assert_eq!(data["checks"][0]["check"], "consumer-group");
    assert_eq!(data["checks"][0]["partitions"].as_array().unwrap().len(), 3);

    let human = verify(&w, "1", &["--consumer-group", &cg]);
    assert_code(&human, 0);
    assert!(
        stdout(&human).contains("3 of 3 partitions at the cut"),
        "{}",
        stdout(&human)
    );
    assert!(stdout(&human).ends_with("VERIFIED\n"), "{}", stdout(&human));
}

#[test]
fn each_partition_whose_committed_offset_differs_is_reported_with_exit_3() {
    let w = world();
    let cg = unique_name("app");
    w.c.commit_as_group_member(&cg, &w.topic, &[(0, 5), (1, 2)]);
    let out = verify(&w, "1", &["--consumer-group", &cg]);
    assert_code(&out, 3);
    let text = stdout(&out);
    let t = &w.topic;
    for line in [
        format!("  {t}/0: committed 5, cut offset 4: past the cut"),
        format!("  {t}/1: committed 2, cut offset 3: before the cut"),
        format!("  {t}/2: committed nothing, cut offset 0: nothing committed"),
        "0 of 3 partitions at the cut".to_owned(),
    ] {
        assert!(text.contains(&line), "{line:?} in:\n{text}");
    }
    assert!(
        stderr(&out).contains(&format!("consumer group {cg} differs")),
        "{}",
        stderr(&out)
    );

    let at_least = verify(&w, "1", &["--consumer-group", &cg, "--at-least"]);
    assert_code(&at_least, 3);
    assert!(stdout(&at_least).contains("1 of 3 partitions at or past the cut"));

    w.c.commit_as_group_member(&cg, &w.topic, &[(1, 3), (2, 0)]);
    assert_code(
        &verify(&w, "1", &["--consumer-group", &cg, "--at-least"]),
        0,
    );
    assert_code(&verify(&w, "1", &["--consumer-group", &cg]), 3);
}

#[test]
fn a_partial_cut_or_a_missing_epoch_is_reported_and_never_verified() {
    let w = world();
    let cg = unique_name("app");
    let partial = verify(&w, "2", &["--consumer-group", &cg, "--output", "json"]);
    assert_code(&partial, 3);
    let data = json_data(&partial);
    assert_eq!(data["verified"], false);
    assert!(
        data["problem"]
            .as_str()
            .unwrap()
            .contains("epoch 2 is a partial cut"),
        "{data}"
    );
    let missing = verify(&w, "9", &["--consumer-group", &cg]);
    assert_code(&missing, 3);
    assert!(stdout(&missing).contains("NOT VERIFIED: barrier group audit has no cut at epoch 9"));
    assert!(stderr(&missing).contains("has no cut at epoch 9 (latest complete cut: epoch 3)"));
    let unknown = w.c.run(&[
        "barrier",
        "verify",
        "--group",
        "nobody",
        "--epoch",
        "latest",
        "--consumer-group",
        &cg,
    ]);
    // An unknown group is not a failed check: exit 1, as on every command.
    assert_code(&unknown, 1);
    assert!(stderr(&unknown).contains("no such barrier group: nobody"));
}

fn write_snapshots(dir: &Path, names: &[&str]) {
    let bytes = container::encode(&BTreeMap::from([("count".to_owned(), vec![0, 0, 0, 7])]));
    for name in names {
        std::fs::write(dir.join(name), &bytes).unwrap();
    }
}

#[test]
fn java_go_snapshot_directories_need_a_decodable_file_per_logical_partition() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    write_snapshots(
        dir.path(),
        &[
            "partition-0-epoch-1.snapshot",
            "partition-1-epoch-1.snapshot",
            "partition-2-epoch-1.snapshot",
            "partition-0.snapshot",
        ],
    );
    let out = verify(&w, "1", &["--snapshot-dir", path]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("(java-go, detected) for epoch 1: 3 of 3"),
        "{}",
        stdout(&out)
    );

    std::fs::remove_file(dir.path().join("partition-2-epoch-1.snapshot")).unwrap();
    std::fs::write(
        dir.path().join("partition-1-epoch-1.snapshot"),
        [0, 0, 0, 1, 0, 0, 0, 1],
    )
    .unwrap();
    let out = verify(
        &w,
        "1",
        &["--snapshot-dir", path, "--layout", "go", "--output", "json"],
    );
    assert_code(&out, 3);
    let data = json_data(&out);
    let partitions = &data["checks"][0]["partitions"];
    assert_eq!(partitions[0]["ok"], true);
    assert_eq!(
        partitions[1]["files"][0]["error"],
        "truncated state snapshot"
    );
    assert_eq!(partitions[2]["files"], serde_json::json!([]));
    assert_eq!(partitions[2]["expected"], "partition-2-epoch-1.snapshot");

    let human = verify(&w, "1", &["--snapshot-dir", path]);
    let text = stdout(&human);
    assert!(
        text.contains("partition 1: partition-1-epoch-1.snapshot: truncated state snapshot"),
        "{text}"
    );
    assert!(
        text.contains("partition 2: missing partition-2-epoch-1.snapshot"),
        "{text}"
    );
}

#[test]
fn rust_snapshot_directories_are_matched_by_group_and_task() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    write_snapshots(
        dir.path(),
        &[
            "audit-0-0-epoch-3.snapshot",
            "audit-0-1-epoch-3.snapshot",
            "audit-0-2-epoch-3.snapshot",
            "audit-1-2-epoch-3.snapshot",
        ],
    );
    assert_code(&verify(&w, "latest", &["--snapshot-dir", path]), 0);
    assert_code(
        &verify(&w, "3", &["--snapshot-dir", path, "--task-prefix", "0"]),
        0,
    );
    let prefix_1 = verify(&w, "3", &["--snapshot-dir", path, "--task-prefix", "1"]);
    assert_code(&prefix_1, 3);
    assert!(
        stdout(&prefix_1).contains("missing audit-1-0-epoch-3.snapshot"),
        "{}",
        stdout(&prefix_1)
    );
    let other_group = verify(
        &w,
        "3",
        &[
            "--snapshot-dir",
            path,
            "--layout",
            "rust",
            "--snapshot-group",
            "ledger",
        ],
    );
    assert_code(&other_group, 3);
    let wrong_epoch = verify(&w, "1", &["--snapshot-dir", path]);
    assert_code(&wrong_epoch, 3);
    assert!(stdout(&wrong_epoch).contains("missing audit-<subtopology>-0-epoch-1.snapshot"));
}

#[test]
fn a_missing_or_mixed_snapshot_directory_is_an_error_not_a_finding() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let out = verify(&w, "1", &["--snapshot-dir", gone.to_str().unwrap()]);
    assert_code(&out, 1);
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));

    write_snapshots(
        dir.path(),
        &["partition-0-epoch-1.snapshot", "audit-0-0-epoch-1.snapshot"],
    );
    let mixed = verify(&w, "1", &["--snapshot-dir", dir.path().to_str().unwrap()]);
    assert_code(&mixed, 2);
    assert!(stderr(&mixed).contains("--layout"), "{}", stderr(&mixed));
    let contradiction = verify(
        &w,
        "1",
        &[
            "--snapshot-dir",
            dir.path().to_str().unwrap(),
            "--layout",
            "java-go",
            "--task-prefix",
            "0",
        ],
    );
    assert_code(&contradiction, 2);
}

/// An Arrow batch shaped like `tail` output: payload, then the five reserved columns.
fn tail_batch(rows: &[(i32, i64)]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("value", DataType::Binary, true),
        Field::new("__key", DataType::Binary, true),
        Field::new("__timestamp", DataType::Int64, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
        Field::new("__headers", DataType::Binary, true),
    ]));
    let n = rows.len();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(BinaryArray::from(vec![Some(&b"v"[..]); n])),
            Arc::new(BinaryArray::from(vec![Some(&b"k"[..]); n])),
            Arc::new(Int64Array::from(vec![1_724_500_000_000; n])),
            Arc::new(Int32Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(BinaryArray::from(vec![Some(&[0u8, 0, 0, 0][..]); n])),
        ],
    )
    .unwrap()
}

fn arrow_stream(batches: &[RecordBatch]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut writer = StreamWriter::try_new(&mut bytes, &batches[0].schema()).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    bytes
}

fn arrow_file(batches: &[RecordBatch]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut writer = FileWriter::try_new(&mut bytes, &batches[0].schema()).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    bytes
}

#[test]
fn an_arrow_input_holding_exactly_the_records_before_the_cut_verifies() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("orders.arrows");
    let rows = [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1), (0, 3), (1, 2)];
    std::fs::write(
        &stream,
        arrow_stream(&[tail_batch(&rows[..3]), tail_batch(&rows[3..])]),
    )
    .unwrap();
    let out = verify(&w, "1", &["--input", stream.to_str().unwrap()]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("7 rows): 3 of 3 partitions hold exactly the records before the cut"),
        "{}",
        stdout(&out)
    );

    let file = dir.path().join("orders.arrow");
    std::fs::write(&file, arrow_file(&[tail_batch(&rows)])).unwrap();
    assert_code(
        &verify(
            &w,
            "1",
            &["--input", file.to_str().unwrap(), "--topic", &w.topic],
        ),
        0,
    );

    let mut child = std::process::Command::new(binary())
        .args([
            "-b",
            &w.c.bootstrap(),
            "barrier",
            "verify",
            "--group",
            GROUP,
            "--epoch",
            "1",
            "--input",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&arrow_stream(&[tail_batch(&rows)]))
        .unwrap();
    let piped = child.wait_with_output().unwrap();
    assert_code(&piped, 0);
}

#[test]
fn what_tail_writes_by_default_verifies_through_a_pipe() {
    // `tail` writes typed reserved columns by default (timestamp, list of headers).
    let w = world();
    let tailed = w.c.run(&["tail", &w.topic, "-e", "--format", "arrow"]);
    assert_code(&tailed, 0);
    let mut child = std::process::Command::new(binary())
        .args([
            "-b",
            &w.c.bootstrap(),
            "barrier",
            "verify",
            "--group",
            GROUP,
        ])
        .args(["--epoch", "3", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&tailed.stdout)
        .unwrap();
    let piped = child.wait_with_output().unwrap();
    assert_code(&piped, 0);
    assert!(stdout(&piped).contains("10 rows)"), "{}", stdout(&piped));
}

#[test]
fn missing_past_cut_and_duplicated_input_records_are_reported_per_partition() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orders.arrows");
    let rows = [
        (0, 0),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 2),
        (2, 0),
    ];
    write_stream(&input, &rows);
    let out = verify(&w, "1", &["--input", input.to_str().unwrap()]);
    assert_code(&out, 3);
    let text = stdout(&out);
    let t = &w.topic;
    for line in [
        format!("  {t}/0 (cut offset 4): missing 1 (1 records); past the cut 4-5 (2 records)"),
        format!("  {t}/1 (cut offset 3): duplicated 2 (1 records)"),
        format!("  {t}/2 (cut offset 0): past the cut 0 (1 records)"),
        "0 of 3 partitions hold exactly".to_owned(),
    ] {
        assert!(text.contains(&line), "{line:?} in:\n{text}");
    }
    let json = verify(
        &w,
        "1",
        &["--input", input.to_str().unwrap(), "--output", "json"],
    );
    let data = json_data(&json);
    assert_eq!(
        data["checks"][0]["partitions"][0]["missing"],
        serde_json::json!([[1, 1]])
    );
    assert_eq!(
        data["checks"][0]["partitions"][0]["past_cut"],
        serde_json::json!([[4, 5]])
    );
}

#[test]
fn offset_gaps_left_by_transaction_markers_are_not_missing_records() {
    let mut c = Cluster::start();
    c.create_barrier_state(3);
    let topic = unique_name("ledger");
    c.create_topic(&topic, 1, false);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", c.bootstrap())
        .set("transactional.id", unique_name("tx"))
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .create()
        .unwrap();
    producer.init_transactions(TIMEOUT).unwrap();
    for batch in [2, 1] {
        producer.begin_transaction().unwrap();
        for _ in 0..batch {
            producer
                .send(BaseRecord::to(&topic).partition(0).key("k").payload("v"))
                .unwrap();
            producer.flush(TIMEOUT).unwrap();
        }
        producer.commit_transaction(TIMEOUT).unwrap();
    }
    // Records at 0, 1 and 3; commit markers at 2 and 4.
    c.write_cut("ledger", 1, &cut(&topic, &[(0, 5)], &[]));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("ledger.arrows");
    let input_arg = ["--input", input.to_str().unwrap()];
    write_stream(&input, &[(0, 0), (0, 1), (0, 3)]);
    assert_code(&verify_cut(&c, "ledger", "1", &input_arg), 0);

    write_stream(&input, &[(0, 0), (0, 1), (0, 2)]);
    let out = verify_cut(&c, "ledger", "1", &input_arg);
    assert_code(&out, 3);
    assert!(
        stdout(&out).contains("missing 3 (1 records); not in the topic 2 (1 records)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn inputs_that_cannot_be_checked_fail_with_a_clear_message() {
    let w = world();
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not arrow").unwrap();
    let out = verify(&w, "1", &["--input", text.to_str().unwrap()]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("not an Arrow IPC stream or file"),
        "{}",
        stderr(&out)
    );

    let absent = dir.path().join("absent.arrows");
    let out = verify(&w, "1", &["--input", absent.to_str().unwrap()]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("cannot read input"),
        "{}",
        stderr(&out)
    );

    let no_offsets = dir.path().join("plain.arrows");
    let schema = Arc::new(Schema::new(vec![Field::new(
        "__partition",
        DataType::Int32,
        true,
    )]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(vec![0]))]).unwrap();
    std::fs::write(&no_offsets, arrow_stream(&[batch])).unwrap();
    let out = verify(&w, "1", &["--input", no_offsets.to_str().unwrap()]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("has no __offset column"),
        "{}",
        stderr(&out)
    );

    let wrong_topic = verify(
        &w,
        "1",
        &["--input", absent.to_str().unwrap(), "--topic", "payments"],
    );
    assert_code(&wrong_topic, 2);
    assert!(stderr(&wrong_topic).contains("does not name topic payments"));
}

#[test]
fn a_cut_over_several_topics_needs_topic_for_the_input() {
    let mut c = Cluster::start();
    c.create_barrier_state(2);
    let two = Cut {
        triggered_at: 1,
        completed_at: 2,
        status: CutStatus::Complete,
        topics: ["a", "b"]
            .iter()
            .map(|t| CutTopic {
                topic: t.to_string(),
                partitions: vec![CutOffset {
                    partition: 0,
                    offset: 0,
                }],
            })
            .collect(),
        missing: vec![],
    };
    c.write_cut("pair", 1, &two);
    let out = verify_cut(&c, "pair", "1", &["--input", "-"]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("pass --topic"), "{}", stderr(&out));
}

#[test]
fn verify_needs_a_check_and_exits_4_when_the_broker_is_unreachable() {
    let usage = run(&[
        "-b",
        "127.0.0.1:9",
        "barrier",
        "verify",
        "--group",
        "g",
        "--epoch",
        "1",
    ]);
    assert_code(&usage, 2);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let started = std::time::Instant::now();
    let out = run(&[
        "-b",
        &closed,
        "--timeout",
        "2s",
        "--output",
        "json",
        "barrier",
        "verify",
        "--group",
        "g",
        "--epoch",
        "latest",
        "--consumer-group",
        "cg",
    ]);
    assert_code(&out, 4);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // Client logs come first on stderr; the error document is the last line.
    let last = stderr(&out).lines().last().unwrap_or_default().to_owned();
    let err: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(err["error"]["code"], 4);
}

#[test]
fn a_tail_of_several_topics_verifies_per_topic_by_its_topic_column() {
    let w = world();
    // Another topic with records at the same partition numbers: without `__topic`
    // its rows would count as orders' rows past the cut or twice.
    let payments = unique_name("payments");
    w.c.create_topic(&payments, 2, false);
    for i in 0..3 {
        w.c.send(&payments, 0, None, Some(format!("p{i}").as_bytes()));
        w.c.send(&payments, 1, None, Some(format!("p{i}").as_bytes()));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("both.arrows");
    let tail = w.c.run(&[
        "tail",
        &w.topic,
        &payments,
        "-e",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_code(&tail, 0);
    // Cut 3 is at the ends of orders: the tail holds exactly orders' records before it.
    let out = verify(
        &w,
        "3",
        &["--input", file.to_str().unwrap(), "--topic", &w.topic],
    );
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains(&format!("(topic {}, 10 rows)", w.topic)),
        "{}",
        stdout(&out)
    );
    // Cut 1 is below the ends: the records past it are reported, orders' only.
    let out = verify(
        &w,
        "1",
        &["--input", file.to_str().unwrap(), "--topic", &w.topic],
    );
    assert_code(&out, 3);
}
