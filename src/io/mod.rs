//! Adapters: Kafka (rdkafka), the registry over HTTP (client and in-repo test
//! server), files (every write through `atomic_file`, every whole-file read under a cap
//! through `bounded_read`, schema files through `schema_file`, Arrow/Parquet data,
//! snapshot directories, `path_conflict` between a command's inputs and outputs),
//! property files, the process's OS settings (`process`), and `barrier verify`'s
//! gathering of facts from the broker and the file system.

pub mod arrow_files;
pub mod atomic_file;
pub mod barrier_verify;
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
