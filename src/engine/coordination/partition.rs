//! The pinned partition of a role in `__coordination_state` (formats §1, §9):
//! `(murmur2(role) & 0x7fffffff) % partitions`, the sign-bit mask of Kafka's
//! `Utils.toPositive` (not `Utils.abs`, which the barrier partitioner uses).
//!
//! Both record kinds of a role go here through a manual partitioner, because
//! their keys differ and key hashing would split them.

use std::fmt;

use super::topic::COORDINATION_TOPIC;
use crate::engine::murmur2::mask_partition;

/// The partition of `__coordination_state` holding every record of `role`.
pub fn role_partition(role: &str, partitions: i32) -> Result<i32, PartitionCountError> {
    if partitions < 1 {
        return Err(PartitionCountError { partitions });
    }
    let n = partitions as u32; // positive, so the cast is exact
    Ok(mask_partition(role, n) as i32) // < n ≤ i32::MAX
}

/// The topic was given fewer than one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionCountError {
    pub partitions: i32,
}

impl fmt::Display for PartitionCountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "topic {COORDINATION_TOPIC} needs at least one partition, got {}",
            self.partitions
        )
    }
}

impl std::error::Error for PartitionCountError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_murmur2_is_masked_not_negated() {
        // murmur2("role-a") = -192844758: mask gives 10, abs would give 6.
        assert_eq!(role_partition("role-a", 16), Ok(10));
    }

    #[test]
    fn a_negative_partition_count_is_rejected() {
        assert_eq!(
            role_partition("x", -3).unwrap_err().to_string(),
            "topic __coordination_state needs at least one partition, got -3"
        );
    }

    #[test]
    fn the_partition_is_below_the_count_at_the_maximum() {
        let p = role_partition("controller", i32::MAX).unwrap();
        assert!((0..i32::MAX).contains(&p));
    }
}
