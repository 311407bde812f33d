//! The demo's tails: a registry-framed topic read to its end into a Parquet file, as
//! `tail TOPIC -e --key-format string --value-format FORMAT --registry URL --out FILE`
//! does, and the file's first rows read back for a preview (which the demo renders as
//! a table).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;

use crate::engine::columnar::record_filter::RecordFilter;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::io::batch_sink::{BatchSink, DEFAULT_ROW_GROUP_ROWS, DataFormat, SinkOptions};
use crate::io::kafka::settings::{KafkaSettings, command_client_id};
use crate::ops::demo::Env;
use crate::ops::schema::cache::open_cache;
use crate::ops::schema::connect::{RegistryPlan, connect};
use crate::ops::tail::positions::{Positions, Start, Stop};
use crate::ops::tail::{self, DEFAULT_BATCH_RECORDS, Isolation, OnError, Rows, TailPlan};
use crate::ops::{Error, Result};

/// The request timeout and overall bound of a demo tail (`--timeout 30s`).
const TIMEOUT: Duration = Duration::from_secs(30);

/// One tail of the demo.
pub struct TailJob<'a> {
    pub topic: &'a str,
    /// The value format (`avro`, `protobuf`, …); keys are strings.
    pub value_format: &'a str,
    pub path: PathBuf,
    /// A cache file of writer schemas to load first (`--schema-cache`).
    pub schema_cache: Option<&'a Path>,
    pub preview_rows: usize,
}

impl<'a> TailJob<'a> {
    /// Avro values through the registry, no cache file.
    pub fn avro(topic: &'a str, path: PathBuf, preview_rows: usize) -> Self {
        TailJob {
            topic,
            value_format: "avro",
            path,
            schema_cache: None,
            preview_rows,
        }
    }
}

/// What a tail wrote.
pub struct Tailed {
    pub topic: String,
    pub file: PathBuf,
    pub rows: u64,
    /// The file's size.
    pub bytes: u64,
    /// The first rows without `__headers` and `__key`; none when the file has no rows.
    pub preview: Option<RecordBatch>,
}

/// Tails the topic to its end into the Parquet file and reads its first rows back.
pub(crate) fn to_parquet(env: &Env<'_>, job: TailJob<'_>) -> Result<Tailed> {
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
        path: Some(job.path.clone()),
        row_group_size: DEFAULT_ROW_GROUP_ROWS,
        rotate_rows: None,
        rotate_bytes: None,
    });
    let context = tail::TailContext {
        settings: tail_settings(env.cluster.bootstrap()),
        timeout: TIMEOUT,
        schemas: Some(writer_schemas(&env.registry_url, job.schema_cache)?),
        sink: Box::new(sink),
        host: env.tail_host,
    };
    tail::run(plan, context)?.outcome?;
    let (rows, preview) = preview(&job.path, job.preview_rows)?;
    let bytes = std::fs::metadata(&job.path).map(|m| m.len()).unwrap_or(0);
    Ok(Tailed {
        topic: job.topic.to_string(),
        file: job.path,
        rows,
        bytes,
        preview,
    })
}

/// The settings `tail -b BOOTSTRAP --request-timeout-ms 30000` builds.
fn tail_settings(bootstrap: &str) -> KafkaSettings {
    let mut s = super::kafka_settings(bootstrap);
    s.set("client.id", command_client_id("tail"));
    s.set("socket.timeout.ms", TIMEOUT.as_millis().to_string());
    s
}

/// The writer schemas a tail decodes with: fetched from the registry as `tail
/// --registry URL` does (a client of its own, no overall deadline), seeded from
/// `cache_file` when one is given.
fn writer_schemas(registry_url: &str, cache_file: Option<&Path>) -> Result<Arc<dyn WriterSchemas>> {
    let client = connect(&RegistryPlan {
        url: registry_url.to_string(),
        user: None,
        password: None,
        request_timeout: TIMEOUT,
        deadline: None,
        send_message_type: false,
        token_file: None,
        command_config: None,
    })?
    .registry;
    Ok(Arc::new(open_cache(Some(client), cache_file)?))
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
