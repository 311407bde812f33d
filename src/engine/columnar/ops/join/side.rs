//! One side of the join: its stored batches in arrival order and a single hash
//! table over all their usable rows, so a new batch of the other side costs one
//! probe per row whatever the number of stored batches (a per-batch table costs
//! one per row and stored batch, about window / batch span of them).
//!
//! Pruned batches leave dead entries behind; they are skipped when met and the
//! table is rebuilt from the live batches once the dead outnumber the live, so
//! every row is inserted and dropped a bounded number of times.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};

use super::key_index::KeyIndex;

/// End of an entry chain.
const NONE: u32 = u32::MAX;
/// Dead entries tolerated beyond the live ones before a rebuild (none in tests,
/// so their small batches exercise the rebuild).
const SLACK: usize = if cfg!(test) { 0 } else { 1024 };

/// The table's keys are already foldhash hashes: hashing them again is waste.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

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

/// A batch kept in the window, with its keys and event timestamps.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub max_timestamp: i64,
    pub batch: RecordBatch,
    pub keys: Arc<KeyIndex>,
    pub timestamps: Int64Array,
    /// Arrival number on its side (ascending along `Side::batches`).
    seq: u32,
}

impl Stored {
    pub(crate) fn new(
        batch: RecordBatch,
        keys: Arc<KeyIndex>,
        timestamps: Int64Array,
        max_timestamp: i64,
    ) -> Stored {
        Stored {
            max_timestamp,
            batch,
            keys,
            timestamps,
            seq: 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    seq: u32,
    row: u32,
    next: u32,
}

/// The stored batches of one side and the hash table over them.
#[derive(Clone, Default)]
pub(crate) struct Side {
    batches: Vec<Stored>,
    next_seq: u32,
    /// Key hash → (first, last) entry; chains run in insertion order.
    heads: HashMap<u64, (u32, u32), BuildHasherDefault<PassThrough>>,
    entries: Vec<Entry>,
    /// Entries that belong to stored batches.
    live: usize,
}

impl std::fmt::Debug for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side")
            .field("batches", &self.batches.len())
            .field("entries", &self.entries.len())
            .field("live", &self.live)
            .finish()
    }
}

impl Side {
    pub(crate) fn batches(&self) -> &[Stored] {
        &self.batches
    }

    /// Stores a batch after the others and indexes its usable rows.
    pub(crate) fn push(&mut self, mut stored: Stored) {
        if self.next_seq == NONE {
            // Four billion batches in one instance: renumber from zero.
            self.next_seq = 0;
            for b in &mut self.batches {
                b.seq = self.next_seq;
                self.next_seq += 1;
            }
            self.rebuild_table();
        }
        stored.seq = self.next_seq;
        self.next_seq += 1;
        self.batches.push(stored);
        let at = self.batches.len() - 1;
        self.index_batch(at);
    }

    /// Drops the batches whose newest row is older than `cutoff`.
    pub(crate) fn prune(&mut self, cutoff: i64) {
        let before = self.batches.len();
        self.batches.retain(|s| s.max_timestamp >= cutoff);
        if self.batches.len() == before {
            return;
        }
        self.live = self.batches.iter().map(|s| s.keys.usable_rows()).sum();
        if self.entries.len() > 2 * self.live + SLACK {
            self.rebuild_table();
        }
    }

    fn rebuild_table(&mut self) {
        self.heads.clear();
        self.entries.clear();
        self.live = 0;
        for at in 0..self.batches.len() {
            self.index_batch(at);
        }
    }

    fn index_batch(&mut self, at: usize) {
        let stored = &self.batches[at];
        let keys = &stored.keys;
        self.heads.reserve(keys.rows());
        self.entries.reserve(keys.rows());
        for row in 0..keys.rows() {
            if !keys.usable(row) {
                continue;
            }
            let id = self.entries.len() as u32;
            self.entries.push(Entry {
                seq: stored.seq,
                row: row as u32,
                next: NONE,
            });
            self.live += 1;
            match self.heads.get_mut(&keys.hash(row)) {
                Some((_, last)) => {
                    self.entries[*last as usize].next = id;
                    *last = id;
                }
                None => {
                    self.heads.insert(keys.hash(row), (id, id));
                }
            }
        }
    }

    /// For every usable row of `probe` (ascending), calls `found(position,
    /// probe row, stored row)` for each stored row with an equal key, in
    /// (batch position, row) order.
    pub(crate) fn probe(&self, probe: &KeyIndex, mut found: impl FnMut(usize, u32, u32)) {
        if self.batches.is_empty() {
            return;
        }
        for row in 0..probe.rows() {
            if !probe.usable(row) {
                continue;
            }
            let Some(&(first, _)) = self.heads.get(&probe.hash(row)) else {
                continue;
            };
            let key = probe.key(row);
            let mut at = first;
            while at != NONE {
                let entry = self.entries[at as usize];
                at = entry.next;
                // A pruned batch's entries stay until the next rebuild.
                let Ok(position) = self.batches.binary_search_by_key(&entry.seq, |s| s.seq) else {
                    continue;
                };
                if self.batches[position].keys.key(entry.row as usize) == key {
                    found(position, row as u32, entry.row);
                }
            }
        }
    }
}
