//! `tail` over several topics: every position rule holds per topic-partition — the
//! end offsets are captured per partition at start, each partition stops at its own
//! end (a partition-EOF of one topic never ends another topic's partition of the
//! same number), `-p` applies to every topic, and group mode exits and commits
//! exactly what it wrote. Rows say their topic in `__topic` (dictionary-encoded
//! utf8, just before the five library columns), which `--where`, `--columns`, `run`
//! inputs, Parquet readers and `barrier verify --input` accept. Answers are checked
//! against an independent reader of the broker: confluent-kafka in the test venv,
//! record by record.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::admin::{committed_offsets, create_topics};
use crate::support::process::{Finished, Running};
use crate::support::tansu::Tansu;
use crate::support::{unique_name, venv_python};

/// A record as both readers report it: topic, partition, offset, key, value (base64).
pub(crate) type Row = (String, i32, i64, Option<String>, Option<String>);

/// Bound for one tail run: a hang fails the test instead of stalling the suite.
pub(crate) const RUN_BOUND: Duration = Duration::from_secs(90);

/// Reads every partition of the topics (or of `-p`'s partitions) from its log
/// start to the end offset seen at start, with confluent-kafka; prints the rows
/// and the watermarks.
pub(crate) const REFERENCE: &str = r#"
import sys, json, base64, time
from confluent_kafka import Consumer, TopicPartition, KafkaError
bootstrap, topics = sys.argv[1], json.loads(sys.argv[2])
b64 = lambda b: None if b is None else base64.b64encode(b).decode()
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "krabka-reference-unused",
              "enable.auto.commit": False, "enable.partition.eof": True})
md = c.list_topics(timeout=30)
marks, assign = {}, []
for t in topics:
    for p in sorted(md.topics[t].partitions):
        lo, hi = c.get_watermark_offsets(TopicPartition(t, p), timeout=30)
        marks[f"{t}/{p}"] = [lo, hi]
        if hi > lo:
            assign.append(TopicPartition(t, p, lo))
c.assign(assign)
left = {(tp.topic, tp.partition) for tp in assign}
rows, deadline = [], time.time() + 60
while left and time.time() < deadline:
    m = c.poll(0.5)
    if m is None:
        continue
    tp = (m.topic(), m.partition())
    if m.error():
        if m.error().code() == KafkaError._PARTITION_EOF:
            left.discard(tp)
            continue
        raise SystemExit(str(m.error()))
    hi = marks[f"{tp[0]}/{tp[1]}"][1]
    if m.offset() < hi:
        rows.append([m.topic(), m.partition(), m.offset(), b64(m.key()), b64(m.value())])
    if m.offset() + 1 >= hi:
        left.discard(tp)
if left:
    raise SystemExit(f"reference reader did not reach the end of {sorted(left)}")
c.close()
print(json.dumps({"rows": rows, "marks": marks}))
"#;

/// Reads a tail's Arrow IPC stream with pyarrow: rows with `__topic` when the
/// stream has it, else the topic is left empty.
pub(crate) const ARROW_ROWS: &str = r#"
import sys, json, base64, pyarrow.ipc as ipc
data = open(sys.argv[1], 'rb').read()
if not data:
    print(json.dumps({"names": [], "rows": []})); sys.exit()
t = ipc.open_stream(data).read_all()
b64 = lambda b: None if b is None else base64.b64encode(b).decode()
names = t.schema.names
value = [n for n in names if not n.startswith("__")]
topic = t.column("__topic").to_pylist() if "__topic" in names else [""] * t.num_rows
vals = t.column(value[0]).to_pylist() if value else [None] * t.num_rows
rows = [[tp, p, o, b64(k), b64(v) if isinstance(v, (bytes, type(None))) else base64.b64encode(str(v).encode()).decode()]
        for tp, p, o, k, v in zip(topic, t.column("__partition").to_pylist(), t.column("__offset").to_pylist(),
                                  t.column("__key").to_pylist(), vals)]
print(json.dumps({"names": names, "types": {f.name: str(f.type) for f in t.schema}, "rows": rows}))
"#;

/// What the reference reader saw: the rows and the watermarks per "topic/partition".
pub(crate) struct Reference {
    pub(crate) rows: Vec<Row>,
    pub(crate) marks: BTreeMap<String, (i64, i64)>,
}

