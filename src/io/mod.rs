//! Adapters: Kafka (rdkafka), the registry over HTTP, files, property files.
