//! Offline runs: the same topology over Arrow batches instead of a consumer
//! group. Each round takes the next batch of every input that still has one,
//! splits it by `__partition` (logical partitions ascending, each with its own
//! state as online), runs the partitions and hands every sink's batches to its
//! writer before reading on, so one batch per node is alive at a time.
//!
//! Inputs normally come from `tail` and carry the five reserved columns; a
//! missing reserved column is added (null key and timestamp, partition 0,
//! offsets counted from 0, no headers) so plain Arrow files work too.
//! Error policies: fail stops the run; skip and dead-letter restore the failed
//! partition's state and go on, dead-letter also writes the failed input rows
//! with the `krabka.error.*` / `krabka.source.*` headers appended (formats §10).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::compute::filter_record_batch;
use arrow::compute::kernels::cmp::eq;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, Scalar, new_null_array,
};
use arrow_schema::{Field, FieldRef, Schema, SchemaRef};

use super::Metrics;
use crate::engine::columnar::expr::types::type_name;
use crate::engine::columnar::headers::{Header, decode_headers, encode_headers};
use crate::engine::columnar::metadata::{
    HEADERS_COLUMN, OFFSET_COLUMN, PARTITION_COLUMN, RESERVED_COLUMNS, is_reserved, reserved_fields,
};
use crate::engine::columnar::topology::built::PartitionInput;
use crate::engine::columnar::topology::spec::ErrorPolicy;
use crate::engine::columnar::topology::{BuiltTopology, NodeFailure, SinkOutput};

/// D11: the stable error class written into dead-letter headers.
pub const PROCESSING_ERROR_CLASS: &str = "krabka_streams::ProcessingError";

/// A stream of batches (an Arrow IPC file or pipe).
pub trait BatchReader {
    fn schema(&self) -> SchemaRef;
    /// The next batch, `None` at the end.
    fn next_batch(&mut self) -> Option<Result<RecordBatch, String>>;
}

/// Where a sink's batches go.
pub trait BatchWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), WriteError>;
}

/// A writer failure; `Closed` means the reader went away (a closed pipe), which ends the run quietly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    Closed,
    Failed(String),
}

/// Why an offline run stopped early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OfflineError {
    #[error("input `{input}`: {message}")]
    Input { input: String, message: String },
    #[error("{0}")]
    Node(NodeFailure),
    #[error("sink `{sink}`: {message}")]
    Sink { sink: String, message: String },
}

/// One input: the source node it feeds and its batches.
pub struct OfflineInput {
    pub source: String,
    /// The topic recorded in dead-letter headers (the source's first topic).
    pub topic: String,
    pub reader: Box<dyn BatchReader>,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every input was read to its end.
    Completed,
    /// A sink's reader went away (closed pipe); the run stopped there.
    OutputClosed,
}

/// A metrics callback and how often to call it.
pub type Progress<'a> = (Duration, Box<dyn FnMut(&Metrics) + 'a>);

/// Options of an offline run.
pub struct OfflineRun<'a> {
    pub topology: &'a mut BuiltTopology,
    pub inputs: Vec<OfflineInput>,
    /// Writers by sink node name; sinks without one are counted and dropped.
    pub sinks: BTreeMap<String, Box<dyn BatchWriter + 'a>>,
    pub policy: ErrorPolicy,
    /// Where dead-lettered rows go (with the dead-letter policy).
    pub dead_letter: Option<Box<dyn BatchWriter + 'a>>,
    /// Called with the metrics so far every `interval`.
    pub progress: Option<Progress<'a>>,
}

/// The processing schema of an input: its columns with any missing reserved
/// column appended in the reserved order. A reserved name of the wrong type is refused.
pub fn normalized_schema(schema: &Schema) -> Result<SchemaRef, String> {
    let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
    for reserved in reserved_fields() {
        match schema.field_with_name(reserved.name()) {
            Ok(f) if f.data_type() != reserved.data_type() => {
                return Err(format!(
                    "column `{}` is {}, but the reserved column must be {}",
                    f.name(),
                    type_name(f.data_type()),
                    type_name(reserved.data_type())
                ));
            }
            Ok(_) => {}
            Err(_) => fields.push(reserved),
        }
    }
    Ok(Arc::new(Schema::new(fields)))
}

