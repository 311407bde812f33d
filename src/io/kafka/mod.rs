//! Kafka adapters over rdkafka: client settings, the embedded mock cluster.

pub mod mock_cluster;
pub mod settings;
