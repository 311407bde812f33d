//! Schema registry wire format, cache, prewarm and serdes. Must not depend on Arrow.

pub mod framing;
pub mod registry;