fn normalize(
    batch: &RecordBatch,
    target: &SchemaRef,
    next_offset: &mut i64,
) -> Result<RecordBatch, String> {
    let rows = batch.num_rows();
    let first = *next_offset;
    *next_offset += rows as i64;
    if batch.schema().fields() == target.fields() {
        return Ok(batch.clone());
    }
    let columns: Vec<ArrayRef> = target
        .fields()
        .iter()
        .map(|f| match batch.column_by_name(f.name()) {
            Some(c) => c.clone(),
            None => match f.name().as_str() {
                PARTITION_COLUMN => Arc::new(Int32Array::from(vec![0; rows])) as ArrayRef,
                OFFSET_COLUMN => Arc::new(Int64Array::from_iter_values(first..first + rows as i64)),
                HEADERS_COLUMN => {
                    let empty = encode_headers(&[]);
                    Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
                        empty.as_slice(),
                        rows,
                    )))
                }
                _ => new_null_array(f.data_type(), rows),
            },
        })
        .collect();
    RecordBatch::try_new(target.clone(), columns)
        .map_err(|e| format!("the batch does not match the input's schema ({e})"))
}

/// Splits a batch by `__partition` (null counts as 0), partitions ascending.
fn split_by_partition(batch: &RecordBatch) -> Result<Vec<(i32, RecordBatch)>, String> {
    let column = batch
        .column_by_name(PARTITION_COLUMN)
        .ok_or("the batch has no __partition column")?;
    let partitions = column.as_primitive::<Int32Type>();
    let partitions = if partitions.null_count() > 0 {
        arrow::compute::kernels::zip::zip(
            &arrow::compute::is_not_null(partitions).map_err(|e| e.to_string())?,
            partitions,
            &Scalar::new(Int32Array::from(vec![0])),
        )
        .map_err(|e| e.to_string())?
        .as_primitive::<Int32Type>()
        .clone()
    } else {
        partitions.clone()
    };
    let (min, max) = match (
        arrow::compute::min(&partitions),
        arrow::compute::max(&partitions),
    ) {
        (Some(min), Some(max)) => (min, max),
        _ => return Ok(Vec::new()),
    };
    if min == max {
        return Ok(vec![(min, batch.clone())]);
    }
    let mut distinct: Vec<i32> = partitions.values().to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
        .into_iter()
        .map(|p| {
            let mask = eq(&partitions, &Scalar::new(Int32Array::from(vec![p])))
                .map_err(|e| e.to_string())?;
            Ok((
                p,
                filter_record_batch(batch, &mask).map_err(|e| e.to_string())?,
            ))
        })
        .collect()
}

/// `batch` with the dead-letter headers appended to every row's header cell.
fn dead_letter_rows(
    batch: &RecordBatch,
    topic: &str,
    partition: i32,
    error: &str,
) -> Result<RecordBatch, String> {
    let schema = batch.schema();
    let headers_at = schema.index_of(HEADERS_COLUMN).map_err(|e| e.to_string())?;
    let cells = batch.column(headers_at).as_binary::<i32>();
    let offsets = batch
        .column_by_name(OFFSET_COLUMN)
        .map(|c| c.as_primitive::<Int64Type>().clone());
    let mut out = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let mut headers = if cells.is_null(row) {
            Vec::new()
        } else {
            decode_headers(cells.value(row)).unwrap_or_default()
        };
        let offset = offsets
            .as_ref()
            .filter(|o| !o.is_null(row))
            .map(|o| o.value(row).to_string())
            .unwrap_or_default();
        for (key, value) in [
            ("krabka.error.class", PROCESSING_ERROR_CLASS.to_owned()),
            ("krabka.error.message", error.to_owned()),
            ("krabka.source.topic", topic.to_owned()),
            ("krabka.source.partition", partition.to_string()),
            ("krabka.source.offset", offset),
        ] {
            headers.push(Header {
                key: key.to_owned(),
                value: Some(value.into_bytes()),
            });
        }
        out.push(encode_headers(&headers));
    }
    let mut columns = batch.columns().to_vec();
    columns[headers_at] = Arc::new(BinaryArray::from_iter_values(out.iter()));
    RecordBatch::try_new(schema, columns).map_err(|e| e.to_string())
}

