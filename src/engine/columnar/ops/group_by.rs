//! `group_by` and tumbling `windowed_group_by` (semantics §4): cumulative
//! aggregation per group in first-appearance order, keyed by the Go tagged
//! encoding of the key cells (so int32 5 and int64 5 are one group). Each batch
//! assigns a group id to every row by hashing its encoded key, then folds every
//! aggregate column over (row, group id) in one pass; integer sums are exact
//! `i128`, range-checked when written back. The snapshot is Go's GroupBy
//! payload (formats §8.5).

use std::cell::RefCell;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, Int64Array, PrimitiveArray, RecordBatch,
};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};

use super::values::{self, KeyColumn, build_array, cell, compare, rational_parts};
use super::{ColumnSet, OpError, Operator, Processor};
use crate::engine::columnar::expr::types::type_name;
use crate::engine::columnar::metadata::{TIMESTAMP_COLUMN, WINDOW_END_COLUMN, WINDOW_START_COLUMN};
use crate::engine::columnar::snapshot::groupby::{GroupByState, NO_STREAM_TIME, encode_group};
use crate::engine::columnar::snapshot::tagged::TaggedValue;

mod accumulators;
mod encoded;
pub(crate) mod index;
mod parallel;

use accumulators::Accumulators;
use encoded::{Encoded, Groups};
use index::{GroupIndex, Probe};

/// An aggregate function (numbered as in Go: Count 0, Sum 1, Min 2, Max 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
        }
    }
}

/// {input column, output column, function, optional output type}.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregation {
    pub input: String,
    pub output: String,
    pub func: AggFunc,
    pub output_type: Option<DataType>,
}

/// Tumbling windows over `__timestamp`, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub size_ms: i64,
    pub retention_ms: i64,
}

impl Window {
    /// Size ≥ 1 ms; retention ≥ size (default = size).
    pub fn new(size_ms: i64, retention_ms: Option<i64>) -> Result<Window, OpError> {
        if size_ms < 1 {
            return Err(OpError::new("windowSize must be at least one millisecond"));
        }
        let retention_ms = retention_ms.unwrap_or(size_ms);
        if retention_ms < size_ms {
            return Err(OpError::new(
                "retention must not be shorter than windowSize",
            ));
        }
        Ok(Window {
            size_ms,
            retention_ms,
        })
    }
}

/// A configured (windowed) group-by.
#[derive(Debug, Clone)]
pub struct GroupBy {
    keys: Vec<String>,
    aggregations: Vec<Aggregation>,
    window: Option<Window>,
}

impl GroupBy {
    pub fn new(keys: Vec<String>, aggregations: Vec<Aggregation>, window: Option<Window>) -> Self {
        GroupBy {
            keys,
            aggregations,
            window,
        }
    }

    fn output_fields(&self, input: &Schema) -> Result<Vec<FieldRef>, OpError> {
        if self.keys.is_empty() {
            return Err(OpError::new("groupBy requires at least one key column"));
        }
        let mut fields = Vec::new();
        for key in &self.keys {
            let field = input
                .field_with_name(key)
                .map_err(|_| OpError::new(format!("Arrow column does not exist: {key}")))?;
            if !values::supported(field.data_type()) {
                return Err(OpError::new(format!(
                    "cannot group by `{key}` of type {}",
                    type_name(field.data_type())
                )));
            }
            fields.push(Arc::new(field.clone()));
        }
        if self.window.is_some() {
            fields.push(Arc::new(Field::new(
                WINDOW_START_COLUMN,
                DataType::Int64,
                false,
            )));
            fields.push(Arc::new(Field::new(
                WINDOW_END_COLUMN,
                DataType::Int64,
                false,
            )));
        }
        for agg in &self.aggregations {
            let input_type = input
                .field_with_name(&agg.input)
                .map_err(|_| OpError::new(format!("Arrow column does not exist: {}", agg.input)))?
                .data_type();
            fields.push(Arc::new(aggregate_field(agg, input_type)));
        }
        Ok(fields)
    }
}

fn aggregate_field(agg: &Aggregation, input_type: &DataType) -> Field {
    let ty = match (&agg.output_type, agg.func) {
        (Some(ty), _) => ty.clone(),
        (None, AggFunc::Count) => DataType::Int64,
        (None, _) => input_type.clone(),
    };
    Field::new(&agg.output, ty, true)
}

