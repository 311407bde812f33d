//! The shared engine library: frozen codecs and semantics, no CLI, no rdkafka, no HTTP.
//!
//! `schema` knows nothing of Arrow, `columnar` nothing of Avro/Protobuf; they meet
//! in `columnarschema`. `coordination` needs only the standard library.

pub(crate) mod bytes;
pub mod columnar;
pub mod columnarschema;
pub mod coordination;
pub mod murmur2;
pub mod schema;
pub mod suggest;
pub mod time;
pub mod topic_name;
pub mod topic_partition;
pub mod units;
