//! Byte deltas between two snapshot containers (docs/formats.md §8.7): what
//! the Kafka state store writes between full snapshots so that a round costs
//! what it changed, not the whole state.
//!
//! A delta is `u8 format = 1` then operations until its end: `C` (0x43) +
//! `u64` base offset + `u64` length copies bytes of the previous container,
//! `L` (0x4c) + `u32` length + bytes inserts new ones; the result is their
//! concatenation. Copies may come from anywhere in the base, so a value that
//! grows by a byte (a decimal sum passing 999), a group inserted or removed
//! (a window closing) or an evicted join batch costs a few operations, not a
//! rewrite of everything after it. The result is checked against the length
//! and CRC-32 its record names; a mismatch is refused, never taken.

use std::collections::HashMap;

/// The only delta format.
pub const DELTA_FORMAT: u8 = 1;
const COPY: u8 = b'C';
const LITERAL: u8 = b'L';
const COPY_SIZE: usize = 17;
const LITERAL_HEADER: usize = 5;
/// Bytes that must agree for a copy to be taken where the last one left off
/// (or a few bytes either side of it).
const NEAR_MATCH: usize = 16;
/// How far either side of the expected place a shifted value is looked for
/// before the block index is consulted (a value that grew or shrank).
const NEAR_SHIFT: usize = 8;
/// How long into a literal shifted copies are looked for.
const NEAR_SPAN: usize = 64;
/// The block of the base's index: a copy found far away agrees on at least this.
const BLOCK: usize = 32;
/// Bytes a result may grow past its base per byte of delta. Copies amplify (17
/// bytes may copy the whole base), so without a bound a chain of hostile deltas,
/// each with a matching CRC, doubles the state per record until memory runs out;
/// with it, a chain's state stays linear in the bytes read. Writers whose delta
/// would grow the state faster write a full snapshot instead.
pub const MAX_GROWTH_PER_BYTE: usize = 64;

/// The largest result a delta of `delta_len` bytes may give from a base of `base_len`.
pub fn max_result(base_len: usize, delta_len: usize) -> usize {
    base_len.saturating_add(delta_len.saturating_mul(MAX_GROWTH_PER_BYTE))
}

/// The CRC-32 (IEEE, as zlib's `crc32`) of a container, named by each delta.
pub fn checksum(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Why a delta could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    #[error("unsupported state delta format {0}")]
    Format(u8),
    #[error("empty state delta")]
    Empty,
    #[error("truncated state delta at byte {0}")]
    Truncated(usize),
    #[error("unknown state delta operation {0:#04x} at byte {1}")]
    Operation(u8, usize),
    #[error(
        "state delta copies bytes {from}..{end} of a {base}-byte base",
        end = .from.saturating_add(*.len)
    )]
    OutOfBase { from: u64, len: u64, base: usize },
    #[error("state delta result is {got} bytes, its record says {want}")]
    Length { got: usize, want: usize },
    #[error("state delta result has checksum {got:08x}, its record says {want:08x}")]
    Checksum { got: u32, want: u32 },
    #[error(
        "state delta of {delta} bytes names a {want}-byte result from a {base}-byte base: more than {MAX_GROWTH_PER_BYTE} bytes of growth per delta byte"
    )]
    Growth {
        want: usize,
        base: usize,
        delta: usize,
    },
}

/// A delta that turns `old` into `new`, or `None` when it would take more than
/// `limit` bytes (a full snapshot is cheaper then; the search stops there, so a
/// state that changed whole costs no more than comparing up to the limit).
pub fn diff(old: &[u8], new: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut out = Delta {
        bytes: vec![DELTA_FORMAT],
        limit,
    };
    let mut index: Option<BlockIndex> = None;
    // Where the base is expected to continue: just after the last copy.
    let mut expected = 0usize;
    let mut literal_from = 0usize;
    let mut at = 0usize;
    while at < new.len() {
        // In place: the base moved on with the literal since the last copy.
        let centre = expected + (at - literal_from);
        // A value that grew or shrank is passed within a few bytes; past that,
        // only the place in step and the index are looked at (long literals cost little).
        let shift = if at - literal_from < NEAR_SPAN {
            NEAR_SHIFT
        } else {
            0
        };
        let found = near(old, new, at, centre, shift).or_else(|| {
            if new.len() - at < BLOCK {
                return None;
            }
            index
                .get_or_insert_with(|| BlockIndex::new(old))
                .find(old, &new[at..at + BLOCK])
        });
        let Some(from) = found else {
            at += 1;
            // The literal alone already exceeds the limit: stop looking.
            if at - literal_from + out.bytes.len() > limit {
                return None;
            }
            continue;
        };
        // Take back what the literal and the copy share before `at`.
        let mut start = at;
        let mut base = from;
        while start > literal_from && base > 0 && new[start - 1] == old[base - 1] {
            start -= 1;
            base -= 1;
        }
        let len = common_prefix(&old[base..], &new[start..]);
        out.literal(&new[literal_from..start])?;
        out.copy(base, len)?;
        at = start + len;
        literal_from = at;
        expected = base + len;
    }
    out.literal(&new[literal_from..])?;
    // A reader refuses a delta that grows the state faster (see MAX_GROWTH_PER_BYTE).
    (new.len() <= max_result(old.len(), out.bytes.len())).then_some(out.bytes)
}

