//! Lease configuration and timing (semantics §9).
//!
//! The lease adds no safety (the producer epoch does); it only decides when
//! standbys challenge. Times are epoch milliseconds as `i64` and extents are
//! milliseconds; every addition saturates at `i64::MAX` (and `i64::MIN`).
//! Standard library only.

use std::fmt;
use std::time::Duration;

use super::topic::{COORDINATION_TOPIC, DEFAULT_PARTITIONS};

/// Default lease duration: 30 s.
pub const DEFAULT_LEASE_MS: i64 = 30_000;
/// Default renew interval: 10 s.
pub const DEFAULT_RENEW_MS: i64 = 10_000;
/// Default challenge stagger per rank: 5 s.
pub const DEFAULT_STAGGER_MS: i64 = 5_000;
/// Default poll interval (acquire-loop reads, renewal retries): 1 s.
pub const DEFAULT_POLL_MS: i64 = 1_000;

/// When a lease was granted and when it ends, in epoch milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseTerm {
    pub granted_at: i64,
    pub deadline: i64,
}

impl LeaseTerm {
    /// The lease is live while `now < deadline`.
    pub fn is_live(&self, now: i64) -> bool {
        now < self.deadline
    }

    /// `max(0, deadline − now)` in milliseconds.
    pub fn remaining_ms(&self, now: i64) -> i64 {
        self.deadline.saturating_sub(now).max(0)
    }

    /// When the holder renews: `min(granted_at + renew, deadline)`.
    pub fn renew_at(&self, config: &LeaseConfig) -> i64 {
        self.granted_at
            .saturating_add(config.renew_ms)
            .min(self.deadline)
    }

    /// A renewal is due once `now ≥ renew_at`.
    pub fn is_renew_due(&self, config: &LeaseConfig, now: i64) -> bool {
        now >= self.renew_at(config)
    }

    /// When the member of `rank` challenges: `deadline + rank × stagger`.
    pub fn challenge_at(&self, config: &LeaseConfig, rank: i64) -> i64 {
        self.deadline.saturating_add(config.challenge_delay(rank))
    }
}

/// Lease settings as given (flags, defaults); [`LeaseSettings::validate`]
/// turns them into a [`LeaseConfig`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseSettings {
    pub lease_ms: i64,
    pub renew_ms: i64,
    pub stagger_ms: i64,
    pub poll_ms: i64,
    pub topic: String,
    pub partitions: i32,
}

impl Default for LeaseSettings {
    fn default() -> Self {
        LeaseSettings {
            lease_ms: DEFAULT_LEASE_MS,
            renew_ms: DEFAULT_RENEW_MS,
            stagger_ms: DEFAULT_STAGGER_MS,
            poll_ms: DEFAULT_POLL_MS,
            topic: COORDINATION_TOPIC.to_string(),
            partitions: DEFAULT_PARTITIONS,
        }
    }
}

impl LeaseSettings {
    /// Checks the rules of semantics §9, in table order.
    pub fn validate(self) -> Result<LeaseConfig, LeaseConfigError> {
        if self.lease_ms <= 0 {
            return Err(LeaseConfigError::NotPositive {
                setting: LeaseSetting::LeaseDuration,
                ms: self.lease_ms,
            });
        }
        if self.renew_ms <= 0 {
            return Err(LeaseConfigError::NotPositive {
                setting: LeaseSetting::RenewInterval,
                ms: self.renew_ms,
            });
        }
        if self.renew_ms >= self.lease_ms {
            return Err(LeaseConfigError::RenewNotShorter {
                renew_ms: self.renew_ms,
                lease_ms: self.lease_ms,
            });
        }
        if self.stagger_ms <= 0 {
            return Err(LeaseConfigError::NotPositive {
                setting: LeaseSetting::ChallengeStagger,
                ms: self.stagger_ms,
            });
        }
        if self.poll_ms <= 0 {
            return Err(LeaseConfigError::PollNotPositive { ms: self.poll_ms });
        }
        if self.topic.is_empty() {
            return Err(LeaseConfigError::EmptyTopic);
        }
        if self.partitions < 1 {
            return Err(LeaseConfigError::NoPartitions {
                partitions: self.partitions,
            });
        }
        Ok(LeaseConfig {
            lease_ms: self.lease_ms,
            renew_ms: self.renew_ms,
            stagger_ms: self.stagger_ms,
            poll_ms: self.poll_ms,
            topic: self.topic,
            partitions: self.partitions,
        })
    }
}

