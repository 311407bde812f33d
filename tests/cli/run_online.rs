//! `run FILE -b …` end to end against a Tansu broker: JSON orders in, aggregated
//! records out on the sink topic, the state the runner saves on Ctrl-C decoded by
//! `snapshot dump`, at-least-once across a `kill -9` and a restart, and dead
//! letters with the `krabka.*` headers. Every record is produced in its own batch
//! and the runner's producer is told to do the same (Tansu's high watermark is
//! wrong after multi-record batches, docs/testing.md §b).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rdkafka::message::{Headers, Message};
use serde_json::{Value, json};

use crate::support::registered_orders::{RegisteredOrders, start_registered_orders};
use crate::support::tansu::Tansu;
use crate::support::topic_read::TopicRead;
use crate::support::{binary, unique_name};

pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) use crate::support::admin::{create_topic, produce_bytes};

/// Produces (partition, key, value) one record per batch.
pub(crate) fn produce(bootstrap: &str, topic: &str, records: &[(i32, String, String)]) {
    let bytes: Vec<(i32, String, Vec<u8>)> = records
        .iter()
        .map(|(p, k, v)| (*p, k.clone(), v.clone().into_bytes()))
        .collect();
    produce_bytes(bootstrap, topic, &bytes);
}

/// One record read back: key, value, headers.
#[derive(Debug, Clone)]
pub(crate) struct Read {
    pub(crate) key: Option<String>,
    pub(crate) value: Value,
    pub(crate) headers: BTreeMap<String, String>,
}

