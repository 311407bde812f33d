//! Whether this process has opened a client to a broker or a registry yet.
//!
//! The cancelled message warns that "a request in flight may already have reached the
//! broker": true once a client exists, misleading for an offline `run`, a `snapshot`
//! command or a wait on a FIFO, which never spoke to anyone. The adapters that open a
//! remote client note it here; the message asks.

use std::sync::atomic::{AtomicBool, Ordering};

static CONTACTED: AtomicBool = AtomicBool::new(false);

/// Called by every adapter before it builds a Kafka, registry or coordination client.
pub fn note() {
    CONTACTED.store(true, Ordering::Relaxed);
}

/// True once any remote client was built in this process.
pub fn happened() -> bool {
    CONTACTED.load(Ordering::Relaxed)
}
