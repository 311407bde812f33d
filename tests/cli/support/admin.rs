//! Topic creation through the admin API, as every broker test needs it.

use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::types::RDKafkaErrorCode;

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
