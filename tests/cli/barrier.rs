//! `barrier` end to end against a real broker (Tansu): cuts written to `__barrier_state` in
//! the frozen format by a test producer, committed offsets set by a real consumer group,
//! snapshot directories in both layouts, Arrow inputs, and every bad input.

pub mod fixture;

mod caught_up;
mod consumer;
mod decode;
mod kafka_store;
mod list;
mod mid_transaction;
mod runner;
mod unknown_group;
mod verify;
mod watch;
