//! A Tansu broker with `__barrier_state` created through the admin API, a test producer that
//! writes records in the frozen format (one record per batch, so Tansu's high watermark is
//! right), and a runner for the binary.

use std::num::NonZeroU32;
use std::process::{Command, Output};
use std::time::Duration;

use krabka_streams::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic, GroupDefinition,
    InjectionStart, InjectionTarget, TopicPartition, group_partition,
};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};

use crate::support::tansu::Tansu;

pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A `__barrier_state` partition count for tests (the broker's default is 50).
pub const GROUP_STATE_PARTITIONS: u32 = 3;

/// A broker, an admin client and a one-record-per-batch producer.
pub struct Cluster {
    pub broker: Tansu,
    rt: tokio::runtime::Runtime,
    admin: AdminClient<DefaultClientContext>,
    producer: FutureProducer,
    state_partitions: Option<u32>,
}

impl Cluster {
    pub fn start() -> Cluster {
        Self::start_on(Tansu::start())
    }

    /// The same around a broker started elsewhere (e.g. a persistent one that a test restarts).
    pub fn start_on(broker: Tansu) -> Cluster {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let admin = ClientConfig::new()
            .set("bootstrap.servers", broker.bootstrap())
            .create()
            .expect("admin client");
        let producer = ClientConfig::new()
            .set("bootstrap.servers", broker.bootstrap())
            .set("linger.ms", "0")
            .set("batch.num.messages", "1")
            .create()
            .expect("producer");
        Cluster {
            broker,
            rt,
            admin,
            producer,
            state_partitions: None,
        }
    }

    pub fn bootstrap(&self) -> String {
        self.broker.bootstrap()
    }

    /// Creates a topic through the admin API (compacted when asked).
    pub fn create_topic(&self, name: &str, partitions: i32, compacted: bool) {
        let mut topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
        if compacted {
            topic = topic.set("cleanup.policy", "compact");
        }
        let created = self
            .rt
            .block_on(self.admin.create_topics(
                &[topic],
                &AdminOptions::new().operation_timeout(Some(TIMEOUT)),
            ))
            .expect("CreateTopics answered");
        assert_eq!(
            created,
            vec![Ok(name.to_owned())],
            "{}",
            self.broker.log_text()
        );
    }

    /// Creates `__barrier_state` with `partitions` partitions, as the broker would (compacted).
    pub fn create_barrier_state(&mut self, partitions: u32) {
        self.create_topic(BARRIER_STATE_TOPIC, partitions as i32, true);
        self.state_partitions = Some(partitions);
    }

    /// The `__barrier_state` partition of a group.
    pub fn state_partition(&self, group: &str) -> i32 {
        let n = self.state_partitions.expect("create_barrier_state first");
        group_partition(group, NonZeroU32::new(n).unwrap()) as i32
    }

    /// Produces one record (its own batch, flushed) and returns its offset.
    pub fn send(
        &self,
        topic: &str,
        partition: i32,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> i64 {
        let mut record: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(topic).partition(partition);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(value) = value {
            record = record.payload(value);
        }
        let delivery = self
            .rt
            .block_on(self.producer.send(record, TIMEOUT))
            .unwrap_or_else(|(e, _)| panic!("delivery failed: {e}\n{}", self.broker.log_text()));
        delivery.offset
    }

    /// Writes a raw record to the group's `__barrier_state` partition; returns (partition, offset).
    pub fn write_raw(&self, group: &str, key: &[u8], value: Option<&[u8]>) -> (i32, i64) {
        let partition = self.state_partition(group);
        (
            partition,
            self.send(BARRIER_STATE_TOPIC, partition, Some(key), value),
        )
    }

    pub fn write_cut(&self, group: &str, epoch: i64, cut: &Cut) {
        let key = BarrierStateKey::cut(group, epoch).encode().unwrap();
        self.write_raw(group, &key, Some(&cut.encode().unwrap()));
    }

    pub fn write_cut_tombstone(&self, group: &str, epoch: i64) {
        let key = BarrierStateKey::cut(group, epoch).encode().unwrap();
        self.write_raw(group, &key, None);
    }

    pub fn write_group(&self, group: &str, topics: &[&str], last_epoch: i64) {
        let definition = GroupDefinition {
            topics: topics.iter().map(|t| t.to_string()).collect(),
            interval_ms: 60_000,
            retained_cuts: 32,
            last_epoch,
        };
        let key = BarrierStateKey::group(group).encode().unwrap();
        self.write_raw(group, &key, Some(&definition.encode().unwrap()));
    }

    pub fn write_injection(&self, group: &str, epoch: i64, topic: &str, partitions: i32) {
        let injection = InjectionStart {
            coordinator_epoch: 3,
            triggered_at: 1_724_500_000_000 + epoch,
            targets: vec![InjectionTarget {
                topic: topic.into(),
                partition_count: partitions,
            }],
        };
        let key = BarrierStateKey::injection(group, epoch).encode().unwrap();
        self.write_raw(group, &key, Some(&injection.encode().unwrap()));
    }

    /// Commits `offsets` for `group` as a member of that consumer group: subscribes, waits for
    /// the assignment, then commits synchronously.
    pub fn commit_as_group_member(&self, group: &str, topic: &str, offsets: &[(i32, i64)]) {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", self.bootstrap())
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .create()
            .expect("group consumer");
        consumer.subscribe(&[topic]).expect("subscribe");
        let deadline = std::time::Instant::now() + TIMEOUT;
        while consumer.assignment().map(|a| a.count()).unwrap_or(0) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "no assignment for {group}"
            );
            let _ = consumer.poll(Duration::from_millis(100));
        }
        let mut tpl = TopicPartitionList::new();
        for (partition, offset) in offsets {
            tpl.add_partition_offset(topic, *partition, Offset::Offset(*offset))
                .unwrap();
        }
        consumer.commit(&tpl, CommitMode::Sync).expect("commit");
        consumer.unsubscribe();
    }

    /// Runs the binary against this broker.
    pub fn run(&self, args: &[&str]) -> Output {
        let bootstrap = self.bootstrap();
        let mut all = vec!["-b", bootstrap.as_str(), "--timeout", "20s"];
        all.extend_from_slice(args);
        run(&all)
    }
}

