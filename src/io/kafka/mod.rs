//! Kafka adapters over rdkafka: client settings, topic reading, consumer-group
//! offsets, the embedded mock cluster.

pub mod barrier_state;
pub mod error;
pub mod groups;
pub mod mock_cluster;
pub mod settings;
pub mod tail_consumer;
pub mod topic_reader;
