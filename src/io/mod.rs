//! Adapters: Kafka (rdkafka), the registry over HTTP, files, property files.

pub mod atomic_file;
pub mod kafka;
pub mod properties;
pub mod registry_client;