impl Operator for GroupBy {
    fn instantiate(&self) -> Box<dyn Processor> {
        Box::new(GroupByProcessor {
            op: self.clone(),
            index: GroupIndex::default(),
            parts: Vec::new(),
            accs: self
                .aggregations
                .iter()
                .map(|a| Accumulators::new(a.func))
                .collect(),
            stream_time: NO_STREAM_TIME,
            key_arrays: KeyArrays::default(),
            threads: 1,
            encoded: RefCell::new(Encoded::new()),
        })
    }

    fn output_schema(&self, input: &Schema) -> Result<SchemaRef, OpError> {
        if self.window.is_some() {
            check_window_input(input)?;
        }
        Ok(Arc::new(Schema::new(self.output_fields(input)?)))
    }

    fn input_columns(&self, _output: Option<&ColumnSet>) -> Option<ColumnSet> {
        let mut needed: ColumnSet = self.keys.iter().cloned().collect();
        needed.extend(self.aggregations.iter().map(|a| a.input.clone()));
        if self.window.is_some() {
            needed.insert(TIMESTAMP_COLUMN.to_owned());
        }
        Some(needed)
    }

    fn describe(&self) -> String {
        let aggs: Vec<String> = self
            .aggregations
            .iter()
            .map(|a| match a.func {
                AggFunc::Count => format!("count(*) AS {}", a.output),
                f => format!("{}({}) AS {}", f.name(), a.input, a.output),
            })
            .collect();
        match self.window {
            None => format!("group_by [{}] {}", self.keys.join(", "), aggs.join(", ")),
            Some(w) => format!(
                "windowed_group_by [{}] window {} ms, retention {} ms: {}",
                self.keys.join(", "),
                w.size_ms,
                w.retention_ms,
                aggs.join(", ")
            ),
        }
    }
}

fn check_window_input(input: &Schema) -> Result<(), OpError> {
    match input.field_with_name(TIMESTAMP_COLUMN) {
        Ok(f) if f.data_type() == &DataType::Int64 => {}
        _ => {
            return Err(OpError::new(format!(
                "Arrow column does not exist: {TIMESTAMP_COLUMN}"
            )));
        }
    }
    if input.index_of(WINDOW_START_COLUMN).is_ok() || input.index_of(WINDOW_END_COLUMN).is_ok() {
        return Err(OpError::new("window output column already exists"));
    }
    Ok(())
}

/// One aggregate accumulator of one group.
#[derive(Debug, Clone, PartialEq)]
enum Slot {
    Empty,
    Count(i64),
    Int(i128),
    Float(f64),
    Rational(i128, i128),
    Value(TaggedValue),
}

impl Slot {
    fn to_value(&self) -> TaggedValue {
        match self {
            Slot::Empty => TaggedValue::Null,
            Slot::Count(n) => TaggedValue::Int(*n),
            Slot::Int(n) => TaggedValue::BigInt(n.to_string()),
            Slot::Float(f) => TaggedValue::Float64(*f),
            Slot::Rational(n, d) => TaggedValue::rational(*n, *d).expect("non-zero denominator"),
            Slot::Value(v) => v.clone(),
        }
    }

    fn from_value(func: AggFunc, value: TaggedValue) -> Result<Slot, OpError> {
        let bad = || {
            OpError::new(format!(
                "cannot restore groupBy state: unexpected {} aggregate {value}",
                func.name()
            ))
        };
        Ok(match (func, &value) {
            (_, TaggedValue::Null) => Slot::Empty,
            (AggFunc::Count, TaggedValue::Int(n)) => Slot::Count(*n),
            (AggFunc::Sum, TaggedValue::BigInt(t)) => Slot::Int(t.parse().map_err(|_| {
                OpError::new("cannot restore groupBy state: a sum exceeds 128 bits")
            })?),
            (AggFunc::Sum, TaggedValue::Int(n)) => Slot::Int((*n).into()),
            (AggFunc::Sum, TaggedValue::Float64(f)) => Slot::Float(*f),
            (AggFunc::Sum, TaggedValue::Rational { .. }) => {
                let (n, d) = rational_parts(&value).ok_or_else(bad)?;
                Slot::Rational(n, d)
            }
            (AggFunc::Min | AggFunc::Max, _) => Slot::Value(value),
            _ => return Err(bad()),
        })
    }
}

