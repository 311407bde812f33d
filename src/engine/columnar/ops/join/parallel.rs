//! The join's probes and row gathering on several threads (`run --threads`),
//! merged so the output is the one-thread path's, byte for byte (semantics
//! §6): a probe splits its rows into consecutive ranges whose matches are
//! joined in range order (one probe finds them in ascending probe row), and a
//! joined batch gathers each column with the same `take` call, one column
//! per thread.

use arrow::compute::take;
use arrow_array::{ArrayRef, UInt32Array, new_null_array};
use arrow_schema::{ArrowError, DataType};

use super::key_index::KeyIndex;
use super::side::Side;
use crate::engine::columnar::parallel::{MIN_ROWS_PER_THREAD, map_indices, map_ranges, row_ranges};

/// Per stored batch of `side` (by position), the `(probe row, stored row)`
/// pairs of equal keys that `keep(probe row, stored row's timestamp)` accepts,
/// in the order one [`Side::probe_rows`] over all rows finds them, the probe's rows split over up to
/// `threads` threads.
pub(super) fn probe_pairs(
    side: &Side,
    probe: &KeyIndex,
    threads: usize,
    keep: impl Fn(u32, i64) -> bool + Sync,
) -> Vec<Vec<(u32, u32)>> {
    let batches = side.batches().len();
    let ranges = row_ranges(probe.rows(), threads);
    let parts = map_ranges(&ranges, |rows| {
        let mut pairs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); batches];
        side.probe_rows(probe, rows, |at, row, stored, timestamp| {
            if keep(row, timestamp) {
                pairs[at].push((row, stored));
            }
        });
        pairs
    });
    let mut parts = parts.into_iter();
    let mut merged = parts.next().unwrap_or_else(|| vec![Vec::new(); batches]);
    for part in parts {
        for (into, more) in merged.iter_mut().zip(part) {
            into.extend(more);
        }
    }
    merged
}

/// One output column of a joined batch: rows of `values` at the indices of
/// its side, or nulls of a type.
pub(super) enum Gather<'a> {
    Take(&'a ArrayRef, &'a UInt32Array),
    Nulls(&'a DataType, usize),
}

/// Every column of a joined batch, on up to `threads` threads when it has
/// rows enough to share out.
pub(super) fn gather(
    columns: &[Gather<'_>],
    rows: usize,
    threads: usize,
) -> Result<Vec<ArrayRef>, ArrowError> {
    let threads = if rows >= MIN_ROWS_PER_THREAD {
        threads
    } else {
        1
    };
    map_indices(columns.len(), threads, |c| match &columns[c] {
        Gather::Take(values, indices) => take(values.as_ref(), *indices, None),
        Gather::Nulls(data_type, len) => Ok(new_null_array(data_type, *len)),
    })
    .into_iter()
    .collect()
}
