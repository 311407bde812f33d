//! One side of the join: its stored batches in arrival order and a single hash
//! table over all their usable rows, so a new batch of the other side costs one
//! probe per row whatever the number of stored batches (a per-batch table costs
//! one per row and stored batch, about window / batch span of them).
//!
//! Pruned batches leave dead entries behind; they are skipped when met and the
//! table is rebuilt from the live batches once the dead outnumber the live, so
//! every row is inserted and dropped a bounded number of times.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};

use super::key_index::KeyIndex;
use crate::engine::columnar::ops::OpError;
use crate::engine::columnar::ops::group_by::index::{GroupIndex, Probe, prefetch};

/// End of an entry chain.
const NONE: u32 = u32::MAX;
/// Dead entries tolerated beyond the live ones before a rebuild (none in tests,
/// so their small batches exercise the rebuild).
const SLACK: usize = if cfg!(test) { 0 } else { 1024 };
/// Rows hashed and looked up together, and how far ahead their loads are hinted
/// (as in `group_by`): the lookups of several rows then wait on memory at once.
const CHUNK: usize = 256;
const AHEAD: usize = 8;

/// How much one side's index holds at most: rows are numbered in `u32`
/// (`NONE` excluded) and the index's key arena is addressed in `u32`.
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

/// A stored row: where it is and its event time (inline, so a probe reads no
/// stored column to check the window).
#[derive(Debug, Clone, Copy)]
struct Entry {
    seq: u32,
    row: u32,
    timestamp: i64,
    /// The next row with the same key, in `Side::more`.
    next: u32,
}

/// The rows of one distinct key: the first inline (most keys have one row per
/// side), the others chained in `Side::more` in insertion order.
#[derive(Debug, Clone, Copy)]
struct Chain {
    first: Entry,
    /// The chain's last entry in `Side::more`, or [`NONE`].
    last: u32,
}

/// The stored batches of one side and the key index over them.
#[derive(Clone, Default)]
pub(crate) struct Side {
    batches: Vec<Stored>,
    next_seq: u32,
    /// Distinct keys; a key's id indexes `chains`.
    index: GroupIndex,
    chains: Vec<Chain>,
    more: Vec<Entry>,
    /// Rows indexed since the last rebuild, and those of them in stored batches.
    indexed: usize,
    live: usize,
    limits: Limits,
}

impl std::fmt::Debug for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Side")
            .field("batches", &self.batches.len())
            .field("indexed", &self.indexed)
            .field("live", &self.live)
            .finish()
    }
}

