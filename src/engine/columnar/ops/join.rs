//! The event-time inner equi-join (semantics §6). Keys match when their tagged
//! encodings are equal; null keys and null timestamps never match. Each side's
//! batches are kept until the stream time passes their newest row by more than
//! the window. Every batch's keys are encoded and hashed once on arrival, and
//! each side keeps one key table (`table.rs`) over all its stored rows, so a
//! new batch probes once per row; matches still come out per pair of batches,
//! left-row-major, as in Go. The snapshot is
//! the join layout of formats §8.6 with one Arrow IPC stream per stored batch.

mod key_index;
mod parallel;
mod side;
mod table;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, RecordBatch, UInt32Array};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};

use super::OpError;
use crate::engine::columnar::ipc;
use crate::engine::columnar::metadata::{
    RESERVED_COLUMNS, TIMESTAMP_COLUMN, is_reserved, reserved_fields, restore_payload_field,
};
use crate::engine::columnar::snapshot::groupby::NO_STREAM_TIME;
use crate::engine::columnar::snapshot::join::{JoinState, TimedBatch};
use key_index::KeyIndex;
use parallel::Gather;
use side::{Limits, Side, Stored};

/// Join configuration; prefixes default to `left_` / `right_`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinSpec {
    pub left_key: String,
    pub right_key: String,
    pub window_ms: i64,
    pub left_prefix: String,
    pub right_prefix: String,
}

impl JoinSpec {
    /// Window ≥ 0 and in whole milliseconds (`window_nanos` is the configured duration).
    pub fn new(
        left_key: impl Into<String>,
        right_key: impl Into<String>,
        window_nanos: i128,
        left_prefix: Option<String>,
        right_prefix: Option<String>,
    ) -> Result<JoinSpec, OpError> {
        if window_nanos < 0 {
            return Err(OpError::new("window must not be negative"));
        }
        if window_nanos != 0 && window_nanos < 1_000_000 {
            return Err(OpError::new("window must use millisecond precision"));
        }
        let window_ms = i64::try_from(window_nanos / 1_000_000)
            .map_err(|_| OpError::new("window is too long"))?;
        Ok(JoinSpec {
            left_key: left_key.into(),
            right_key: right_key.into(),
            window_ms,
            left_prefix: left_prefix
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "left_".into()),
            right_prefix: right_prefix
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "right_".into()),
        })
    }

    /// The joined schema for the two input schemas.
    pub fn output_schema(&self, left: &Schema, right: &Schema) -> Result<SchemaRef, OpError> {
        for (schema, key) in [(left, &self.left_key), (right, &self.right_key)] {
            if schema.index_of(key).is_err() {
                return Err(OpError::new(format!(
                    "join key column does not exist: {key}"
                )));
            }
            match schema.field_with_name(TIMESTAMP_COLUMN) {
                Ok(f) if f.data_type() == &DataType::Int64 => {}
                _ => return Err(OpError::new(format!("join requires {TIMESTAMP_COLUMN}"))),
            }
        }
        joined_schema(left, right, &self.left_prefix, &self.right_prefix)
    }

    pub fn instantiate(&self) -> JoinProcessor {
        JoinProcessor {
            spec: self.clone(),
            left: Side::default(),
            right: Side::default(),
            stream_time: NO_STREAM_TIME,
            limits: Limits::default(),
            threads: 1,
        }
    }
}

fn prefixed(field: &FieldRef, prefix: &str) -> FieldRef {
    let restored = restore_payload_field(field);
    let name = format!("{prefix}{}", restored.name());
    Arc::new(restored.with_name(name))
}

