//! Why an election step or a leadership failed (semantics §9), with the frozen
//! sentinels and wrappers. Callers branch on [`LeaderError::is_fenced`],
//! [`LeaderError::is_not_held`], [`LeaderError::is_refused`] and
//! [`LeaderError::is_unreachable`]; the display strings are the contract.
//! Standard library only.

use std::fmt;

use super::partition::PartitionCountError;
use super::record::IdentityError;
use super::succession::FoldError;
use super::transport::{FENCED_SENTINEL, TransportError, TransportErrorKind};

/// A resigned (or otherwise ended) leadership was asked to act.
pub const NOT_HELD_SENTINEL: &str = "the member no longer holds the role";

/// Why the read of a role's state failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    Transport(TransportError),
    Fold(FoldError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Transport(e) => e.fmt(f),
            ReadError::Fold(e) => e.fmt(f),
        }
    }
}

/// An election or leadership error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaderError {
    /// The leadership ended because a renewal was fenced.
    Fenced {
        role: String,
    },
    /// The leadership ended by resignation.
    NotHeld {
        role: String,
    },
    /// The leadership ended because renewals failed until the deadline passed.
    LeaseExpired {
        role: String,
        deadline: i64,
        cause: Box<LeaderError>,
    },
    Register {
        role: String,
        member: String,
        cause: TransportError,
    },
    Mint {
        role: String,
        cause: TransportError,
    },
    WriteLease {
        role: String,
        cause: TransportError,
    },
    Renew {
        role: String,
        cause: TransportError,
    },
    ClearLease {
        role: String,
        cause: TransportError,
    },
    ReadState {
        role: String,
        cause: ReadError,
    },
    DescribeEpoch {
        role: String,
        cause: TransportError,
    },
    /// The caller's stop signal was raised while acquiring.
    Cancelled {
        role: String,
    },
    /// The caller's deadline (epoch ms) passed before the member held the role.
    DeadlineExceeded {
        role: String,
        deadline: i64,
    },
    Identity(IdentityError),
    Partition(PartitionCountError),
}

impl LeaderError {
    /// The leadership ended by a fence, or a write was fenced.
    pub fn is_fenced(&self) -> bool {
        match self {
            LeaderError::Fenced { .. } => true,
            _ => self
                .transport_cause()
                .is_some_and(TransportError::is_fenced),
        }
    }

    /// The broker refused the login (the leadership, if any, ended with it).
    pub fn is_refused(&self) -> bool {
        match self {
            LeaderError::LeaseExpired { cause, .. } => cause.is_refused(),
            _ => self
                .transport_cause()
                .is_some_and(TransportError::is_refused),
        }
    }

    /// The leadership ended by resignation.
    pub fn is_not_held(&self) -> bool {
        matches!(self, LeaderError::NotHeld { .. })
    }

    /// The cluster did not answer (the outcome is unknown).
    pub fn is_unreachable(&self) -> bool {
        match self {
            LeaderError::LeaseExpired { cause, .. } => cause.is_unreachable(),
            _ => self
                .transport_cause()
                .is_some_and(|e| e.kind == TransportErrorKind::Unreachable),
        }
    }

    fn transport_cause(&self) -> Option<&TransportError> {
        match self {
            LeaderError::Register { cause, .. }
            | LeaderError::Mint { cause, .. }
            | LeaderError::WriteLease { cause, .. }
            | LeaderError::Renew { cause, .. }
            | LeaderError::ClearLease { cause, .. }
            | LeaderError::DescribeEpoch { cause, .. } => Some(cause),
            LeaderError::ReadState {
                cause: ReadError::Transport(cause),
                ..
            } => Some(cause),
            _ => None,
        }
    }
}

