//! `cargo bench --bench tail_broker`: `tail --until-end` to Arrow IPC on /dev/null
//! against a bare rdkafka consumer that only counts bytes of the same topic, in the
//! same run, on a broker on 127.0.0.1. Also reports the tail's peak RSS.
//!
//! Rounds: `KRABKA_BENCH_ROUNDS` (default 5), each the bare consumer then the tail
//! (and `KRABKA_BENCH_BASELINE_BIN`'s tail, when set), interleaved so that a change of
//! machine load lands on both sides; every round's ratio is printed, then the medians.
//! The bare consumer uses the tail's own client settings (`TailConsumer::client_config`).
//!
//! Size: `KRABKA_BENCH_BROKER_RECORDS` (default 100000) registry-framed Avro orders in
//! 4 partitions. Broker: `KRABKA_BENCH_BROKER=embedded` (default; the librdkafka mock)
//! or `tansu` (the binary at `$KRABKA_TANSU_BIN`). The mock keeps at most 5 MiB and
//! 100000 message sets per partition and drops the oldest beyond that (rdkafka_mock.c),
//! so it holds about 150000 of these records; the 2000000-record run is on
//! Tansu (bulk batches, then one single-record batch per partition: support/broker.rs).

#[path = "support/broker.rs"]
mod broker;
#[path = "support/child.rs"]
mod child;
#[path = "support/orders.rs"]
mod orders;

use std::time::{Duration, Instant};

use krabka_streams::engine::schema::framing;
use krabka_streams::io::kafka::settings::KafkaSettings;
use krabka_streams::io::kafka::tail_consumer::{TailConsumer, TailConsumerOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use broker::{Broker, watermarks};
use child::{tail_command, wait_sampling};
use orders::{ORDER_SCHEMA, order, register_value_schema, run_size};

const TOPIC: &str = "bench-orders";
const PARTITIONS: i32 = 4;
fn produce(broker: &Broker, id: u32, n: usize) {
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&schema)
        .build()
        .unwrap();
    broker.produce(TOPIC, PARTITIONS, n, |i| {
        let value = framing::encode(id, &writer.write_value_to_vec(order(i)).unwrap());
        (format!("user-{}", i % 1000).into_bytes(), value)
    });
}

/// Records per partition that `produce(n)` sends (record i to partition i % PARTITIONS).
fn produced_per_partition(n: usize) -> Vec<i64> {
    (0..PARTITIONS as usize)
        .map(|p| (n / PARTITIONS as usize + usize::from(p < n % PARTITIONS as usize)) as i64)
        .collect()
}

/// User + system CPU time of this process (`RUSAGE_SELF`) or of its reaped children.
fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage only writes the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The client settings of `tail -e` (manual assignment, read_uncommitted): the bare
/// consumer reads with exactly these, so the ratio compares the work per record.
fn tail_client_config(bootstrap: &str) -> ClientConfig {
    let mut settings = KafkaSettings::new();
    settings
        .set("bootstrap.servers", bootstrap)
        .set("client.id", "bench-bare");
    TailConsumer::client_config(
        &settings,
        &TailConsumerOptions {
            group: None,
            isolation: "read_uncommitted".into(),
            auto_offset_reset: "earliest".into(),
            timeout: Duration::from_secs(10),
        },
    )
}

/// A consumer that only counts bytes up to the end offsets: the client's own limit.
fn bare_consumer(bootstrap: &str) -> (usize, u64) {
    let consumer: BaseConsumer = tail_client_config(bootstrap).create().unwrap();
    let mut tpl = TopicPartitionList::new();
    let mut remaining = 0usize;
    for p in 0..PARTITIONS {
        let (low, high) = consumer
            .fetch_watermarks(TOPIC, p, Duration::from_secs(10))
            .unwrap();
        // From the log start: a broker that dropped old records (the mock) has fewer.
        remaining += (high - low) as usize;
        tpl.add_partition_offset(TOPIC, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).unwrap();
    let (mut n, mut bytes) = (0usize, 0u64);
    while n < remaining {
        // Partition-EOF events come as errors and are not counted.
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            bytes += (m.payload_len() + m.key().map_or(0, <[u8]>::len)) as u64;
            n += 1;
        }
    }
    (n, bytes)
}

/// Wall and CPU time of one measured read of the whole topic.
#[derive(Clone, Copy)]
struct Timed {
    wall: Duration,
    cpu: Duration,
}

fn time_bare(bootstrap: &str, n: usize) -> Timed {
    let t = Instant::now();
    let cpu = cpu_time(libc::RUSAGE_SELF);
    let (got, bytes) = bare_consumer(bootstrap);
    let timed = Timed {
        wall: t.elapsed(),
        cpu: cpu_time(libc::RUSAGE_SELF) - cpu,
    };
    assert!(
        got > 0 && got <= n,
        "bare consumer read {got} of {n} ({bytes} bytes)"
    );
    timed
}

