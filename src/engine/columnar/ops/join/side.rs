//! One side of the join: its stored batches in arrival order and a single key
//! table over all their usable rows, so a new batch of the other side costs one
//! probe per row whatever the number of stored batches (a per-batch table costs
//! one per row and stored batch, about window / batch span of them).
//!
//! Pruned batches leave dead rows behind; they are skipped when met and
//! compacted away once the dead outnumber the live, so every row is inserted
//! once and dropped once, in a sequential pass.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};

use super::key_index::KeyIndex;
use super::table::{KeyTable, NONE, Probe, RowRef};
use crate::engine::columnar::ops::OpError;

/// Dead rows tolerated beyond the live ones before a compaction (none in
/// tests, so their small batches exercise it).
const SLACK: usize = if cfg!(test) { 0 } else { 1024 };
/// Rows hashed and looked up together, and how far ahead their loads are hinted
/// (as in `group_by`): the lookups of several rows then wait on memory at once.
/// Farther ahead than `group_by`'s 8: a side's table is far larger than any
/// cache, so every slot and entry comes from memory.
const CHUNK: usize = 256;
const AHEAD: usize = 16;

/// How much one side's table holds at most: rows are numbered in `u32`
/// (`NONE` excluded) and the key bytes past the inline ones are addressed in `u32`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub rows: usize,
    pub key_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            rows: NONE as usize - 1,
            key_bytes: u32::MAX as usize,
        }
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

/// The stored batches of one side and the key table over them.
#[derive(Clone, Default)]
pub(crate) struct Side {
    batches: Vec<Stored>,
    next_seq: u32,
    table: KeyTable,
    /// Rows of the stored batches in the table.
    live: usize,
    limits: Limits,
}

impl std::fmt::Debug for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side")
            .field("batches", &self.batches.len())
            .field("rows", &self.table.rows())
            .field("live", &self.live)
            .finish()
    }
}

/// The usable rows of `keys` in `rows` and their lookup probes.
fn probes(keys: &KeyIndex, rows: std::ops::Range<usize>, out: &mut Vec<(u32, Probe)>) {
    out.clear();
    for row in rows.filter(|r| keys.usable(*r)) {
        out.push((row as u32, Probe::new(keys.hash(row), keys.key(row))));
    }
}

impl Side {
    pub(crate) fn with_limits(limits: Limits) -> Side {
        Side {
            limits,
            ..Side::default()
        }
    }

    pub(crate) fn batches(&self) -> &[Stored] {
        &self.batches
    }

    /// Stores a batch after the others and indexes its usable rows, or leaves
    /// the side as it was when the table cannot hold them.
    pub(crate) fn push(&mut self, mut stored: Stored) -> Result<(), OpError> {
        if self.check_room(&stored.keys).is_err() && self.table.rows() > self.live {
            // Pruned rows still in the table may be what is in the way.
            self.compact();
        }
        self.check_room(&stored.keys)?;
        if self.next_seq == NONE {
            // Four billion batches since the last compaction: renumber them.
            self.compact();
        }
        stored.seq = self.next_seq;
        self.next_seq += 1;
        self.batches.push(stored);
        let at = self.batches.len() - 1;
        self.index_batch(at)
    }

    /// Whether `keys` fit beside the rows in the table (the key bytes counted
    /// as if every key were new, so indexing cannot fail half-way).
    fn check_room(&self, keys: &KeyIndex) -> Result<(), OpError> {
        let Limits { rows, key_bytes } = self.limits;
        if self.table.rows() + keys.usable_rows() > rows {
            return Err(OpError::new(format!(
                "one side of the join holds more than {rows} rows within one window \
                 (the most a join side can index); shorten the window or spread the \
                 input over more partitions"
            )));
        }
        if self.table.overflow_bytes() + keys.long_bytes() > key_bytes {
            return Err(OpError::new(format!(
                "the distinct join keys of one side exceed {key_bytes} bytes within one \
                 window (the most a join side can index); shorten the window or spread \
                 the input over more partitions"
            )));
        }
        Ok(())
    }