pub(crate) fn row_of(v: &Value) -> Row {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    (
        v[0].as_str().unwrap().to_owned(),
        v[1].as_i64().unwrap() as i32,
        v[2].as_i64().unwrap(),
        text(&v[3]),
        text(&v[4]),
    )
}

pub(crate) fn reference(bootstrap: &str, topics: &[String]) -> Reference {
    let v = venv_python(
        REFERENCE,
        &[bootstrap.to_owned(), serde_json::to_string(topics).unwrap()],
    );
    Reference {
        rows: v["rows"].as_array().unwrap().iter().map(row_of).collect(),
        marks: v["marks"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, m)| (k.clone(), (m[0].as_i64().unwrap(), m[1].as_i64().unwrap())))
            .collect(),
    }
}

/// A tail's Arrow stream as rows (sorted) and the stream's column names.
pub(crate) fn arrow_rows(dir: &Path, stdout: &[u8]) -> (Vec<Row>, Value) {
    let file = dir.join(format!("{}.arrows", unique_name("tail")));
    std::fs::write(&file, stdout).unwrap();
    let v = venv_python(ARROW_ROWS, &[&file]);
    let mut rows: Vec<Row> = v["rows"].as_array().unwrap().iter().map(row_of).collect();
    rows.sort();
    (rows, v)
}

/// `tail ARGS… -b BOOTSTRAP`, bounded; an Arrow stream on stdout unless `--out` is given.
pub(crate) fn run_tail(dir: &Path, bootstrap: &str, args: &[&str]) -> Finished {
    let mut all = vec!["tail"];
    all.extend_from_slice(args);
    all.extend(["-b", bootstrap, "--timeout", "20s"]);
    if !args.contains(&"--out") {
        all.extend(["--format", "arrow"]);
    }
    Running::start(dir, &all).wait(RUN_BOUND)
}

/// A record to produce: topic, partition, key, value.
pub(crate) type Produced = (String, i32, Option<Vec<u8>>, Vec<u8>);

/// Produces `(topic, partition, key, value)` records one per batch (Tansu's high
/// watermark is right only then), many batches in flight, one flush at the end.
pub(crate) fn produce_rows(bootstrap: &str, records: &[Produced]) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::BaseRecord;

    use crate::support::checked_producer::CheckedProducer;
    let producer = CheckedProducer::new(
        ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("linger.ms", "0")
            .set("batch.num.messages", "1"),
    );
    for (topic, partition, key, value) in records {
        let mut rec: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic)
            .partition(*partition)
            .payload(value.as_slice());
        if let Some(k) = key {
            rec = rec.key(k.as_slice());
        }
        producer.send(rec);
    }
    producer.flush();
}

/// The issue's shape: topic A with four partitions, the last one much longer than
/// the others; topic B with four partitions, only its last one holding records
/// (its EOF comes early, while A's partition of the same number still has records).
struct TwoTopics {
    broker: Tansu,
    a: String,
    b: String,
    reference: Reference,
}

fn two_topics() -> TwoTopics {
    let broker = Tansu::start();
    let (a, b) = (unique_name("ta"), unique_name("tb"));
    create_topics(&broker.bootstrap(), &[(&a, 4), (&b, 4)]);
    // Values of 8 KiB: A/3's records take several fetches.
    let pad = "x".repeat(8000);
    let mut records = Vec::new();
    for i in 0..150 {
        records.push((
            a.clone(),
            i % 3,
            Some(format!("k{i}").into_bytes()),
            format!("{a}/{i}").into_bytes(),
        ));
    }
    for i in 0..450 {
        records.push((
            a.clone(),
            3,
            Some(format!("k{i}").into_bytes()),
            format!("{a}/3/{i}/{pad}").into_bytes(),
        ));
    }
    for i in 0..5 {
        records.push((b.clone(), 3, None, format!("{b}/3/{i}").into_bytes()));
    }
    produce_rows(&broker.bootstrap(), &records);
    let reference = reference(&broker.bootstrap(), &[a.clone(), b.clone()]);
    assert_eq!(
        reference.rows.len(),
        605,
        "the reference reader sees every record"
    );
    TwoTopics {
        broker,
        a,
        b,
        reference,
    }
}

