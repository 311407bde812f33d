//! Kafka adapters over rdkafka: client settings, topic reading, consumer-group
//! offsets, the embedded mock cluster.

pub mod barrier_state;
pub mod coordination;
pub mod error;
pub mod groups;
pub mod mock_cluster;
pub mod settings;
pub mod topic_reader;
