//! A Parquet writer that encodes the column chunks of a row group on several
//! threads (formats §5 outputs; `run --threads`, `tail`). It splits batches
//! into row groups exactly as arrow's `ArrowWriter` does (by row count), and
//! every column's writer sees its column's values in row order whatever
//! thread runs it, so the file is byte-identical to `ArrowWriter`'s at every
//! thread count, statistics and the embedded Arrow schema included: only
//! which core encodes a column changes.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory,
    compute_leaves,
};
use parquet::errors::{ParquetError, Result};
use parquet::file::writer::SerializedFileWriter;

/// Below this many leaf values per batch a second thread costs more than it saves.
const MIN_VALUES_PER_THREAD: usize = 16 * 1024;

pub(crate) struct ParquetColumnsWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The open row group's column writers, one per leaf column.
    columns: Option<Vec<Mutex<ArrowColumnWriter>>>,
    buffered_rows: usize,
    row_group_rows: usize,
    threads: usize,
}

impl<W: Write + Send> ParquetColumnsWriter<W> {
    /// Takes over a fresh `ArrowWriter` (its properties, schema and metadata);
    /// row groups of `row_group_rows` rows, columns encoded on up to `threads` threads.
    pub fn new(
        writer: ArrowWriter<W>,
        schema: SchemaRef,
        row_group_rows: usize,
        threads: usize,
    ) -> Result<Self> {
        let (file, factory) = writer.into_serialized_writer()?;
        Ok(ParquetColumnsWriter {
            file,
            factory,
            schema,
            columns: None,
            buffered_rows: 0,
            row_group_rows: row_group_rows.max(1),
            threads: threads.max(1),
        })
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut remaining = batch.clone();
        while remaining.num_rows() > 0 {
            let room = self.row_group_rows - self.buffered_rows;
            let take = room.min(remaining.num_rows());
            let now = remaining.slice(0, take);
            remaining = remaining.slice(take, remaining.num_rows() - take);
            self.write_rows(&now)?;
            if self.buffered_rows >= self.row_group_rows {
                self.flush()?;
            }
        }
        Ok(())
    }

    fn write_rows(&mut self, batch: &RecordBatch) -> Result<()> {
        if self.columns.is_none() {
            let index = self.file.flushed_row_groups().len();
            let writers = self.factory.create_column_writers(index)?;
            self.columns = Some(writers.into_iter().map(Mutex::new).collect());
        }
        let columns = self.columns.as_ref().expect("opened above");
        let mut leaves: Vec<ArrowLeafColumn> = Vec::with_capacity(columns.len());
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            leaves.extend(compute_leaves(field.as_ref(), column)?);
        }
        if leaves.len() != columns.len() {
            return Err(ParquetError::General(format!(
                "{} leaf columns for {} column writers",
                leaves.len(),
                columns.len()
            )));
        }
        let values = batch.num_rows() * leaves.len();
        let threads = self
            .threads
            .min(leaves.len())
            .min(values / MIN_VALUES_PER_THREAD)
            .max(1);
        let results = for_each_column(columns.len(), threads, |c| {
            lock(&columns[c])?.write(&leaves[c])
        });
        first_error(results)?;
        self.buffered_rows += batch.num_rows();
        Ok(())
    }

    /// Closes the open row group (its chunks finished in parallel, appended in column order).
    fn flush(&mut self) -> Result<()> {
        let Some(columns) = self.columns.take() else {
            return Ok(());
        };
        self.buffered_rows = 0;
        let slots: Vec<Mutex<Option<ArrowColumnWriter>>> = columns
            .into_iter()
            .map(|m| Mutex::new(Some(m.into_inner().unwrap_or_else(|e| e.into_inner()))))
            .collect();
        let threads = self.threads.min(slots.len()).max(1);
        let chunks: Vec<Result<ArrowColumnChunk>> = for_each_column(slots.len(), threads, |c| {
            let writer = lock(&slots[c])?
                .take()
                .ok_or_else(|| ParquetError::General("a column closed twice".into()))?;
            writer.close()
        });
        let mut row_group = self.file.next_row_group()?;
        for chunk in chunks {
            chunk?.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        Ok(())
    }

    /// Bytes in the file so far and the open row group's estimated encoded size.
    pub fn bytes_written(&self) -> usize {
        self.file.bytes_written()
    }

    pub fn in_progress_size(&self) -> usize {
        self.columns.as_ref().map_or(0, |columns| {
            columns
                .iter()
                .map(|c| c.lock().map_or(0, |w| w.get_estimated_total_bytes()))
                .sum()
        })
    }

    /// Writes the last row group and the footer; the underlying writer.
    pub fn into_inner(mut self) -> Result<W> {
        self.flush()?;
        self.file.into_inner()
    }
}

fn lock<T>(m: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| ParquetError::General("a column writer panicked".into()))
}

fn first_error(results: Vec<Result<()>>) -> Result<()> {
    results.into_iter().collect()
}

/// `f` of every column index on `threads` threads (each takes the next column
/// not yet taken); results in column order, so the first error is the one a
/// single thread would have met first.
fn for_each_column<T: Send>(
    columns: usize,
    threads: usize,
    f: impl Fn(usize) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    if threads <= 1 {
        return (0..columns).map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<T>>>> = (0..columns).map(|_| Mutex::new(None)).collect();
    let work = || {
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= columns {
                break;
            }
            let result = f(c);
            if let Ok(mut slot) = slots[c].lock() {
                *slot = Some(result);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err(ParquetError::General("a column writer panicked".into())))
        })
        .collect()
}

#[cfg(test)]
mod tests;