pub(crate) fn sorted(rows: &[Row]) -> Vec<Row> {
    let mut rows = rows.to_vec();
    rows.sort();
    rows
}

/// Asserts two row sets are equal; on a difference names the first rows that differ
/// and the counts per partition, never the (large) rows themselves.
pub(crate) fn assert_same_rows(got: &[Row], want: &[Row], what: &str) {
    if got == want {
        return;
    }
    let per = |rows: &[Row]| {
        let mut m: BTreeMap<(String, i32), usize> = BTreeMap::new();
        for r in rows {
            *m.entry((r.0.clone(), r.1)).or_default() += 1;
        }
        m
    };
    let short = |r: &Row| format!("{}/{}@{}", r.0, r.1, r.2);
    let missing: Vec<String> = want
        .iter()
        .filter(|r| !got.contains(r))
        .take(5)
        .map(short)
        .collect();
    let extra: Vec<String> = got
        .iter()
        .filter(|r| !want.contains(r))
        .take(5)
        .map(short)
        .collect();
    panic!(
        "{what}: {} rows, expected {}; first missing {missing:?}, first unexpected {extra:?}; per partition got {:?}, expected {:?}",
        got.len(),
        want.len(),
        per(got),
        per(want)
    );
}

#[test]
fn until_end_over_two_topics_reads_every_partition_of_both_to_its_own_end() {
    let t = two_topics();
    let dir = tempfile::tempdir().unwrap();
    // Small batches as well as the default: the poll side then looks at where the
    // partitions stand between the records of one fetch.
    for batch in ["10000", "7", "1"] {
        let setting = format!("--batch-records={batch}");
        let run = run_tail(
            dir.path(),
            &t.broker.bootstrap(),
            &[&t.a, &t.b, "-e", &setting],
        );
        assert_eq!(run.code(), 0, "{}", run.stderr);
        let (rows, _) = arrow_rows(dir.path(), &run.stdout);
        assert_same_rows(
            &rows,
            &sorted(&t.reference.rows),
            &format!("tail A B -e with {setting}"),
        );
    }
}