struct Delta {
    bytes: Vec<u8>,
    limit: usize,
}

impl Delta {
    fn fits(&self, more: usize) -> Option<()> {
        (self.bytes.len() + more <= self.limit).then_some(())
    }

    fn literal(&mut self, bytes: &[u8]) -> Option<()> {
        if bytes.is_empty() {
            return Some(());
        }
        // A literal longer than u32 is split (never reached below the limits used).
        for piece in bytes.chunks(u32::MAX as usize) {
            self.fits(LITERAL_HEADER + piece.len())?;
            self.bytes.push(LITERAL);
            self.bytes
                .extend_from_slice(&(piece.len() as u32).to_be_bytes());
            self.bytes.extend_from_slice(piece);
        }
        Some(())
    }

    fn copy(&mut self, from: usize, len: usize) -> Option<()> {
        self.fits(COPY_SIZE)?;
        self.bytes.push(COPY);
        self.bytes.extend_from_slice(&(from as u64).to_be_bytes());
        self.bytes.extend_from_slice(&(len as u64).to_be_bytes());
        Some(())
    }
}

/// A copy source close to where the base is expected to continue: exactly
/// there (a value changed in place), or a few bytes either side (one that grew
/// or shrank). `NEAR_MATCH` bytes must agree.
fn near(old: &[u8], new: &[u8], at: usize, centre: usize, shift: usize) -> Option<usize> {
    let want = new.get(at..at + NEAR_MATCH)?;
    let agrees = |from: usize| old.get(from..from + NEAR_MATCH) == Some(want);
    (0..=shift).find_map(|d| {
        let candidates = [centre.checked_add(d), centre.checked_sub(d)];
        candidates.into_iter().flatten().find(|&from| agrees(from))
    })
}

/// Hashes of the base's aligned `BLOCK`-byte blocks, built only when a copy
/// is not found near the expected place.
struct BlockIndex {
    blocks: HashMap<u64, usize, foldhash::fast::FixedState>,
}

impl BlockIndex {
    fn new(old: &[u8]) -> Self {
        let mut blocks = HashMap::with_capacity_and_hasher(
            old.len() / BLOCK,
            foldhash::fast::FixedState::with_seed(0x6b72_6162_6b61),
        );
        for (i, block) in old.chunks_exact(BLOCK).enumerate() {
            blocks.entry(block_hash(block)).or_insert(i * BLOCK);
        }
        BlockIndex { blocks }
    }

    fn find(&self, old: &[u8], window: &[u8]) -> Option<usize> {
        let from = *self.blocks.get(&block_hash(window))?;
        (old.get(from..from + BLOCK) == Some(window)).then_some(from)
    }
}

