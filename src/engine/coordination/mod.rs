//! Leader election over `__coordination_state` (formats §9, semantics §9):
//! records and their strict codecs, fencing tokens, the role partition, lease
//! configuration and timing, the succession fold and the describe status, and
//! the election itself: the transport traits, the acquire loop, the renewal
//! loop and resignation.
//!
//! Standard library only: Kafka is reached elsewhere, through a transport that
//! hands this module raw records and minted tokens.

pub mod clock;
pub mod election;
pub mod error;
pub mod leadership;
pub mod lease;
pub mod memory;
pub mod partition;
pub mod record;
pub mod status;
pub mod stop;
pub mod succession;
pub mod token;
pub mod topic;
pub mod transport;

#[cfg(test)]
mod tests;

pub use clock::{Clock, ManualClock, SystemClock};
pub use election::{AcquireEvent, AcquireObserver, AcquireOptions, Election};
pub use error::{LeaderError, NOT_HELD_SENTINEL, ReadError};
pub use leadership::Leadership;
pub use lease::{
    DEFAULT_LEASE_MS, DEFAULT_POLL_MS, DEFAULT_RENEW_MS, DEFAULT_STAGGER_MS, Extent, LeaseConfig,
    LeaseConfigError, LeaseSetting, LeaseSettings, LeaseTerm,
};
pub use memory::{MemoryTransport, Operation};
pub use partition::{PartitionCountError, role_partition};
pub use record::{
    CoordinationKey, IdentityError, LeaseValue, MAX_ID_BYTES, RECORD_VERSION, RecordError,
    RecordKind, RecordPart, RegistrationValue, check_member, check_role, is_tombstone,
};
pub use status::LeadershipStatus;
pub use stop::StopSignal;
pub use succession::{Action, FoldError, FoldStage, RosterEntry, StateRecord, Succession};
pub use token::{FencingToken, NO_EPOCH, NegativeTokenError, TokenParseError};
pub use topic::{COORDINATION_TOPIC, DEFAULT_PARTITIONS};
pub use transport::{
    Coordinator, FENCED_SENTINEL, LeaseWriter, Registrar, StateReader, TopicPartition, Transport,
    TransportError, TransportErrorKind,
};