#[test]
fn a_group_tail_over_two_topics_until_end_exits_and_commits_every_partition_end() {
    let t = two_topics();
    let dir = tempfile::tempdir().unwrap();
    let group = unique_name("fresh");
    let run = run_tail(
        dir.path(),
        &t.broker.bootstrap(),
        &[
            &t.a,
            &t.b,
            "-e",
            "-g",
            &group,
            "-X",
            "session.timeout.ms=6000",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let (rows, _) = arrow_rows(dir.path(), &run.stdout);
    assert_same_rows(&rows, &sorted(&t.reference.rows), "tail A B -e -g");
    // What it wrote is committed: each partition's end where it had records.
    for topic in [&t.a, &t.b] {
        let committed = committed_offsets(&t.broker.bootstrap(), &group, topic, 4);
        for (p, offset) in committed {
            let (low, high) = t.reference.marks[&format!("{topic}/{p}")];
            if high > low {
                assert_eq!(offset, Some(high), "{topic}/{p} committed at its end");
            }
        }
    }
    // A second run of the group finds nothing left and exits too.
    let again = run_tail(
        dir.path(),
        &t.broker.bootstrap(),
        &[
            &t.a,
            &t.b,
            "-e",
            "-g",
            &group,
            "-X",
            "session.timeout.ms=6000",
        ],
    );
    assert_eq!(again.code(), 0, "{}", again.stderr);
    assert!(arrow_rows(dir.path(), &again.stdout).0.is_empty());
}

#[test]
fn partitions_apply_to_every_topic_with_a_group_and_commit_only_those_partitions() {
    let t = two_topics();
    let dir = tempfile::tempdir().unwrap();
    let group = unique_name("freshD");
    let run = run_tail(
        dir.path(),
        &t.broker.bootstrap(),
        &[
            &t.a,
            &t.b,
            "-e",
            "-p",
            "3",
            "-g",
            &group,
            "-X",
            "session.timeout.ms=6000",
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let (rows, _) = arrow_rows(dir.path(), &run.stdout);
    let wanted: Vec<Row> = t
        .reference
        .rows
        .iter()
        .filter(|r| r.1 == 3)
        .cloned()
        .collect();
    assert_eq!(wanted.len(), 455);
    assert_same_rows(&rows, &sorted(&wanted), "tail A B -e -p 3 -g");
    // Partition 3 of each topic is committed at its end; no other partition was read.
    for topic in [&t.a, &t.b] {
        let committed = committed_offsets(&t.broker.bootstrap(), &group, topic, 4);
        for (p, offset) in committed {
            let (_, high) = t.reference.marks[&format!("{topic}/{p}")];
            let expected = (p == 3).then_some(high);
            assert_eq!(offset, expected, "{topic}/{p}");
        }
    }
    // Without a group -p 3 reads the same records.
    let plain = run_tail(
        dir.path(),
        &t.broker.bootstrap(),
        &[&t.a, &t.b, "-e", "-p", "3"],
    );
    assert_eq!(plain.code(), 0, "{}", plain.stderr);
    assert_same_rows(
        &arrow_rows(dir.path(), &plain.stdout).0,
        &sorted(&wanted),
        "tail A B -e -p 3",
    );
}

/// Two small topics with partitions of the same numbers, JSON values.
fn small_topics() -> (Tansu, String, String, Reference) {
    let broker = Tansu::start();
    let (x, y) = (unique_name("tx"), unique_name("ty"));
    create_topics(&broker.bootstrap(), &[(&x, 2), (&y, 3)]);
    let mut records = Vec::new();
    for i in 0..6 {
        let value = format!("{{\"n\": {i}, \"from\": \"{x}\"}}");
        records.push((
            x.clone(),
            i % 2,
            Some(format!("k{i}").into_bytes()),
            value.into_bytes(),
        ));
    }
    for i in 0..4 {
        let value = format!("{{\"n\": {}, \"from\": \"{y}\"}}", 100 + i);
        records.push((y.clone(), i % 2, None, value.into_bytes()));
    }
    produce_rows(&broker.bootstrap(), &records);
    let reference = reference(&broker.bootstrap(), &[x.clone(), y.clone()]);
    assert_eq!(reference.rows.len(), 10);
    (broker, x, y, reference)
}

const DICTIONARY_UTF8: &str = "dictionary<values=string, indices=int32, ordered=0>";

#[test]
fn several_topics_carry_a_dictionary_encoded_topic_column_that_where_and_columns_accept() {
    let (broker, x, y, reference) = small_topics();
    let dir = tempfile::tempdir().unwrap();
    let run = run_tail(dir.path(), &broker.bootstrap(), &[&x, &y, "-e"]);
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let (rows, v) = arrow_rows(dir.path(), &run.stdout);
    let mut want = reference.rows.clone();
    want.sort();
    assert_same_rows(&rows, &want, "tail X Y -e, topics from __topic");
    assert_eq!(v["types"]["__topic"], DICTIONARY_UTF8);
    let names: Vec<&str> = v["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let at = names.iter().position(|n| *n == "__topic").unwrap();
    assert_eq!(
        &names[at..],
        [
            "__topic",
            "__key",
            "__timestamp",
            "__partition",
            "__offset",
            "__headers"
        ],
        "just before the five library columns"
    );

    // --where and --columns name it.
    let predicate = format!("__topic = '{y}' AND __partition = 1");
    let only_y = run_tail(
        dir.path(),
        &broker.bootstrap(),
        &[
            &x,
            &y,
            "-e",
            "--where",
            &predicate,
            "--columns",
            "__topic,__partition,__offset,__key",
        ],
    );
    assert_eq!(only_y.code(), 0, "{}", only_y.stderr);
    let (rows, v) = arrow_rows(dir.path(), &only_y.stdout);
    assert_eq!(
        v["names"],
        serde_json::json!(["__topic", "__partition", "__offset", "__key"])
    );
    let offsets: Vec<(String, i32, i64)> = rows.iter().map(|r| (r.0.clone(), r.1, r.2)).collect();
    assert_eq!(offsets, vec![(y.clone(), 1, 0), (y.clone(), 1, 1)]);

    // One topic: only on request.
    let one = run_tail(dir.path(), &broker.bootstrap(), &[&x, "-e"]);
    let (_, v) = arrow_rows(dir.path(), &one.stdout);
    assert!(v["types"].get("__topic").is_none(), "{v}");
    let asked = run_tail(
        dir.path(),
        &broker.bootstrap(),
        &[&x, "-e", "--topic-column"],
    );
    let (rows, v) = arrow_rows(dir.path(), &asked.stdout);
    assert_eq!(v["types"]["__topic"], DICTIONARY_UTF8);
    assert!(rows.iter().all(|r| r.0 == x) && rows.len() == 6);
}

const DUCKDB_TOPICS: &str = r#"
import sys, json, duckdb
con = duckdb.connect()
rows = con.execute(f"SELECT __topic, typeof(__topic), count(*) FROM read_parquet('{sys.argv[1]}') GROUP BY ALL ORDER BY 1").fetchall()
print(json.dumps([list(r) for r in rows]))
"#;

#[test]
fn the_topic_column_reaches_parquet_duckdb_and_run_inputs() {
    let (broker, x, y, _) = small_topics();
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("both.parquet");
    let run = run_tail(
        dir.path(),
        &broker.bootstrap(),
        &[
            &x,
            &y,
            "-e",
            "--value-format",
            "json",
            "--out",
            parquet.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let v = venv_python(DUCKDB_TOPICS, &[&parquet]);
    assert_eq!(
        v,
        serde_json::json!([[x.clone(), "VARCHAR", 6], [y.clone(), "VARCHAR", 4]])
    );

    // The Arrow output of both topics is a `run` input; a filter may name `__topic`.
    let arrows = dir.path().join("both.arrows");
    let run = run_tail(
        dir.path(),
        &broker.bootstrap(),
        &[
            &x,
            &y,
            "-e",
            "--value-format",
            "json",
            "--out",
            arrows.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), 0, "{}", run.stderr);
    let topology = dir.path().join("only-y.yaml");
    std::fs::write(
        &topology,
        format!(
            "version: 1\nnodes:\n  - source: events\n    topics: [{x}, {y}]\n    value: json\n    columns:\n      n: int64\n      from: utf8\n  - filter: only-y\n    parent: events\n    where: __topic = '{y}' AND n >= 100\n  - sink: out\n    parent: only-y\n    topic: out\n    value: json\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out.arrows");
    let input = format!("events={}", arrows.display());
    let sink = format!("out={}", out.display());
    let ran = Running::start(
        dir.path(),
        &[
            "run",
            topology.to_str().unwrap(),
            "--input",
            &input,
            "--sink",
            &sink,
        ],
    )
    .wait(RUN_BOUND);
    assert_eq!(ran.code(), 0, "{}", ran.stderr);
    let (rows, v) = arrow_rows(dir.path(), &std::fs::read(&out).unwrap());
    assert_eq!(v["types"]["__topic"], DICTIONARY_UTF8, "{v}");
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.0 == y));
}

#[test]
fn a_start_offset_past_a_partitions_end_is_refused_when_following_and_reads_nothing_with_e() {
    let broker = Tansu::start();
    let t = unique_name("short");
    create_topics(&broker.bootstrap(), &[(&t, 1)]);
    let records: Vec<Produced> = (0..3)
        .map(|i| (t.clone(), 0, None, format!("v{i}").into_bytes()))
        .collect();
    produce_rows(&broker.bootstrap(), &records);
    let dir = tempfile::tempdir().unwrap();
    // Fetching offset 10 of a 3-record log would be answered out of range and the
    // client would restart at the log start: offsets 0-2 would be written.
    let run = run_tail(
        dir.path(),
        &broker.bootstrap(),
        &[&t, "--from", "10", "-n", "1"],
    );
    assert_eq!(run.code(), 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("offset 10 is past the end of {t}/0")),
        "{}",
        run.stderr
    );
    assert!(arrow_rows(dir.path(), &run.stdout).0.is_empty());
    let bounded = run_tail(dir.path(), &broker.bootstrap(), &[&t, "--from", "10", "-e"]);
    assert_eq!(bounded.code(), 0, "{}", bounded.stderr);
    assert!(arrow_rows(dir.path(), &bounded.stdout).0.is_empty());
    let inside = run_tail(dir.path(), &broker.bootstrap(), &[&t, "--from", "2:3"]);
    assert_eq!(inside.code(), 0, "{}", inside.stderr);
    let (rows, _) = arrow_rows(dir.path(), &inside.stdout);
    assert_eq!(rows.iter().map(|r| r.2).collect::<Vec<_>>(), vec![2]);
}