struct LiveInput {
    input: OfflineInput,
    schema: SchemaRef,
    /// Columns kept for processing, when not all are read downstream.
    projection: Option<Vec<usize>>,
    next_offset: i64,
}

impl OfflineRun<'_> {
    /// Runs to the end of every input (or the first failure under the fail policy).
    pub fn run(mut self) -> (Metrics, Result<Outcome, OfflineError>) {
        let mut metrics = Metrics::default();
        let result = self.run_inner(&mut metrics);
        (metrics, result)
    }

    fn run_inner(&mut self, metrics: &mut Metrics) -> Result<Outcome, OfflineError> {
        let mut live = Vec::new();
        // Columns nothing downstream reads are dropped as batches arrive (dead
        // letters keep whole rows, so not with that policy).
        let needed = match self.policy {
            ErrorPolicy::DeadLetter { .. } => BTreeMap::new(),
            _ => self.topology.needed_source_columns(),
        };
        for input in std::mem::take(&mut self.inputs) {
            let schema = normalized_schema(&input.reader.schema()).map_err(|message| {
                OfflineError::Input {
                    input: input.source.clone(),
                    message,
                }
            })?;
            let projection = needed.get(&input.source).cloned().flatten().map(|columns| {
                (0..schema.fields().len())
                    .filter(|i| {
                        let name = schema.field(*i).name();
                        columns.contains(name) || name == PARTITION_COLUMN
                    })
                    .collect::<Vec<_>>()
            });
            live.push(LiveInput {
                input,
                schema,
                projection,
                next_offset: 0,
            });
        }
        let mut last_report = Instant::now();
        while !live.is_empty() {
            // One round: the next batch of every input that has one.
            let mut round: Vec<(usize, RecordBatch)> = Vec::new();
            let mut index = 0;
            while index < live.len() {
                let entry = &mut live[index];
                match entry.input.reader.next_batch() {
                    None => {
                        live.remove(index);
                        continue;
                    }
                    Some(Err(message)) => {
                        return Err(OfflineError::Input {
                            input: entry.input.source.clone(),
                            message,
                        });
                    }
                    Some(Ok(batch)) => {
                        let batch = normalize(&batch, &entry.schema, &mut entry.next_offset)
                            .map_err(|message| OfflineError::Input {
                                input: entry.input.source.clone(),
                                message,
                            })?;
                        let batch = match &entry.projection {
                            Some(columns) => {
                                batch.project(columns).map_err(|e| OfflineError::Input {
                                    input: entry.input.source.clone(),
                                    message: e.to_string(),
                                })?
                            }
                            None => batch,
                        };
                        metrics.batches += 1;
                        metrics.input_records += batch.num_rows() as u64;
                        round.push((index, batch));
                    }
                }
                index += 1;
            }
            if round.is_empty() {
                break;
            }
            // Partition → source → batches.
            let mut by_partition: BTreeMap<i32, Vec<(usize, RecordBatch)>> = BTreeMap::new();
            for (input, batch) in &round {
                let parts = split_by_partition(batch).map_err(|message| OfflineError::Input {
                    input: live[*input].input.source.clone(),
                    message,
                })?;
                for (partition, part) in parts {
                    by_partition
                        .entry(partition)
                        .or_default()
                        .push((*input, part));
                }
            }
            for (partition, parts) in by_partition {
                let mut input = PartitionInput::default();
                for (i, batch) in &parts {
                    input
                        .batches
                        .entry(live[*i].input.source.clone())
                        .or_default()
                        .push(batch.clone());
                }
                if self.process_partition(partition, &input, &parts, &live, metrics)?
                    == Outcome::OutputClosed
                {
                    return Ok(Outcome::OutputClosed);
                }
            }
            if let Some((interval, report)) = &mut self.progress
                && last_report.elapsed() >= *interval
            {
                report(metrics);
                last_report = Instant::now();
            }
        }
        Ok(Outcome::Completed)
    }

    fn process_partition(
        &mut self,
        partition: i32,
        input: &PartitionInput<'_>,
        parts: &[(usize, RecordBatch)],
        live: &[LiveInput],
        metrics: &mut Metrics,
    ) -> Result<Outcome, OfflineError> {
        let rollback = match self.policy {
            ErrorPolicy::Fail => None,
            _ => Some(
                self.topology
                    .checkpoint_partition(partition)
                    .map_err(OfflineError::Node)?,
            ),
        };
        let started = Instant::now();
        let result = self.topology.run_partition_batches(partition, input);
        metrics.processing_nanos += started.elapsed().as_nanos() as u64;
        let outputs = match result {
            Ok(outputs) => outputs,
            Err(failure) => {
                metrics.failures += 1;
                let Some(state) = rollback else {
                    return Err(OfflineError::Node(failure));
                };
                self.topology
                    .rollback_partition(partition, state)
                    .map_err(OfflineError::Node)?;
                if let (ErrorPolicy::DeadLetter { .. }, Some(writer)) =
                    (&self.policy, &mut self.dead_letter)
                {
                    for (i, batch) in parts {
                        let rows = dead_letter_rows(
                            batch,
                            &live[*i].input.topic,
                            partition,
                            &failure.to_string(),
                        )
                        .map_err(|message| OfflineError::Sink {
                            sink: "dead-letter".into(),
                            message,
                        })?;
                        metrics.dead_letter_records += rows.num_rows() as u64;
                        match writer.write(&rows) {
                            Ok(()) => {}
                            Err(WriteError::Closed) => return Ok(Outcome::OutputClosed),
                            Err(WriteError::Failed(message)) => {
                                return Err(OfflineError::Sink {
                                    sink: "dead-letter".into(),
                                    message,
                                });
                            }
                        }
                    }
                }
                return Ok(Outcome::Completed);
            }
        };
        for output in outputs {
            let (sink, batch) = match output {
                SinkOutput::Batch { sink, batch, .. } => (sink, batch),
                // Offline, a pass-through sink copies its source's batches unchanged.
                SinkOutput::Raw { sink, .. } => {
                    let source = self.pass_through_source(&sink);
                    for (i, batch) in parts {
                        if Some(&live[*i].input.source) == source.as_ref() {
                            metrics.output_records += batch.num_rows() as u64;
                            if self.write(&sink, batch)? == Outcome::OutputClosed {
                                return Ok(Outcome::OutputClosed);
                            }
                        }
                    }
                    continue;
                }
            };
            metrics.output_records += batch.num_rows() as u64;
            if self.write(&sink, &batch)? == Outcome::OutputClosed {
                return Ok(Outcome::OutputClosed);
            }
        }
        Ok(Outcome::Completed)
    }

    fn pass_through_source(&self, sink: &str) -> Option<String> {
        self.topology
            .describe()
            .into_iter()
            .find(|(name, _, _, _)| name == sink)
            .and_then(|(_, _, parents, _)| parents.into_iter().next())
    }

    fn write(&mut self, sink: &str, batch: &RecordBatch) -> Result<Outcome, OfflineError> {
        let Some(writer) = self.sinks.get_mut(sink) else {
            return Ok(Outcome::Completed);
        };
        match writer.write(batch) {
            Ok(()) => Ok(Outcome::Completed),
            Err(WriteError::Closed) => Ok(Outcome::OutputClosed),
            Err(WriteError::Failed(message)) => Err(OfflineError::Sink {
                sink: sink.to_owned(),
                message,
            }),
        }
    }
}

/// Whether a schema carries all five reserved columns.
pub fn has_reserved_columns(schema: &Schema) -> bool {
    RESERVED_COLUMNS.iter().all(|c| schema.index_of(c).is_ok())
}

/// Payload fields of a schema (reserved ones left out).
pub fn payload_fields(schema: &Schema) -> Vec<Field> {
    schema
        .fields()
        .iter()
        .filter(|f| !is_reserved(f.name()))
        .map(|f| f.as_ref().clone())
        .collect()
}

pub mod memory;

#[cfg(test)]
mod tests;