/// The usable rows of `keys` in `rows` and their lookup probes.
fn probes(keys: &KeyIndex, rows: std::ops::Range<usize>, out: &mut Vec<(u32, Probe)>) {
    out.clear();
    for row in rows.filter(|r| keys.usable(*r)) {
        out.push((
            row as u32,
            GroupIndex::probe_hashed(keys.hash(row), keys.key(row)),
        ));
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
    /// the side as it was when the index cannot hold them.
    pub(crate) fn push(&mut self, mut stored: Stored) -> Result<(), OpError> {
        if self.check_room(&stored.keys).is_err() && self.indexed > self.live {
            // Pruned rows still held by the index may be what is in the way.
            self.rebuild_table()?;
        }
        self.check_room(&stored.keys)?;
        if self.next_seq == NONE {
            // Four billion batches in one instance: renumber from zero.
            self.next_seq = 0;
            for b in &mut self.batches {
                b.seq = self.next_seq;
                self.next_seq += 1;
            }
            self.rebuild_table()?;
        }
        stored.seq = self.next_seq;
        self.next_seq += 1;
        self.batches.push(stored);
        let at = self.batches.len() - 1;
        self.index_batch(at)
    }

    /// Whether `keys` fit beside the rows indexed so far (the key bytes counted
    /// as if every key were new, so indexing cannot fail half-way).
    fn check_room(&self, keys: &KeyIndex) -> Result<(), OpError> {
        let Limits { rows, key_bytes } = self.limits;
        if self.indexed + keys.usable_rows() > rows {
            return Err(OpError::new(format!(
                "one side of the join holds more than {rows} rows within one window \
                 (the most a join side can index); shorten the window or spread the \
                 input over more partitions"
            )));
        }
        if self.index.key_bytes() + keys.key_bytes() > key_bytes {
            return Err(OpError::new(format!(
                "the distinct join keys of one side exceed {key_bytes} bytes within one \
                 window (the most a join side can index); shorten the window or spread \
                 the input over more partitions"
            )));
        }
        Ok(())
    }

    /// Drops the batches whose newest row is older than `cutoff`.
    pub(crate) fn prune(&mut self, cutoff: i64) -> Result<(), OpError> {
        let before = self.batches.len();
        self.batches.retain(|s| s.max_timestamp >= cutoff);
        if self.batches.len() == before {
            return Ok(());
        }
        self.live = self.batches.iter().map(|s| s.keys.usable_rows()).sum();
        if self.indexed > 2 * self.live + SLACK {
            self.rebuild_table()?;
        }
        Ok(())
    }

    /// Indexes the stored batches afresh (they are a subset of what the index
    /// held, so they fit).
    fn rebuild_table(&mut self) -> Result<(), OpError> {
        self.index.clear();
        self.chains.clear();
        self.more.clear();
        self.indexed = 0;
        self.live = 0;
        let rows = self.batches.iter().map(|s| s.keys.usable_rows()).sum();
        self.index.reserve(rows);
        self.chains.reserve(rows);
        for at in 0..self.batches.len() {
            self.check_room(&self.batches[at].keys)?;
            self.index_batch(at)?;
        }
        Ok(())
    }

    /// Indexes the stored batch at `at` ([`Side::check_room`] said it fits).
    fn index_batch(&mut self, at: usize) -> Result<(), OpError> {
        let stored = &self.batches[at];
        let keys = &stored.keys;
        let timestamps = stored.timestamps.values();
        self.index.reserve(keys.usable_rows());
        self.chains.reserve(keys.usable_rows());
        let mut chunk = Vec::with_capacity(CHUNK);
        for first in (0..keys.rows()).step_by(CHUNK) {
            probes(keys, first..(first + CHUNK).min(keys.rows()), &mut chunk);
            for (i, (row, probe)) in chunk.iter().enumerate() {
                if let Some((_, ahead)) = chunk.get(i + AHEAD) {
                    self.index.prefetch(ahead);
                }
                if let Some((_, ahead)) = chunk.get(i + AHEAD / 2) {
                    self.index.prefetch_entry(ahead);
                }
                let entry = Entry {
                    seq: stored.seq,
                    row: *row,
                    timestamp: timestamps[*row as usize],
                    next: NONE,
                };
                let key = keys.key(*row as usize);
                let full = || OpError::new("a join side's key index is full");
                match self.index.find(probe, key) {
                    Some(id) => {
                        let more = u32::try_from(self.more.len())
                            .ok()
                            .filter(|m| *m != NONE)
                            .ok_or_else(full)?;
                        self.more.push(entry);
                        let chain = &mut self.chains[id as usize];
                        match chain.last {
                            NONE => chain.first.next = more,
                            last => self.more[last as usize].next = more,
                        }
                        chain.last = more;
                    }
                    None => {
                        self.index.push_probed(probe, key).ok_or_else(full)?;
                        self.chains.push(Chain {
                            first: entry,
                            last: NONE,
                        });
                    }
                }
            }
            self.indexed += chunk.len();
            self.live += chunk.len();
        }
        Ok(())
    }

    /// For every usable row of `probe` (ascending), calls `found(position,
    /// probe row, stored row, stored row's timestamp)` for each stored row with
    /// an equal key, in (batch position, row) order.
    pub(crate) fn probe(&self, probe: &KeyIndex, mut found: impl FnMut(usize, u32, u32, i64)) {
        if self.batches.is_empty() || self.chains.is_empty() {
            return;
        }
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut hits: Vec<(u32, u32)> = Vec::with_capacity(CHUNK);
        for first in (0..probe.rows()).step_by(CHUNK) {
            probes(probe, first..(first + CHUNK).min(probe.rows()), &mut chunk);
            hits.clear();
            for (i, (row, p)) in chunk.iter().enumerate() {
                if let Some((_, ahead)) = chunk.get(i + AHEAD) {
                    self.index.prefetch(ahead);
                }
                if let Some((_, ahead)) = chunk.get(i + AHEAD / 2) {
                    self.index.prefetch_entry(ahead);
                }
                if let Some(id) = self.index.find(p, probe.key(*row as usize)) {
                    // Read in the next pass, by when it is in cache.
                    prefetch(&self.chains[id as usize]);
                    hits.push((*row, id));
                }
            }
            for &(row, id) in &hits {
                let mut entry = self.chains[id as usize].first;
                loop {
                    // A pruned batch's entries stay until the next rebuild.
                    if let Ok(position) = self.batches.binary_search_by_key(&entry.seq, |s| s.seq) {
                        found(position, row, entry.row, entry.timestamp);
                    }
                    if entry.next == NONE {
                        break;
                    }
                    entry = self.more[entry.next as usize];
                }
            }
        }
    }
}