/// Validated lease settings: every extent positive, renew shorter than the lease,
/// a named topic with at least one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    lease_ms: i64,
    renew_ms: i64,
    stagger_ms: i64,
    poll_ms: i64,
    topic: String,
    partitions: i32,
}

impl Default for LeaseConfig {
    /// 30 s / 10 s / 5 s / poll 1 s, `__coordination_state` with 16 partitions.
    fn default() -> Self {
        LeaseSettings::default()
            .validate()
            .expect("the default lease settings are valid")
    }
}

impl LeaseConfig {
    pub fn lease_ms(&self) -> i64 {
        self.lease_ms
    }

    pub fn renew_ms(&self) -> i64 {
        self.renew_ms
    }

    pub fn stagger_ms(&self) -> i64 {
        self.stagger_ms
    }

    pub fn poll_ms(&self) -> i64 {
        self.poll_ms
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    pub fn partitions(&self) -> i32 {
        self.partitions
    }

    /// The lease duration (also the transaction timeout of minted producers).
    pub fn lease_duration(&self) -> Duration {
        millis(self.lease_ms)
    }

    pub fn renew_interval(&self) -> Duration {
        millis(self.renew_ms)
    }

    pub fn challenge_stagger(&self) -> Duration {
        millis(self.stagger_ms)
    }

    pub fn poll_interval(&self) -> Duration {
        millis(self.poll_ms)
    }

    /// At least three renewals fit in one lease: `3 × renew ≤ duration`.
    pub fn renews_with_margin(&self) -> bool {
        self.renew_ms
            .checked_mul(3)
            .is_some_and(|three| three <= self.lease_ms)
    }

    /// A fresh lease: `{granted_at: now, deadline: now + duration}`.
    pub fn grant(&self, now: i64) -> LeaseTerm {
        LeaseTerm {
            granted_at: now,
            deadline: now.saturating_add(self.lease_ms),
        }
    }

    /// How long after a deadline the member of `rank` challenges:
    /// `rank × stagger`, and 0 for `rank ≤ 0`.
    pub fn challenge_delay(&self, rank: i64) -> i64 {
        if rank <= 0 {
            0
        } else {
            rank.saturating_mul(self.stagger_ms)
        }
    }
}

fn millis(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The lease settings that must be positive extents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseSetting {
    LeaseDuration,
    RenewInterval,
    ChallengeStagger,
}

impl fmt::Display for LeaseSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LeaseSetting::LeaseDuration => "lease duration",
            LeaseSetting::RenewInterval => "renew interval",
            LeaseSetting::ChallengeStagger => "challenge stagger",
        })
    }
}

/// Invalid lease settings (semantics §9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseConfigError {
    NotPositive { setting: LeaseSetting, ms: i64 },
    RenewNotShorter { renew_ms: i64, lease_ms: i64 },
    PollNotPositive { ms: i64 },
    EmptyTopic,
    NoPartitions { partitions: i32 },
}

impl fmt::Display for LeaseConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseConfigError::NotPositive { setting, ms } => write!(
                f,
                "the {setting} must be a positive extent, got {}",
                Extent(*ms)
            ),
            LeaseConfigError::RenewNotShorter { renew_ms, lease_ms } => write!(
                f,
                "the renew interval of {} is not shorter than the lease duration of {}",
                Extent(*renew_ms),
                Extent(*lease_ms)
            ),
            LeaseConfigError::PollNotPositive { ms } => write!(
                f,
                "the poll interval must be a positive extent, got {}",
                Extent(*ms)
            ),
            LeaseConfigError::EmptyTopic => f.write_str("the coordination topic must not be empty"),
            LeaseConfigError::NoPartitions { partitions } => write!(
                f,
                "the coordination topic needs at least one partition, got {partitions}"
            ),
        }
    }
}

impl std::error::Error for LeaseConfigError {}

