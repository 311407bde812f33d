//! Fault injection for retry tests: a delay before every answer, the next N requests
//! answered with an error status, the next N connections dropped without an answer.
//! Each faulted request consumes one count; drops are taken before raw answers,
//! raw answers before failures.

use std::time::Duration;

/// What to do with one request instead of (or before) routing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// Route the request normally.
    Serve,
    /// Answer this status with an injected error body, change nothing.
    Fail(u16),
    /// Close the client's connection without writing a byte.
    Drop,
    /// Answer this status with exactly this body (e.g. not JSON), change nothing.
    Raw(u16, String),
}

/// Pending faults, shared by the request workers under one lock.
#[derive(Debug, Default)]
pub struct Faults {
    fail_left: u32,
    fail_status: u16,
    drop_left: u32,
    delay: Duration,
    raw_left: u32,
    raw: (u16, String),
}

impl Faults {
    /// The next `n` requests answer `status`.
    pub fn fail_next(&mut self, n: u32, status: u16) {
        self.fail_left = n;
        self.fail_status = status;
    }

    /// The next `n` requests are answered `status` with the raw `body`.
    pub fn respond_next(&mut self, n: u32, status: u16, body: &str) {
        self.raw_left = n;
        self.raw = (status, body.to_string());
    }

    /// The next `n` requests lose their connection.
    pub fn drop_next(&mut self, n: u32) {
        self.drop_left = n;
    }

    /// Every later request waits this long before anything else happens (zero: no delay).
    pub fn set_delay(&mut self, delay: Duration) {
        self.delay = delay;
    }

    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Clears every pending fault.
    pub fn clear(&mut self) {
        *self = Faults::default();
    }

    /// Decides the fate of one request and consumes the matching count.
    pub fn take(&mut self) -> FaultAction {
        if self.drop_left > 0 {
            self.drop_left -= 1;
            FaultAction::Drop
        } else if self.raw_left > 0 {
            self.raw_left -= 1;
            FaultAction::Raw(self.raw.0, self.raw.1.clone())
        } else if self.fail_left > 0 {
            self.fail_left -= 1;
            FaultAction::Fail(self.fail_status)
        } else {
            FaultAction::Serve
        }
    }
}

/// The `error_code` of an injected failure: the status followed by `01` (500 → 50001, 429 → 42901).
pub fn injected_error_code(status: u16) -> u32 {
    u32::from(status) * 100 + 1
}
