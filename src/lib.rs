//! krabka-streams: the command-line face of the krabka streams libraries.
//!
//! `engine` holds everything that knows the frozen formats and semantics and
//! never touches a Kafka client, HTTP or the command line; `io` holds the
//! adapters (rdkafka, registry HTTP, files); `cmd` turns parsed arguments into
//! engine calls and renders the answers.

pub mod cmd;
pub mod engine;
pub mod io;
