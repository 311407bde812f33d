//! The election of one role (semantics §9): reading and folding the role's
//! partition, registering, the acquire loop, describing the epoch, and the
//! operator writes (deregistration).
//!
//! The acquire loop, bounded by the caller's deadline and stop signal:
//! 1. read the role's partition (committed records only), fold, evaluate now;
//! 2. `not registered` → append a registration with the plain producer; after
//!    the first append wait one poll interval for the read to catch up instead
//!    of appending again;
//! 3. `wait` → sleep min(until − now, poll), loop;
//! 4. `hold` or `challenge` → mint an epoch and write Grant(now) as the lease
//!    inside a transaction of the producer that minted it; fenced → another
//!    member won: wait one poll interval (so the winner's lease becomes
//!    visible instead of being fenced in turn), loop; other errors → return;
//! 5. success → a [`Leadership`].
//!
//! Standard library only.

use std::sync::Arc;

use super::clock::Clock;
use super::error::{LeaderError, ReadError};
use super::leadership::{Leadership, LeadershipParts};
use super::lease::LeaseConfig;
use super::partition::role_partition;
use super::record::{CoordinationKey, LeaseValue, RegistrationValue, check_member, check_role};
use super::status::LeadershipStatus;
use super::stop::StopSignal;
use super::succession::{Action, Succession};
use super::transport::{TopicPartition, Transport, TransportError};

/// What the acquire loop did, for progress reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcquireEvent {
    /// A registration was appended with this registeredAt.
    Registered { registered_at: i64 },
    /// The member waits for its turn.
    Waiting {
        rank: i64,
        until: i64,
        holder: Option<String>,
    },
    /// The member's turn came: it mints an epoch.
    Challenging { action: Action },
    /// Another member minted a newer epoch between the mint and the write.
    LostRace { cause: TransportError },
}

/// Receives the acquire loop's progress.
pub type AcquireObserver = Box<dyn Fn(&AcquireEvent) + Send + Sync>;

/// How one acquisition is bounded and reported.
#[derive(Default)]
pub struct AcquireOptions {
    /// Give up at this time (epoch ms on the election's clock).
    pub deadline: Option<i64>,
    /// Give up when raised.
    pub stop: StopSignal,
    /// Append a fresh registration first even when one exists, so a restarted
    /// member queues at the tail (no failback), and act only once the read
    /// shows it.
    pub fresh_registration: bool,
    /// Called for every step worth reporting.
    pub observer: Option<AcquireObserver>,
}

impl AcquireOptions {
    fn report(&self, event: AcquireEvent) {
        if let Some(observer) = &self.observer {
            observer(&event);
        }
    }
}

/// One transport, one clock and one lease configuration (topic and partition
/// count included): everything an election step needs.
pub struct Election<T: Transport + 'static> {
    transport: Arc<T>,
    clock: Arc<dyn Clock>,
    config: LeaseConfig,
}