/// A millisecond extent in krabka-units text: the largest unit that divides it
/// exactly (`30s`, `250ms`, `-1s`, `2m`), and `0s` for zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent(pub i64);

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(i64, &str); 4] = [(3_600_000, "h"), (60_000, "m"), (1_000, "s"), (1, "ms")];
        let ms = self.0;
        if ms == 0 {
            return f.write_str("0s");
        }
        let (size, unit) = UNITS
            .iter()
            .copied()
            .find(|(size, _)| ms % size == 0)
            .unwrap_or((1, "ms"));
        write!(f, "{}{unit}", ms / size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(lease_ms: i64, renew_ms: i64, stagger_ms: i64) -> LeaseSettings {
        LeaseSettings {
            lease_ms,
            renew_ms,
            stagger_ms,
            ..LeaseSettings::default()
        }
    }

    fn err(s: LeaseSettings) -> String {
        s.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_30s_10s_5s_1s_and_16_partitions() {
        let c = LeaseConfig::default();
        assert_eq!(
            (c.lease_ms(), c.renew_ms(), c.stagger_ms(), c.poll_ms()),
            (30_000, 10_000, 5_000, 1_000)
        );
        assert_eq!((c.topic(), c.partitions()), ("__coordination_state", 16));
        assert_eq!(c.lease_duration(), Duration::from_secs(30));
        assert!(c.renews_with_margin());
    }

    #[test]
    fn every_extent_must_be_positive() {
        assert_eq!(
            err(settings(0, 10_000, 5_000)),
            "the lease duration must be a positive extent, got 0s"
        );
        assert_eq!(
            err(settings(30_000, -1_000, 5_000)),
            "the renew interval must be a positive extent, got -1s"
        );
        assert_eq!(
            err(settings(30_000, 10_000, 0)),
            "the challenge stagger must be a positive extent, got 0s"
        );
        let poll = LeaseSettings {
            poll_ms: -250,
            ..LeaseSettings::default()
        };
        assert_eq!(
            err(poll),
            "the poll interval must be a positive extent, got -250ms"
        );
    }

    #[test]
    fn renew_must_be_shorter_than_the_lease() {
        assert_eq!(
            err(settings(30_000, 30_000, 5_000)),
            "the renew interval of 30s is not shorter than the lease duration of 30s"
        );
        assert!(settings(30_000, 29_999, 5_000).validate().is_ok());
    }

    #[test]
    fn margin_means_three_renewals_per_lease() {
        assert!(
            settings(30_000, 10_000, 1)
                .validate()
                .unwrap()
                .renews_with_margin()
        );
        assert!(
            !settings(30_000, 10_001, 1)
                .validate()
                .unwrap()
                .renews_with_margin()
        );
        assert!(
            !settings(i64::MAX, i64::MAX - 1, 1)
                .validate()
                .unwrap()
                .renews_with_margin()
        );
    }

    #[test]
    fn topic_must_be_named_and_have_partitions() {
        let empty = LeaseSettings {
            topic: String::new(),
            ..LeaseSettings::default()
        };
        assert_eq!(err(empty), "the coordination topic must not be empty");
        let none = LeaseSettings {
            partitions: 0,
            ..LeaseSettings::default()
        };
        assert_eq!(
            err(none),
            "the coordination topic needs at least one partition, got 0"
        );
    }

    #[test]
    fn extents_use_the_largest_exact_unit() {
        assert_eq!(Extent(7_200_000).to_string(), "2h");
        assert_eq!(Extent(90_000).to_string(), "90s");
        assert_eq!(Extent(120_000).to_string(), "2m");
        assert_eq!(Extent(1_500).to_string(), "1500ms");
        assert_eq!(Extent(i64::MIN).to_string(), "-9223372036854775808ms");
    }

    #[test]
    fn negative_rank_adds_no_delay() {
        let c = LeaseConfig::default();
        assert_eq!(c.challenge_delay(-5), 0);
        assert_eq!(c.challenge_delay(i64::MIN), 0);
        assert_eq!(c.grant(0).challenge_at(&c, -1), 30_000);
    }

    #[test]
    fn remaining_saturates_for_far_past_deadlines() {
        let term = LeaseTerm {
            granted_at: i64::MIN,
            deadline: i64::MIN,
        };
        assert_eq!(term.remaining_ms(i64::MAX), 0);
        let term = LeaseTerm {
            granted_at: 0,
            deadline: i64::MAX,
        };
        assert_eq!(term.remaining_ms(i64::MIN), i64::MAX);
    }

    #[test]
    fn renew_at_saturates() {
        let c = LeaseConfig::default();
        let term = c.grant(i64::MAX - 1);
        assert_eq!(term.deadline, i64::MAX);
        assert_eq!(term.renew_at(&c), i64::MAX);
        assert!(!term.is_renew_due(&c, i64::MAX - 1));
        assert!(term.is_renew_due(&c, i64::MAX));
    }
}
