//! One batch folded into a (windowed) group-by on several threads, with the
//! result of the one-thread path (semantics §4: groups in first-appearance
//! order, aggregates exact), so `run --threads N` output is byte-identical to
//! `--threads 1`:
//!
//! 1. the rows are split into contiguous ranges and every range looks its
//!    rows' keys up in the group index, read-only, in parallel; a key not there
//!    yet is a miss;
//! 2. the missed rows, in row order, go through the one-thread assignment,
//!    which creates their groups in the order they first appear;
//! 3. every range folds its rows into partial accumulators of its own, in
//!    parallel, and the partials are merged into the groups' in range order,
//!    only where merging is exact (counts, integer sums far from the i128
//!    range, min/max over values of one kind); any other aggregate, and any
//!    whose partial or merge would fail, is folded by the one-thread path.
//!
//! Nothing is changed before step 2, and anything step 1 cannot do (a key it
//! cannot encode, a null or out-of-range timestamp) sends the batch down the
//! one-thread path, which reports it with its row as before.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray, UInt32Array};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, Field, Schema};

use super::accumulators::Accumulators;
use super::index::{GroupIndex, Probe};
use super::{AggFunc, GroupByProcessor, LATE, Window};
use crate::engine::columnar::metadata::TIMESTAMP_COLUMN;
use crate::engine::columnar::ops::OpError;
use crate::engine::columnar::ops::values::KeyColumn;
use crate::engine::columnar::parallel::{map_ranges, row_ranges};

/// A row whose key has no group yet (step 2 gives it one).
const MISS: u32 = LATE - 1;

/// Rows looked up together: hashed first, then found with the table slots
/// prefetched a few rows ahead (as the one-thread path does).
const CHUNK: usize = 256;
const AHEAD: usize = 16;

/// The key columns and event times of the batch, borrowed for step 1.
struct Keys<'a> {
    columns: &'a [ArrayRef],
    /// The one-string key without nulls and without a window, read in place.
    string: Option<&'a StringArray>,
    timestamps: Option<&'a Int64Array>,
    window: Option<Window>,
    cutoff: i64,
}