fn joined_schema(left: &Schema, right: &Schema, lp: &str, rp: &str) -> Result<SchemaRef, OpError> {
    let mut fields: Vec<FieldRef> = Vec::new();
    for f in left.fields().iter().filter(|f| !is_reserved(f.name())) {
        fields.push(prefixed(f, lp));
    }
    for f in right.fields().iter().filter(|f| !is_reserved(f.name())) {
        fields.push(prefixed(f, rp));
    }
    fields.extend(reserved_fields());
    let mut seen = std::collections::HashSet::new();
    for f in &fields {
        if !seen.insert(f.name().clone()) {
            return Err(OpError::new(format!(
                "joined Arrow column name collides: {}",
                f.name()
            )));
        }
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// One join instance (one per logical partition).
#[derive(Debug, Clone)]
pub struct JoinProcessor {
    spec: JoinSpec,
    left: Side,
    right: Side,
    stream_time: i64,
    limits: Limits,
    /// Threads a probe and a joined batch may use (`run --threads`).
    threads: usize,
}

fn timestamps(batch: &RecordBatch) -> Result<&Int64Array, OpError> {
    batch
        .column_by_name(TIMESTAMP_COLUMN)
        .filter(|c| c.data_type() == &DataType::Int64)
        .map(|c| c.as_primitive::<Int64Type>())
        .ok_or_else(|| OpError::new(format!("join requires {TIMESTAMP_COLUMN}")))
}

/// A batch ready to store: its keys on `key` encoded and hashed.
fn stored(batch: &RecordBatch, key: &str, max_timestamp: Option<i64>) -> Result<Stored, OpError> {
    let keys = batch
        .column_by_name(key)
        .ok_or_else(|| OpError::new(format!("join key column does not exist: {key}")))?;
    let ts = timestamps(batch)?;
    let max_timestamp =
        max_timestamp.unwrap_or_else(|| arrow::compute::max(ts).unwrap_or(i64::MIN));
    Ok(Stored::new(
        batch.clone(),
        Arc::new(KeyIndex::new(keys.as_ref(), ts)?),
        ts.clone(),
        max_timestamp,
    ))
}

/// The state of a join at a point in time, to roll back to: the stored
/// batches (shared, not copied) and the stream time; the hash tables are
/// rebuilt only if a rollback happens.
#[derive(Debug, Clone)]
pub struct JoinCheckpoint {
    left: Vec<Stored>,
    right: Vec<Stored>,
    stream_time: i64,
}

impl JoinProcessor {
    /// One run: advance stream time over the new batches, prune, join new
    /// left × (stored right, new right), new right × stored left, then store.
    /// Output batches come per pair of batches in that order, each
    /// left-row-major with right rows ascending (as Go's per-pair hash join).
    pub fn process_sides(
        &mut self,
        new_left: &[RecordBatch],
        new_right: &[RecordBatch],
    ) -> Result<Vec<RecordBatch>, OpError> {
        for batch in new_left.iter().chain(new_right) {
            if let Some(max) = arrow::compute::max(timestamps(batch)?) {
                self.stream_time = self.stream_time.max(max);
            }
        }
        let cutoff = self.stream_time.saturating_sub(self.spec.window_ms);
        self.left.prune(cutoff);
        self.right.prune(cutoff);
        let new_left = new_left
            .iter()
            .map(|b| stored(b, &self.spec.left_key, None))
            .collect::<Result<Vec<_>, _>>()?;
        let first_new_right = self.right.batches().len();
        for batch in new_right {
            self.right
                .push(stored(batch, &self.spec.right_key, None)?)?;
        }
        let window = self.spec.window_ms;
        let within = |l: i64, r: i64| {
            l.checked_sub(r)
                .and_then(i64::checked_abs)
                .is_some_and(|d| d <= window)
        };
        let mut out = Vec::new();
        for left in &new_left {
            let lt = left.timestamps.values();
            let pairs = parallel::probe_pairs(&self.right, &left.keys, self.threads, |l, rt| {
                within(lt[l as usize], rt)
            });
            for (right, matched) in self.right.batches().iter().zip(pairs) {
                let (li, ri) = matched.into_iter().unzip();
                self.emit(&left.batch, &right.batch, li, ri, &mut out)?;
            }
        }
        for right in &self.right.batches()[first_new_right..] {
            let rt = right.timestamps.values();
            let pairs = parallel::probe_pairs(&self.left, &right.keys, self.threads, |r, lt| {
                within(lt, rt[r as usize])
            });
            for (left, matched) in self.left.batches().iter().zip(pairs) {
                // Probed from the right: back into left-row-major order.
                let mut matched: Vec<(u32, u32)> =
                    matched.into_iter().map(|(r, l)| (l, r)).collect();
                matched.sort_unstable();
                let (li, ri) = matched.into_iter().unzip();
                self.emit(&left.batch, &right.batch, li, ri, &mut out)?;
            }
        }
        for left in new_left {
            self.left.push(left)?;
        }
        Ok(out)
    }

    /// Lets a probe and a joined batch use up to `threads` threads; the
    /// output is the same at every count.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The same join with smaller index limits, to reach them in tests.
    #[cfg(test)]
    fn with_limits(mut self, limits: Limits) -> JoinProcessor {
        self.limits = limits;
        self.left = Side::with_limits(limits);
        self.right = Side::with_limits(limits);
        self
    }

    /// A cheap checkpoint (no serialisation) for [`JoinProcessor::rollback`].
    pub fn checkpoint(&self) -> JoinCheckpoint {
        JoinCheckpoint {
            left: self.left.batches().to_vec(),
            right: self.right.batches().to_vec(),
            stream_time: self.stream_time,
        }
    }

    /// Puts the state of `checkpoint` back.
    pub fn rollback(&mut self, checkpoint: JoinCheckpoint) -> Result<(), OpError> {
        let limits = self.limits;
        let side = |batches: Vec<Stored>| {
            let mut side = Side::with_limits(limits);
            for stored in batches {
                side.push(stored)?;
            }
            Ok::<_, OpError>(side)
        };
        self.left = side(checkpoint.left)?;
        self.right = side(checkpoint.right)?;
        self.stream_time = checkpoint.stream_time;
        Ok(())
    }

    /// The joined rows `(li[i], ri[i])` of one pair of batches, if any.
    fn emit(
        &self,
        left: &RecordBatch,
        right: &RecordBatch,
        li: Vec<u32>,
        ri: Vec<u32>,
        out: &mut Vec<RecordBatch>,
    ) -> Result<(), OpError> {
        if li.is_empty() {
            return Ok(());
        }
        let schema = joined_schema(
            &left.schema(),
            &right.schema(),
            &self.spec.left_prefix,
            &self.spec.right_prefix,
        )?;
        let (li, ri) = (UInt32Array::from(li), UInt32Array::from(ri));
        let mut columns: Vec<Gather<'_>> = Vec::with_capacity(schema.fields().len());
        for (batch, indices) in [(left, &li), (right, &ri)] {
            for (i, f) in batch.schema().fields().iter().enumerate() {
                if !is_reserved(f.name()) {
                    columns.push(Gather::Take(batch.column(i), indices));
                }
            }
        }
        let reserved = reserved_fields();
        for (name, field) in RESERVED_COLUMNS.iter().zip(&reserved) {
            columns.push(match left.column_by_name(name) {
                Some(c) => Gather::Take(c, &li),
                None => Gather::Nulls(field.data_type(), li.len()),
            });
        }
        let columns = parallel::gather(&columns, li.len(), self.threads)?;
        out.push(RecordBatch::try_new(schema, columns)?);
        Ok(())
    }

    pub fn snapshot(&self) -> Result<Vec<u8>, OpError> {
        let side = |side: &Side| {
            side.batches()
                .iter()
                .map(|s| {
                    Ok(TimedBatch {
                        max_timestamp: s.max_timestamp,
                        ipc: ipc_stream(&s.batch)?,
                    })
                })
                .collect::<Result<Vec<_>, OpError>>()
        };
        Ok(JoinState {
            stream_time: self.stream_time,
            left: side(&self.left)?,
            right: side(&self.right)?,
        }
        .encode())
    }

    pub fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError> {
        let state = JoinState::decode(snapshot).map_err(|e| OpError::new(e.to_string()))?;
        let limits = self.limits;
        let side = |batches: Vec<TimedBatch>, key: &str| {
            let mut side = Side::with_limits(limits);
            for t in batches {
                let (_, mut decoded) = ipc::read_batches(&t.ipc)
                    .map_err(|e| OpError::new(format!("cannot restore join state: {e}")))?;
                if decoded.len() != 1 {
                    return Err(OpError::new(
                        "cannot restore join state: a stored batch must hold one Arrow batch",
                    ));
                }
                side.push(stored(&decoded.remove(0), key, Some(t.max_timestamp))?)?;
            }
            Ok(side)
        };
        self.left = side(state.left, &self.spec.left_key)?;
        self.right = side(state.right, &self.spec.right_key)?;
        self.stream_time = state.stream_time;
        Ok(())
    }
}

/// One batch as an Arrow IPC stream (schema, the batch, end marker), uncompressed.
pub fn ipc_stream(batch: &RecordBatch) -> Result<Vec<u8>, OpError> {
    let mut out = Vec::new();
    {
        let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema())?;
        writer.write(batch)?;
        writer.finish()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
