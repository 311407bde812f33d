//! Golden vectors from `../shared/vectors/*.json`, read at test time.

mod support;

mod barrier;
mod columnar;
mod columnar_ops;
mod columnar_runner;
mod coordination;
mod framing;
mod headers;
mod murmur2;
mod registry;
mod snapshot;
mod truncation;
