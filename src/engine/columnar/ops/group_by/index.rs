//! The group index of `group_by`: every group's encoded key (the Go tagged
//! encoding) in one arena in first-appearance order, and an open-addressing
//! table of group ids over it.
//!
//! A lookup is memory-bound (the profile of 10 M rows over 10 000 groups spent
//! most of its group-by time waiting on three dependent loads: table slot, key
//! end, key bytes), so the layout keeps it to two: a table slot of 8 bytes
//! (32 hash bits + group id, so a probe rarely reads a wrong group) and one
//! 24-byte entry per group holding the key's first 16 bytes inline (a tagged
//! string of up to 11 bytes is whole there; longer keys compare the rest in the
//! arena). Callers look keys up in chunks: hash every key first, then
//! [`GroupIndex::prefetch`] a few rows ahead, so the loads of several rows overlap.
//!
//! The hash is the fixed [`key_hasher`], shared with the join's key tables.

use std::hash::BuildHasher;

/// The hash of encoded keys in every index (fixed: indexes are only compared in-process).
pub(crate) fn key_hasher() -> foldhash::fast::FixedState {
    foldhash::fast::FixedState::with_seed(0x6b72_6162_6b61)
}

/// An empty table slot (no group has id `u32::MAX`: that is `LATE`).
const EMPTY: u64 = u64::MAX;

/// A group's key: its first 16 bytes (zero-padded) inline, the rest in the arena.
#[derive(Clone, Copy)]
struct Entry {
    head: [u64; 2],
    /// Where the whole key starts in the arena.
    start: u32,
    len: u32,
}

/// The first 16 bytes of `key`, zero-padded, as two little-endian words:
/// whole-word loads (overlapping for 9 to 15 bytes) rather than a copy into a
/// padded buffer, which cost a `memcpy` call per row.
#[inline(always)]
fn head_of(key: &[u8]) -> [u64; 2] {
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    let n = key.len();
    if n >= 16 {
        [word(0), word(8)]
    } else if n > 8 {
        // The last 8 bytes, shifted down past the (16 - n) that overlap the first word.
        [word(0), word(n - 8) >> (8 * (16 - n))]
    } else {
        let mut first = 0u64;
        for (i, b) in key.iter().enumerate() {
            first |= u64::from(*b) << (8 * i);
        }
        [first, 0]
    }
}

/// The bytes of a key that is exactly one tagged string (`s`, big-endian `u32`
/// length, bytes), as a string column's row encodes.
#[inline(always)]
fn single_string(key: &[u8]) -> Option<&[u8]> {
    let (prefix, value) = key.split_first_chunk::<5>()?;
    (prefix[0] == b's'
        && u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize == value.len())
    .then_some(value)
}

/// A key prepared for lookups: its hash and inline head.
#[derive(Clone, Copy)]
pub(crate) struct Probe {
    hash: u64,
    head: [u64; 2],
}

#[derive(Clone)]
pub(crate) struct GroupIndex {
    /// `tag << 32 | id`, or [`EMPTY`]; the length is a power of two (or 0).
    /// The tag is the hash's low 32 bits, which hold the home slot's bits, so
    /// growing moves slots without reading or rehashing any key.
    slots: Vec<u64>,
    /// `slots.len() - 1`: the home slot is `hash & mask`.
    mask: usize,
    entries: Vec<Entry>,
    bytes: Vec<u8>,
    hasher: foldhash::fast::FixedState,
}

impl Default for GroupIndex {
    fn default() -> GroupIndex {
        GroupIndex {
            slots: Vec::new(),
            mask: 0,
            entries: Vec::new(),
            bytes: Vec::new(),
            hasher: key_hasher(),
        }
    }
}

impl GroupIndex {
    /// The number of groups.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Group `id`'s encoded key.
    #[inline(always)]
    pub fn key(&self, id: usize) -> &[u8] {
        let e = &self.entries[id];
        &self.bytes[e.start as usize..e.start as usize + e.len as usize]
    }

    /// Hashes `key` for [`GroupIndex::find`] / [`GroupIndex::prefetch`]. A key
    /// that is one tagged string hashes as its bare bytes, so
    /// [`GroupIndex::probe_str`] finds it straight from a string column.
    #[inline(always)]
    pub fn probe(&self, key: &[u8]) -> Probe {
        let hash = match single_string(key) {
            Some(value) => self.hasher.hash_one(value),
            None => self.hasher.hash_one(key),
        };
        Probe {
            hash,
            head: head_of(key),
        }
    }