impl GroupByProcessor {
    /// Folds `batch` on `self.threads` threads; `Ok(false)` when it is left to
    /// the one-thread path (too small, or something only that path reports),
    /// with nothing changed. Errors after groups were created are the ones the
    /// one-thread path gives at the same point.
    pub(super) fn fold_parallel(
        &mut self,
        batch: &RecordBatch,
        key_columns: &[ArrayRef],
        inputs: &[ArrayRef],
        selected: Option<&BooleanBuffer>,
        cutoff: i64,
    ) -> Result<bool, OpError> {
        let rows = batch.num_rows();
        let ranges = row_ranges(rows, self.threads);
        if ranges.len() < 2 || selected.is_some_and(|s| s.len() != rows) {
            return Ok(false);
        }
        let timestamps = match self.op.window {
            None => None,
            Some(_) => match batch
                .column_by_name(TIMESTAMP_COLUMN)
                .and_then(|c| c.as_primitive_opt::<Int64Type>())
            {
                Some(ts) => Some(ts),
                None => return Ok(false),
            },
        };
        let string = match (key_columns, self.op.window) {
            ([column], None) => column
                .as_string_opt::<i32>()
                .filter(|s| s.null_count() == 0),
            _ => None,
        };
        if selected.is_some() && string.is_none() {
            return Ok(false);
        }
        let keys = Keys {
            columns: key_columns,
            string,
            timestamps,
            window: self.op.window,
            cutoff,
        };
        // Step 1.
        let index = &self.index;
        let looked_up = map_ranges(&ranges, |range| lookup(index, &keys, selected, range));
        let mut ids = Vec::with_capacity(rows);
        for part in looked_up {
            match part {
                Ok(part) => ids.extend(part),
                Err(_) => return Ok(false),
            }
        }
        // Step 2.
        let misses: Vec<u32> = (0..rows as u32)
            .filter(|row| ids[*row as usize] == MISS)
            .collect();
        if !misses.is_empty() {
            let Some((missed, missed_keys)) = missed_rows(&keys, &misses) else {
                return Ok(false);
            };
            let assigned = self.assign_groups(&missed, &missed_keys, cutoff)?;
            for (row, id) in misses.iter().zip(assigned) {
                ids[*row as usize] = id;
            }
        }
        // Step 3. Before the update: a failure part-way leaves touched groups behind.
        self.encoded.get_mut().touch(&ids);
        let groups = self.parts.len();
        let funcs: Vec<AggFunc> = self.op.aggregations.iter().map(|a| a.func).collect();
        let mergeable: Vec<bool> = funcs
            .iter()
            .zip(inputs)
            .zip(&self.accs)
            .map(|((func, input), accs)| {
                // A partial of every group per range: not when groups outnumber rows.
                groups <= rows && accs.merges_exactly(*func, input.data_type())
            })
            .collect();
        let partials: Vec<Vec<Option<Accumulators>>> = if mergeable.iter().any(|m| *m) {
            let ids = &ids;
            map_ranges(&ranges, |range| {
                funcs
                    .iter()
                    .zip(inputs)
                    .zip(&mergeable)
                    .map(|((func, input), mergeable)| {
                        if !mergeable {
                            return None;
                        }
                        let mut partial = Accumulators::with_groups(*func, groups);
                        let values = input.slice(range.start, range.len());
                        partial
                            .update(*func, &ids[range.clone()], &values)
                            .ok()
                            .map(|_| partial)
                    })
                    .collect()
            })
        } else {
            Vec::new()
        };
        for (a, func) in funcs.iter().enumerate() {
            let parts: Option<Vec<&Accumulators>> = partials
                .iter()
                .map(|p| p.get(a).and_then(Option::as_ref))
                .collect();
            if let Some(parts) = parts.filter(|p| !p.is_empty())
                && self.accs[a].merge(*func, &parts)
            {
                continue;
            }
            self.accs[a].update(*func, &ids, &inputs[a])?;
        }
        Ok(true)
    }
}

/// Step 1 for the rows of `range`: each row's group id, `MISS` for a key
/// without a group, `LATE` for a row of a dropped window or one `selected`
/// leaves out. Reads the index only.
fn lookup(
    index: &GroupIndex,
    keys: &Keys<'_>,
    selected: Option<&BooleanBuffer>,
    range: Range<usize>,
) -> Result<Vec<u32>, OpError> {
    match keys.string {
        Some(strings) => Ok(lookup_strings(index, strings, selected, range)),
        None => lookup_encoded(index, keys, range),
    }
}

fn lookup_strings(
    index: &GroupIndex,
    strings: &StringArray,
    selected: Option<&BooleanBuffer>,
    range: Range<usize>,
) -> Vec<u32> {
    let offsets = strings.value_offsets();
    let bytes = strings.values().as_slice();
    let value = |row: usize| &bytes[offsets[row] as usize..offsets[row + 1] as usize];
    let first_row = range.start;
    let mut ids = vec![LATE; range.len()];
    let mut chunk_rows: Vec<usize> = Vec::with_capacity(CHUNK);
    let mut probes: Vec<Probe> = Vec::with_capacity(CHUNK);
    for first in range.clone().step_by(CHUNK) {
        let last = (first + CHUNK).min(range.end);
        chunk_rows.clear();
        match selected {
            Some(selected) => chunk_rows.extend((first..last).filter(|row| selected.value(*row))),
            None => chunk_rows.extend(first..last),
        }
        probes.clear();
        probes.extend(chunk_rows.iter().map(|row| index.probe_str(value(*row))));
        let n = chunk_rows.len();
        for i in 0..n {
            if i + AHEAD < n {
                index.prefetch(&probes[i + AHEAD]);
            }
            if i + AHEAD / 2 < n {
                index.prefetch_entry(&probes[i + AHEAD / 2]);
            }
            let row = chunk_rows[i];
            ids[row - first_row] = index.find_str(&probes[i], value(row)).unwrap_or(MISS);
        }
    }
    ids
}