/// Runs `bin tail -e` to /dev/null; its times and peak RSS (KiB).
fn time_tail(bin: &str, bootstrap: &str, registry: &str) -> (Timed, u64) {
    let t = Instant::now();
    let cpu = cpu_time(libc::RUSAGE_CHILDREN);
    let mut child = tail_command(bin, TOPIC, bootstrap, registry)
        .spawn()
        .unwrap();
    let (ok, rss) = wait_sampling(&mut child, || false);
    let timed = Timed {
        wall: t.elapsed(),
        cpu: cpu_time(libc::RUSAGE_CHILDREN) - cpu,
    };
    let out = child.wait_with_output().unwrap();
    assert!(ok, "{}", String::from_utf8_lossy(&out.stderr));
    (timed, rss)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn main() {
    // `cargo test --all-targets` runs this target too (without `--bench`): a small smoke run then.
    let (bench, n) = run_size("KRABKA_BENCH_BROKER_RECORDS", 100_000);
    let rounds: usize = std::env::var("KRABKA_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench { 5 } else { 1 })
        .max(1);
    let broker = Broker::start();
    broker.create_topic(TOPIC, PARTITIONS);
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let id = register_value_schema(&registry.url(), TOPIC, ORDER_SCHEMA);
    let t = Instant::now();
    produce(&broker, id, n);
    println!(
        "produced {n} records to {PARTITIONS} partitions of the {} in {:.1}s",
        broker.name(),
        t.elapsed().as_secs_f64()
    );
    let marks = watermarks(broker.bootstrap(), TOPIC, PARTITIONS);
    println!("log start..high watermark per partition: {marks:?}");
    let held: Vec<i64> = marks.iter().map(|(low, high)| high - low).collect();
    assert_eq!(
        held,
        produced_per_partition(n),
        "records held per partition by the watermarks of the {} differ from those produced (the mock drops the oldest beyond 5 MiB per partition; Tansu's high watermark falls short when a partition's last batch holds several records)",
        broker.name()
    );
    let (read, bytes) = bare_consumer(broker.bootstrap());
    println!(
        "records in the log: {read} ({:.0} B of key and value each on average)",
        bytes as f64 / read as f64
    );

    // KRABKA_BENCH_BIN overrides the binary (e.g. a copy, when target dirs are shared);
    // KRABKA_BENCH_BASELINE_BIN adds a second tail binary (e.g. main's build) to every
    // round, so that a change is compared in the same run, under the same load.
    let bin = std::env::var("KRABKA_BENCH_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_krabka-streams").to_string());
    let baseline = std::env::var("KRABKA_BENCH_BASELINE_BIN").ok();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{rounds} interleaved rounds (bare consumer, then the tails); load average before: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let rate = |d: Duration| read as f64 / d.as_secs_f64();
    let micros = |d: Duration| d.as_secs_f64() * 1e6 / read as f64;
    let mut rss = 0u64;
    let (mut ratios, mut base_ratios) = (Vec::new(), Vec::new());
    let (mut bare_cpu, mut tail_cpu, mut base_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        // CPU time as well as wall time: on a loaded machine the wall time mostly
        // measures the other processes; CPU time per record does not.
        let bare = time_bare(broker.bootstrap(), n);
        let mut run_tail = |bin: &str| {
            let (timed, kib) = time_tail(bin, broker.bootstrap(), &registry.url());
            rss = rss.max(kib);
            timed
        };
        // The two tails swap places every round: neither always runs right after the bare one.
        let (tail, base) = match &baseline {
            Some(b) if round % 2 == 0 => {
                let base = run_tail(b);
                (run_tail(&bin), Some(base))
            }
            Some(b) => {
                let tail = run_tail(&bin);
                (tail, Some(run_tail(b)))
            }
            None => (run_tail(&bin), None),
        };
        let ratio = bare.wall.as_secs_f64() / tail.wall.as_secs_f64();
        ratios.push(ratio);
        bare_cpu.push(micros(bare.cpu));
        tail_cpu.push(micros(tail.cpu));
        print!(
            "round {round}: bare {:>8.0} records/s, tail {:>8.0} records/s, ratio {ratio:.2}x; CPU per record: bare {:.2} us, tail {:.2} us",
            rate(bare.wall),
            rate(tail.wall),
            micros(bare.cpu),
            micros(tail.cpu),
        );
        if let Some(base) = base {
            let r = bare.wall.as_secs_f64() / base.wall.as_secs_f64();
            base_ratios.push(r);
            base_cpu.push(micros(base.cpu));
            print!(
                "; baseline tail {:>8.0} records/s, ratio {r:.2}x, {:.2} us",
                rate(base.wall),
                micros(base.cpu)
            );
        }
        println!();
    }
    let embedded = if matches!(broker, Broker::Embedded(_)) {
        " (the bare one includes the in-process mock broker)"
    } else {
        ""
    };
    println!(
        "median ratio   tail / bare consumer throughput: {:.2}x (target >= 1.0x, issue 22; process start included)",
        median(ratios)
    );
    println!(
        "median CPU per record: bare consumer {:.2} us, tail {:.2} us{embedded}",
        median(bare_cpu),
        median(tail_cpu),
    );
    if !base_ratios.is_empty() {
        println!(
            "baseline tail: median ratio {:.2}x, median CPU per record {:.2} us",
            median(base_ratios),
            median(base_cpu)
        );
    }
    println!("peak RSS of tail: {} MiB (target < 256 MiB)", rss / 1024);
}
