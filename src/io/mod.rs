//! Adapters: Kafka (rdkafka), the registry over HTTP, files, property files.

pub mod registry_server;
