//! `tail`'s text outputs for people: NDJSON and the table show keys, values and
//! headers decoded, compared with what kcat (Debian, /usr/bin/kcat) prints for the
//! same records. kcat cannot talk to Tansu (test-brokers.md §b), so these tests use
//! the embedded librdkafka mock cluster (`dev-cluster`), where it works.

use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use krabka_streams::io::kafka::mock_cluster::EmbeddedCluster;
use rdkafka::config::ClientConfig;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::{Value, json};

use crate::support::{binary, unique_name};

/// One record: partition, key, value, headers (value `None` = null header).
struct Rec {
    partition: i32,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(&'static str, Option<Vec<u8>>)>,
}

fn rec(partition: i32, key: &str, value: &str, headers: &[(&'static str, &str)]) -> Rec {
    Rec {
        partition,
        key: Some(key.as_bytes().to_vec()),
        value: Some(value.as_bytes().to_vec()),
        headers: headers
            .iter()
            .map(|(k, v)| (*k, Some(v.as_bytes().to_vec())))
            .collect(),
    }
}

fn produce(bootstrap: &str, topic: &str, records: &[Rec]) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .create()
        .unwrap();
    for r in records {
        let mut headers = OwnedHeaders::new();
        for (k, v) in &r.headers {
            headers = headers.insert(Header {
                key: k,
                value: v.as_deref(),
            });
        }
        let mut record: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic)
            .partition(r.partition)
            .headers(headers);
        if let Some(k) = &r.key {
            record = record.key(k.as_slice());
        }
        if let Some(v) = &r.value {
            record = record.payload(v.as_slice());
        }
        producer.send(record).map_err(|(e, _)| e).unwrap();
        producer.flush(Duration::from_secs(10)).unwrap();
    }
}

/// A mock cluster with one 2-partition topic holding `records`.
fn cluster_with(records: &[Rec]) -> (EmbeddedCluster, String) {
    let cluster = EmbeddedCluster::start(None).unwrap();
    let topic = unique_name("text");
    cluster.create_topic(&topic, 2).unwrap();
    produce(cluster.bootstrap(), &topic, records);
    (cluster, topic)
}

fn tail(bootstrap: &str, args: &[&str]) -> Output {
    Command::new(binary())
        .arg("tail")
        .args(args)
        .args(["-b", bootstrap, "--timeout", "20s"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ndjson(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// kcat's JSON envelope (`-J`) of every record, by (partition, offset).
fn kcat(bootstrap: &str, topic: &str) -> BTreeMap<(i64, i64), Value> {
    let out = Command::new("/usr/bin/kcat")
        .args(["-C", "-b", bootstrap, "-t", topic, "-e", "-J", "-q"])
        .stdin(Stdio::null())
        .output()
        .expect("kcat is installed at /usr/bin/kcat");
    assert!(
        out.status.success(),
        "kcat: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                (
                    v["partition"].as_i64().unwrap(),
                    v["offset"].as_i64().unwrap(),
                ),
                v,
            )
        })
        .collect()
}

/// kcat's header list `["k1","v1","k2","v2",…]` as tail's object (repeats as arrays).
fn kcat_headers(list: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let items = list.as_array().cloned().unwrap_or_default();
    for pair in items.chunks(2) {
        let name = pair[0].as_str().unwrap().to_string();
        let value = pair[1].clone();
        match out.get_mut(&name) {
            None => {
                out.insert(name, value);
            }
            Some(Value::Array(vs)) => vs.push(value),
            Some(first) => *first = Value::Array(vec![first.clone(), value]),
        }
    }
    Value::Object(out)
}

fn people_records() -> Vec<Rec> {
    vec![
        rec(0, "alice", "hello", &[("trace-id", "t-6")]),
        rec(
            1,
            "bob",
            "{\"a\":1}",
            &[("hop", "a"), ("hop", "b"), ("x", "y")],
        ),
        rec(0, "carol", "ünïcode ✓", &[]),
        rec(1, "dave", "", &[("trace-id", "t-9")]),
    ]
}

#[test]
fn ndjson_prints_keys_values_and_headers_as_text_the_way_kcat_does() {
    let (cluster, topic) = cluster_with(&people_records());
    let rows = ndjson(&tail(
        cluster.bootstrap(),
        &[&topic, "-e", "--format", "ndjson"],
    ));
    let reference = kcat(cluster.bootstrap(), &topic);
    assert_eq!(rows.len(), 4);
    assert_eq!(reference.len(), 4);
    for row in &rows {
        let at = (
            row["__partition"].as_i64().unwrap(),
            row["__offset"].as_i64().unwrap(),
        );
        let k = &reference[&at];
        assert_eq!(row["__key"], k["key"], "key of {at:?}");
        assert_eq!(row["value"], k["payload"], "value of {at:?}");
        assert_eq!(row["__headers"], kcat_headers(&k["headers"]), "{at:?}");
        assert!(row.get("key").is_none(), "no second key column: {row}");
    }
    let bob = rows.iter().find(|r| r["__key"] == "bob").unwrap();
    assert_eq!(bob["__headers"], json!({"hop": ["a", "b"], "x": "y"}));
    let alice = rows.iter().find(|r| r["__key"] == "alice").unwrap();
    assert_eq!(alice["__headers"], json!({"trace-id": "t-6"}));
    assert_eq!(alice["value"], "hello");
}

#[test]
fn a_key_format_replaces_the_key_rendering_instead_of_adding_a_column() {
    let (cluster, topic) = cluster_with(&[
        rec(0, "{\"id\":7,\"region\":\"eu\"}", "v", &[]),
        rec(1, "{\"id\":8,\"region\":\"us\"}", "w", &[]),
    ]);
    let (single, single_topic) = cluster_with(&[rec(0, "{\"id\":7}", "v", &[])]);
    let rows = ndjson(&tail(
        single.bootstrap(),
        &[
            &single_topic,
            "-e",
            "--format",
            "ndjson",
            "--key-format",
            "json",
        ],
    ));
    assert_eq!(rows[0]["__key"], json!({"id": 7}), "{rows:?}");
    let rows = ndjson(&tail(
        cluster.bootstrap(),
        &[&topic, "-e", "--format", "ndjson", "--key-format", "json"],
    ));
    let keys: Vec<&Value> = rows.iter().map(|r| &r["__key"]).collect();
    assert!(
        keys.contains(&&json!({"id": 7, "region": "eu"})),
        "{rows:?}"
    );
    assert!(
        keys.contains(&&json!({"id": 8, "region": "us"})),
        "{rows:?}"
    );
    assert!(rows.iter().all(|r| r.get("key").is_none()), "{rows:?}");
    let rows = ndjson(&tail(
        cluster.bootstrap(),
        &[&topic, "-e", "--format", "ndjson", "--key-format", "string"],
    ));
    assert!(
        rows.iter()
            .any(|r| r["__key"] == "{\"id\":7,\"region\":\"eu\"}"),
        "{rows:?}"
    );
    // Asked for by name, the decoded column stays.
    let rows = ndjson(&tail(
        cluster.bootstrap(),
        &[
            &topic,
            "-e",
            "--format",
            "ndjson",
            "--key-format",
            "json",
            "--columns",
            "key,__key,value",
        ],
    ));
    assert!(rows.iter().all(|r| r["key"] == r["__key"]), "{rows:?}");
}

#[test]
fn bytes_that_are_not_utf8_are_marked_base64_and_binary_base64_makes_every_cell_base64() {
    let (cluster, topic) = cluster_with(&[
        Rec {
            partition: 0,
            key: Some(vec![0xff, 0xfe]),
            value: Some(vec![0x00, 0x9f, 0x92, 0x96]),
            headers: vec![("bin", Some(vec![0xc3, 0x28])), ("none", None)],
        },
        Rec {
            partition: 0,
            key: None,
            value: None,
            headers: vec![],
        },
    ]);
    let rows = ndjson(&tail(
        cluster.bootstrap(),
        &[&topic, "-e", "--format", "ndjson"],
    ));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["__key"], json!({"base64": "//4="}));
    assert_eq!(rows[0]["value"], json!({"base64": "AJ+Slg=="}));
    assert_eq!(
        rows[0]["__headers"],
        json!({"bin": {"base64": "wyg="}, "none": null})
    );
    assert_eq!(rows[1]["__key"], Value::Null);
    assert_eq!(rows[1]["value"], Value::Null);
    assert_eq!(rows[1]["__headers"], json!({}));
    let rows = ndjson(&tail(
        cluster.bootstrap(),
        &[&topic, "-e", "--format", "ndjson", "--binary", "base64"],
    ));
    assert_eq!(rows[0]["__key"], "//4=");
    assert_eq!(rows[0]["value"], "AJ+Slg==");
    assert_eq!(rows[0]["__headers"], json!({"bin": "wyg=", "none": null}));
}

#[test]
fn the_table_on_a_terminal_that_reports_no_size_is_80_columns_wide() {
    let (cluster, topic) = cluster_with(&people_records());
    // `script` gives the tail a pty; with no terminal of its own on stdin, the pty
    // reports 0x0, as the issue saw.
    let command = format!(
        "{} tail {topic} -e -b {} --timeout 20s",
        binary().display(),
        cluster.bootstrap()
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env_remove("COLUMNS")
        .env_remove("KRABKA_OUTPUT")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    let widest = text
        .lines()
        .filter(|l| l.contains('│'))
        .map(|l| l.trim_end_matches('\r').chars().count())
        .max()
        .unwrap_or(0);
    assert!(widest > 40 && widest <= 80, "widest line {widest}:\n{text}");
    assert!(text.contains("hello"), "{text}");
    assert!(text.contains("{\"trace-id\":"), "{text}");
}

/// Runs `sh -c SCRIPT` under `script`, so its stderr is a terminal; the terminal's text.
fn on_a_terminal(shell: &str) -> String {
    let out = Command::new("script")
        .args(["-q", "-e", "-c", shell, "/dev/null"])
        .env_remove("KRABKA_OUTPUT")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{shell}: {text}");
    text
}

#[test]
fn arrow_written_into_a_pipe_by_default_says_once_on_the_terminal_how_to_get_ndjson() {
    let (cluster, topic) = cluster_with(&people_records());
    let tail = format!(
        "{} tail {topic} -e -b {} --timeout 20s",
        binary().display(),
        cluster.bootstrap()
    );
    let hint = "for text lines pass --format ndjson";
    let seen = on_a_terminal(&format!("{tail} | wc -c >/dev/null"));
    assert_eq!(seen.matches(hint).count(), 1, "{seen}");
    assert!(seen.contains("Arrow IPC"), "{seen}");
    // Asked for, or quiet, or into a file: nothing to say.
    for quiet in [
        format!("{tail} --format arrow | wc -c >/dev/null"),
        format!("{tail} --format ndjson | wc -c >/dev/null"),
        format!("{tail} -q | wc -c >/dev/null"),
        format!("{tail} > /dev/null"),
    ] {
        let seen = on_a_terminal(&quiet);
        assert!(!seen.contains(hint), "{quiet}: {seen}");
    }
    // Not a person watching: stderr is a pipe too.
    let out = Command::new("sh")
        .args(["-c", &format!("{tail} | wc -c >/dev/null")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains(hint));
}
