//! Adapters: Kafka (rdkafka), the registry over HTTP, files, property files.

pub mod atomic_file;
