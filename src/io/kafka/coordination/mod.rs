//! The Kafka transport of the leader election (semantics §9): InitProducerId
//! for `transactional.id = <role>` yields the real fencing token, lease writes
//! go inside that producer's transaction pinned to the role's partition,
//! registrations are plain produces, reads are `read_committed` fetches up to
//! the last stable offset, and DescribeTransactions answers where the broker
//! has it. Spoken with the `kafka-protocol` crate over TCP, TLS and SASL
//! (`security`), because rdkafka does not expose the producer id and epoch.

pub mod client;
pub mod error;
pub mod records;
pub mod security;
pub mod transport;
pub mod wire;

pub use client::WireClient;
pub use error::WireError;
pub use transport::{KafkaTransport, KafkaTransportOptions};

#[cfg(test)]
mod tests;
