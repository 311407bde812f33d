//! Adapters: Kafka (rdkafka), the registry over HTTP (client and in-repo test
//! server), files, property files.

pub mod arrow_files;
pub mod atomic_file;
pub mod kafka;
pub mod properties;
pub mod registry_client;
pub mod registry_server;
pub mod topology_file;