impl fmt::Display for LeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaderError::Fenced { role } => write!(f, "role {role}: {FENCED_SENTINEL}"),
            LeaderError::NotHeld { role } => write!(f, "role {role}: {NOT_HELD_SENTINEL}"),
            LeaderError::LeaseExpired {
                role,
                deadline,
                cause,
            } => write!(
                f,
                "role {role}: the lease expired at {deadline} after a failed renewal: {cause}"
            ),
            LeaderError::Register {
                role,
                member,
                cause,
            } => write!(f, "register member {member} for role {role}: {cause}"),
            LeaderError::Mint { role, cause } => {
                write!(f, "mint the epoch of role {role}: {cause}")
            }
            LeaderError::WriteLease { role, cause } => {
                write!(f, "write the lease of role {role}: {cause}")
            }
            LeaderError::Renew { role, cause } => {
                write!(f, "renew the lease of role {role}: {cause}")
            }
            LeaderError::ClearLease { role, cause } => {
                write!(f, "clear the lease of role {role}: {cause}")
            }
            LeaderError::ReadState { role, cause } => {
                write!(f, "read the state of role {role}: {cause}")
            }
            LeaderError::DescribeEpoch { role, cause } => {
                write!(f, "describe the epoch of role {role}: {cause}")
            }
            LeaderError::Cancelled { role } => {
                write!(f, "role {role}: cancelled before the member held the role")
            }
            LeaderError::DeadlineExceeded { role, deadline } => write!(
                f,
                "role {role}: the deadline {deadline} passed before the member held the role"
            ),
            LeaderError::Identity(e) => e.fmt(f),
            LeaderError::Partition(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LeaderError {}

impl From<IdentityError> for LeaderError {
    fn from(e: IdentityError) -> Self {
        LeaderError::Identity(e)
    }
}

impl From<PartitionCountError> for LeaderError {
    fn from(e: PartitionCountError) -> Self {
        LeaderError::Partition(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role() -> String {
        "controller".into()
    }

    #[test]
    fn sentinels_and_wrappers_read_as_frozen() {
        let fenced = TransportError::fenced("PRODUCER_FENCED (90)");
        let cases = [
            (
                LeaderError::Fenced { role: role() },
                "role controller: fenced: another member holds the role",
            ),
            (
                LeaderError::NotHeld { role: role() },
                "role controller: the member no longer holds the role",
            ),
            (
                LeaderError::Register {
                    role: role(),
                    member: "node-1".into(),
                    cause: TransportError::failed("x"),
                },
                "register member node-1 for role controller: x",
            ),
            (
                LeaderError::Mint {
                    role: role(),
                    cause: TransportError::failed("x"),
                },
                "mint the epoch of role controller: x",
            ),
            (
                LeaderError::WriteLease {
                    role: role(),
                    cause: fenced.clone(),
                },
                "write the lease of role controller: fenced: another member holds the role: PRODUCER_FENCED (90)",
            ),
            (
                LeaderError::Renew {
                    role: role(),
                    cause: TransportError::failed("x"),
                },
                "renew the lease of role controller: x",
            ),
            (
                LeaderError::ClearLease {
                    role: role(),
                    cause: TransportError::failed("x"),
                },
                "clear the lease of role controller: x",
            ),
            (
                LeaderError::ReadState {
                    role: role(),
                    cause: ReadError::Transport(TransportError::failed("x")),
                },
                "read the state of role controller: x",
            ),
            (
                LeaderError::DescribeEpoch {
                    role: role(),
                    cause: TransportError::failed("x"),
                },
                "describe the epoch of role controller: x",
            ),
            (
                LeaderError::LeaseExpired {
                    role: role(),
                    deadline: 31_000,
                    cause: Box::new(LeaderError::Renew {
                        role: role(),
                        cause: TransportError::unreachable("timed out"),
                    }),
                },
                "role controller: the lease expired at 31000 after a failed renewal: renew the lease of role controller: timed out",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn fenced_is_found_through_wrappers_and_unreachable_through_expiry() {
        let fenced = LeaderError::WriteLease {
            role: role(),
            cause: TransportError::fenced(""),
        };
        assert!(fenced.is_fenced() && !fenced.is_unreachable());
        let expired = LeaderError::LeaseExpired {
            role: role(),
            deadline: 1,
            cause: Box::new(LeaderError::Renew {
                role: role(),
                cause: TransportError::unreachable("t"),
            }),
        };
        assert!(expired.is_unreachable() && !expired.is_fenced());
        assert!(LeaderError::NotHeld { role: role() }.is_not_held());
    }
}
