//! Running a built topology. `offline` drives it over Arrow batch streams (IPC
//! files or pipes, read and written by `io`); `group` is the consumer-group
//! runner over small consumer/producer/state-store traits, with `align` holding
//! its barrier alignment and `mirror` a store written to two places (the Kafka
//! store and its local copy). `metrics` is what both count.

pub mod align;
pub mod error;
pub mod group;
pub mod metrics;
pub mod mirror;
pub mod offline;

pub use metrics::Metrics;
