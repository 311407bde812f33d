//! The coordination topic itself (formats §9): its name and the partition count it is
//! created with. Apart from the records so that the lease configuration, the role
//! partition and the record codecs can all name it without needing each other.

/// The compacted topic holding registrations and leases.
pub const COORDINATION_TOPIC: &str = "__coordination_state";
/// Partition count used when creating the topic; members read the real one from metadata.
pub const DEFAULT_PARTITIONS: i32 = 16;
