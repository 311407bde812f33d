//! Benchmark (not a test): `barrier list` over 10,000 cuts × 12 partitions in a 50-partition
//! `__barrier_state` on a real broker (Tansu), reported as ratios to reading the same topic
//! with a plain rdkafka consumer in the same run.
//!
//! Measured, each the median of several runs:
//! * plain: a `BaseConsumer` assigned every partition from the start, polling until it has
//!   every record (no decoding); and the same assigned only the non-empty partitions after
//!   querying the end offsets, as the fold's reader does (the fair floor);
//! * fold: `read_barrier_state` in process (metadata, end offsets, read, strict decode, fold);
//! * `barrier list --group absent` (reads and folds everything, renders nothing),
//!   `barrier list --output json` and `barrier list` (table) as processes, end to end.
//!
//! Run with `scripts/bench-barrier` (or `cargo bench --bench barrier_list` with
//! `KRABKA_TANSU_BIN` set). `KRABKA_STREAMS_BIN` overrides the binary measured.

// The fault tests' broker controls (pause, kill, …) are unused here.
#[allow(dead_code)]
#[path = "../tests/cli/support/tansu.rs"]
mod tansu;

use std::num::NonZeroU32;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use krabka_streams::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic, group_partition,
};
use krabka_streams::io::kafka::barrier_state::read_barrier_state;
use krabka_streams::io::kafka::settings::KafkaSettings;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

use tansu::Tansu;

const CUTS: usize = 10_000;
const PARTITIONS_PER_CUT: i32 = 12;
const GROUPS: usize = 20;
const STATE_PARTITIONS: i32 = 50;
const RUNS: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(60);

fn main() {
    // `cargo test --all-targets` also runs bench targets; only `cargo bench` (which passes
    // --bench) should pay for a broker and 10,000 records.
    if !std::env::args().any(|a| a == "--bench") {
        println!("barrier_list: a benchmark; run it with scripts/bench-barrier");
        return;
    }
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    create_state_topic(&bootstrap);
    let bytes = produce_cuts(&bootstrap);
    println!(
        "__barrier_state: {CUTS} cuts × {PARTITIONS_PER_CUT} partitions, {GROUPS} groups, \
         {STATE_PARTITIONS} partitions, {:.1} MiB of keys and values",
        bytes as f64 / (1024.0 * 1024.0)
    );

    let plain = median(|| plain_read(&bootstrap, false));
    let floor = median(|| plain_read(&bootstrap, true));
    let fold = median(|| {
        let mut settings = KafkaSettings::new();
        settings.set("bootstrap.servers", bootstrap.clone());
        let state = read_barrier_state(&settings, TIMEOUT).expect("read __barrier_state");
        assert_eq!(state.log.all_cuts().len(), CUTS);
    });
    let read_only = median(|| run_list(&bootstrap, &["--group", "absent", "--output", "json"]));
    let json = median(|| run_list(&bootstrap, &["--output", "json"]));
    let table = median(|| run_list(&bootstrap, &[]));

    println!("median of {RUNS} runs; ratios to the two plain reads:");
    println!(
        "  {:<44}{:>9}  {:>9}  {:>9}",
        "", "time", "÷ plain", "÷ floor"
    );
    for (name, d) in [
        ("plain consumer, every partition", plain),
        ("plain consumer, non-empty partitions (floor)", floor),
        ("read_barrier_state (in process)", fold),
        ("barrier list --group absent (process)", read_only),
        ("barrier list --output json (process)", json),
        ("barrier list, table (process)", table),
    ] {
        println!(
            "  {name:<44}{:>6.1} ms  {:>8.2}×  {:>8.2}×",
            ms(d),
            d.as_secs_f64() / plain.as_secs_f64(),
            d.as_secs_f64() / floor.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn create_state_topic(bootstrap: &str) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin client");
    let topic = NewTopic::new(
        BARRIER_STATE_TOPIC,
        STATE_PARTITIONS,
        TopicReplication::Fixed(1),
    )
    .set("cleanup.policy", "compact");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let created = rt
        .block_on(admin.create_topics(&[topic], &AdminOptions::new()))
        .expect("CreateTopics");
    assert_eq!(created, vec![Ok(BARRIER_STATE_TOPIC.to_owned())]);
}

/// Produces the cuts one record per batch (Tansu's high watermark is only right for those)
/// and returns the bytes written.
fn produce_cuts(bootstrap: &str) -> usize {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .set("queue.buffering.max.messages", "1000000")
        .create()
        .expect("producer");
    let partitions = NonZeroU32::new(STATE_PARTITIONS as u32).unwrap();
    let mut bytes = 0;
    for i in 0..CUTS {
        let group = format!("group-{:02}", i % GROUPS);
        let epoch = (i / GROUPS + 1) as i64;
        let cut = Cut {
            triggered_at: 1_724_500_000_000 + epoch * 60_000,
            completed_at: 1_724_500_000_042 + epoch * 60_000,
            status: CutStatus::Complete,
            topics: vec![CutTopic {
                topic: "orders".into(),
                partitions: (0..PARTITIONS_PER_CUT)
                    .map(|partition| CutOffset {
                        partition,
                        offset: epoch * 1_000 + i64::from(partition),
                    })
                    .collect(),
            }],
            missing: vec![],
        };
        let key = BarrierStateKey::cut(&group, epoch).encode().unwrap();
        let value = cut.encode().unwrap();
        bytes += key.len() + value.len();
        let partition = group_partition(&group, partitions) as i32;
        producer
            .send(
                BaseRecord::to(BARRIER_STATE_TOPIC)
                    .partition(partition)
                    .key(&key)
                    .payload(&value),
            )
            .expect("enqueue");
        producer.poll(Duration::ZERO);
    }
    producer.flush(TIMEOUT).expect("flush");
    bytes
}

/// Reads every record of the topic with a plain consumer, counting them. With
/// `skip_empty`, the end offsets are queried first and empty partitions are not assigned
/// (what the fold's reader does), which spares the broker's wait on empty fetches.
fn plain_read(bootstrap: &str, skip_empty: bool) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "bench-plain-unused")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..STATE_PARTITIONS {
        if skip_empty {
            let (_, high) = consumer
                .fetch_watermarks(BARRIER_STATE_TOPIC, p, TIMEOUT)
                .expect("watermarks");
            if high == 0 {
                continue;
            }
        }
        tpl.add_partition_offset(BARRIER_STATE_TOPIC, p, Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&tpl).expect("assign");
    let deadline = Instant::now() + TIMEOUT;
    let mut read = 0;
    while read < CUTS {
        assert!(Instant::now() < deadline, "read {read} of {CUTS}");
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(_)) => read += 1,
            Some(Err(e)) => panic!("consume: {e}"),
            None => {}
        }
    }
}

fn run_list(bootstrap: &str, extra: &[&str]) {
    let binary = std::env::var_os("KRABKA_STREAMS_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_krabka-streams").into());
    let status = Command::new(binary)
        .args(["-b", bootstrap, "-q", "barrier", "list"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .expect("run barrier list");
    assert!(status.success(), "barrier list failed: {status}");
}
