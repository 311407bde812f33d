//! The four transport traits through which the election reaches a cluster
//! (semantics §9): a [`Coordinator`] mints and describes epochs, a
//! [`StateReader`] reads a role's partition, a [`Registrar`] appends
//! registrations outside any transaction, and a [`LeaseWriter`] writes lease
//! records inside a transaction of the producer that minted the token.
//!
//! The engine never names a Kafka client: an adapter in `io` implements these
//! traits over the wire, and [`super::memory::MemoryTransport`] implements them
//! in memory for tests. Standard library only.

use std::fmt;

use super::succession::StateRecord;
use super::token::FencingToken;

/// The broker's rejection of a superseded token (error codes 47 and 90).
pub const FENCED_SENTINEL: &str = "fenced: another member holds the role";

/// One partition of the coordination topic: the engine's one type
/// (`engine::topic_partition`, standard library only).
pub use crate::engine::topic_partition::TopicPartition;

/// How a transport call failed; callers branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportErrorKind {
    /// The broker rejected the token: a newer epoch exists.
    Fenced,
    /// No answer (connection, timeout): the outcome is unknown.
    Unreachable,
    /// The broker answered with an error, or the answer was unusable.
    Failed,
    /// The broker refused this client's login: the same credentials never succeed
    /// (rotated, revoked), so nothing retries it and a held role ends at once.
    Refused,
}

/// A failed transport call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    pub kind: TransportErrorKind,
    /// What happened, without the fenced sentinel (display adds it).
    pub message: String,
}

impl TransportError {
    pub fn fenced(message: impl Into<String>) -> Self {
        Self::new(TransportErrorKind::Fenced, message)
    }

    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new(TransportErrorKind::Unreachable, message)
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(TransportErrorKind::Failed, message)
    }

    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(TransportErrorKind::Refused, message)
    }

    pub fn new(kind: TransportErrorKind, message: impl Into<String>) -> Self {
        TransportError {
            kind,
            message: message.into(),
        }
    }

    pub fn is_fenced(&self) -> bool {
        self.kind == TransportErrorKind::Fenced
    }

    pub fn is_refused(&self) -> bool {
        self.kind == TransportErrorKind::Refused
    }

    /// Prefixes the message with what was being done, keeping the kind.
    pub fn context(self, what: impl fmt::Display) -> Self {
        TransportError {
            kind: self.kind,
            message: format!("{what}: {}", self.message),
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.message.is_empty()) {
            (TransportErrorKind::Fenced, true) => f.write_str(FENCED_SENTINEL),
            (TransportErrorKind::Fenced, false) => write!(f, "{FENCED_SENTINEL}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for TransportError {}

/// Mints and reports the leadership epoch of a role.
pub trait Coordinator: Send + Sync {
    /// Mints a new epoch for `role` (InitProducerId for `transactional.id = role`),
    /// fencing every older one, and keeps the producer it binds for
    /// [`LeaseWriter::write_lease`].
    fn acquire_epoch(&self, role: &str) -> Result<FencingToken, TransportError>;

    /// The epoch the transaction coordinator holds for `role` and whether it is
    /// held; `None` when the role was never taken. Joins no group, takes no epoch.
    fn describe_epoch(&self, role: &str) -> Result<Option<FencingToken>, TransportError>;
}

/// Reads one partition of the coordination topic.
pub trait StateReader: Send + Sync {
    /// Every committed record of the partition, oldest first, up to the last
    /// stable offset.
    fn read_partition(
        &self,
        partition: &TopicPartition,
    ) -> Result<Vec<StateRecord>, TransportError>;
}

/// Appends registration records with a plain producer, outside any transaction.
pub trait Registrar: Send + Sync {
    /// Appends one record to the pinned partition; `None` writes a tombstone.
    fn append(
        &self,
        partition: &TopicPartition,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), TransportError>;
}

/// Writes lease records under a token.
pub trait LeaseWriter: Send + Sync {
    /// Writes one record inside a transaction of the producer that minted
    /// `token` (begin, produce, commit; abort on a produce error); `None`
    /// clears the lease. A rejected token is a [`TransportErrorKind::Fenced`] error.
    fn write_lease(
        &self,
        partition: &TopicPartition,
        token: FencingToken,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), TransportError>;
}

/// Every cluster operation of the election; one adapter implements all four.
pub trait Transport: Coordinator + StateReader + Registrar + LeaseWriter {}

impl<T: Coordinator + StateReader + Registrar + LeaseWriter> Transport for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_error_reads_as_the_sentinel_with_its_detail() {
        assert_eq!(
            TransportError::fenced("").to_string(),
            "fenced: another member holds the role"
        );
        assert_eq!(
            TransportError::fenced("PRODUCER_FENCED (90)").to_string(),
            "fenced: another member holds the role: PRODUCER_FENCED (90)"
        );
        let e = TransportError::unreachable("timed out").context("produce t-0");
        assert_eq!(e.to_string(), "produce t-0: timed out");
        assert_eq!(e.kind, TransportErrorKind::Unreachable);
    }
}
