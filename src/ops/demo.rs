//! The demo's use of `tail`: a registry-framed topic read to its end into a
//! Parquet file, and the file's first rows read back for a preview (which the demo
//! renders as a table).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;

use crate::engine::columnar::record_filter::RecordFilter;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::io::batch_sink::{BatchSink, DEFAULT_ROW_GROUP_ROWS, DataFormat, SinkOptions};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::tail::positions::{Positions, Start, Stop};
use crate::ops::tail::{self, DEFAULT_BATCH_RECORDS, Isolation, OnError, Rows, TailHost, TailPlan};
use crate::ops::{Error, Result};

/// One tail of the demo.
pub struct TailToParquet<'a> {
    pub settings: KafkaSettings,
    pub timeout: Duration,
    pub schemas: Option<Arc<dyn WriterSchemas>>,
    pub topic: &'a str,
    /// The value format (`avro`, `protobuf`, …); keys are strings.
    pub value_format: &'a str,
    pub path: &'a Path,
    pub preview_rows: usize,
    pub host: &'a dyn TailHost,
}

/// Tails the topic to its end into the Parquet file; answers the rows written and
/// the first `preview_rows` of them without `__headers` and `__key` (none when the
/// file has no rows).
pub fn tail_to_parquet(job: TailToParquet<'_>) -> Result<(u64, Option<RecordBatch>)> {
    let plan = TailPlan {
        topics: vec![job.topic.to_string()],
        topic_column: false,
        partitions: Vec::new(),
        positions: Positions {
            start: Start::Beginning,
            stop: Stop::End,
        },
        max_records: None,
        group: None,
        isolation: Isolation::ReadUncommitted,
        filter: RecordFilter::default(),
        predicate: None,
        columns: Vec::new(),
        key_specs: vec![tail::formats::parse_spec("string").map_err(Error::failure)?],
        value_specs: vec![tail::formats::parse_spec(job.value_format).map_err(Error::failure)?],
        rows: Rows::Binary {
            typed_reserved: true,
        },
        on_error: OnError::Fail,
        batch_records: DEFAULT_BATCH_RECORDS,
    };
    let sink = BatchSink::new(SinkOptions {
        format: DataFormat::Parquet,
        path: Some(job.path.to_path_buf()),
        row_group_size: DEFAULT_ROW_GROUP_ROWS,
        rotate_rows: None,
        rotate_bytes: None,
    });
    let context = tail::TailContext {
        settings: job.settings,
        timeout: job.timeout,
        schemas: job.schemas,
        sink: Box::new(sink),
        host: job.host,
    };
    tail::run(plan, context)?.outcome?;
    preview(job.path, job.preview_rows)
}

fn preview(path: &Path, preview_rows: usize) -> Result<(u64, Option<RecordBatch>)> {
    let cannot_read =
        |e: &dyn std::fmt::Display| Error::failure(format!("cannot read {}: {e}", path.display()));
    let file = std::fs::File::open(path)
        .map_err(|e| Error::failure(format!("cannot open {}: {e}", path.display())))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(preview_rows.max(1)).build())
        .map_err(|e| cannot_read(&e))?;
    let mut rows = 0u64;
    let mut shown = None;
    for batch in reader {
        let batch = batch.map_err(|e| cannot_read(&e))?;
        if rows == 0 {
            let kept: Vec<usize> = (0..batch.num_columns())
                .filter(|&i| {
                    !matches!(
                        batch.schema().field(i).name().as_str(),
                        "__headers" | "__key"
                    )
                })
                .collect();
            let projected = batch
                .project(&kept)
                .map_err(|e| Error::failure(e.to_string()))?;
            shown = Some(projected.slice(0, projected.num_rows().min(preview_rows)));
        }
        rows += batch.num_rows() as u64;
    }
    Ok((rows, shown))
}
