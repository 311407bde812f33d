//! Filter and with_columns over row ranges of one batch (`run --threads`),
//! merged in range order so the result is the one-thread path's, byte for
//! byte (semantics §4).
//!
//! A predicate's verdicts are read as bits, so they may be computed per range
//! and joined. The filtered copy is then made by one predicate over the whole
//! batch, one column per thread: the same kernel call per column as
//! `filter_record_batch`. A derived column is joined from ranges only when
//! that cannot change a byte of what a sink writes: a fixed-width or
//! offset-addressed type and no nulls in any range (a validity bitmap of a
//! sliced input keeps its neighbours' bits in its last byte, which a joined
//! bitmap would not). Anything else, and any error, is evaluated again over
//! the whole batch, so the error names the same row and the same value as on
//! one thread.

use arrow::compute::{FilterBuilder, concat};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use arrow_schema::DataType;

use super::super::OpError;
use crate::engine::columnar::expr::{EvalError, Expression};
use crate::engine::columnar::parallel::{map_indices, map_ranges, row_ranges};

/// The rows `predicate` keeps (set bits; a null verdict drops the row).
pub(super) fn kept_rows(
    predicate: &Expression,
    batch: &RecordBatch,
) -> Result<BooleanBuffer, EvalError> {
    let mask = predicate.evaluate_predicate(batch)?;
    Ok(match mask.nulls() {
        Some(valid) => mask.values() & valid.inner(),
        None => mask.values().clone(),
    })
}

/// [`kept_rows`] computed on up to `threads` row ranges.
pub(super) fn kept_rows_parallel(
    predicate: &Expression,
    batch: &RecordBatch,
    threads: usize,
) -> Result<BooleanBuffer, EvalError> {
    let ranges = row_ranges(batch.num_rows(), threads);
    if ranges.len() < 2 {
        return kept_rows(predicate, batch);
    }
    let parts = map_ranges(&ranges, |r| {
        kept_rows(predicate, &batch.slice(r.start, r.len()))
    });
    if parts.iter().any(Result::is_err) {
        return kept_rows(predicate, batch);
    }
    let mut joined = BooleanBufferBuilder::new(batch.num_rows());
    for part in parts {
        joined.append_buffer(&part?);
    }
    Ok(joined.finish())
}

/// `filter_record_batch(batch, kept)` with its columns filtered on up to
/// `threads` threads: the same builder settings and one kernel call per column.
pub(super) fn filter_parallel(
    batch: &RecordBatch,
    kept: BooleanBuffer,
    threads: usize,
) -> Result<RecordBatch, OpError> {
    let mask = BooleanArray::new(kept, None);
    let mut builder = FilterBuilder::new(&mask);
    let columns = batch.num_columns();
    if columns > 1
        || (columns > 0
            && FilterBuilder::is_optimize_beneficial(batch.schema_ref().field(0).data_type()))
    {
        builder = builder.optimize();
    }
    let predicate = builder.build();
    let filtered = map_indices(columns, threads, |c| {
        predicate.filter(batch.column(c).as_ref())
    });
    let out = filtered.into_iter().collect::<Result<Vec<ArrayRef>, _>>()?;
    Ok(RecordBatch::try_new_with_options(
        batch.schema(),
        out,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(predicate.count())),
    )?)
}

/// Whether ranges of a column of this type, joined, write the bytes of the
/// column evaluated whole when no range has a null: values addressed by
/// fixed widths or by offsets, no bitmap of values, no children.
fn joinable(data_type: &DataType) -> bool {
    data_type.is_primitive()
        || matches!(
            data_type,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary
        )
}

/// What [`evaluate_parallel`] found, so a column whose ranges had nulls is
/// evaluated whole on the next batches instead of twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum RangeVerdict {
    #[default]
    Try,
    Whole,
}

/// `expression.evaluate(batch)`, on up to `threads` row ranges where the
/// joined column is the same bytes (see the module comment).
pub(super) fn evaluate_parallel(
    expression: &Expression,
    batch: &RecordBatch,
    threads: usize,
    verdict: &mut RangeVerdict,
) -> Result<ArrayRef, EvalError> {
    let ranges = row_ranges(batch.num_rows(), threads);
    if ranges.len() < 2 || *verdict == RangeVerdict::Whole || !joinable(&expression.data_type()) {
        return expression.evaluate(batch);
    }
    let parts = map_ranges(&ranges, |r| {
        expression.evaluate(&batch.slice(r.start, r.len()))
    });
    let usable = parts
        .iter()
        .all(|p| matches!(p, Ok(a) if a.null_count() == 0 && joinable(a.data_type())));
    if !usable {
        if parts.iter().all(Result::is_ok) {
            *verdict = RangeVerdict::Whole;
        }
        return expression.evaluate(batch);
    }
    let arrays: Vec<ArrayRef> = parts.into_iter().map(|p| p.expect("checked")).collect();
    let refs: Vec<&dyn Array> = arrays.iter().map(AsRef::as_ref).collect();
    concat(&refs).map_err(|e| EvalError(e.to_string()))
}
