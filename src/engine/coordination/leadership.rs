//! A held role (semantics §9 steps 5–6): the token, the last lease written, the
//! renewal loop and resignation.
//!
//! The renewal loop writes a fresh grant with the same token at every RenewAt.
//! A fenced renewal ends the leadership with `role <r>: fenced: …`; a refused
//! login ends it at once with `renew the lease of role <r>: <the refusal>` (the
//! same credentials never succeed: retrying until the deadline only delays a stop
//! that cannot be avoided); other failures are retried every poll interval until
//! the last deadline passes,
//! which ends it with `role <r>: the lease expired at <ms> after a failed
//! renewal: …`. Resigning ends it with `role <r>: the member no longer holds
//! the role` and writes a lease tombstone under the token. Every write goes
//! through one lock, so a renewal never lands after the resignation's
//! tombstone. Standard library only.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::clock::Clock;
use super::error::LeaderError;
use super::lease::LeaseConfig;
use super::record::{CoordinationKey, LeaseValue};
use super::stop::StopSignal;
use super::token::FencingToken;
use super::transport::{LeaseWriter, TopicPartition};

struct Shared {
    role: String,
    member: String,
    token: FencingToken,
    partition: TopicPartition,
    config: LeaseConfig,
    writer: Arc<dyn LeaseWriter>,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    /// Held across every lease write.
    write: Mutex<()>,
    /// Raised when the leadership ends.
    ended: StopSignal,
}

struct State {
    lease: LeaseValue,
    end: Option<LeaderError>,
}

/// The live leadership of one member over one role; cheap to clone and safe
/// to share between the renewal thread and the supervisor.
#[derive(Clone)]
pub struct Leadership {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Leadership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leadership")
            .field("role", &self.shared.role)
            .field("member", &self.shared.member)
            .field("token", &self.shared.token)
            .finish()
    }
}

/// What a leadership needs besides its lease.
pub(crate) struct LeadershipParts {
    pub role: String,
    pub member: String,
    pub token: FencingToken,
    pub partition: TopicPartition,
    pub config: LeaseConfig,
    pub writer: Arc<dyn LeaseWriter>,
    pub clock: Arc<dyn Clock>,
}

impl Leadership {
    pub(crate) fn new(parts: LeadershipParts, lease: LeaseValue) -> Self {
        Leadership {
            shared: Arc::new(Shared {
                role: parts.role,
                member: parts.member,
                token: parts.token,
                partition: parts.partition,
                config: parts.config,
                writer: parts.writer,
                clock: parts.clock,
                state: Mutex::new(State { lease, end: None }),
                write: Mutex::new(()),
                ended: StopSignal::new(),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub fn role(&self) -> &str {
        &self.shared.role
    }

    pub fn member(&self) -> &str {
        &self.shared.member
    }

    /// The quorum-minted proof of this leadership.
    pub fn token(&self) -> FencingToken {
        self.shared.token
    }

    pub fn partition(&self) -> &TopicPartition {
        &self.shared.partition
    }

    /// The lease this member wrote last.
    pub fn lease(&self) -> LeaseValue {
        self.state().lease.clone()
    }

    /// Why the leadership ended; `None` while it holds.
    pub fn ended(&self) -> Option<LeaderError> {
        self.state().end.clone()
    }

    /// Raised when the leadership ends (wait on it instead of polling).
    pub fn ended_signal(&self) -> &StopSignal {
        &self.shared.ended
    }

    fn end(&self, reason: LeaderError) {
        let mut state = self.state();
        if state.end.is_none() {
            state.end = Some(reason);
        }
        drop(state);
        self.shared.ended.raise();
    }

    fn lease_key(&self) -> Vec<u8> {
        // The role was validated when the leadership was acquired.
        CoordinationKey::lease(self.shared.role.clone())
            .map(|k| k.encode())
            .unwrap_or_default()
    }

    /// Writes a fresh grant under the same token. A fenced write or a refused
    /// login ends the leadership; any error is returned wrapped as
    /// `renew the lease of role …`.
    pub fn renew(&self) -> Result<(), LeaderError> {
        let _write = self
            .shared
            .write
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(end) = self.ended() {
            return Err(end);
        }
        let s = &self.shared;
        let term = s.config.grant(s.clock.now_ms());
        let lease = LeaseValue::new(s.member.clone(), s.token, term)?;
        let result = s.writer.write_lease(
            &s.partition,
            s.token,
            &self.lease_key(),
            Some(&lease.encode()),
        );
        match result {
            Ok(()) => {
                self.state().lease = lease;
                Ok(())
            }
            Err(cause) => {
                let error = LeaderError::Renew {
                    role: s.role.clone(),
                    cause,
                };
                if error.is_fenced() {
                    self.end(LeaderError::Fenced {
                        role: s.role.clone(),
                    });
                } else if error.is_refused() {
                    self.end(error.clone());
                }
                Err(error)
            }
        }
    }

    /// Renews at every RenewAt until the leadership ends; returns why it ended.
    pub fn run_renewals(&self) -> LeaderError {
        let s = &self.shared;
        loop {
            if let Some(end) = self.ended() {
                return end;
            }
            let term = self.lease().term();
            let delay = term.renew_at(&s.config).saturating_sub(s.clock.now_ms());
            if !s.clock.sleep(delay, &s.ended) {
                continue;
            }
            let error = match self.renew() {
                Ok(()) => continue,
                Err(e) if e.is_fenced() || e.is_not_held() || e.is_refused() => continue,
                Err(e) => e,
            };
            if s.clock.now_ms() >= term.deadline {
                self.end(LeaderError::LeaseExpired {
                    role: s.role.clone(),
                    deadline: term.deadline,
                    cause: Box::new(error),
                });
                continue;
            }
            s.clock.sleep(s.config.poll_ms(), &s.ended);
        }
    }

    /// Runs [`Leadership::run_renewals`] on a thread of its own.
    pub fn spawn_renewals(&self) -> JoinHandle<LeaderError> {
        let this = self.clone();
        std::thread::spawn(move || this.run_renewals())
    }

    /// Gives the role up: ends the leadership (`the member no longer holds the
    /// role`), then clears the lease with a tombstone written under the token,
    /// ignoring a fence. A second resignation, or one after the leadership
    /// ended otherwise, writes nothing.
    pub fn resign(&self) -> Result<(), LeaderError> {
        let _write = self
            .shared
            .write
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let s = &self.shared;
        let already = self.ended().is_some();
        self.end(LeaderError::NotHeld {
            role: s.role.clone(),
        });
        if already {
            return Ok(());
        }
        match s
            .writer
            .write_lease(&s.partition, s.token, &self.lease_key(), None)
        {
            Err(cause) if !cause.is_fenced() => Err(LeaderError::ClearLease {
                role: s.role.clone(),
                cause,
            }),
            _ => Ok(()),
        }
    }
}
