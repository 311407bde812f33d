//! Columnar processing: batches, metadata columns, payload codecs, state snapshots
//! and barrier cuts. Must not depend on Avro or Protobuf.

pub mod barrier;
pub mod batch;
pub mod codec;
pub mod expr;
pub mod headers;
pub mod ipc;
pub mod ipc_stream;
pub mod json_values;
pub mod metadata;
pub mod ops;
pub mod parallel;
pub mod raw_batch;
pub mod record;
pub mod record_filter;
pub mod reserved;
pub mod reserved_types;
pub mod runner;
pub mod snapshot;
#[cfg(test)]
pub mod test_support;
pub mod text_view;
pub mod topology;
