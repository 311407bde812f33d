//! `cargo bench --bench run_broker`: the online runner against `tail` on the same
//! input, on a broker on 127.0.0.1 (issue 6: run's throughput ≥ 0.7× tail's).
//!
//! N registry-framed Avro orders (user, country, amount, ts) in 4 partitions.
//! `tail TOPIC -e` decodes them to Arrow IPC on /dev/null and exits at the end,
//! once with its partitions assigned by hand and once as a fresh consumer group
//! (`-g`, which pays the same group join as `run`);
//! `run FILE -b` (a fresh consumer group each time) decodes the same records
//! through a filter topology (`amount > 990`, about 1% kept, user, country and
//! amount written as JSON to a sink topic), producing and committing as its
//! at-least-once rounds are acknowledged; it is timed until its group's
//! committed offsets reach the end of every partition, then stopped with
//! SIGINT. Both times include process start and (for run) joining the group.
//! The end of run's join is when it logs `assigned:` on stderr, so the bench also
//! prints run's rate once joined: the throughput of a runner holding its
//! partitions, next to the end-to-end figures. (Tansu 0.6 lists a group in
//! DescribeGroups only once it has committed offsets, so the broker cannot say.)
//! On Tansu, run and `tail -g` get `-X session.timeout.ms=6000` (the smallest a
//! Kafka broker accepts by default): Tansu answers JoinGroup after half the
//! session timeout (23.8 s with librdkafka's default 45 s, measured), where a
//! Kafka broker waits `group.initial.rebalance.delay.ms` for a new group.
//! Also prints both peak RSS figures.
//!
//! Size: `KRABKA_BENCH_BROKER_RECORDS` (default 100000). Broker:
//! `KRABKA_BENCH_BROKER=embedded` (default, the librdkafka mock: about 5 MiB per
//! partition, so up to about 300000 of these records) or `tansu` (with
//! `KRABKA_TANSU_BIN`). `KRABKA_BENCH_BIN` overrides the binary.

#[path = "support/broker.rs"]
mod broker;
#[path = "support/child.rs"]
mod child;
#[path = "support/orders.rs"]
mod orders;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use apache_avro::types::Value as Avro;
use krabka_streams::engine::schema::framing;
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use broker::{Broker, watermarks};
use child::{tail_command, wait_sampling};
use orders::{register_value_schema, run_size};

const TOPIC: &str = "bench-run-orders";
const SINK: &str = "bench-run-large";
const PARTITIONS: i32 = 4;
const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"user","type":"string"},{"name":"country","type":"string"},{"name":"amount","type":"long"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}"#;

fn topology(group: &str) -> String {
    format!(
        r#"version: 1
settings:
  consumer_group: {group}
nodes:
  - source: orders
    topics: [{TOPIC}]
    value: avro
    columns:
      user: utf8
      country: utf8
      amount: int64
      ts: timestamp
  - filter: large
    parent: orders
    where: amount > 990
  # The JSON encoder has no timestamp type: the sink gets the other columns.
  - select: slim
    parent: large
    columns: [user, country, amount]
  - sink: out
    parent: slim
    topic: {SINK}
    value: json
"#
    )
}

fn binary() -> String {
    std::env::var("KRABKA_BENCH_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_krabka-streams").to_string())
}

/// The group's committed offsets summed over the topic's partitions.
fn committed(consumer: &BaseConsumer) -> i64 {
    let mut tpl = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        tpl.add_partition(TOPIC, p);
    }
    match consumer.committed_offsets(tpl, Duration::from_secs(5)) {
        Ok(tpl) => tpl
            .elements()
            .iter()
            .map(|e| match e.offset() {
                Offset::Offset(o) => o,
                _ => 0,
            })
            .sum(),
        Err(_) => 0,
    }
}

/// What a group member gets on this broker (see the module doc).
fn group_settings(broker: &Broker) -> &'static [&'static str] {
    match broker {
        Broker::Tansu { .. } => &["-X", "session.timeout.ms=6000"],
        Broker::Embedded(_) => &[],
    }
}