impl<T: Transport + 'static> Election<T> {
    pub fn new(transport: Arc<T>, clock: Arc<dyn Clock>, config: LeaseConfig) -> Self {
        Election {
            transport,
            clock,
            config,
        }
    }

    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn transport(&self) -> &Arc<T> {
        &self.transport
    }

    /// The partition holding every record of `role`.
    pub fn partition_of(&self, role: &str) -> Result<TopicPartition, LeaderError> {
        check_role(role)?;
        let partition = role_partition(role, self.config.partitions())?;
        Ok(TopicPartition::new(self.config.topic(), partition))
    }

    /// Reads the role's partition and folds it into roster and lease. Takes no epoch.
    pub fn read_state(&self, role: &str) -> Result<Succession, LeaderError> {
        let partition = self.partition_of(role)?;
        let wrap = |cause| LeaderError::ReadState {
            role: role.to_string(),
            cause,
        };
        let records = self
            .transport
            .read_partition(&partition)
            .map_err(|e| wrap(ReadError::Transport(e)))?;
        Succession::fold(role, &records).map_err(|e| wrap(ReadError::Fold(e)))
    }

    /// The epoch the broker holds for `role` (one DescribeTransactions, no topic read).
    pub fn describe(&self, role: &str) -> Result<LeadershipStatus, LeaderError> {
        check_role(role)?;
        match self.transport.describe_epoch(role) {
            Ok(Some(token)) => Ok(LeadershipStatus {
                role: role.to_string(),
                token,
                held: true,
            }),
            Ok(None) => Ok(LeadershipStatus::never_taken(role)),
            Err(cause) => Err(LeaderError::DescribeEpoch {
                role: role.to_string(),
                cause,
            }),
        }
    }

    /// Appends a registration `{member, registeredAt = now}` outside any
    /// transaction; returns the registeredAt written.
    pub fn register(&self, role: &str, member: &str) -> Result<i64, LeaderError> {
        let partition = self.partition_of(role)?;
        let key = CoordinationKey::registration(role, member)?.encode();
        let registered_at = self.clock.now_ms();
        let value = RegistrationValue::new(member, registered_at)?.encode();
        self.transport
            .append(&partition, &key, Some(&value))
            .map_err(|cause| LeaderError::Register {
                role: role.to_string(),
                member: member.to_string(),
                cause,
            })?;
        Ok(registered_at)
    }

    /// Tombstones `member`'s registration: it leaves the roster.
    pub fn deregister(&self, role: &str, member: &str) -> Result<(), LeaderError> {
        let partition = self.partition_of(role)?;
        let key = CoordinationKey::registration(role, member)?.encode();
        self.transport
            .append(&partition, &key, None)
            .map_err(|cause| LeaderError::Register {
                role: role.to_string(),
                member: member.to_string(),
                cause,
            })
    }

    /// Competes for `role` until `member` holds it, the deadline passes or the
    /// stop signal is raised.
    pub fn acquire(
        &self,
        role: &str,
        member: &str,
        options: &AcquireOptions,
    ) -> Result<Leadership, LeaderError> {
        check_member(member)?;
        let partition = self.partition_of(role)?;
        let mut registered = false;
        // With a fresh registration: the offset of the member's registration
        // before the append; only a registration past it is the fresh one.
        let mut awaiting: Option<Option<i64>> = None;
        if options.fresh_registration {
            self.check_bounds(role, options)?;
            let before = self
                .read_state(role)?
                .registration(member)
                .map(|r| r.offset);
            let at = self.register(role, member)?;
            options.report(AcquireEvent::Registered { registered_at: at });
            registered = true;
            awaiting = Some(before);
        }
        loop {
            self.check_bounds(role, options)?;
            let state = self.read_state(role)?;
            if let Some(before) = awaiting {
                let offset = state.registration(member).map(|r| r.offset);
                let fresh = offset.is_some() && (before.is_none() || offset > before);
                if !fresh {
                    self.pause(self.config.poll_ms(), options);
                    continue;
                }
                awaiting = None;
            }
            let now = self.clock.now_ms();
            match state.evaluate(&self.config, member, now) {
                Action::NotRegistered if registered => {
                    self.pause(self.config.poll_ms(), options);
                }
                Action::NotRegistered => {
                    let at = self.register(role, member)?;
                    options.report(AcquireEvent::Registered { registered_at: at });
                    registered = true;
                }
                Action::Wait(until) => {
                    options.report(AcquireEvent::Waiting {
                        rank: state.rank_of(member).unwrap_or(0),
                        until,
                        holder: state.holder().map(str::to_string),
                    });
                    let delay = until.saturating_sub(now).min(self.config.poll_ms());
                    self.pause(delay, options);
                }
                action @ (Action::Hold | Action::Challenge) => {
                    options.report(AcquireEvent::Challenging { action });
                    match self.challenge(role, member, &partition) {
                        Ok(leadership) => return Ok(leadership),
                        Err(LeaderError::WriteLease { cause, .. }) if cause.is_fenced() => {
                            options.report(AcquireEvent::LostRace { cause });
                            self.pause(self.config.poll_ms(), options);
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    fn check_bounds(&self, role: &str, options: &AcquireOptions) -> Result<(), LeaderError> {
        if options.stop.is_raised() {
            return Err(LeaderError::Cancelled {
                role: role.to_string(),
            });
        }
        match options.deadline {
            Some(deadline) if self.clock.now_ms() >= deadline => {
                Err(LeaderError::DeadlineExceeded {
                    role: role.to_string(),
                    deadline,
                })
            }
            _ => Ok(()),
        }
    }

    /// Sleeps `ms`, never past the deadline; the loop re-checks the bounds.
    fn pause(&self, ms: i64, options: &AcquireOptions) {
        let ms = match options.deadline {
            Some(deadline) => ms.min(deadline.saturating_sub(self.clock.now_ms())),
            None => ms,
        };
        self.clock.sleep(ms, &options.stop);
    }

    /// Mints the role's epoch and writes the first lease under it.
    fn challenge(
        &self,
        role: &str,
        member: &str,
        partition: &TopicPartition,
    ) -> Result<Leadership, LeaderError> {
        let token = self
            .transport
            .acquire_epoch(role)
            .map_err(|cause| LeaderError::Mint {
                role: role.to_string(),
                cause,
            })?;
        let term = self.config.grant(self.clock.now_ms());
        let lease = LeaseValue::new(member, token, term)?;
        let key = CoordinationKey::lease(role)?.encode();
        self.transport
            .write_lease(partition, token, &key, Some(&lease.encode()))
            .map_err(|cause| LeaderError::WriteLease {
                role: role.to_string(),
                cause,
            })?;
        let writer: Arc<dyn super::transport::LeaseWriter> = self.transport.clone();
        Ok(Leadership::new(
            LeadershipParts {
                role: role.to_string(),
                member: member.to_string(),
                token,
                partition: partition.clone(),
                config: self.config.clone(),
                writer,
                clock: self.clock.clone(),
            },
            lease,
        ))
    }
}
