//! A join side's key table: one 64-byte entry (one cache line) per distinct
//! key, holding the key's first 24 bytes, its hash and its first stored row,
//! and an open-addressing table of `hash tag | entry id` slots over them.
//!
//! A probe that finds its key costs two cache misses (slot, entry) when the key
//! encodes to at most 24 bytes (an int, or a string of up to 19 bytes): the
//! entry holds the whole key and the first row, which is usually the only one
//! (a further row of the same key is chained in `more`, in insertion order).
//! Longer keys keep their bytes past 24 in `overflow`.
//!
//! Rows of pruned batches stay until [`KeyTable::compact`] drops them in one
//! sequential pass over the entries, which also renumbers the batches and
//! places the surviving entries in fresh slots without comparing any key.
//! The big arrays are advised onto huge pages (on Linux): their accesses are
//! random, and with 4 KiB pages nearly each one also misses the TLB.

use crate::engine::columnar::ops::group_by::index::prefetch;

/// End of a row chain, and "no row" in a `u32` row reference.
pub(crate) const NONE: u32 = u32::MAX;
/// An empty slot (no entry has id `u32::MAX`).
const EMPTY: u64 = u64::MAX;
/// How many entries ahead [`KeyTable::place_all`] hints its slot loads.
const PLACE_AHEAD: usize = 16;
/// How many slots from home [`KeyTable::prefetch_entry`] looks for a tag.
const TAG_AHEAD: usize = 4;
/// Key bytes held inline in an entry.
const INLINE: usize = super::key_index::LONG;

/// A stored row: its batch, row, and event time (inline, so a probe reads no
/// stored column to check the window).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub(crate) struct RowRef {
    pub seq: u32,
    pub row: u32,
    pub timestamp: i64,
    /// The key's next row, in `more`, or [`NONE`].
    next: u32,
    /// In an entry's first row: the chain's last row in `more`, or [`NONE`].
    last: u32,
}

impl RowRef {
    pub(crate) fn new(seq: u32, row: u32, timestamp: i64) -> RowRef {
        RowRef {
            seq,
            row,
            timestamp,
            next: NONE,
            last: NONE,
        }
    }
}

/// One distinct key and its first row.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct KeyEntry {
    head: [u64; 3],
    hash: u64,
    first: RowRef,
    len: u32,
    /// Where the key's bytes past [`INLINE`] start in `overflow`.
    rest: u32,
}

/// A key prepared for lookups: its hash and inline head.
#[derive(Clone, Copy)]
pub(crate) struct Probe {
    hash: u64,
    head: [u64; 3],
}

/// The first 24 bytes of `key`, zero-padded, as three little-endian words.
#[inline(always)]
fn head_of(key: &[u8]) -> [u64; 3] {
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    let n = key.len();
    let mut head = [0u64; 3];
    let whole = n.min(INLINE) / 8;
    for (i, w) in head.iter_mut().enumerate().take(whole) {
        *w = word(8 * i);
    }
    if whole < 3 && !n.is_multiple_of(8) {
        let at = 8 * whole;
        head[whole] = if n >= 8 {
            // The last 8 bytes, shifted down past those of the previous word.
            word(n - 8) >> (8 * (8 - (n - at)))
        } else {
            key.iter()
                .enumerate()
                .fold(0, |w, (i, b)| w | u64::from(*b) << (8 * i))
        };
    }
    head
}

impl Probe {
    #[inline(always)]
    pub(crate) fn new(hash: u64, key: &[u8]) -> Probe {
        Probe {
            hash,
            head: head_of(key),
        }
    }
}

/// Why a row could not be added: ids, rows or overflow bytes past `u32`.
#[derive(Debug)]
pub(crate) struct Full;

#[derive(Clone, Default)]
pub(crate) struct KeyTable {
    /// `tag << 32 | id` (tag: the hash's low 32 bits, which hold the home
    /// slot's), or [`EMPTY`]; the length is a power of two (or 0).
    slots: Vec<u64>,
    keys: Vec<KeyEntry>,
    more: Vec<RowRef>,
    overflow: Vec<u8>,
    /// Rows held, live or not.
    rows: usize,
}