const LATE: u32 = u32::MAX;

struct GroupByProcessor {
    op: GroupBy,
    /// Encoded key of each group, in first-appearance order, and the lookup by key.
    index: GroupIndex,
    /// Decoded key parts of each group (user keys, then window start and end).
    parts: Vec<Vec<TaggedValue>>,
    /// Per aggregate, every group's accumulator.
    accs: Vec<Accumulators>,
    stream_time: i64,
    key_arrays: KeyArrays,
    /// Threads a batch is folded on (`parallel`); 1 is the one-thread path.
    threads: usize,
    /// The last snapshot's bytes, reused for the groups not touched since
    /// (a cell: [`Processor::snapshot`] reads the state, and refreshes these).
    encoded: RefCell<Encoded>,
}

/// The key columns of the last output, for the groups `0..groups`: groups only
/// append between prunes, so the next output extends them instead of rebuilding
/// every group's key cells each batch.
#[derive(Default)]
struct KeyArrays {
    groups: usize,
    columns: Vec<ArrayRef>,
}

impl GroupByProcessor {
    /// Drops groups whose window ended before the cutoff; returns the cutoff.
    fn prune(&mut self) -> i64 {
        let Some(window) = self.op.window else {
            return i64::MIN;
        };
        if self.stream_time == i64::MIN {
            return i64::MIN;
        }
        let cutoff = self.stream_time.saturating_sub(window.retention_ms);
        let end_at = self.op.keys.len() + 1;
        let keep: Vec<bool> = self
            .parts
            .iter()
            .map(|p| !matches!(p.get(end_at), Some(TaggedValue::Int(end)) if *end < cutoff))
            .collect();
        if keep.iter().all(|k| *k) {
            return cutoff;
        }
        self.encoded.get_mut().invalidate();
        self.index.retain(&keep);
        let mut flags = keep.iter();
        self.parts.retain(|_| *flags.next().expect("flag"));
        for accs in &mut self.accs {
            accs.retain(&keep);
        }
        self.key_arrays = KeyArrays::default();
        cutoff
    }

