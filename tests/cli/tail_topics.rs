//! `tail` over several topics: every position rule holds per topic-partition — the
//! end offsets are captured per partition at start, each partition stops at its own
//! end (a partition-EOF of one topic never ends another topic's partition of the
//! same number), `-p` applies to every topic, and group mode exits and commits
//! exactly what it wrote. Answers are checked against an independent reader of the
//! broker: confluent-kafka in the test venv, record by record.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
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

/// `tail ARGS… -b BOOTSTRAP --format arrow`, bounded.
pub(crate) fn run_tail(dir: &Path, bootstrap: &str, args: &[&str]) -> Finished {
    let mut all = vec!["tail"];
    all.extend_from_slice(args);
    all.extend(["-b", bootstrap, "--timeout", "20s", "--format", "arrow"]);
    Running::start(dir, &all).wait(RUN_BOUND)
}

/// A record to produce: topic, partition, key, value.
pub(crate) type Produced = (String, i32, Option<Vec<u8>>, Vec<u8>);

/// Produces `(topic, partition, key, value)` records one per batch (Tansu's high
/// watermark is right only then), many batches in flight, one flush at the end.
pub(crate) fn produce_rows(bootstrap: &str, records: &[Produced]) {
    use rdkafka::config::ClientConfig;
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .create()
        .expect("producer");
    for (topic, partition, key, value) in records {
        let mut rec: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic)
            .partition(*partition)
            .payload(value.as_slice());
        if let Some(k) = key {
            rec = rec.key(k.as_slice());
        }
        loop {
            match producer.send(rec) {
                Ok(()) => break,
                Err((e, back)) => {
                    assert!(
                        matches!(
                            e.rdkafka_error_code(),
                            Some(rdkafka::types::RDKafkaErrorCode::QueueFull)
                        ),
                        "produce: {e}"
                    );
                    producer.poll(Duration::from_millis(50));
                    rec = back;
                }
            }
        }
    }
    producer
        .flush(Duration::from_secs(60))
        .expect("flush the produced records");
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

/// Rows without their topic (told apart by the value, which names it), sorted.
fn untopiced(rows: &[Row]) -> Vec<Row> {
    let mut out: Vec<Row> = rows
        .iter()
        .map(|(_, p, o, k, v)| (String::new(), *p, *o, k.clone(), v.clone()))
        .collect();
    out.sort();
    out
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

/// The topic a value of [`two_topics`] names.
fn topic_of(row: &Row) -> String {
    let value = base64::engine::general_purpose::STANDARD
        .decode(row.4.as_deref().unwrap_or_default())
        .unwrap();
    String::from_utf8_lossy(&value)
        .split('/')
        .next()
        .unwrap()
        .to_owned()
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
            &untopiced(&rows),
            &untopiced(&t.reference.rows),
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
    assert_same_rows(
        &untopiced(&rows),
        &untopiced(&t.reference.rows),
        "tail A B -e -g",
    );
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
    assert_same_rows(
        &untopiced(&rows),
        &untopiced(&wanted),
        "tail A B -e -p 3 -g",
    );
    assert_eq!(
        rows.iter().filter(|r| topic_of(r) == t.b).count(),
        5,
        "all of B/3"
    );
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
        &untopiced(&arrow_rows(dir.path(), &plain.stdout).0),
        &untopiced(&wanted),
        "tail A B -e -p 3",
    );
}
