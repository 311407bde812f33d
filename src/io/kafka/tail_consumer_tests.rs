//! Waits of the tail's consumer end as soon as there is something to hand over.
//! Every wait here is ten minutes: a test that passes never sits one out, and one
//! that regresses hangs instead of asserting a time.

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use super::*;
use crate::io::kafka::mock_cluster::EmbeddedCluster;

const LONG: Duration = Duration::from_secs(600);

fn consumer_at_start(cluster: &EmbeddedCluster, topic: &str) -> TailConsumer {
    let mut settings = KafkaSettings::new();
    settings.set("bootstrap.servers", cluster.bootstrap());
    let mut consumer = TailConsumer::new(
        &settings,
        &TailConsumerOptions {
            group: None,
            isolation: "read_uncommitted".into(),
            auto_offset_reset: "earliest".into(),
            timeout: Duration::from_secs(30),
        },
    )
    .expect("consumer");
    consumer
        .assign(&[PartitionOffset {
            tp: TopicPartition::new(topic, 0),
            offset: 0,
        }])
        .expect("assign");
    consumer
}

/// What one poll handed over: offsets of messages, and whether the partition's end came.
fn poll_once(consumer: &mut TailConsumer, max: usize) -> (Vec<i64>, bool) {
    let (mut offsets, mut end) = (Vec::new(), false);
    consumer.poll_batch(LONG, max, |polled| {
        match polled.expect("no client error") {
            Polled::Message(m) => offsets.push(m.offset()),
            Polled::PartitionEof { .. } => end = true,
        }
        true
    });
    (offsets, end)
}

#[test]
fn a_lone_record_is_handed_over_without_waiting_for_a_full_batch() {
    let cluster = EmbeddedCluster::start(None).expect("mock cluster");
    cluster.create_topic("lone", 1).expect("topic");
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .create()
        .expect("producer");
    producer
        .send(
            BaseRecord::<str, str>::to("lone")
                .partition(0)
                .payload("only"),
        )
        .map_err(|(e, _)| e)
        .expect("send");
    producer.flush(Duration::from_secs(30)).expect("flush");
    let mut consumer = consumer_at_start(&cluster, "lone");
    // librdkafka's batch call alone would hold this poll until 1000 messages came.
    let mut seen = Vec::new();
    while seen.is_empty() {
        seen = poll_once(&mut consumer, 1000).0;
    }
    assert_eq!(seen, vec![0]);
}

#[test]
fn a_wake_ends_a_wait_on_a_quiet_topic() {
    let cluster = EmbeddedCluster::start(None).expect("mock cluster");
    cluster.create_topic("quiet", 1).expect("topic");
    let mut consumer = consumer_at_start(&cluster, "quiet");
    // The partition's end first: from then on nothing comes.
    while !poll_once(&mut consumer, 1000).1 {}
    let waker = consumer.waker().expect("a consumer has its queue");
    let waking = std::thread::spawn(move || {
        // Before or during the wait: either way the wait ends (a wake is kept).
        std::thread::sleep(Duration::from_millis(50));
        waker.wake();
    });
    assert_eq!(poll_once(&mut consumer, 1000), (Vec::new(), false));
    waking.join().expect("waker thread");
    drop(consumer);
}