struct RunTimes {
    total: Duration,
    /// When run logged its first assignment (its group join ended).
    assigned: Duration,
    first_commit: Duration,
    /// Records committed at the first commit seen.
    first_committed: i64,
    rss_kib: u64,
}

/// Reads a child's stderr on a thread: all of it, and when a line containing
/// `marker` first arrived.
struct StderrWatch {
    seen: Arc<Mutex<Option<Instant>>>,
    reader: std::thread::JoinHandle<String>,
}

impl StderrWatch {
    fn start(stderr: impl Read + Send + 'static, marker: &'static str) -> Self {
        let seen = Arc::new(Mutex::new(None));
        let mark = Arc::clone(&seen);
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains(marker) {
                    mark.lock().unwrap().get_or_insert_with(Instant::now);
                }
                text.push_str(&line);
                text.push('\n');
            }
            text
        });
        StderrWatch { seen, reader }
    }

    fn seen(&self) -> Option<Instant> {
        *self.seen.lock().unwrap()
    }

    fn text(self) -> String {
        self.reader.join().unwrap()
    }
}

fn time_run(
    broker: &Broker,
    registry: &str,
    dir: &std::path::Path,
    round: usize,
    end: i64,
) -> RunTimes {
    let group = format!("bench-run-{round}");
    let file = dir.join(format!("{group}.yaml"));
    std::fs::write(&file, topology(&group)).unwrap();
    let watcher: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", &group)
        .create()
        .unwrap();
    let started = Instant::now();
    // Info level (no -q): run logs `assigned: …` when its group join ends.
    let mut child = Command::new(binary())
        .args(["run", file.to_str().unwrap(), "-b", broker.bootstrap()])
        .args(["--registry", registry])
        .args(group_settings(broker))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = StderrWatch::start(child.stderr.take().unwrap(), "assigned:");
    let first = std::cell::Cell::new(None);
    let (ok, rss) = wait_sampling(&mut child, || {
        let done = committed(&watcher);
        if done > 0 && first.get().is_none() {
            first.set(Some((started.elapsed(), done)));
        }
        done >= end
    });
    let total = started.elapsed();
    if !ok || child.try_wait().unwrap().is_some() {
        let _ = child.wait();
        panic!("run stopped early: {}", log.text());
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    let assigned = log.seen().map(|at| at - started);
    assert_eq!(status.code(), Some(130), "{}", log.text());
    let (first_commit, first_committed) = first.get().unwrap_or((total, end));
    RunTimes {
        total,
        assigned: assigned.expect("run logged no assignment"),
        first_commit,
        first_committed,
        rss_kib: rss,
    }
}

/// `tail -e`, as a fresh consumer group with `group`.
fn time_tail(broker: &Broker, registry: &str, group: Option<&str>) -> (Duration, u64) {
    let started = Instant::now();
    let mut child = tail_command(&binary(), TOPIC, broker.bootstrap(), registry)
        .args(match group {
            Some(g) => [&["-g", g][..], group_settings(broker)].concat(),
            None => Vec::new(),
        })
        .spawn()
        .unwrap();
    let (ok, rss) = wait_sampling(&mut child, || false);
    let elapsed = started.elapsed();
    let out = child.wait_with_output().unwrap();
    assert!(ok, "{}", String::from_utf8_lossy(&out.stderr));
    (elapsed, rss)
}

fn main() {
    // `cargo test --all-targets` runs this target too (without `--bench`): a small smoke run then.
    let (bench, n) = run_size("KRABKA_BENCH_BROKER_RECORDS", 100_000);
    let repeat = if bench { 3 } else { 1 };
    let broker = Broker::start();
    broker.create_topic(TOPIC, PARTITIONS);
    broker.create_topic(SINK, PARTITIONS);
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let id = register_value_schema(&registry.url(), TOPIC, ORDER_SCHEMA);
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&schema)
        .build()
        .unwrap();
    let countries = ["NL", "BE", "DE", "FR", "PL", "CZ"];
    let t = Instant::now();
    broker.produce(TOPIC, PARTITIONS, n, |i| {
        let v = Avro::Record(vec![
            (
                "user".into(),
                Avro::String(format!("user-{:05}", i % 10_000)),
            ),
            ("country".into(), Avro::String(countries[i % 6].into())),
            ("amount".into(), Avro::Long((i as i64 * 7919) % 1000)),
            (
                "ts".into(),
                Avro::TimestampMillis(1_700_000_000_000 + i as i64),
            ),
        ]);
        let value = framing::encode(id, &writer.write_value_to_vec(v).unwrap());
        (format!("user-{:05}", i % 10_000).into_bytes(), value)
    });
    println!(
        "produced {n} records to {PARTITIONS} partitions of the {} in {:.1}s",
        broker.name(),
        t.elapsed().as_secs_f64()
    );
    let marks = watermarks(broker.bootstrap(), TOPIC, PARTITIONS);
    let held: i64 = marks.iter().map(|(low, high)| high - low).sum();
    let end: i64 = marks.iter().map(|(_, high)| high).sum();
    assert_eq!(
        held as usize,
        n,
        "the {} holds {held} of {n} records by its watermarks {marks:?}",
        broker.name()
    );

    let dir = tempfile::tempdir().unwrap();
    let mut tail = (Duration::MAX, 0);
    let mut tail_group = (Duration::MAX, 0);
    let mut run = RunTimes {
        total: Duration::MAX,
        assigned: Duration::ZERO,
        first_commit: Duration::ZERO,
        first_committed: 0,
        rss_kib: 0,
    };
    for round in 0..repeat {
        let (elapsed, rss) = time_tail(&broker, &registry.url(), None);
        tail = (tail.0.min(elapsed), tail.1.max(rss));
        let group = format!("bench-tail-{round}");
        let (elapsed, rss) = time_tail(&broker, &registry.url(), Some(&group));
        tail_group = (tail_group.0.min(elapsed), tail_group.1.max(rss));
        let times = time_run(&broker, &registry.url(), dir.path(), round, end);
        let rss = run.rss_kib.max(times.rss_kib);
        if times.total < run.total {
            run = times;
        }
        run.rss_kib = rss;
    }
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    println!(
        "tail -e to Arrow IPC          {:>10.0} records/s ({:.2}s, process start included)",
        rate(tail.0),
        tail.0.as_secs_f64()
    );
    println!(
        "tail -e -g GROUP to Arrow IPC {:>10.0} records/s ({:.2}s, group join included)",
        rate(tail_group.0),
        tail_group.0.as_secs_f64()
    );
    println!(
        "run -b (filter, JSON sink)    {:>10.0} records/s ({:.2}s until all committed; joined after {:.2}s; first commit after {:.2}s)",
        rate(run.total),
        run.total.as_secs_f64(),
        run.assigned.as_secs_f64(),
        run.first_commit.as_secs_f64()
    );
    let run_joined = rate(run.total.saturating_sub(run.assigned));
    println!(
        "run once joined               {run_joined:>10.0} records/s ({n} records in {:.2}s, from the end of the group join to the last commit)",
        run.total.saturating_sub(run.assigned).as_secs_f64()
    );
    let after = run.total.saturating_sub(run.first_commit).as_secs_f64();
    let steady = (end - run.first_committed) as f64 / after.max(1e-9);
    println!(
        "run after its first commit    {steady:>10.0} records/s ({} records in {after:.2}s)",
        end - run.first_committed
    );
    println!(
        "ratio   run / tail -e:          {:.2}x end to end (run's group join included; target >= 0.8x, issue 22); {:.2}x once run has joined; {:.2}x after run's first commit",
        tail.0.as_secs_f64() / run.total.as_secs_f64(),
        run_joined / rate(tail.0),
        steady / rate(tail.0)
    );
    println!(
        "ratio   run / tail -e -g GROUP: {:.2}x end to end (both join a group)",
        tail_group.0.as_secs_f64() / run.total.as_secs_f64()
    );
    println!(
        "peak RSS: run {} MiB, tail {} MiB, tail -g {} MiB",
        run.rss_kib / 1024,
        tail.1 / 1024,
        tail_group.1 / 1024
    );
}