    /// Drops the batches whose newest row is older than `cutoff`.
    pub(crate) fn prune(&mut self, cutoff: i64) {
        let before = self.batches.len();
        self.batches.retain(|s| s.max_timestamp >= cutoff);
        if self.batches.len() == before {
            return;
        }
        self.live = self.batches.iter().map(|s| s.keys.usable_rows()).sum();
        if self.table.rows() > 2 * self.live + SLACK {
            self.compact();
        }
    }

    /// Drops the rows of pruned batches from the table and renumbers the
    /// stored batches from zero.
    fn compact(&mut self) {
        let batches = &self.batches;
        self.table.compact(|seq| {
            batches
                .binary_search_by_key(&seq, |s| s.seq)
                .ok()
                .map(|at| at as u32)
        });
        for (at, b) in self.batches.iter_mut().enumerate() {
            b.seq = at as u32;
        }
        self.next_seq = self.batches.len() as u32;
    }

    /// Indexes the stored batch at `at` ([`Side::check_room`] said it fits).
    fn index_batch(&mut self, at: usize) -> Result<(), OpError> {
        let stored = &self.batches[at];
        let keys = &stored.keys;
        let timestamps = stored.timestamps.values();
        self.table.reserve(keys.usable_rows());
        let mut chunk = Vec::with_capacity(CHUNK);
        for first in (0..keys.rows()).step_by(CHUNK) {
            probes(keys, first..(first + CHUNK).min(keys.rows()), &mut chunk);
            for (i, (row, probe)) in chunk.iter().enumerate() {
                if let Some((_, ahead)) = chunk.get(i + AHEAD) {
                    self.table.prefetch(ahead);
                }
                if let Some((_, ahead)) = chunk.get(i + AHEAD / 2) {
                    self.table.prefetch_entry(ahead);
                }
                let entry = RowRef::new(stored.seq, *row, timestamps[*row as usize]);
                self.table
                    .insert(probe, keys.key(*row as usize), entry)
                    .map_err(|_| OpError::new("a join side's key table is full"))?;
            }
            self.live += chunk.len();
        }
        Ok(())
    }

    /// For every usable row of `probe` in `rows` (ascending), calls
    /// `found(position, probe row, stored row, stored row's timestamp)` for
    /// each stored row with an equal key, in (batch position, row) order; so
    /// consecutive ranges probed one after the other find what all rows find.
    pub(crate) fn probe_rows(
        &self,
        probe: &KeyIndex,
        rows: std::ops::Range<usize>,
        mut found: impl FnMut(usize, u32, u32, i64),
    ) {
        if self.batches.is_empty() || self.table.is_empty() {
            return;
        }
        let first_seq = self.batches[0].seq;
        let position = |seq: u32| {
            // Batches leave mostly from the front, so the offset is usually it.
            let guess = seq.wrapping_sub(first_seq) as usize;
            match self.batches.get(guess) {
                Some(b) if b.seq == seq => Some(guess),
                _ => self.batches.binary_search_by_key(&seq, |s| s.seq).ok(),
            }
        };
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut hits: Vec<(u32, u32)> = Vec::with_capacity(CHUNK);
        for first in rows.clone().step_by(CHUNK) {
            probes(probe, first..(first + CHUNK).min(rows.end), &mut chunk);
            hits.clear();
            for (i, (row, p)) in chunk.iter().enumerate() {
                if let Some((_, ahead)) = chunk.get(i + AHEAD) {
                    self.table.prefetch(ahead);
                }
                if let Some((_, ahead)) = chunk.get(i + AHEAD / 2) {
                    self.table.prefetch_entry(ahead);
                }
                if let Some(id) = self.table.find(p, probe.key(*row as usize)) {
                    hits.push((*row, id));
                }
            }
            for &(row, id) in &hits {
                self.table.rows_of(id, |stored| {
                    // A pruned batch's rows stay until the next compaction.
                    if let Some(at) = position(stored.seq) {
                        found(at, row, stored.row, stored.timestamp);
                    }
                });
            }
        }
    }
}
