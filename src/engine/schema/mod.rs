//! Schema registry wire format, cache, prewarm and serdes. Must not depend on Arrow.
//!
//! [`registry`] is the seam to the registry (the HTTP client lives in `io`), [`resolve`]
//! fetches a writer schema with its references, [`cache`] holds what the poll loop
//! reads synchronously and [`prewarm`] fills it; [`cache_file`] is the on-disk form
//! of a prewarmed cache. [`avro`], [`protobuf`] and [`json_schema`] parse schemas and
//! read/write bodies; [`compatibility`] checks schema evolution locally.

pub mod avro;
pub mod cache;
pub mod cache_file;
pub mod compatibility;
pub mod error;
pub mod framing;
pub mod json_schema;
pub mod prewarm;
pub mod protobuf;
pub mod registry;
pub mod resolve;