/// Reads `topic` from the beginning until `done` holds for everything read so far,
/// or the deadline passes; returns what was read.
pub(crate) fn read_until(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    deadline: Duration,
    done: impl Fn(&[Read]) -> bool,
) -> Vec<Read> {
    TopicRead::new(bootstrap, topic, partitions)
        .deadline(deadline)
        .until(
            |m| Read {
                key: m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
                value: serde_json::from_slice(m.payload().unwrap_or(b"null")).unwrap_or_else(
                    |_| {
                        Value::String(
                            String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
                        )
                    },
                ),
                headers: m
                    .headers()
                    .map(|hs| {
                        hs.iter()
                            .map(|h| {
                                (
                                    h.key.to_owned(),
                                    String::from_utf8_lossy(h.value.unwrap_or_default())
                                        .into_owned(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            done,
        )
}

pub(crate) fn write_topology(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("topology.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `run TOPOLOGY -b BOOTSTRAP EXTRA…`, stdin closed, stdout and stderr piped.
pub(crate) fn runner_command(bootstrap: &str, topology: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .args(["run", topology.to_str().unwrap(), "-b", bootstrap])
        // One record per batch: Tansu's high watermark is wrong after multi-record batches.
        .args(["-X", "linger.ms=0", "-X", "batch.num.messages=1"])
        // A killed member holds its partitions until its session times out.
        .args([
            "-X",
            "session.timeout.ms=6000",
            "-X",
            "heartbeat.interval.ms=500",
        ])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Starts the runner in the background.
pub(crate) fn start_runner(bootstrap: &str, topology: &Path, extra: &[&str]) -> Child {
    runner_command(bootstrap, topology, extra).spawn().unwrap()
}

/// Ctrl-C, then the runner's output; it must stop within the timeout.
pub(crate) fn interrupt(mut child: Child) -> Output {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let until = Instant::now() + TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            child.kill().unwrap();
            panic!("the runner did not stop within {TIMEOUT:?} of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn order(user: &str, amount: i64) -> String {
    json!({"user": user, "country": "NL", "amount": amount}).to_string()
}

#[test]
fn orders_in_give_running_totals_per_user_on_the_sink_and_state_that_snapshot_dump_decodes() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (orders, totals) = (unique_name("orders"), unique_name("totals"));
    create_topic(&bootstrap, &orders, 1);
    create_topic(&bootstrap, &totals, 1);
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let topology = write_topology(
        tmp.path(),
        &format!(
            r#"version: 1
settings:
  consumer_group: {group}
  state_dir: {state}
nodes:
  - source: orders
    topics: [{orders}]
    value: json
  - filter: large
    parent: orders
    where: amount > 100
  - group_by: by-user
    parent: large
    keys: [user]
    aggregates: [sum(amount) AS total, count(*) AS n]
  - sink: out
    parent: by-user
    topic: {totals}
    value: json
"#,
            group = unique_name("group"),
            state = state.display()
        ),
    );
    produce(
        &bootstrap,
        &orders,
        &[
            (0, "o1".into(), order("alice", 150)),
            (0, "o2".into(), order("bob", 50)),
            (0, "o3".into(), order("bob", 300)),
            (0, "o4".into(), order("alice", 200)),
        ],
    );
    let runner = start_runner(&bootstrap, &topology, &["--output", "json"]);
    let final_totals = |rs: &[Read]| {
        let last: BTreeMap<String, Value> = rs
            .iter()
            .map(|r| {
                (
                    r.value["user"].as_str().unwrap_or("").to_owned(),
                    r.value.clone(),
                )
            })
            .collect();
        last.get("alice") == Some(&json!({"user": "alice", "total": 350, "n": 2}))
            && last.get("bob") == Some(&json!({"user": "bob", "total": 300, "n": 1}))
    };
    let read = read_until(&bootstrap, &totals, 1, TIMEOUT, final_totals);
    let out = interrupt(runner);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        final_totals(&read),
        "sink records {read:?}\nrunner stderr:\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["data"]["outcome"], "interrupted");
    assert_eq!(report["data"]["metrics"]["input_records"], 4);

    // Ctrl-C saved the partition's live state under the Java/Go name.
    assert!(state.join("partition-0.snapshot").exists());
    let dump = Command::new(binary())
        .args([
            "--output",
            "json",
            "snapshot",
            "dump",
            state.to_str().unwrap(),
            "--partition",
            "0",
            "--epoch",
            "live",
        ])
        .output()
        .unwrap();
    assert_eq!(
        dump.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dumped: Value = serde_json::from_slice(&dump.stdout).unwrap();
    let entries = dumped["data"]["entries"].as_array().unwrap();
    let by_user = entries.iter().find(|e| e["name"] == "by-user").unwrap();
    assert_eq!(by_user["kind"], "groupBy", "{by_user}");
    let text = by_user.to_string();
    assert!(text.contains("alice") && text.contains("350"), "{text}");
}

#[test]
fn at_least_once_loses_no_record_across_a_kill_9_and_a_restart() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (input, output) = (unique_name("events"), unique_name("kept"));
    create_topic(&bootstrap, &input, 3);
    create_topic(&bootstrap, &output, 3);
    let tmp = tempfile::tempdir().unwrap();
    let topology = write_topology(
        tmp.path(),
        &format!(
            r#"version: 1
settings:
  consumer_group: {group}
nodes:
  - source: events
    topics: [{input}]
    value: json
  - with_columns: tagged
    parent: events
    columns: ["id * 2 AS twice"]
  - sink: out
    parent: tagged
    topic: {output}
    value: json
"#,
            group = unique_name("group"),
        ),
    );
    let batch = |from: i64, to: i64| -> Vec<(i32, String, String)> {
        (from..to)
            .map(|id| {
                (
                    (id % 3) as i32,
                    format!("k{id}"),
                    json!({"id": id}).to_string(),
                )
            })
            .collect()
    };
    let ids_seen = |rs: &[Read]| -> BTreeSet<i64> {
        rs.iter().filter_map(|r| r.value["id"].as_i64()).collect()
    };
    produce(&bootstrap, &input, &batch(0, 60));
    let first = start_runner(&bootstrap, &topology, &[]);
    let read = read_until(&bootstrap, &output, 3, TIMEOUT, |rs| !rs.is_empty());
    assert!(!read.is_empty(), "the first runner produced nothing");
    let mut first = first;
    first.kill().unwrap(); // SIGKILL: no flush, no commit, no save
    first.wait().unwrap();
    produce(&bootstrap, &input, &batch(60, 120));

    let second = start_runner(&bootstrap, &topology, &[]);
    let read = read_until(&bootstrap, &output, 3, Duration::from_secs(60), |rs| {
        ids_seen(rs).len() == 120
    });
    let out = interrupt(second);
    let seen = ids_seen(&read);
    let missing: Vec<i64> = (0..120).filter(|id| !seen.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "lost records {missing:?}\nrunner stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for r in &read {
        let id = r.value["id"].as_i64().unwrap();
        assert_eq!(r.value["twice"], json!(id * 2));
        assert_eq!(
            r.key.as_deref(),
            Some(format!("k{id}").as_str()),
            "keys are carried over"
        );
    }
    assert_eq!(out.status.code(), Some(130));
}

#[test]
fn a_failed_batch_goes_to_the_dead_letter_topic_with_the_krabka_headers() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (input, output, dlq) = (unique_name("in"), unique_name("out"), unique_name("dlq"));
    for t in [&input, &output, &dlq] {
        create_topic(&bootstrap, t, 2);
    }
    let tmp = tempfile::tempdir().unwrap();
    let topology = write_topology(
        tmp.path(),
        &format!(
            r#"version: 1
settings:
  consumer_group: {group}
  error_policy: dead-letter
  dead_letter_topic: {dlq}
nodes:
  - source: in
    topics: [{input}]
    value: json
  - sink: out
    parent: in
    topic: {output}
    value: json
"#,
            group = unique_name("group"),
        ),
    );
    produce(
        &bootstrap,
        &input,
        &[
            (0, "good".into(), json!({"n": 1}).to_string()),
            (1, "bad".into(), "{not json".into()),
        ],
    );
    let runner = start_runner(
        &bootstrap,
        &topology,
        &["--output", "json", "--metrics-interval", "500ms"],
    );
    let dead = read_until(&bootstrap, &dlq, 2, TIMEOUT, |rs| !rs.is_empty());
    let good = read_until(&bootstrap, &output, 2, TIMEOUT, |rs| !rs.is_empty());
    let out = interrupt(runner);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(dead.len(), 1, "{dead:?}\n{stderr}");
    let d = &dead[0];
    assert_eq!(d.key.as_deref(), Some("bad"));
    assert_eq!(d.value, Value::String("{not json".into()));
    assert_eq!(d.headers["krabka.source.topic"], input);
    assert_eq!(d.headers["krabka.source.partition"], "1");
    assert_eq!(d.headers["krabka.source.offset"], "0");
    assert!(
        d.headers["krabka.error.class"].starts_with("krabka_streams::"),
        "{:?}",
        d.headers
    );
    assert!(
        d.headers["krabka.error.message"].contains("offset 0"),
        "{:?}",
        d.headers
    );
    assert_eq!(good.len(), 1, "{good:?}");
    assert_eq!(good[0].value, json!({"n": 1}));
    assert!(
        stderr.lines().any(|l| l.starts_with(r#"{"metrics":{"#)),
        "no metrics line every --metrics-interval: {stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["data"]["metrics"]["dead_letter_records"], 1);
    assert_eq!(report["data"]["metrics"]["failures"], 1);
}

pub(crate) const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"user","type":"string"},
 {"name":"country","type":"string"},
 {"name":"amount","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}"#;

fn avro_order(schema: &apache_avro::Schema, user: &str, amount: i64, ts: i64) -> Vec<u8> {
    use apache_avro::types::Value as Avro;
    let value = Avro::Record(vec![
        ("user".into(), Avro::String(user.into())),
        ("country".into(), Avro::String("BE".into())),
        ("amount".into(), Avro::Long(amount)),
        ("ts".into(), Avro::TimestampMillis(ts)),
    ]);
    apache_avro::writer::datum::GenericDatumWriter::builder(schema)
        .build()
        .and_then(|w| w.write_value_to_vec(value))
        .unwrap()
}

/// The bodies of (user, amount) orders, one millisecond apart from 1_700_000_000_000.
pub(crate) fn avro_orders(schema: &apache_avro::Schema, orders: &[(&str, i64)]) -> Vec<Vec<u8>> {
    let ts = |i: usize| 1_700_000_000_000 + i as i64;
    let order =
        |(i, (user, amount)): (usize, &(&str, i64))| avro_order(schema, user, *amount, ts(i));
    orders.iter().enumerate().map(order).collect()
}

#[test]
fn the_shipped_example_runs_online_over_avro_orders_from_the_registry() {
    // The example's own topic names: every test has a broker of its own.
    let RegisteredOrders {
        tansu: _tansu,
        bootstrap,
        registry,
        ..
    } = start_registered_orders(
        &[("orders", 2), ("large-orders-by-user", 1)],
        ORDER_SCHEMA,
        |schema| avro_orders(schema, &[("alice", 150), ("bob", 99), ("alice", 120)]),
    );
    let topology =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/topologies/large-orders-by-user.yaml");
    let runner = start_runner(&bootstrap, &topology, &["--registry", &registry.url()]);
    let done = |rs: &[Read]| {
        rs.iter()
            .any(|r| r.value == json!({"user": "alice", "total": 270, "n": 2}))
    };
    let read = read_until(&bootstrap, "large-orders-by-user", 1, TIMEOUT, done);
    let out = interrupt(runner);
    assert!(
        done(&read),
        "{read:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!read.iter().any(|r| r.value["user"] == "bob"), "{read:?}");
    assert_eq!(out.status.code(), Some(130));
}

#[test]
fn the_demo_runs_the_example_online_and_gets_the_offline_totals() {
    let out = Command::new(binary())
        .args(["--output", "json", "demo"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps = doc["data"]["steps"].as_array().unwrap();
    let online = steps
        .iter()
        .find(|s| s["step"].as_str().unwrap_or("").contains("online"))
        .expect("an online step");
    let offline = steps
        .iter()
        .find(|s| s["step"].as_str().unwrap_or("").contains("offline"))
        .expect("an offline step");
    let last_per_user = |rows: &Value| -> BTreeMap<String, (i64, i64)> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["user"].as_str().unwrap().to_owned(),
                    (r["total"].as_i64().unwrap(), r["n"].as_i64().unwrap()),
                )
            })
            .collect()
    };
    let online = last_per_user(&online["result"]["totals"]);
    assert_eq!(online, last_per_user(&offline["result"]["totals"]));
    assert_eq!(online["dave"], (130, 1));
}

#[test]
fn a_missing_source_topic_fails_and_an_unreachable_cluster_exits_4() {
    let tansu = Tansu::start();
    let tmp = tempfile::tempdir().unwrap();
    let topology = write_topology(
        tmp.path(),
        r#"version: 1
settings:
  consumer_group: g
nodes:
  - source: in
    topics: [no-such-topic]
    value: json
  - sink: out
    parent: in
    topic: out
    value: json
"#,
    );
    let run = |bootstrap: &str| {
        Command::new(binary())
            .args([
                "run",
                topology.to_str().unwrap(),
                "-b",
                bootstrap,
                "--timeout",
                "3s",
            ])
            .output()
            .unwrap()
    };
    let missing = run(&tansu.bootstrap());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("source topic no-such-topic does not exist"),
        "{stderr}"
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let unreachable = run(&format!("127.0.0.1:{port}"));
    assert_eq!(
        unreachable.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&unreachable.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// Clicks on a 2-partition topic counted per page (`count(*) AS n`) into a
/// 1-partition sink, with the state kept in a state directory: the fixture of the
/// kill -9 and rebalance tests.
struct PageCounts {
    tansu: Tansu,
    input: String,
    output: String,
    topology: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl PageCounts {
    fn start() -> Self {
        let tansu = Tansu::start();
        let bootstrap = tansu.bootstrap();
        let (input, output) = (unique_name("clicks"), unique_name("counts"));
        create_topic(&bootstrap, &input, 2);
        create_topic(&bootstrap, &output, 1);
        let dir = tempfile::tempdir().unwrap();
        let topology = write_topology(
            dir.path(),
            &format!(
                r#"version: 1
settings:
  consumer_group: {group}
  state_store: dir
  state_dir: {state}
nodes:
  - source: clicks
    topics: [{input}]
    value: json
  - group_by: per-page
    parent: clicks
    keys: [page]
    aggregates: [count(*) AS n]
  - sink: out
    parent: per-page
    topic: {output}
    value: json
"#,
                group = unique_name("group"),
                state = dir.path().join("state").display()
            ),
        );
        PageCounts {
            tansu,
            input,
            output,
            topology,
            _dir: dir,
        }
    }

    /// `n` clicks: click i on page p<i % 2>, in partition i % 2 (a page only ever
    /// lives in one partition).
    fn produce_clicks(&self, n: usize) {
        let clicks: Vec<(i32, String, String)> = (0..n)
            .map(|i| {
                (
                    (i % 2) as i32,
                    format!("c{i}"),
                    json!({"page": format!("p{}", i % 2)}).to_string(),
                )
            })
            .collect();
        produce(&self.tansu.bootstrap(), &self.input, &clicks);
    }
}

/// The highest count the sink has shown per page.
fn page_counts(rs: &[Read]) -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    for r in rs {
        let page = r.value["page"].as_str().unwrap_or("").to_owned();
        let n = r.value["n"].as_i64().unwrap_or(0);
        let e = m.entry(page).or_insert(0);
        *e = (*e).max(n);
    }
    m
}

#[test]
fn group_by_state_in_a_state_dir_survives_a_kill_9_with_no_count_lost() {
    let fixture = PageCounts::start();
    let bootstrap = fixture.tansu.bootstrap();
    let (output, topology) = (&fixture.output, &fixture.topology);
    fixture.produce_clicks(20);
    let mut first = start_runner(&bootstrap, topology, &[]);
    let read = read_until(&bootstrap, output, 1, TIMEOUT, |rs| {
        page_counts(rs).values().sum::<i64>() >= 20
    });
    assert_eq!(page_counts(&read).values().sum::<i64>(), 20, "{read:?}");
    first.kill().unwrap(); // SIGKILL: no save on the way out
    first.wait().unwrap();
    fixture.produce_clicks(20);

    let second = start_runner(&bootstrap, topology, &[]);
    let read = read_until(&bootstrap, output, 1, Duration::from_secs(60), |rs| {
        page_counts(rs).values().all(|n| *n >= 20) && page_counts(rs).len() == 2
    });
    let out = interrupt(second);
    let totals = page_counts(&read);
    // At least once: a count may include a record twice, never miss one.
    assert!(
        totals.len() == 2 && totals.values().all(|n| *n >= 20),
        "{totals:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Lines of a child's stderr, collected by a thread as they come.
fn stderr_lines(child: &mut Child) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    use std::io::BufRead;
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

#[test]
fn a_rebalance_hands_a_partition_and_its_saved_state_to_the_new_member() {
    let fixture = PageCounts::start();
    let bootstrap = fixture.tansu.bootstrap();
    let (input, output, topology) = (&fixture.input, &fixture.output, &fixture.topology);
    fixture.produce_clicks(20);
    let mut first = start_runner(&bootstrap, topology, &["-v"]);
    let first_log = stderr_lines(&mut first);
    let read = read_until(&bootstrap, output, 1, TIMEOUT, |rs| {
        page_counts(rs).values().sum::<i64>() >= 20
    });
    assert_eq!(page_counts(&read).values().sum::<i64>(), 20);

    // A second member joins: one partition moves to it with the state saved on revoke.
    let mut second = start_runner(&bootstrap, topology, &["-v"]);
    let second_log = stderr_lines(&mut second);
    let until = Instant::now() + TIMEOUT;
    while !second_log
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains(&format!("assigned: {input}/")))
    {
        assert!(
            Instant::now() < until,
            "the second member got no partition: {:?}",
            second_log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    fixture.produce_clicks(20);
    let read = read_until(&bootstrap, output, 1, TIMEOUT, |rs| {
        let c = page_counts(rs);
        c.len() == 2 && c.values().all(|n| *n >= 20)
    });
    let (a, b) = (interrupt(first), interrupt(second));
    assert_eq!(a.status.code(), Some(130));
    assert_eq!(b.status.code(), Some(130));
    assert_eq!(
        page_counts(&read),
        BTreeMap::from([("p0".to_owned(), 20), ("p1".to_owned(), 20)]),
        "first:\n{}\nsecond:\n{}",
        first_log.lock().unwrap().join("\n"),
        second_log.lock().unwrap().join("\n")
    );
    assert!(
        first_log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("revoked: "))
    );
}
