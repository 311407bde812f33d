//! Test-only fault hooks of the online runner, each inert unless its environment variable is
//! set. They exist because some failures cannot be provoked from outside a running process
//! at the right moment: an end-to-end test needs a runner killed while its transaction is
//! open (records sent and flushed, offsets added, no commit yet) to prove exactly-once.

use std::time::Duration;

use crate::engine::units::parse_duration;

/// A duration (`30s`): an exactly-once runner sleeps that long after sending a round's
/// records and offsets and before committing the transaction, logging
/// [`PAUSE_BEFORE_COMMIT_LOG`] first. Unset, empty or invalid: no pause.
pub const PAUSE_BEFORE_COMMIT_ENV: &str = "KRABKA_STREAMS_TEST_PAUSE_BEFORE_COMMIT";

/// The line a test waits for before it kills the runner.
pub const PAUSE_BEFORE_COMMIT_LOG: &str = "test hook: transaction open, pausing before its commit";

/// The pause the hook asks for, read when the first transactional producer of
/// the process is built: one built after the runner rejoined its group (it was
/// fenced while paused) does not pause again.
pub fn pause_before_commit() -> Option<Duration> {
    static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if TAKEN.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let text = std::env::var(PAUSE_BEFORE_COMMIT_ENV).ok()?;
    match parse_duration(&text) {
        Ok(pause) if !pause.is_zero() => Some(pause),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("{PAUSE_BEFORE_COMMIT_ENV} ignored: {e}");
            None
        }
    }
}
