//! Wall-clock time for leases, behind a trait so every timing rule can be tested
//! with a [`ManualClock`]. Times are epoch milliseconds. Standard library only.
//!
//! Sleeping goes through the clock too: the system clock sleeps in real time
//! (woken early by a [`StopSignal`]); a manual clock jumps forward instead, so
//! the acquire and renewal loops run instantly and deterministically in tests.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::stop::StopSignal;

/// A source of "now" in epoch milliseconds, and of sleeping.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;

    /// Sleeps `ms` milliseconds (nothing for `ms ≤ 0`) unless `stop` is raised
    /// first; returns false when it was.
    fn sleep(&self, ms: i64, stop: &StopSignal) -> bool {
        let ms = u64::try_from(ms).unwrap_or(0);
        !stop.wait_timeout(Duration::from_millis(ms))
    }
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

    /// Moves the clock forward by `ms` instead of sleeping.
    fn sleep(&self, ms: i64, stop: &StopSignal) -> bool {
        if stop.is_raised() {
            return false;
        }
        if ms > 0 {
            self.advance(ms);
        }
        true
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
    fn sleeping_on_a_manual_clock_jumps_it_forward_unless_stopped() {
        let clock = ManualClock::new(0);
        let stop = StopSignal::new();
        assert!(clock.sleep(250, &stop));
        assert!(clock.sleep(-5, &stop));
        assert_eq!(clock.now_ms(), 250);
        stop.raise();
        assert!(!clock.sleep(100, &stop));
        assert_eq!(clock.now_ms(), 250);
    }

    #[test]
    fn system_clock_sleep_ends_early_when_stopped() {
        let stop = StopSignal::new();
        stop.raise();
        assert!(!SystemClock.sleep(60_000, &stop));
    }

    #[test]
    fn system_clock_is_after_2023() {
        assert!(SystemClock.now_ms() > 1_700_000_000_000);
    }
}
