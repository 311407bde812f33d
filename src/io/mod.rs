//! Adapters: Kafka (rdkafka), the registry over HTTP (client and in-repo test
//! server), files, property files.

pub mod atomic_file;
pub mod atomic_writer;
pub mod batch_sink;
pub mod kafka;
pub mod properties;
pub mod registry_client;
pub mod registry_server;
pub mod writer_schemas;
