//! The join's per-batch key index: every row's tagged key encoding and its hash,
//! computed once when the batch reaches the join, plus (for batches that are
//! probed) a hash table from key hash to the rows holding it. A stored batch is
//! probed by every new batch of the other side while it stays in the window, so
//! building this once instead of per pair of batches is most of the join's work.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use arrow_array::{Array, Int64Array};

use crate::engine::columnar::ops::OpError;
use crate::engine::columnar::ops::values::KeyColumn;

/// End of a row chain.
const NONE: u32 = u32::MAX;

/// The table's keys are already foldhash hashes: hashing them again is waste.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Row keys of one batch; rows with a null key or timestamp never match.
pub(crate) struct KeyIndex {
    /// Encoded keys back to back; row `r` is `bytes[ends[r - 1]..ends[r]]`.
    bytes: Vec<u8>,
    ends: Vec<usize>,
    hashes: Vec<u64>,
    /// Whether the row can match (non-null key and timestamp).
    usable: Vec<bool>,
    /// Key hash → (first, last) row with it; `next[row]` continues the chain in row order.
    heads: HashMap<u64, (u32, u32), BuildHasherDefault<PassThrough>>,
    next: Vec<u32>,
}

impl std::fmt::Debug for KeyIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyIndex")
            .field("rows", &self.ends.len())
            .field("probed", &!self.heads.is_empty())
            .finish()
    }
}

fn hasher() -> foldhash::fast::FixedState {
    // Fixed: an index is only ever compared with indexes of the same process.
    foldhash::fast::FixedState::with_seed(0x6b72_6162_6b61)
}

impl KeyIndex {
    /// Encodes and hashes every row's key; `probed` also builds the hash table.
    pub(crate) fn new(
        keys: &dyn Array,
        timestamps: &Int64Array,
        probed: bool,
    ) -> Result<KeyIndex, OpError> {
        let rows = keys.len();
        let encoder = KeyColumn::new(keys);
        let state = hasher();
        let mut index = KeyIndex {
            bytes: Vec::with_capacity(rows * 16),
            ends: Vec::with_capacity(rows),
            hashes: Vec::with_capacity(rows),
            usable: Vec::with_capacity(rows),
            heads: HashMap::default(),
            next: Vec::new(),
        };
        if probed {
            index.heads.reserve(rows);
            index.next = vec![NONE; rows];
        }
        for row in 0..rows {
            let start = index.bytes.len();
            let usable = !keys.is_null(row) && !timestamps.is_null(row);
            if usable {
                encoder.encode(row, &mut index.bytes)?;
            }
            let hash = state.hash_one(&index.bytes[start..]);
            index.ends.push(index.bytes.len());
            index.hashes.push(hash);
            index.usable.push(usable);
            if probed && usable {
                let row = row as u32;
                match index.heads.get_mut(&hash) {
                    Some((_, last)) => {
                        index.next[*last as usize] = row;
                        *last = row;
                    }
                    None => {
                        index.heads.insert(hash, (row, row));
                    }
                }
            }
        }
        Ok(index)
    }

    pub(crate) fn rows(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn usable(&self, row: usize) -> bool {
        self.usable[row]
    }

    fn key(&self, row: usize) -> &[u8] {
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        &self.bytes[start..self.ends[row]]
    }

    /// Calls `found` with every usable row of this (probed) index whose key
    /// equals `probe`'s row `row`, in row order.
    #[inline]
    pub(crate) fn matches(&self, probe: &KeyIndex, row: usize, mut found: impl FnMut(u32)) {
        let hash = probe.hashes[row];
        let Some(&(first, _)) = self.heads.get(&hash) else {
            return;
        };
        let key = probe.key(row);
        let mut at = first;
        while at != NONE {
            if self.key(at as usize) == key {
                found(at);
            }
            at = self.next[at as usize];
        }
    }
}
