//! Renderers shared by more than one command (tables, human text and JSON documents of
//! typed ops answers). No subcommand module imports another; what two of them print the
//! same way (a subcommand and the demo's walkthrough) lives here instead.

pub mod barrier;
pub mod barrier_verify;
pub mod snapshot;
pub mod snapshot_payload;
