//! Kafka adapters over rdkafka: client settings, topic reading, consumer-group
//! offsets, `__barrier_state` reads and the engine's barrier consumer, the offsets a
//! partition holds, the group runner's consumer, producer (transactions included)
//! and cut source, the embedded mock cluster, and the refused SASL logins librdkafka
//! reports on the side.

pub mod auth_failure;
pub mod barrier_consumer;
pub mod barrier_state;
pub mod barrier_watch;
pub mod classify;
pub mod client_log;
pub mod coordination;
pub mod error;
pub mod exit_flush;
pub mod fetch_queue;
pub mod groups;
pub mod headers;
pub mod mock_cluster;
pub mod partition_log;
pub mod prompt_close;
pub mod reachability;
pub mod reader_context;
pub mod runner_consumer;
pub mod runner_cuts;
pub mod runner_producer;
pub mod settings;
pub mod state_times;
pub mod state_topic;
pub mod tail_consumer;
pub mod tail_context;
pub mod test_hooks;
pub mod topic_reader;
pub mod transactions;
