//! Kafka's murmur2 and the two partitioners built on it (formats §1).
//!
//! The role partitioner masks the sign bit (`Utils.toPositive`); the barrier
//! group partitioner takes the absolute value (`Utils.abs`, with abs(MIN) = 0).
//! They differ whenever murmur2 is negative, so both exist and are named.

const SEED: u32 = 0x9747_b28c;
const M: u32 = 0x5bd1_e995;
const R: u32 = 24;

/// Kafka `Utils.murmur2`, interpreted as a signed 32-bit integer.
pub fn murmur2(data: &[u8]) -> i32 {
    let len = data.len();
    let mut h: u32 = SEED ^ (len as u32);
    let mut chunks = data.chunks_exact(4);
    for block in &mut chunks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Kafka `Utils.toPositive`: clears the sign bit.
pub fn to_positive(h: i32) -> i32 {
    h & 0x7fff_ffff
}

/// Kafka `Utils.abs`: absolute value with `abs(i32::MIN) = 0`.
pub fn kafka_abs(h: i32) -> i32 {
    if h == i32::MIN { 0 } else { h.abs() }
}

/// Partition of a role in `__coordination_state`: `(murmur2 & 0x7fffffff) % n`.
/// `n` must be at least 1; callers validate and report their own error.
pub fn mask_partition(text: &str, n: u32) -> u32 {
    debug_assert!(n >= 1);
    (to_positive(murmur2(text.as_bytes())) as u32) % n.max(1)
}

/// Partition of a barrier group in `__barrier_state`: `abs(murmur2) % n`.
pub fn abs_partition(text: &str, n: u32) -> u32 {
    debug_assert!(n >= 1);
    (kafka_abs(murmur2(text.as_bytes())) as u32) % n.max(1)
}
