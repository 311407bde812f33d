//! Use cases: what each subcommand does, as plain functions over a plan or options
//! struct, the way `cargo::ops` serves cargo's command files.
//!
//! `cmd` parses arguments into a plan, calls one function here and renders its typed
//! answer; the functions here reach Kafka, the registry and files only through the
//! adapters of `io` and the traits of `engine`, and return [`Error`], whose
//! [`ErrorKind`] maps one to one onto an exit code (only `cmd::exit` knows the
//! numbers). `ops` never imports `cmd`; `io` and `engine` never import `ops`.
//!
//! * [`run`]: `run` — check, explain, offline and online (with `--restore-cut`);
//! * [`snapshot`]: `snapshot list|dump|restore|verify|prune|restore-cut`;
//! * [`tail`]: topics read into Arrow batches, the two-thread pipeline behind source
//!   and sink traits (see its module doc for the files);
//! * [`barrier`], [`leader`], [`schema`], [`produce`]: those subcommands' use cases;
//! * [`state_store`], [`state_copy`], [`state_inspect`]: the online run's state store
//!   and the `snapshot` commands over a state topic;
//! * [`demo`]: the `demo` walkthrough, one file a step, answering typed step results.

pub mod barrier;
pub mod demo;
pub mod error;
pub mod leader;
pub mod produce;
pub mod run;
pub mod schema;
pub mod snapshot;
pub mod state_copy;
pub mod state_inspect;
pub mod state_store;
pub mod tail;

pub use error::{Error, ErrorKind, Result};