fn lookup_encoded(
    index: &GroupIndex,
    keys: &Keys<'_>,
    range: Range<usize>,
) -> Result<Vec<u32>, OpError> {
    let encoders: Vec<KeyColumn<'_>> = keys
        .columns
        .iter()
        .map(|c| KeyColumn::new(c.as_ref()))
        .collect();
    let mut ids = Vec::with_capacity(range.len());
    let mut encoded: Vec<u8> = Vec::with_capacity(CHUNK * 32);
    // Per chunk row: where its key ends in `encoded`, or `None` for a late row.
    let mut ends: Vec<Option<usize>> = Vec::with_capacity(CHUNK);
    let mut probes: Vec<Probe> = Vec::with_capacity(CHUNK);
    for first in range.clone().step_by(CHUNK) {
        let last = (first + CHUNK).min(range.end);
        encoded.clear();
        ends.clear();
        probes.clear();
        for row in first..last {
            let start = encoded.len();
            for encoder in &encoders {
                encoder.encode(row, &mut encoded)?;
            }
            if let (Some(window), Some(ts)) = (keys.window, keys.timestamps) {
                // The one-thread path reports a null or unrepresentable window.
                if ts.is_null(row) {
                    return Err(OpError::new("null event timestamp"));
                }
                let t = ts.value(row);
                let start_ms = t
                    .div_euclid(window.size_ms)
                    .checked_mul(window.size_ms)
                    .ok_or_else(|| OpError::new("window out of range"))?;
                let end_ms = start_ms
                    .checked_add(window.size_ms)
                    .ok_or_else(|| OpError::new("window out of range"))?;
                if end_ms < keys.cutoff {
                    encoded.truncate(start);
                    ends.push(None);
                    continue;
                }
                for v in [start_ms, end_ms] {
                    encoded.push(b'i');
                    encoded.extend_from_slice(&v.to_be_bytes());
                }
            }
            ends.push(Some(encoded.len()));
        }
        // Hashed in a pass of their own, as the one-thread path does.
        let mut start = 0;
        for end in ends.iter().flatten() {
            probes.push(index.probe(&encoded[start..*end]));
            start = *end;
        }
        start = 0;
        let mut p = 0;
        for end in &ends {
            let Some(end) = end else {
                ids.push(LATE);
                continue;
            };
            if p + AHEAD < probes.len() {
                index.prefetch(&probes[p + AHEAD]);
            }
            ids.push(
                index
                    .find(&probes[p], &encoded[start..*end])
                    .unwrap_or(MISS),
            );
            start = *end;
            p += 1;
        }
    }
    Ok(ids)
}

/// The missed rows as a batch of their own for the one-thread assignment: the
/// key columns (and `__timestamp` for a window) taken at `rows`, in order.
fn missed_rows(keys: &Keys<'_>, rows: &[u32]) -> Option<(RecordBatch, Vec<ArrayRef>)> {
    let indices = UInt32Array::from(rows.to_vec());
    let taken: Vec<ArrayRef> = keys
        .columns
        .iter()
        .map(|c| arrow::compute::take(c.as_ref(), &indices, None))
        .collect::<Result<_, _>>()
        .ok()?;
    let mut fields: Vec<Field> = taken
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("key{i}"), c.data_type().clone(), true))
        .collect();
    let mut columns = taken.clone();
    if let Some(ts) = keys.timestamps {
        fields.push(Field::new(TIMESTAMP_COLUMN, DataType::Int64, true));
        columns.push(arrow::compute::take(ts, &indices, None).ok()?);
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).ok()?;
    Some((batch, taken))
}

#[cfg(test)]
mod tests;