/// The binary under test: `$KRABKA_STREAMS_BIN` when set (a copy that a concurrent build in
/// a shared target directory cannot replace mid-run), else the one cargo built for this test.
pub fn binary() -> std::path::PathBuf {
    std::env::var_os("KRABKA_STREAMS_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_krabka-streams").into())
}

/// Runs the binary without a broker.
pub fn run(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .env_remove("KRABKA_BOOTSTRAP_SERVER")
        .env_remove("KRABKA_OUTPUT")
        .output()
        .expect("run krabka-streams")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exit code, with both streams in the panic message when it differs.
pub fn assert_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// The `data` of a JSON report.
pub fn json_data(o: &Output) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{}", stdout(o)));
    doc["data"].clone()
}

/// A cut over `topic` with the given (partition, offset) pairs; partial when `missing` is
/// not empty.
pub fn cut(topic: &str, offsets: &[(i32, i64)], missing: &[i32]) -> Cut {
    Cut {
        triggered_at: 1_724_500_000_000,
        completed_at: 1_724_500_000_042,
        status: if missing.is_empty() {
            CutStatus::Complete
        } else {
            CutStatus::Partial
        },
        topics: vec![CutTopic {
            topic: topic.into(),
            partitions: offsets
                .iter()
                .map(|(partition, offset)| CutOffset {
                    partition: *partition,
                    offset: *offset,
                })
                .collect(),
        }],
        missing: missing
            .iter()
            .map(|p| TopicPartition::new(topic, *p))
            .collect(),
    }
}

/// A child's stderr lines as they arrive, drained on a thread so the child never blocks on a
/// full pipe.
#[derive(Clone)]
pub struct StderrLines(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl StderrLines {
    /// Takes the child's piped stderr.
    pub fn watch(child: &mut std::process::Child) -> StderrLines {
        use std::io::BufRead;
        let stderr = child.stderr.take().expect("piped stderr");
        let lines = StderrLines(Default::default());
        let sink = lines.0.clone();
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

    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// The lines containing `needle`.
    pub fn matching(&self, needle: &str) -> Vec<String> {
        self.all()
            .into_iter()
            .filter(|l| l.contains(needle))
            .collect()
    }

    /// Waits until a line contains `needle`.
    pub fn wait_for(&self, needle: &str) {
        let until = std::time::Instant::now() + TIMEOUT;
        while self.matching(needle).is_empty() {
            assert!(
                std::time::Instant::now() < until,
                "no line with {needle:?} within {TIMEOUT:?}:\n{}",
                self.all().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
