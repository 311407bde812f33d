//! Running a built topology. `offline` drives it over Arrow batch streams (IPC
//! files or pipes, read and written by `io`); `group` is the consumer-group
//! runner over small consumer/producer/state-store traits, with `align` holding
//! its barrier alignment. `metrics` is what both count.

pub mod align;
pub mod error;
pub mod group;
pub mod metrics;
pub mod offline;

pub use metrics::Metrics;
