//! Columnar processing: batches, metadata columns, state snapshots and barrier cuts.
//! Must not depend on Avro or Protobuf.

pub mod barrier;
pub mod expr;
pub mod headers;
pub mod ipc;
pub mod metadata;
pub mod ops;
pub mod runner;
pub mod snapshot;
pub mod topology;
