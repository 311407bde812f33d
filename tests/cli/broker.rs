//! The real broker works end to end with rdkafka: topic creation through the admin API,
//! produce and consume with headers (including a null-valued one).

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};

use crate::support::tansu::Tansu;
use crate::support::unique_name;

const TIMEOUT: Duration = Duration::from_secs(30);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[test]
fn tansu_round_trips_a_record_with_headers_through_a_created_topic() {
    let broker = Tansu::start();
    let topic = unique_name("broker-roundtrip");
    let rt = runtime();

    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .create()
        .expect("admin client");
    let created = rt
        .block_on(admin.create_topics(
            &[NewTopic::new(&topic, 3, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(TIMEOUT)),
        ))
        .expect("CreateTopics answered");
    assert_eq!(created, vec![Ok(topic.clone())]);

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("linger.ms", "0")
        .create()
        .expect("producer");
    let headers = OwnedHeaders::new()
        .insert(Header {
            key: "trace",
            value: Some("abc"),
        })
        .insert(Header {
            key: "absent",
            value: None::<&[u8]>,
        })
        .insert(Header {
            key: "empty",
            value: Some(""),
        });
    let record = FutureRecord::to(&topic)
        .partition(2)
        .key("k-1")
        .payload("v-1")
        .headers(headers);
    let delivery = rt
        .block_on(producer.send(record, TIMEOUT))
        .unwrap_or_else(|(e, _)| panic!("delivery failed: {e}\n{}", broker.log_text()));
    assert_eq!(delivery.partition, 2);

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("group.id", unique_name("broker-group"))
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let metadata = consumer
        .fetch_metadata(Some(&topic), TIMEOUT)
        .expect("metadata");
    assert_eq!(metadata.topics()[0].partitions().len(), 3);
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(&topic, 2, Offset::Offset(delivery.offset))
        .unwrap();
    consumer.assign(&assignment).expect("assign");

    let deadline = Instant::now() + TIMEOUT;
    let message = loop {
        assert!(Instant::now() < deadline, "no record within {TIMEOUT:?}");
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(m)) => break m,
            Some(Err(e)) => panic!("consume failed: {e}"),
            None => {}
        }
    };
    assert_eq!(message.partition(), 2);
    assert_eq!(message.offset(), delivery.offset);
    assert_eq!(message.key(), Some(&b"k-1"[..]));
    assert_eq!(message.payload(), Some(&b"v-1"[..]));
    let got: Vec<(String, Option<Vec<u8>>)> = message
        .headers()
        .expect("the record has headers")
        .iter()
        .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
        .collect();
    assert_eq!(
        got,
        vec![
            ("trace".to_string(), Some(b"abc".to_vec())),
            ("absent".to_string(), None),
            ("empty".to_string(), Some(Vec::new())),
        ]
    );
}
