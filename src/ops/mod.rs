//! Use cases: what each subcommand does, as plain functions over a plan or options
//! struct, the way `cargo::ops` serves cargo's command files.
//!
//! `cmd` parses arguments into a plan, calls one function here and renders its typed
//! answer; the functions here reach Kafka, the registry and files only through the
//! adapters of `io` and the traits of `engine`, and return [`Error`], whose
//! [`ErrorKind`] maps one to one onto an exit code (only `cmd::exit` knows the
//! numbers). `ops` never imports `cmd`; `io` and `engine` never import `ops`.
//!
//! - `tail`: topics read into Arrow batches, the two-thread pipeline behind source
//!   and sink traits (see its module doc for the files);
//! - `demo`: the demo's tail of a topic into Parquet with a preview.

pub mod demo;
pub mod error;
pub mod tail;

pub use error::{Error, ErrorKind, Result};