    /// [`GroupIndex::probe`] of the one-string key `value` (encoded `s`, its
    /// length as a big-endian `u32`, its bytes), without encoding it.
    #[inline(always)]
    pub fn probe_str(&self, value: &[u8]) -> Probe {
        let [a, b] = head_of(value);
        let prefix = u64::from(b's') | u64::from((value.len() as u32).swap_bytes()) << 8;
        Probe {
            hash: self.hasher.hash_one(value),
            // The encoded key's first 16 bytes: the 5-byte prefix, then the value's first 11.
            head: [prefix | a << 40, a >> 24 | b << 40],
        }
    }

    /// Hints the CPU to load the table slot `probe` starts at.
    #[inline(always)]
    pub fn prefetch(&self, probe: &Probe) {
        if self.slots.is_empty() {
            return;
        }
        let at = self.home(probe.hash);
        prefetch(&self.slots[at]);
    }

    /// Hints the CPU to load the entry of the group `probe` most likely finds
    /// (call a few rows after [`GroupIndex::prefetch`], when its slot is in cache).
    #[inline(always)]
    pub fn prefetch_entry(&self, probe: &Probe) {
        if self.slots.is_empty() {
            return;
        }
        let slot = self.slots[self.home(probe.hash)];
        if slot != EMPTY
            && let Some(e) = self.entries.get(slot as u32 as usize)
        {
            prefetch(e);
        }
    }

    /// The id of the group with this encoded key.
    #[cfg(test)]
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        self.find(&self.probe(key), key)
    }

    /// The id of the group with this encoded key, `probe` being [`GroupIndex::probe`] of it.
    #[inline(always)]
    pub fn find(&self, probe: &Probe, key: &[u8]) -> Option<u32> {
        self.find_tail(probe, key.len(), key.get(16..).unwrap_or_default())
    }

    /// The id of the group whose key is the one string `value`, `probe` being
    /// [`GroupIndex::probe_str`] of it.
    #[inline(always)]
    pub fn find_str(&self, probe: &Probe, value: &[u8]) -> Option<u32> {
        self.find_tail(probe, value.len() + 5, value.get(11..).unwrap_or_default())
    }

    /// The lookup of a key of `len` encoded bytes whose bytes past the inline
    /// head are `tail`.
    #[inline(always)]
    fn find_tail(&self, probe: &Probe, len: usize, tail: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let tag = probe.hash & 0xffff_ffff;
        let mut at = self.home(probe.hash);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return None;
            }
            if slot >> 32 == tag {
                let id = slot as u32;
                if self.matches(id as usize, probe, len, tail) {
                    return Some(id);
                }
            }
            at = (at + 1) & mask;
        }
    }

    #[inline(always)]
    fn matches(&self, id: usize, probe: &Probe, len: usize, tail: &[u8]) -> bool {
        let e = &self.entries[id];
        if e.len as usize != len || e.head != probe.head {
            return false;
        }
        len <= 16 || self.key(id)[16..] == *tail
    }

    /// Appends a group with this key and returns its id (the next one), or
    /// `None` when the index is full (2^32 - 1 groups or 4 GiB of keys). A key
    /// already present then finds the new group (a restored snapshot's later duplicate).
    pub fn push(&mut self, key: &[u8]) -> Option<u32> {
        let probe = self.probe(key);
        self.push_probed(&probe, key)
    }

    /// [`GroupIndex::push`] of a key already hashed by [`GroupIndex::probe`].
    pub fn push_probed(&mut self, probe: &Probe, key: &[u8]) -> Option<u32> {
        let id = u32::try_from(self.entries.len())
            .ok()
            .filter(|id| *id != u32::MAX)?;
        let start = u32::try_from(self.bytes.len()).ok()?;
        u32::try_from(self.bytes.len() + key.len()).ok()?;
        // Keep the load at most 3/4: linear probing stays short.
        if (self.entries.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.entries.push(Entry {
            head: probe.head,
            start,
            len: key.len() as u32,
        });
        self.bytes.extend_from_slice(key);
        let mask = self.slots.len() - 1;
        let tag = probe.hash & 0xffff_ffff;
        let mut at = self.home(probe.hash);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                break;
            }
            if slot >> 32 == tag
                && self.matches(
                    slot as u32 as usize,
                    probe,
                    key.len(),
                    key.get(16..).unwrap_or_default(),
                )
            {
                break;
            }
            at = (at + 1) & mask;
        }
        self.slots[at] = tag << 32 | u64::from(id);
        Some(id)
    }

    fn grow(&mut self) {
        self.grow_to((self.slots.len() * 2).max(16));
    }

    fn grow_to(&mut self, size: usize) {
        let mut slots = vec![EMPTY; size];
        let mask = size - 1;
        let bits = size.trailing_zeros();
        for &slot in self.slots.iter().filter(|s| **s != EMPTY) {
            // The slot holds the hash's low 32 bits: all of the home bits up
            // to 2^32 slots; beyond (billions of groups) the key is rehashed.
            let hash = if bits <= 32 {
                slot >> 32
            } else {
                self.probe(self.key(slot as u32 as usize)).hash
            };
            let mut at = hash as usize & mask;
            while slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            slots[at] = slot;
        }
        self.slots = slots;
        self.mask = mask;
    }

    /// The slot a key with this hash is looked up from (the table is not empty).
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    /// Keeps the groups whose flag is set, renumbered in their order.
    pub fn retain(&mut self, keep: &[bool]) {
        let old = std::mem::take(self);
        for (id, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            self.push(old.key(id)).expect("fewer groups than before");
        }
    }
}

