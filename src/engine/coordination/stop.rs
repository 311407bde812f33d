//! A stop signal shared between a waiting loop and whoever ends it (Ctrl-C, a
//! resignation, a fence): raising it wakes every sleeper at once. Standard
//! library only.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A one-way flag with a wake-up: once raised it stays raised.
#[derive(Debug, Clone, Default)]
pub struct StopSignal {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the flag and wakes every waiter.
    pub fn raise(&self) {
        let (flag, wake) = &*self.inner;
        *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
    }

    pub fn is_raised(&self) -> bool {
        *self.inner.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps up to `timeout` of real time; returns true when the flag is raised
    /// (at once if it already was).
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let (flag, wake) = &*self.inner;
        let until = Instant::now().checked_add(timeout);
        let mut raised = flag.lock().unwrap_or_else(PoisonError::into_inner);
        while !*raised {
            let left = match until {
                Some(until) => until.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                break;
            }
            raised = wake
                .wait_timeout(raised, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *raised
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_wakes_a_sleeper_long_before_its_timeout() {
        let stop = StopSignal::new();
        let other = stop.clone();
        let started = Instant::now();
        let sleeper = std::thread::spawn(move || other.wait_timeout(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(20));
        stop.raise();
        assert!(sleeper.join().unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn an_unraised_signal_times_out_false() {
        let stop = StopSignal::new();
        assert!(!stop.wait_timeout(Duration::from_millis(5)));
        stop.raise();
        assert!(stop.is_raised() && stop.wait_timeout(Duration::ZERO));
    }
}
