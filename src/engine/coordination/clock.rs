//! Wall-clock time for leases, behind a trait so every timing rule can be tested
//! with a [`ManualClock`]. Times are epoch milliseconds. Standard library only.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of "now" in epoch milliseconds.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;
}

/// The system wall clock. Clock skew between members moves failover time only,
/// never safety (the producer epoch fences).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(since) => i64::try_from(since.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis())
                .map(|ms| -ms)
                .unwrap_or(i64::MIN),
        }
    }
}

/// A clock that moves only when told to; shareable across threads.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    pub fn new(now_ms: i64) -> Self {
        ManualClock {
            now: AtomicI64::new(now_ms),
        }
    }

    pub fn set(&self, now_ms: i64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the clock by `delta_ms` (saturating) and returns the new time.
    pub fn advance(&self, delta_ms: i64) -> i64 {
        let mut current = self.now.load(Ordering::SeqCst);
        loop {
            let next = current.saturating_add(delta_ms);
            match self
                .now
                .compare_exchange(current, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return next,
                Err(actual) => current = actual,
            }
        }
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told_and_saturates() {
        let clock = ManualClock::new(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        assert_eq!(clock.advance(500), 1_500);
        clock.set(i64::MAX - 1);
        assert_eq!(clock.advance(10), i64::MAX);
        assert_eq!(clock.now_ms(), i64::MAX);
    }

    #[test]
    fn system_clock_is_after_2023() {
        assert!(SystemClock.now_ms() > 1_700_000_000_000);
    }
}