impl KeyTable {
    /// Rows held, including those of pruned batches not yet compacted away.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The key bytes held outside the entries.
    pub(crate) fn overflow_bytes(&self) -> usize {
        self.overflow.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Makes room for `more` new keys at once (so a batch rehashes at most once).
    pub(crate) fn reserve(&mut self, more: usize) {
        let keys = self.keys.len() + more;
        if keys > self.keys.capacity() {
            let mut grown = huge_vec(keys.max(2 * self.keys.capacity()));
            grown.extend_from_slice(&self.keys);
            self.keys = grown;
        }
        let wanted = keys.saturating_mul(4) / 3 + 1;
        if wanted > self.slots.len() {
            self.place_all(wanted.next_power_of_two().max(16));
        }
    }

    /// Puts every entry in a fresh table of `size` slots (the old one reused
    /// when as large: fresh pages cost the kernel a zeroing each).
    fn place_all(&mut self, size: usize) {
        let mut slots = if self.slots.len() == size {
            std::mem::take(&mut self.slots)
        } else {
            huge_vec(size)
        };
        slots.clear();
        slots.resize(size, EMPTY);
        let mask = size - 1;
        for (id, key) in self.keys.iter().enumerate() {
            if let Some(ahead) = self.keys.get(id + PLACE_AHEAD) {
                prefetch(&slots[ahead.hash as usize & mask]);
            }
            let mut at = key.hash as usize & mask;
            while slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            slots[at] = (key.hash & 0xffff_ffff) << 32 | id as u64;
        }
        self.slots = slots;
    }

    /// Hints the CPU to load the slot `probe` starts at.
    #[inline(always)]
    pub(crate) fn prefetch(&self, probe: &Probe) {
        if let Some(slot) = self.slots.get(self.home(probe.hash)) {
            prefetch(slot);
        }
    }

    /// Hints the CPU to load the entry `probe` most likely finds (call a few
    /// rows after [`KeyTable::prefetch`], when its slot is in cache): the
    /// first of a few slots from home with the probe's tag. A key not in the
    /// table (most rows of a batch being inserted) then costs no entry load.
    #[inline(always)]
    pub(crate) fn prefetch_entry(&self, probe: &Probe) {
        let tag = probe.hash & 0xffff_ffff;
        let mask = self.slots.len().wrapping_sub(1);
        let home = self.home(probe.hash);
        for at in (home..home + TAG_AHEAD).map(|at| at & mask) {
            match self.slots.get(at) {
                Some(&slot) if slot != EMPTY => {
                    if slot >> 32 == tag
                        && let Some(key) = self.keys.get(slot as u32 as usize)
                    {
                        prefetch(key);
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        hash as usize & self.slots.len().wrapping_sub(1)
    }

    /// The entry id of `key` (`probe` made from it), or the slot where it
    /// would go.
    #[inline(always)]
    fn find_slot(&self, probe: &Probe, key: &[u8]) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let tag = probe.hash & 0xffff_ffff;
        let mut at = probe.hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return Err(at);
            }
            if slot >> 32 == tag {
                let id = slot as u32;
                let e = &self.keys[id as usize];
                if e.head == probe.head
                    && e.len as usize == key.len()
                    && (key.len() <= INLINE
                        || self.overflow[e.rest as usize..][..key.len() - INLINE] == key[INLINE..])
                {
                    return Ok(id);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// The entry id of `key`.
    #[inline(always)]
    pub(crate) fn find(&self, probe: &Probe, key: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.find_slot(probe, key).ok()
    }

    /// Adds `row` under `key`, after the key's earlier rows.
    pub(crate) fn insert(&mut self, probe: &Probe, key: &[u8], row: RowRef) -> Result<(), Full> {
        self.reserve(1);
        match self.find_slot(probe, key) {
            Ok(id) => {
                let at = u32::try_from(self.more.len())
                    .ok()
                    .filter(|m| *m != NONE)
                    .ok_or(Full)?;
                if self.more.len() == self.more.capacity() {
                    let mut grown = huge_vec((2 * self.more.capacity()).max(1024));
                    grown.extend_from_slice(&self.more);
                    self.more = grown;
                }
                self.more.push(row);
                let first = &mut self.keys[id as usize].first;
                match first.last {
                    NONE => first.next = at,
                    last => self.more[last as usize].next = at,
                }
                self.keys[id as usize].first.last = at;
            }
            Err(slot) => {
                let id = u32::try_from(self.keys.len())
                    .ok()
                    .filter(|id| *id != NONE)
                    .ok_or(Full)?;
                let rest = u32::try_from(self.overflow.len()).map_err(|_| Full)?;
                if key.len() > INLINE {
                    u32::try_from(self.overflow.len() + key.len() - INLINE).map_err(|_| Full)?;
                    self.overflow.extend_from_slice(&key[INLINE..]);
                }
                self.keys.push(KeyEntry {
                    head: probe.head,
                    hash: probe.hash,
                    first: row,
                    len: key.len() as u32,
                    rest,
                });
                self.slots[slot] = (probe.hash & 0xffff_ffff) << 32 | u64::from(id);
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Calls `each` with the rows of entry `id`, in insertion order.
    #[inline(always)]
    pub(crate) fn rows_of(&self, id: u32, mut each: impl FnMut(&RowRef)) {
        let mut row = &self.keys[id as usize].first;
        loop {
            each(row);
            if row.next == NONE {
                return;
            }
            row = &self.more[row.next as usize];
        }
    }

    /// Keeps the rows whose batch `renumber` maps to a new number (given
    /// them), drops keys left without rows, and places the rest afresh.
    pub(crate) fn compact(&mut self, renumber: impl Fn(u32) -> Option<u32>) {
        let mut more: Vec<RowRef> = huge_vec(self.more.len().min(self.rows));
        let mut overflow = Vec::new();
        let mut kept = 0;
        self.rows = 0;
        for id in 0..self.keys.len() {
            let mut key = self.keys[id];
            let mut first: Option<RowRef> = None;
            let mut row = key.first;
            loop {
                if let Some(seq) = renumber(row.seq) {
                    let moved = RowRef::new(seq, row.row, row.timestamp);
                    self.rows += 1;
                    match &mut first {
                        None => first = Some(moved),
                        Some(f) => {
                            let at = more.len() as u32;
                            more.push(moved);
                            match f.last {
                                NONE => f.next = at,
                                last => more[last as usize].next = at,
                            }
                            f.last = at;
                        }
                    }
                }
                if row.next == NONE {
                    break;
                }
                row = self.more[row.next as usize];
            }
            let Some(first) = first else { continue };
            key.first = first;
            if key.len as usize > INLINE {
                let start = overflow.len();
                overflow.extend_from_slice(
                    &self.overflow[key.rest as usize..][..key.len as usize - INLINE],
                );
                key.rest = start as u32;
            }
            self.keys[kept] = key;
            kept += 1;
        }
        self.keys.truncate(kept);
        self.more = more;
        self.overflow = overflow;
        let size = self.slots.len();
        self.place_all(size.max(16));
    }
}

/// An empty vector with room for `capacity` items, its whole 2 MiB pages
/// advised onto transparent huge pages before anything touches them.
fn huge_vec<T>(capacity: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(capacity);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (from, to) = (start.next_multiple_of(HUGE), end & !(HUGE - 1));
        if to > from {
            // SAFETY: the range lies inside this vector's own allocation;
            // MADV_HUGEPAGE only changes how the kernel backs those pages,
            // never their contents, and its failure is harmless (ignored).
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::{KeyTable, Probe, RowRef, head_of};
    use std::hash::BuildHasher;

    #[test]
    fn the_inline_head_is_the_first_twenty_four_bytes_zero_padded_at_every_length() {
        let key: Vec<u8> = (1..=40u8).collect();
        for n in 0..=key.len() {
            let mut padded = [0u8; 24];
            let k = n.min(24);
            padded[..k].copy_from_slice(&key[..k]);
            let expected =
                [0, 8, 16].map(|at| u64::from_le_bytes(padded[at..at + 8].try_into().unwrap()));
            assert_eq!(head_of(&key[..n]), expected, "length {n}");
        }
    }

    #[test]
    fn keys_of_every_length_that_differ_in_one_byte_are_different_keys_and_survive_compaction() {
        let hasher = crate::engine::columnar::ops::group_by::index::key_hasher();
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
        let probe = |k: &[u8]| Probe::new(hasher.hash_one(k), k);
        let mut table = KeyTable::default();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(table.find(&probe(key), key), None, "{key:?}");
            // Every key twice: batch 0 then batch 1.
            table
                .insert(&probe(key), key, RowRef::new(0, i as u32, 0))
                .unwrap();
            table
                .insert(&probe(key), key, RowRef::new(1, i as u32, 1))
                .unwrap();
        }
        let rows = |table: &KeyTable, key: &[u8]| {
            let mut out = Vec::new();
            if let Some(id) = table.find(&probe(key), key) {
                table.rows_of(id, |r| out.push((r.seq, r.row)));
            }
            out
        };
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(rows(&table, key), [(0, i as u32), (1, i as u32)], "{key:?}");
        }
        // Batch 0 leaves, batch 1 becomes batch 0.
        table.compact(|seq| (seq == 1).then_some(0));
        assert_eq!(table.rows(), keys.len());
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(rows(&table, key), [(0, i as u32)], "{key:?}");
        }
        table.compact(|_| None);
        assert!(table.is_empty());
        assert_eq!(rows(&table, &keys[3]), []);
    }
}
