//! Leader election over `__coordination_state` (formats §9, behaviour §9):
//! records and their strict codecs, fencing tokens, the role partition, lease
//! configuration and timing, the succession fold and the describe status.
//!
//! Standard library only: Kafka is reached elsewhere, through a transport that
//! hands this module raw records and minted tokens.

pub mod clock;
pub mod lease;
pub mod partition;
pub mod record;
pub mod status;
pub mod succession;
pub mod token;

pub use clock::{Clock, ManualClock, SystemClock};
pub use lease::{
    DEFAULT_LEASE_MS, DEFAULT_POLL_MS, DEFAULT_RENEW_MS, DEFAULT_STAGGER_MS, Extent, LeaseConfig,
    LeaseConfigError, LeaseSetting, LeaseSettings, LeaseTerm,
};
pub use partition::{PartitionCountError, role_partition};
pub use record::{
    COORDINATION_TOPIC, CoordinationKey, DEFAULT_PARTITIONS, IdentityError, LeaseValue,
    MAX_ID_BYTES, RECORD_VERSION, RecordError, RecordKind, RecordPart, RegistrationValue,
    check_member, check_role, is_tombstone,
};
pub use status::LeadershipStatus;
pub use succession::{Action, FoldError, FoldStage, RosterEntry, StateRecord, Succession};
pub use token::{FencingToken, NO_EPOCH, NegativeTokenError, TokenParseError};
