//! The broker the end-to-end benches run against, on 127.0.0.1: the embedded
//! librdkafka mock (default) or Tansu (`KRABKA_BENCH_BROKER=tansu`, binary at
//! `$KRABKA_TANSU_BIN`); topic creation, bulk produce and watermarks. Shared by `tail_broker` and `run_broker`.
//!
//! The mock keeps at most 5 MiB and 100000 message sets per partition and drops
//! the oldest beyond that (rdkafka_mock.c). Tansu reports a wrong high watermark
//! after a multi-record batch (the batch's base offset + 1, docs/testing.md), so
//! the bulk goes to it in large batches and then one single-record batch per
//! partition, whose base offset + 1 is the true end.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use krabka_streams::io::kafka::mock_cluster::EmbeddedCluster;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

/// The broker under test, stopped on drop.
pub enum Broker {
    Embedded(EmbeddedCluster),
    Tansu { child: Child, bootstrap: String },
}

impl Broker {
    pub fn start() -> Broker {
        match std::env::var("KRABKA_BENCH_BROKER").as_deref() {
            Ok("tansu") => {
                let bin = std::env::var("KRABKA_TANSU_BIN")
                    .expect("KRABKA_BENCH_BROKER=tansu needs KRABKA_TANSU_BIN");
                let port = TcpListener::bind("127.0.0.1:0")
                    .and_then(|l| l.local_addr())
                    .unwrap()
                    .port();
                let url = format!("tcp://127.0.0.1:{port}");
                let child = Command::new(bin)
                    .args(["broker", "--listener-url", &url])
                    .args(["--advertised-listener-url", &url])
                    .args(["--storage-engine", "memory://tansu/"])
                    .env("RUST_LOG", "warn")
                    .stdin(Stdio::null())
                    .spawn()
                    .unwrap();
                let bootstrap = format!("127.0.0.1:{port}");
                let deadline = Instant::now() + Duration::from_secs(15);
                while TcpStream::connect(&bootstrap).is_err() {
                    assert!(Instant::now() < deadline, "Tansu did not start");
                    std::thread::sleep(Duration::from_millis(20));
                }
                Broker::Tansu { child, bootstrap }
            }
            Ok("embedded") | Err(_) => Broker::Embedded(EmbeddedCluster::start(None).unwrap()),
            Ok(other) => panic!("KRABKA_BENCH_BROKER={other}: expected embedded or tansu"),
        }
    }

    pub fn bootstrap(&self) -> &str {
        match self {
            Broker::Embedded(c) => c.bootstrap(),
            Broker::Tansu { bootstrap, .. } => bootstrap,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Broker::Embedded(_) => "embedded librdkafka mock",
            Broker::Tansu { .. } => "Tansu",
        }
    }

    pub fn create_topic(&self, topic: &str, partitions: i32) {
        match self {
            Broker::Embedded(c) => c.create_topic(topic, partitions).unwrap(),
            Broker::Tansu { bootstrap, .. } => {
                let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
                    .set("bootstrap.servers", bootstrap)
                    .create()
                    .unwrap();
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let created = rt
                    .block_on(admin.create_topics(
                        &[NewTopic::new(topic, partitions, TopicReplication::Fixed(1))],
                        &AdminOptions::new(),
                    ))
                    .unwrap();
                assert!(created.iter().all(Result::is_ok), "{created:?}");
            }
        }
    }

    /// Sends `n` records, record `i` to partition `i % partitions` with
    /// `record(i)` = (key, value), and waits for every ack. With Tansu, the last
    /// record of each partition goes alone in its batch (see the module doc).
    pub fn produce(
        &self,
        topic: &str,
        partitions: i32,
        n: usize,
        mut record: impl FnMut(usize) -> (Vec<u8>, Vec<u8>),
    ) {
        let bulk = |linger: &str, batch: &str| -> BaseProducer {
            ClientConfig::new()
                .set("bootstrap.servers", self.bootstrap())
                .set("linger.ms", linger)
                .set("batch.num.messages", batch)
                .set("queue.buffering.max.messages", "1000000")
                .create()
                .unwrap()
        };
        let tail = match self {
            Broker::Tansu { .. } => (partitions as usize).min(n),
            Broker::Embedded(_) => 0,
        };
        let producer = bulk("20", "10000");
        for i in 0..n - tail {
            send(&producer, topic, partitions, i, record(i));
        }
        producer.flush(Duration::from_secs(600)).unwrap();
        let single = bulk("0", "1");
        for i in n - tail..n {
            send(&single, topic, partitions, i, record(i));
            single.flush(Duration::from_secs(60)).unwrap();
        }
    }
}

fn send(producer: &BaseProducer, topic: &str, partitions: i32, i: usize, kv: (Vec<u8>, Vec<u8>)) {
    let (key, value) = kv;
    loop {
        match producer.send(
            BaseRecord::to(topic)
                .partition((i % partitions as usize) as i32)
                .key(&key)
                .payload(&value),
        ) {
            Ok(()) => break,
            Err((KafkaError::MessageProduction(_), _)) => {
                producer.poll(Duration::from_millis(10));
            }
            Err((e, _)) => panic!("produce: {e}"),
        }
    }
    producer.poll(Duration::ZERO);
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Broker::Tansu { child, .. } = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// (log start, high watermark) per partition.
pub fn watermarks(bootstrap: &str, topic: &str, partitions: i32) -> Vec<(i64, i64)> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    (0..partitions)
        .map(|p| {
            consumer
                .fetch_watermarks(topic, p, Duration::from_secs(10))
                .unwrap()
        })
        .collect()
}
