//! `cargo bench --bench tail_broker`: `tail --until-end` to Arrow IPC on /dev/null
//! against a bare rdkafka consumer that only counts bytes of the same topic, in the
//! same run, on a broker on 127.0.0.1. Also reports the tail's peak RSS.
//!
//! Size: `KRABKA_BENCH_BROKER_RECORDS` (default 100000) registry-framed Avro orders in
//! 4 partitions. Broker: `KRABKA_BENCH_BROKER=embedded` (default; the librdkafka mock)
//! or `tansu` (the binary at `$KRABKA_TANSU_BIN`). The mock keeps at most 5 MiB and
//! 100000 message sets per partition and drops the oldest beyond that (rdkafka_mock.c),
//! so it holds about 150000 of these records; the 2000000-record run is on
//! Tansu (bulk batches, then one single-record batch per partition: support/broker.rs).

#[path = "support/broker.rs"]
mod broker;
#[path = "support/orders.rs"]
mod orders;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use krabka_streams::engine::schema::framing;
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use broker::{Broker, peak_rss_kib, watermarks};
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

/// A consumer that only counts bytes up to the end offsets: the client's own limit.
fn bare_consumer(bootstrap: &str) -> (usize, u64) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "bench-bare")
        .set("enable.auto.commit", "false")
        .set("fetch.max.bytes", "52428800")
        .set("queued.max.messages.kbytes", "65536")
        .create()
        .unwrap();
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
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
            bytes += (m.payload_len() + m.key().map_or(0, <[u8]>::len)) as u64;
            n += 1;
        }
    }
    (n, bytes)
}

fn main() {
    // `cargo test --all-targets` runs this target too (without `--bench`): a small smoke run then.
    let (_, n) = run_size("KRABKA_BENCH_BROKER_RECORDS", 100_000);
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

    let mut bare = Duration::MAX;
    let mut tail = Duration::MAX;
    let mut rss = 0u64;
    // CPU time as well as wall time: on a loaded machine the wall time mostly
    // measures the other processes; CPU time per record does not.
    let (mut bare_cpu, mut tail_cpu) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        let t = Instant::now();
        let cpu = cpu_time(libc::RUSAGE_SELF);
        let (got, bytes) = bare_consumer(broker.bootstrap());
        bare = bare.min(t.elapsed());
        bare_cpu = bare_cpu.min(cpu_time(libc::RUSAGE_SELF) - cpu);
        assert!(
            got > 0 && got <= n,
            "bare consumer read {got} of {n} ({bytes} bytes)"
        );

        let t = Instant::now();
        let cpu = cpu_time(libc::RUSAGE_CHILDREN);
        // KRABKA_BENCH_BIN overrides the binary (e.g. a copy, when target dirs are shared).
        let bin = std::env::var("KRABKA_BENCH_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_krabka-streams").to_string());
        let mut child = Command::new(bin)
            .args([
                "tail",
                TOPIC,
                "-e",
                "--value-format",
                "avro",
                "--format",
                "arrow",
                "-q",
            ])
            .args(["-b", broker.bootstrap(), "--registry", &registry.url()])
            .stdout(std::fs::File::create("/dev/null").unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let status = loop {
            if let Some(kib) = peak_rss_kib(pid) {
                rss = rss.max(kib);
            }
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        tail = tail.min(t.elapsed());
        tail_cpu = tail_cpu.min(cpu_time(libc::RUSAGE_CHILDREN) - cpu);
        let out = child.wait_with_output().unwrap();
        assert!(status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let (read, bytes) = bare_consumer(broker.bootstrap());
    let rate = |d: Duration| read as f64 / d.as_secs_f64();
    println!(
        "records in the log: {read} ({:.0} B of key and value each on average)",
        bytes as f64 / read as f64
    );
    println!("bare rdkafka consumer  {:>10.0} records/s", rate(bare));
    println!(
        "tail -e to Arrow IPC   {:>10.0} records/s (process start included)",
        rate(tail)
    );
    println!(
        "ratio   tail / bare consumer throughput: {:.2}x (target >= 0.8x)",
        bare.as_secs_f64() / tail.as_secs_f64()
    );
    let micros = |d: Duration| d.as_secs_f64() * 1e6 / read as f64;
    println!(
        "CPU per record: bare consumer {:.2} us{}, tail {:.2} us (ratio {:.2}x)",
        micros(bare_cpu),
        if matches!(broker, Broker::Embedded(_)) {
            " (the in-process mock broker's included)"
        } else {
            ""
        },
        micros(tail_cpu),
        bare_cpu.as_secs_f64() / tail_cpu.as_secs_f64()
    );
    println!("peak RSS of tail: {} MiB (target < 256 MiB)", rss / 1024);
}