    /// Every row's group id (`LATE` for a row of a window already dropped),
    /// creating groups for new keys. Rows go in chunks: encode and hash the
    /// chunk's keys, then look them up with the table slots prefetched
    /// `AHEAD` rows in advance, so the cache misses of several rows overlap.
    /// Long because it is one hot loop whose stages share the chunk's buffers; split, every
    /// stage would take all of them.
    fn assign_groups(
        &mut self,
        batch: &RecordBatch,
        key_columns: &[ArrayRef],
        cutoff: i64,
    ) -> Result<Vec<u32>, OpError> {
        if let Some(ids) = self.assign_string_groups(key_columns, None)? {
            return Ok(ids);
        }
        const CHUNK: usize = 256;
        const AHEAD: usize = 8;
        let timestamps = self.op.window.map(|_| {
            batch
                .column_by_name(TIMESTAMP_COLUMN)
                .expect("checked")
                .as_primitive::<Int64Type>()
                .clone()
        });
        let rows = batch.num_rows();
        let mut ids = Vec::with_capacity(rows);
        let encoders: Vec<KeyColumn<'_>> = key_columns
            .iter()
            .map(|c| KeyColumn::new(c.as_ref()))
            .collect();
        let mut keys: Vec<u8> = Vec::with_capacity(CHUNK * 32);
        // Per chunk row: where its key ends in `keys`, its probe, and its window
        // (`None` for a late row).
        let mut ends: Vec<usize> = Vec::with_capacity(CHUNK);
        let mut probes: Vec<Probe> = Vec::with_capacity(CHUNK);
        let mut windows: Vec<Option<(i64, i64)>> = Vec::with_capacity(CHUNK);
        for first in (0..rows).step_by(CHUNK) {
            let last = (first + CHUNK).min(rows);
            keys.clear();
            ends.clear();
            probes.clear();
            windows.clear();
            for row in first..last {
                for encoder in &encoders {
                    encoder.encode(row, &mut keys)?;
                }
                let mut window_parts = Some((0, 0));
                if let (Some(window), Some(ts)) = (self.op.window, &timestamps) {
                    if ts.is_null(row) {
                        return Err(OpError::new(format!(
                            "event timestamp is null at row {row}"
                        )));
                    }
                    // Checked: a window that starts before i64::MIN or ends after
                    // i64::MAX has no representable bounds; it is an error, never
                    // a window whose end is before its start (semantics §4).
                    let t = ts.value(row);
                    let bounds = t
                        .div_euclid(window.size_ms)
                        .checked_mul(window.size_ms)
                        .and_then(|start| Some((start, start.checked_add(window.size_ms)?)));
                    let Some((start, end)) = bounds else {
                        return Err(OpError::new(format!(
                            "__timestamp {t} at row {row}: its {} ms window does not fit the 64-bit millisecond range",
                            window.size_ms
                        )));
                    };
                    if end < cutoff {
                        window_parts = None;
                    } else {
                        for v in [start, end] {
                            keys.push(b'i');
                            keys.extend_from_slice(&v.to_be_bytes());
                        }
                        window_parts = Some((start, end));
                    }
                }
                ends.push(keys.len());
                windows.push(window_parts);
            }
            // Hashed in a pass of their own: reading a key right after writing
            // it byte-wise stalls on store forwarding.
            let n = last - first;
            for i in 0..n {
                let start = if i == 0 { 0 } else { ends[i - 1] };
                probes.push(self.index.probe(&keys[start..ends[i]]));
            }
            for i in 0..n {
                if i + AHEAD < n {
                    self.index.prefetch(&probes[i + AHEAD]);
                }
                if i + AHEAD / 2 < n {
                    self.index.prefetch_entry(&probes[i + AHEAD / 2]);
                }
                let Some(window_parts) = windows[i] else {
                    ids.push(LATE);
                    continue;
                };
                let key = &keys[if i == 0 { 0 } else { ends[i - 1] }..ends[i]];
                let id = match self.index.find(&probes[i], key) {
                    Some(id) => id,
                    None => {
                        let row = first + i;
                        let mut parts = key_columns
                            .iter()
                            .map(|c| cell(c.as_ref(), row))
                            .collect::<Result<Vec<_>, _>>()?;
                        if self.op.window.is_some() {
                            parts.push(TaggedValue::Int(window_parts.0));
                            parts.push(TaggedValue::Int(window_parts.1));
                        }
                        let id = self
                            .index
                            .push_probed(&probes[i], key)
                            .ok_or_else(|| OpError::new("too many groups"))?;
                        self.parts.push(parts);
                        for accs in &mut self.accs {
                            accs.push_empty();
                        }
                        id
                    }
                };
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// [`GroupByProcessor::assign_groups`] for the common key, one string
    /// column without nulls and no window: each row is looked up by its bytes
    /// in the column (no key is encoded but a new group's); `None` for any
    /// other key. Rows `selected` leaves out get `LATE`, so no aggregate reads them.
    fn assign_string_groups(
        &mut self,
        key_columns: &[ArrayRef],
        selected: Option<&BooleanBuffer>,
    ) -> Result<Option<Vec<u32>>, OpError> {
        const CHUNK: usize = 256;
        // Farther ahead than the general path: with no key to encode, a row's
        // lookup is a few instructions, so its slot and entry must be asked for
        // earlier to arrive in time (the entry load was a quarter of the samples at 8 / 4).
        const AHEAD: usize = 16;
        let ([column], None) = (key_columns, self.op.window) else {
            return Ok(None);
        };
        let Some(strings) = column.as_string_opt::<i32>() else {
            return Ok(None);
        };
        if strings.null_count() > 0 {
            return Ok(None);
        }
        let offsets = strings.value_offsets();
        let bytes = strings.values().as_slice();
        let value = |row: usize| &bytes[offsets[row] as usize..offsets[row + 1] as usize];
        let rows = strings.len();
        if selected.is_some_and(|s| s.len() != rows) {
            return Err(OpError::new("the selection and the batch differ in length"));
        }
        let mut ids = vec![LATE; rows];
        // Per chunk: the rows to look up and their probes.
        let mut chunk_rows: Vec<usize> = Vec::with_capacity(CHUNK);
        let mut probes: Vec<Probe> = Vec::with_capacity(CHUNK);
        let mut key = Vec::new();
        for first in (0..rows).step_by(CHUNK) {
            let last = (first + CHUNK).min(rows);
            chunk_rows.clear();
            match selected {
                Some(selected) => {
                    chunk_rows.extend((first..last).filter(|row| selected.value(*row)))
                }
                None => chunk_rows.extend(first..last),
            }
            probes.clear();
            probes.extend(
                chunk_rows
                    .iter()
                    .map(|row| self.index.probe_str(value(*row))),
            );
            let n = chunk_rows.len();
            for i in 0..n {
                if i + AHEAD < n {
                    self.index.prefetch(&probes[i + AHEAD]);
                }
                if i + AHEAD / 2 < n {
                    self.index.prefetch_entry(&probes[i + AHEAD / 2]);
                }
                let row = chunk_rows[i];
                let v = value(row);
                ids[row] = match self.index.find_str(&probes[i], v) {
                    Some(id) => id,
                    None => {
                        key.clear();
                        KeyColumn::Utf8(strings).encode(row, &mut key)?;
                        let id = self
                            .index
                            .push_probed(&probes[i], &key)
                            .ok_or_else(|| OpError::new("too many groups"))?;
                        self.parts
                            .push(vec![TaggedValue::String(strings.value(row).to_owned())]);
                        for accs in &mut self.accs {
                            accs.push_empty();
                        }
                        id
                    }
                };
            }
        }
        Ok(Some(ids))
    }

    /// The key part columns (user keys, then window start and end) of every group.
    fn key_columns(&mut self, fields: &[FieldRef]) -> Result<Vec<ArrayRef>, OpError> {
        let user_keys = self.op.keys.len();
        let parts = self.parts.len();
        // A later batch may type a key column differently (int32 vs int64 keys are one group).
        if !self
            .key_arrays
            .columns
            .iter()
            .zip(fields)
            .all(|(c, f)| c.data_type() == f.data_type())
        {
            self.key_arrays = KeyArrays::default();
        }
        let cached = &self.key_arrays;
        if cached.groups == parts && !cached.columns.is_empty() {
            return Ok(cached.columns.clone());
        }
        let new = &self.parts[cached.groups..];
        let mut fresh: Vec<ArrayRef> = Vec::with_capacity(fields.len());
        for (k, field) in fields.iter().take(user_keys).enumerate() {
            fresh.push(build_array(field.data_type(), new.iter().map(|p| &p[k]))?);
        }
        if self.op.window.is_some() {
            for k in [user_keys, user_keys + 1] {
                let values: Vec<i64> = new
                    .iter()
                    .map(|p| match p[k] {
                        TaggedValue::Int(v) => v,
                        _ => 0,
                    })
                    .collect();
                fresh.push(Arc::new(Int64Array::from(values)));
            }
        }
        let columns = if cached.columns.is_empty() {
            fresh
        } else {
            cached
                .columns
                .iter()
                .zip(&fresh)
                .map(|(old, new)| arrow::compute::concat(&[old.as_ref(), new.as_ref()]))
                .collect::<Result<Vec<_>, _>>()?
        };
        self.key_arrays = KeyArrays {
            groups: parts,
            columns: columns.clone(),
        };
        Ok(columns)
    }

    /// Whether [`Processor::process_selected`] can read `batch`'s selected rows in
    /// place: the one-string-key path without a window (a window's stream
    /// time and late rows are the filtered rows').
    fn takes_selection(&self, batch: &RecordBatch) -> bool {
        let [key] = self.op.keys.as_slice() else {
            return false;
        };
        self.op.window.is_none()
            && batch
                .column_by_name(key)
                .is_some_and(|c| c.data_type() == &DataType::Utf8 && c.null_count() == 0)
    }

    /// One batch, or the rows of it `selected` marks (see [`Self::takes_selection`]).
    fn process_rows(
        &mut self,
        batch: &RecordBatch,
        selected: Option<&BooleanBuffer>,
    ) -> Result<Vec<RecordBatch>, OpError> {
        if self.op.keys.is_empty() {
            return Err(OpError::new("groupBy requires at least one key column"));
        }
        if self.op.window.is_some() {
            let ts = batch
                .column_by_name(TIMESTAMP_COLUMN)
                .filter(|c| c.data_type() == &DataType::Int64)
                .ok_or_else(|| {
                    OpError::new(format!("Arrow column does not exist: {TIMESTAMP_COLUMN}"))
                })?;
            if let Some(max) = arrow::compute::max(ts.as_primitive::<Int64Type>()) {
                self.stream_time = self.stream_time.max(max);
            }
            check_window_input(&batch.schema())?;
        }
        let cutoff = self.prune();
        let key_columns = self
            .op
            .keys
            .iter()
            .map(|k| {
                batch
                    .column_by_name(k)
                    .cloned()
                    .ok_or_else(|| OpError::new(format!("Arrow column does not exist: {k}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inputs = self
            .op
            .aggregations
            .iter()
            .map(|a| {
                batch.column_by_name(&a.input).cloned().ok_or_else(|| {
                    OpError::new(format!("Arrow column does not exist: {}", a.input))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let fields = self.op.output_fields(&batch.schema())?;
        if self.threads > 1 && self.fold_parallel(batch, &key_columns, &inputs, selected, cutoff)? {
            return Ok(vec![self.output(fields)?]);
        }
        let ids = match selected {
            Some(selected) => self
                .assign_string_groups(&key_columns, Some(selected))?
                .ok_or_else(|| OpError::new("a selection needs one string key without nulls"))?,
            None => self.assign_groups(batch, &key_columns, cutoff)?,
        };
        // Before the update: a failure part-way leaves touched groups behind.
        self.encoded.get_mut().touch(&ids);
        for (a, agg) in self.op.aggregations.iter().enumerate() {
            self.accs[a].update(agg.func, &ids, &inputs[a])?;
        }
        Ok(vec![self.output(fields)?])
    }

    fn output(&mut self, fields: Vec<FieldRef>) -> Result<RecordBatch, OpError> {
        let mut columns = self.key_columns(&fields)?;
        let first_agg = columns.len();
        for (a, accs) in self.accs.iter().enumerate() {
            let ty = fields[first_agg + a].data_type();
            columns.push(accs.write(ty)?);
        }
        Ok(RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns,
        )?)
    }
}

/// Aggregates into a column; the common Int64 case skips the generic path.
fn write_slots(slots: &[Slot], ty: &DataType) -> Result<ArrayRef, OpError> {
    if ty == &DataType::Int64 {
        let mut out = Vec::with_capacity(slots.len());
        let mut fast = true;
        for slot in slots {
            out.push(match slot {
                Slot::Empty => None,
                Slot::Count(n) => Some(*n),
                Slot::Int(n) => Some(
                    i64::try_from(*n)
                        .map_err(|_| OpError::new(format!("integer overflow: {n}")))?,
                ),
                _ => {
                    fast = false;
                    break;
                }
            });
        }
        if fast {
            return Ok(Arc::new(Int64Array::from(out)));
        }
    }
    let values: Vec<TaggedValue> = slots.iter().map(Slot::to_value).collect();
    build_array(ty, values.iter())
}

fn sum_primitive<T>(
    slots: &mut [Slot],
    ids: &[u32],
    values: &PrimitiveArray<T>,
) -> Result<(), OpError>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i128>,
{
    let raw = values.values();
    let nulls = values.nulls();
    for (row, &id) in ids.iter().enumerate() {
        if id == LATE || nulls.is_some_and(|n| n.is_null(row)) {
            continue;
        }
        let v: i128 = raw[row].into();
        let slot = &mut slots[id as usize];
        *slot = match slot {
            Slot::Empty => Slot::Int(v),
            Slot::Int(s) => Slot::Int(
                s.checked_add(v)
                    .ok_or_else(|| OpError::new("integer overflow: sum exceeds 128 bits"))?,
            ),
            other => {
                return Err(OpError::new(format!(
                    "cannot add an integer to {}",
                    other.to_value()
                )));
            }
        };
    }
    Ok(())
}

fn sum_float<T>(slots: &mut [Slot], ids: &[u32], values: &PrimitiveArray<T>) -> Result<(), OpError>
where
    T: ArrowPrimitiveType,
    T::Native: Into<f64>,
{
    for (row, &id) in ids.iter().enumerate() {
        if id == LATE || values.is_null(row) {
            continue;
        }
        let v: f64 = values.value(row).into();
        let slot = &mut slots[id as usize];
        *slot = match slot {
            Slot::Empty => Slot::Float(v),
            Slot::Float(s) => Slot::Float(*s + v),
            other => {
                return Err(OpError::new(format!(
                    "cannot add a float to {}",
                    other.to_value()
                )));
            }
        };
    }
    Ok(())
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs().max(1)
}

fn sum_decimal(
    slots: &mut [Slot],
    ids: &[u32],
    array: &dyn Array,
    scale: i8,
) -> Result<(), OpError> {
    let values = array.as_primitive::<Decimal128Type>();
    let overflow = || OpError::new("integer overflow: decimal sum exceeds 128 bits");
    for (row, &id) in ids.iter().enumerate() {
        if id == LATE || values.is_null(row) {
            continue;
        }
        let Some((n, d)) =
            values::rational_parts(&values::decimal_rational(values.value(row), scale)?)
        else {
            return Err(overflow());
        };
        let slot = &mut slots[id as usize];
        *slot = match slot {
            Slot::Empty => Slot::Rational(n, d),
            Slot::Rational(sn, sd) => {
                let num = sn
                    .checked_mul(d)
                    .and_then(|a| n.checked_mul(*sd).and_then(|b| a.checked_add(b)))
                    .ok_or_else(overflow)?;
                let den = sd.checked_mul(d).ok_or_else(overflow)?;
                let g = gcd(num, den);
                Slot::Rational(num / g, den / g)
            }
            other => {
                return Err(OpError::new(format!(
                    "cannot add a decimal to {}",
                    other.to_value()
                )));
            }
        };
    }
    Ok(())
}

fn update(func: AggFunc, slots: &mut [Slot], ids: &[u32], array: &ArrayRef) -> Result<(), OpError> {
    match func {
        AggFunc::Count => {
            for &id in ids {
                if id == LATE {
                    continue;
                }
                let slot = &mut slots[id as usize];
                *slot = match slot {
                    Slot::Empty => Slot::Count(1),
                    Slot::Count(i64::MAX) => return Err(OpError::new("count overflow")),
                    Slot::Count(n) => Slot::Count(*n + 1),
                    other => {
                        return Err(OpError::new(format!(
                            "cannot count into {}",
                            other.to_value()
                        )));
                    }
                };
            }
            Ok(())
        }
        AggFunc::Sum => match array.data_type() {
            DataType::Int8 => sum_primitive(slots, ids, array.as_primitive::<Int8Type>()),
            DataType::Int16 => sum_primitive(slots, ids, array.as_primitive::<Int16Type>()),
            DataType::Int32 => sum_primitive(slots, ids, array.as_primitive::<Int32Type>()),
            DataType::Int64 => sum_primitive(slots, ids, array.as_primitive::<Int64Type>()),
            DataType::UInt8 => sum_primitive(slots, ids, array.as_primitive::<UInt8Type>()),
            DataType::UInt16 => sum_primitive(slots, ids, array.as_primitive::<UInt16Type>()),
            DataType::UInt32 => sum_primitive(slots, ids, array.as_primitive::<UInt32Type>()),
            DataType::UInt64 => sum_primitive(slots, ids, array.as_primitive::<UInt64Type>()),
            DataType::Float32 => sum_float(slots, ids, array.as_primitive::<Float32Type>()),
            DataType::Float64 => sum_float(slots, ids, array.as_primitive::<Float64Type>()),
            DataType::Decimal128(_, scale) => sum_decimal(slots, ids, array.as_ref(), *scale),
            DataType::Boolean | DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) => {
                // Go sums bools as 0/1 and temporal values as their integers.
                for (row, &id) in ids.iter().enumerate() {
                    if id == LATE || array.is_null(row) {
                        continue;
                    }
                    let v = match cell(array.as_ref(), row)? {
                        TaggedValue::Bool(b) => i128::from(b),
                        TaggedValue::Int(n) => i128::from(n),
                        _ => 0,
                    };
                    let slot = &mut slots[id as usize];
                    *slot = match slot {
                        Slot::Empty => Slot::Int(v),
                        Slot::Int(s) => Slot::Int(*s + v),
                        other => {
                            return Err(OpError::new(format!(
                                "cannot add to {}",
                                other.to_value()
                            )));
                        }
                    };
                }
                Ok(())
            }
            other => Err(OpError::new(format!("cannot sum {}", type_name(other)))),
        },
        AggFunc::Min | AggFunc::Max => {
            if !values::supported(array.data_type()) {
                return Err(OpError::new(format!(
                    "cannot take {} of {}",
                    func.name(),
                    type_name(array.data_type())
                )));
            }
            // Int64 (the common case): compare the integers in place instead
            // of building a value per row.
            let ints =
                (array.data_type() == &DataType::Int64).then(|| array.as_primitive::<Int64Type>());
            for (row, &id) in ids.iter().enumerate() {
                if id == LATE || array.is_null(row) {
                    continue;
                }
                let slot = &mut slots[id as usize];
                if let (Some(ints), Slot::Value(TaggedValue::Int(current))) = (ints, &mut *slot) {
                    let v = ints.value(row);
                    if (func == AggFunc::Min && v < *current)
                        || (func == AggFunc::Max && v > *current)
                    {
                        *current = v;
                    }
                    continue;
                }
                let next = cell(array.as_ref(), row)?;
                let replace = match slot {
                    Slot::Empty => true,
                    Slot::Value(current) => {
                        let ord = compare(current, &next)?;
                        // Ties keep the current value.
                        if func == AggFunc::Min {
                            ord.is_gt()
                        } else {
                            ord.is_lt()
                        }
                    }
                    other => {
                        return Err(OpError::new(format!(
                            "cannot compare with {}",
                            other.to_value()
                        )));
                    }
                };
                if replace {
                    *slot = Slot::Value(next);
                }
            }
            Ok(())
        }
    }
}

impl Processor for GroupByProcessor {
    fn process(&mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>, OpError> {
        self.process_rows(batch, None)
    }

    fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    fn process_selected(
        &mut self,
        batch: &RecordBatch,
        selected: &BooleanBuffer,
    ) -> Result<Vec<RecordBatch>, OpError> {
        if self.takes_selection(batch) {
            return self.process_rows(batch, Some(selected));
        }
        let mask = BooleanArray::new(selected.clone(), None);
        self.process(&arrow::compute::filter_record_batch(batch, &mask)?)
    }

    fn snapshot(&self) -> Result<Vec<u8>, OpError> {
        Ok(self.encoded.borrow_mut().snapshot(self))
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), OpError> {
        let state = GroupByState::decode(snapshot).map_err(|e| OpError::new(e.to_string()))?;
        let parts_expected = self.op.keys.len() + if self.op.window.is_some() { 2 } else { 0 };
        let mut index = GroupIndex::default();
        let mut parts = Vec::with_capacity(state.groups.len());
        let mut slots = vec![Vec::with_capacity(state.groups.len()); self.op.aggregations.len()];
        for group in state.groups {
            if group.parts.len() != parts_expected
                || group.aggregates.len() != self.op.aggregations.len()
            {
                return Err(OpError::new(format!(
                    "cannot restore groupBy state: a group has {} key parts and {} aggregates, this operator expects {} and {}",
                    group.parts.len(),
                    group.aggregates.len(),
                    parts_expected,
                    self.op.aggregations.len()
                )));
            }
            let mut key = Vec::new();
            for part in &group.parts {
                part.encode_into(&mut key);
            }
            for (a, value) in group.aggregates.into_iter().enumerate() {
                slots[a].push(Slot::from_value(self.op.aggregations[a].func, value)?);
            }
            index
                .push(&key)
                .ok_or_else(|| OpError::new("cannot restore groupBy state: too many groups"))?;
            parts.push(group.parts);
        }
        self.index = index;
        self.parts = parts;
        self.accs = slots
            .into_iter()
            .zip(&self.op.aggregations)
            .map(|(slots, agg)| Accumulators::from_slots(agg.func, slots))
            .collect();
        self.stream_time = state.stream_time;
        self.key_arrays = KeyArrays::default();
        self.encoded.get_mut().invalidate();
        Ok(())
    }
}

impl Groups for GroupByProcessor {
    fn count(&self) -> usize {
        self.parts.len()
    }

    fn stream_time(&self) -> i64 {
        self.stream_time
    }

    fn encode(&self, g: usize, out: &mut Vec<u8>) {
        let aggregates: Vec<TaggedValue> = self.accs.iter().map(|a| a.slot(g).to_value()).collect();
        encode_group(out, &self.parts[g], &aggregates);
    }
}

#[cfg(test)]
mod tests;
