//! End-to-end tests of the product against real servers: a Tansu broker started per test
//! (see `support::tansu`) and the in-repo schema registry. `scripts/test` prepares the
//! Tansu binary on a fresh machine.

mod support;

mod barrier;
mod broker;
mod completions;
mod cross_impl;
mod dead_broker;
mod dev_cluster;
mod docs_broker;
mod docs_commands;
mod dry_run;
mod faults;
mod frame;
mod hostile;
mod json_schema_python;
mod leader;
mod leader_transport;
mod leader_verified;
mod produce;
mod registry_tls;
mod run;
mod run_fenced;
mod run_online;
mod run_schema_cache;
mod run_sink_files;
mod run_sinks;
mod run_state;
mod run_state_copy;
mod run_state_delta;
mod run_state_kafka;
mod run_state_kafka_shapes;
mod run_threads;
mod schema;
mod schema_cache;
mod schema_check;
mod schema_prewarm_forms;
mod snapshot;
mod snapshot_copy;
mod snapshot_cut;
mod snapshot_live_group;
mod snapshot_topic;
mod tail;
mod tail_kcat;
mod tail_pipeline;
mod tail_properties;
mod tail_registry_formats;
mod tail_text;
mod tail_topics;
mod tail_typed;
