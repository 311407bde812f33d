//! Adapters: Kafka (rdkafka), the registry over HTTP (client and in-repo test
//! server), files (atomic writes, Arrow/Parquet data output, snapshot directories),
//! property files, the process's OS settings (`process`), and `barrier verify`'s
//! gathering of facts from the broker and the file system.

pub mod arrow_files;
pub mod atomic_file;
pub mod barrier_verify;
pub mod batch_file;
pub mod batch_sink;
pub mod bounded_read;
pub mod kafka;
#[cfg(test)]
mod offline_run_tests;
pub(crate) mod parquet_columns;
pub mod path_conflict;
pub mod process;
pub mod properties;
pub mod proto_imports;
pub mod registry_client;
pub mod registry_server;
pub mod remote_contact;
pub mod runner_state;
pub mod schema_file;
pub mod snapshot_dir;
pub mod topology_file;
