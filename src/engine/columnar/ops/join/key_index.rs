//! The join keys of one batch: every row's tagged key encoding and its hash,
//! computed once when the batch reaches the join and kept while the batch is
//! stored, so probing never re-encodes a row.

use arrow_array::{Array, Int64Array};

use crate::engine::columnar::ops::OpError;
use crate::engine::columnar::ops::values::KeyColumn;

/// Row keys of one batch; rows with a null key or timestamp never match.
#[derive(Debug, Clone)]
pub(crate) struct KeyIndex {
    /// Encoded keys back to back; row `r` is `bytes[ends[r - 1]..ends[r]]`.
    bytes: Vec<u8>,
    ends: Vec<u32>,
    hashes: Vec<u64>,
    /// Whether the row can match (non-null key and timestamp).
    usable: Vec<bool>,
    usable_rows: usize,
    /// Bytes of the usable keys past their first `LONG` (held outside a key table's entries).
    long_bytes: usize,
}

/// Key bytes a key table holds inline.
pub(crate) const LONG: usize = 24;

impl KeyIndex {
    pub(crate) fn new(keys: &dyn Array, timestamps: &Int64Array) -> Result<KeyIndex, OpError> {
        use std::hash::BuildHasher;
        let rows = keys.len();
        let encoder = KeyColumn::new(keys);
        let state = crate::engine::columnar::ops::group_by::index::key_hasher();
        let mut index = KeyIndex {
            bytes: Vec::with_capacity(rows * 16),
            ends: Vec::with_capacity(rows),
            hashes: Vec::with_capacity(rows),
            usable: Vec::with_capacity(rows),
            usable_rows: 0,
            long_bytes: 0,
        };
        for row in 0..rows {
            let start = index.bytes.len();
            let usable = !keys.is_null(row) && !timestamps.is_null(row);
            if usable {
                encoder.encode(row, &mut index.bytes)?;
            }
            let end = u32::try_from(index.bytes.len())
                .map_err(|_| OpError::new("the join keys of one batch exceed 4 GiB"))?;
            index.ends.push(end);
            index.hashes.push(state.hash_one(&index.bytes[start..]));
            index.usable.push(usable);
            index.usable_rows += usize::from(usable);
            index.long_bytes += (end as usize - start).saturating_sub(LONG);
        }
        Ok(index)
    }

    pub(crate) fn rows(&self) -> usize {
        self.ends.len()
    }

    /// How many rows can match.
    pub(crate) fn usable_rows(&self) -> usize {
        self.usable_rows
    }

    /// The bytes of the usable rows' keys past their first [`LONG`].
    pub(crate) fn long_bytes(&self) -> usize {
        self.long_bytes
    }

    pub(crate) fn usable(&self, row: usize) -> bool {
        self.usable[row]
    }

    pub(crate) fn hash(&self, row: usize) -> u64 {
        self.hashes[row]
    }

    pub(crate) fn key(&self, row: usize) -> &[u8] {
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        &self.bytes[start as usize..self.ends[row] as usize]
    }
}
