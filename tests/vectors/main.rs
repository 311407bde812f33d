//! Golden vectors from `tests/vectors/data/*.json` (docs/vectors.md), read at test time.

mod support;

mod barrier;
mod columnar;
mod columnar_ops;
mod columnar_runner;
mod contract;
mod coordination;
mod framing;
mod headers;
mod murmur2;
mod registry;
mod snapshot;
mod truncation;
