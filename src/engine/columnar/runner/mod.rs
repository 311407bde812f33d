//! Running a built topology. `offline` drives it over Arrow batch streams (IPC
//! files or pipes, read and written by `io`); the consumer-group runner will sit
//! beside it over small consumer/producer traits. `metrics` is what both count.

pub mod group;
pub mod metrics;
pub mod offline;

pub use metrics::Metrics;
