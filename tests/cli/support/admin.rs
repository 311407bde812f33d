//! Topic creation through the admin API, producing one record per batch and a
//! group's committed offsets, as every broker test needs them.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::BaseRecord;

use super::checked_producer::CheckedProducer;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};

const TIMEOUT: Duration = Duration::from_secs(30);

/// Creates one topic with `partitions` partitions.
pub fn create_topic(bootstrap: &str, topic: &str, partitions: i32) {
    create_topics(bootstrap, &[(topic, partitions)]);
}

/// Creates `(topic, partitions)` topics in one request; a topic that already exists is kept
/// (a test may declare the same topic twice), any other failure fails the test.
pub fn create_topics(bootstrap: &str, topics: &[(&str, i32)]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .expect("admin client");
    let new: Vec<NewTopic> = topics
        .iter()
        .map(|(t, p)| NewTopic::new(t, *p, TopicReplication::Fixed(1)))
        .collect();
    let answers = rt
        .block_on(admin.create_topics(&new, &AdminOptions::new().operation_timeout(Some(TIMEOUT))))
        .expect("CreateTopics answered");
    for answer in answers {
        match answer {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((topic, e)) => panic!("create topic {topic}: {e}"),
        }
    }
}

/// Creates `topic` (one partition) through a client built from `config` — which carries the
/// TLS or SASL settings a secured listener needs — and produces `v0`…`v{records-1}` to it,
/// one record per batch (Tansu's high watermark is right only then).
pub fn create_topic_with_values(config: &ClientConfig, topic: &str, records: u32) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let admin: AdminClient<DefaultClientContext> = config.create().expect("admin client");
    let created = rt
        .block_on(admin.create_topics(
            &[NewTopic::new(topic, 1, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(TIMEOUT)),
        ))
        .expect("CreateTopics answered");
    assert_eq!(created, vec![Ok(topic.to_owned())]);
    let producer = CheckedProducer::new(
        config
            .clone()
            .set("linger.ms", "0")
            .set("batch.num.messages", "1"),
    );
    for i in 0..records {
        let value = format!("v{i}");
        producer.send(
            BaseRecord::<[u8], [u8]>::to(topic)
                .partition(0)
                .payload(value.as_bytes()),
        );
        producer.flush();
    }
}

/// Produces (partition, key, value) one record per batch (Tansu's high watermark is
/// right only then).
pub fn produce_bytes(bootstrap: &str, topic: &str, records: &[(i32, String, Vec<u8>)]) {
    let producer = CheckedProducer::one_per_batch(bootstrap);
    for (partition, key, value) in records {
        producer.send(
            BaseRecord::<[u8], [u8]>::to(topic)
                .partition(*partition)
                .key(key.as_bytes())
                .payload(value.as_slice()),
        );
        producer.flush();
    }
}

/// `group`'s committed offsets of partitions `0..partitions` of `topic` (None where
/// nothing is committed).
pub fn committed_offsets(
    bootstrap: &str,
    group: &str,
    topic: &str,
    partitions: i32,
) -> BTreeMap<i32, Option<i64>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    consumer
        .committed_offsets(tpl, TIMEOUT)
        .expect("committed offsets")
        .elements()
        .iter()
        .map(|e| match e.offset() {
            Offset::Offset(o) => (e.partition(), Some(o)),
            _ => (e.partition(), None),
        })
        .collect()
}