/// A cache hint for `value`'s line; never faults, so any address would do.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86_64 baseline, and a prefetch only hints the
    // cache (it reads nothing the program sees and cannot fault).
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::{GroupIndex, head_of};

    #[test]
    fn the_inline_head_is_the_first_sixteen_bytes_zero_padded_at_every_length() {
        let key: Vec<u8> = (1..=40u8).collect();
        for n in 0..=key.len() {
            let mut padded = [0u8; 16];
            let k = n.min(16);
            padded[..k].copy_from_slice(&key[..k]);
            let expected = [
                u64::from_le_bytes(padded[..8].try_into().unwrap()),
                u64::from_le_bytes(padded[8..].try_into().unwrap()),
            ];
            assert_eq!(head_of(&key[..n]), expected, "length {n}");
        }
    }

    #[test]
    fn groups_are_numbered_in_first_appearance_order_and_renumbered_after_retain() {
        let mut index = GroupIndex::default();
        let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| format!("s{i}").into_bytes()).collect();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), None);
            assert_eq!(index.push(key), Some(i as u32));
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), Some(i as u32));
            assert_eq!(index.key(i), key.as_slice());
        }
        assert_eq!(index.get(b""), None);
        let keep: Vec<bool> = (0..1000).map(|i| i % 3 == 0).collect();
        index.retain(&keep);
        assert_eq!(index.len(), 334);
        for (i, key) in keys.iter().enumerate() {
            let expected = (i % 3 == 0).then_some((i / 3) as u32);
            assert_eq!(index.get(key), expected, "{i}");
        }
        assert_eq!(index.push(b""), Some(334));
        assert_eq!(index.get(b""), Some(334));
    }

    #[test]
    fn keys_of_every_length_that_differ_in_one_byte_are_different_groups() {
        let mut index = GroupIndex::default();
        let mut keys = Vec::new();
        for len in 0..40usize {
            let base: Vec<u8> = (0..len as u8).collect();
            keys.push(base.clone());
            for at in 0..len {
                let mut other = base.clone();
                other[at] ^= 0x80;
                keys.push(other);
            }
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), None, "{key:?}");
            assert_eq!(index.push(key), Some(i as u32));
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), Some(i as u32), "{key:?}");
        }
    }

    #[test]
    fn a_string_looked_up_by_its_bytes_finds_the_group_of_its_tagged_encoding() {
        let encode = |v: &[u8]| {
            let mut key = vec![b's'];
            key.extend_from_slice(&(v.len() as u32).to_be_bytes());
            key.extend_from_slice(v);
            key
        };
        let values: Vec<Vec<u8>> = (0..40u8).map(|n| (100..100 + n).collect()).collect();
        let mut index = GroupIndex::default();
        for (i, v) in values.iter().enumerate() {
            let (by_bytes, by_key) = (index.probe_str(v), index.probe(&encode(v)));
            assert_eq!(
                (by_bytes.hash, by_bytes.head),
                (by_key.hash, by_key.head),
                "{v:?}"
            );
            assert_eq!(index.find_str(&by_bytes, v), None);
            assert_eq!(index.push(&encode(v)), Some(i as u32));
        }
        for (i, v) in values.iter().enumerate() {
            assert_eq!(
                index.find_str(&index.probe_str(v), v),
                Some(i as u32),
                "{v:?}"
            );
            let mut other = v.clone();
            other.push(b'x');
            let expected = values.iter().position(|w| *w == other).map(|at| at as u32);
            assert_eq!(index.find_str(&index.probe_str(&other), &other), expected);
        }
        // Two strings are not one string, nor is an integer key.
        let mut two = encode(b"ab");
        two.extend_from_slice(&encode(b"c"));
        assert_eq!(index.get(&two), None);
        assert_eq!(index.find_str(&index.probe_str(b"abc"), b"abc"), None);
    }

    #[test]
    fn a_duplicate_key_pushed_again_finds_the_later_group() {
        let mut index = GroupIndex::default();
        index.push(b"a");
        index.push(b"b");
        assert_eq!(index.push(b"a"), Some(2));
        assert_eq!(index.get(b"a"), Some(2));
        assert_eq!(index.len(), 3);
    }
}