fn block_hash(block: &[u8]) -> u64 {
    block
        .chunks_exact(8)
        .fold(0x9e37_79b9_7f4a_7c15u64, |h, w| {
            let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            (h ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(29)
        })
}

/// How many leading bytes `a` and `b` share (compared a block at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 256 <= n && a[i..i + 256] == b[i..i + 256] {
        i += 256;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Applies `delta` to `base`, refusing a result that is not `length` bytes
/// with CRC-32 `crc` (docs/formats.md §8.7). The result never grows past
/// `length`, so a damaged record cannot make it allocate more.
pub fn apply(base: &[u8], delta: &[u8], length: usize, crc: u32) -> Result<Vec<u8>, DeltaError> {
    let (&format, mut rest) = delta.split_first().ok_or(DeltaError::Empty)?;
    if format != DELTA_FORMAT {
        return Err(DeltaError::Format(format));
    }
    if length > max_result(base.len(), delta.len()) {
        return Err(DeltaError::Growth {
            want: length,
            base: base.len(),
            delta: delta.len(),
        });
    }
    let mut out = Vec::with_capacity(length.min(base.len().saturating_add(delta.len())));
    let too_long = |got: usize| DeltaError::Length { got, want: length };
    while let Some((&op, after)) = rest.split_first() {
        let at = delta.len() - rest.len();
        rest = after;
        match op {
            COPY => {
                let (from, len) = (take_u64(&mut rest, at)?, take_u64(&mut rest, at)?);
                let range = usize::try_from(from)
                    .ok()
                    .zip(usize::try_from(len).ok())
                    .and_then(|(f, l)| Some(f..f.checked_add(l)?))
                    .filter(|r| r.end <= base.len())
                    .ok_or(DeltaError::OutOfBase {
                        from,
                        len,
                        base: base.len(),
                    })?;
                if out.len() + range.len() > length {
                    return Err(too_long(out.len() + range.len()));
                }
                out.extend_from_slice(&base[range]);
            }
            LITERAL => {
                let len = take_u32(&mut rest, at)? as usize;
                let bytes = rest.get(..len).ok_or(DeltaError::Truncated(at))?;
                rest = &rest[len..];
                if out.len() + len > length {
                    return Err(too_long(out.len() + len));
                }
                out.extend_from_slice(bytes);
            }
            other => return Err(DeltaError::Operation(other, at)),
        }
    }
    if out.len() != length {
        return Err(too_long(out.len()));
    }
    let got = checksum(&out);
    if got != crc {
        return Err(DeltaError::Checksum { got, want: crc });
    }
    Ok(out)
}

fn take_u64(rest: &mut &[u8], at: usize) -> Result<u64, DeltaError> {
    let (head, tail) = rest.split_at_checked(8).ok_or(DeltaError::Truncated(at))?;
    *rest = tail;
    Ok(u64::from_be_bytes(head.try_into().unwrap_or([0; 8])))
}

fn take_u32(rest: &mut &[u8], at: usize) -> Result<u32, DeltaError> {
    let (head, tail) = rest.split_at_checked(4).ok_or(DeltaError::Truncated(at))?;
    *rest = tail;
    Ok(u32::from_be_bytes(head.try_into().unwrap_or([0; 4])))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::columnar::snapshot::container;
    use crate::engine::columnar::snapshot::groupby::{GroupByState, GroupState};
    use crate::engine::columnar::snapshot::tagged::TaggedValue;

    fn round_trip(old: &[u8], new: &[u8]) -> Vec<u8> {
        let delta = diff(old, new, usize::MAX).expect("no limit");
        let applied = apply(old, &delta, new.len(), checksum(new)).unwrap();
        assert_eq!(applied, new);
        delta
    }

    /// A Go group-by container of `n` users, `touch` deciding each one's sum.
    fn group_by(n: usize, window: Option<(i64, i64)>, sum: impl Fn(usize) -> i64) -> Vec<u8> {
        let groups = (0..n)
            .map(|u| {
                let mut parts = vec![TaggedValue::String(format!("user-{u:07}"))];
                if let Some((start, end)) = window {
                    parts.extend([TaggedValue::Int(start), TaggedValue::Int(end)]);
                }
                GroupState {
                    parts,
                    aggregates: vec![TaggedValue::BigInt(sum(u).to_string()), TaggedValue::Int(3)],
                }
            })
            .collect();
        let state = GroupByState {
            stream_time: 1_000,
            groups,
        };
        container::encode(&BTreeMap::from([("per-user".to_owned(), state.encode())]))
    }

    #[test]
    fn a_round_touching_one_percent_of_the_groups_costs_about_one_percent() {
        let old = group_by(100_000, None, |u| u as i64 * 7);
        // Every hundredth group changes, some sums growing a digit (bytes shift).
        let new = group_by(100_000, None, |u| {
            let sum = u as i64 * 7;
            if u % 100 == 0 { sum * 10 + 3 } else { sum }
        });
        assert_ne!(old.len(), new.len(), "the test must shift bytes");
        let delta = round_trip(&old, &new);
        assert!(
            delta.len() * 20 < new.len(),
            "{} of {}",
            delta.len(),
            new.len()
        );
        // New groups append at the end: the delta is about their bytes.
        let grown = group_by(101_000, None, |u| u as i64 * 7);
        let delta = round_trip(&old, &grown);
        assert!(
            delta.len() < (grown.len() - old.len()) * 2,
            "{}",
            delta.len()
        );
    }

    #[test]
    fn a_delta_that_amplifies_copies_is_refused_and_never_written() {
        // 35 bytes that copy a 1 MiB base twice: a chain of these doubles the state per record.
        let base = vec![7u8; 1 << 20];
        let doubled = [base.as_slice(), base.as_slice()].concat();
        let mut hostile = vec![DELTA_FORMAT];
        for _ in 0..2 {
            hostile.push(COPY);
            hostile.extend_from_slice(&0u64.to_be_bytes());
            hostile.extend_from_slice(&(base.len() as u64).to_be_bytes());
        }
        let refused = apply(&base, &hostile, doubled.len(), checksum(&doubled)).unwrap_err();
        assert_eq!(
            refused,
            DeltaError::Growth {
                want: doubled.len(),
                base: base.len(),
                delta: hostile.len()
            }
        );
        assert!(
            refused
                .to_string()
                .contains("more than 64 bytes of growth per delta byte")
        );
        // The writer gives no such delta: a full is written instead.
        assert_eq!(diff(&base, &doubled, usize::MAX), None);
        // Growth within the bound (new groups as literals) is a delta as before.
        let grown = [base.as_slice(), &[1, 2, 3]].concat();
        round_trip(&base, &grown);
    }

    #[test]
    fn closing_windows_and_evicted_bytes_at_the_front_are_copies_not_a_rewrite() {
        let mut old = group_by(2_000, Some((0, 60)), |u| u as i64);
        old.extend(group_by(20_000, Some((60, 120)), |u| u as i64));
        // The first window closes: its groups leave the front of the state.
        let new = group_by(20_000, Some((60, 120)), |u| u as i64);
        let delta = round_trip(&old, &new);
        assert!(delta.len() < 200, "{}", delta.len());
        // A join's oldest batch evicted: the front goes, the rest is copied.
        let batches: Vec<u8> = (0..200_000u32)
            .flat_map(|i| i.wrapping_mul(2_654_435_761).to_be_bytes())
            .collect();
        let delta = round_trip(&batches, &batches[40_000..]);
        assert!(delta.len() < 100, "{}", delta.len());
    }

    #[test]
    fn any_change_round_trips() {
        let base: Vec<u8> = (0..5_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut cases: Vec<Vec<u8>> = vec![Vec::new(), base.clone(), base[..17].to_vec()];
        let mut inserted = base.clone();
        inserted.splice(100..100, [9u8; 3]);
        cases.push(inserted);
        let mut removed = base.clone();
        removed.drain(2_000..2_700);
        cases.push(removed);
        let mut moved = base[2_500..].to_vec();
        moved.extend_from_slice(&base[..2_500]);
        cases.push(moved);
        cases.push(base.iter().map(|b| b ^ 0x5a).collect());
        for new in &cases {
            round_trip(&base, new);
            round_trip(&[], new);
            round_trip(new, &base);
        }
    }

    #[test]
    fn a_delta_over_the_limit_is_not_made() {
        let old = vec![0u8; 10_000];
        let new: Vec<u8> = (0..10_000u32).map(|i| (i % 253) as u8 + 1).collect();
        assert_eq!(diff(&old, &new, 2_500), None);
        assert!(diff(&old, &old, 2_500).is_some_and(|d| d.len() < 40));
    }

    #[test]
    fn a_damaged_delta_or_a_wrong_base_is_refused_never_applied() {
        let old = b"0123456789abcdefghijklmnopqrstuvwxyz0123456789".to_vec();
        let mut new = old.clone();
        new[20] = b'!';
        let delta = diff(&old, &new, usize::MAX).unwrap();
        let (len, crc) = (new.len(), checksum(&new));
        // The wrong base: the copies give other bytes.
        let mut other = old.clone();
        other[3] = b'?';
        assert!(matches!(
            apply(&other, &delta, len, crc),
            Err(DeltaError::Checksum { .. })
        ));
        assert!(matches!(
            apply(&old[..10], &delta, len, crc),
            Err(DeltaError::OutOfBase { .. })
        ));
        assert_eq!(
            apply(&old, &delta, len - 1, crc),
            Err(DeltaError::Length {
                got: len,
                want: len - 1
            })
        );
        assert!(matches!(
            apply(&old, &delta, len + 1, crc),
            Err(DeltaError::Length { .. })
        ));
        assert!(matches!(
            apply(&old, &delta[..delta.len() - 3], len, crc),
            Err(DeltaError::Truncated(_))
        ));
        assert_eq!(apply(&old, &[2], 0, 0), Err(DeltaError::Format(2)));
        assert_eq!(apply(&old, &[], 0, 0), Err(DeltaError::Empty));
        assert_eq!(
            apply(&old, &[1, b'X'], 0, 0),
            Err(DeltaError::Operation(b'X', 1))
        );
        // A claimed length of 1 GiB is refused before anything is allocated: 18
        // bytes of delta cannot grow a 46-byte base that far.
        let huge = [1, b'C', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5];
        assert_eq!(
            apply(&old, &huge, 1 << 30, 0),
            Err(DeltaError::Growth {
                want: 1 << 30,
                base: old.len(),
                delta: huge.len()
            })
        );
        // Within the growth bound, a result short of its claimed length is still refused.
        assert_eq!(
            apply(&old, &huge, old.len() + 100, 0),
            Err(DeltaError::Length {
                got: 5,
                want: old.len() + 100
            })
        );
        assert_eq!(
            checksum(b"123456789"),
            0xcbf4_3926,
            "CRC-32 (IEEE) check value"
        );
    }
}
