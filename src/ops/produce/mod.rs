//! `produce TOPIC`: rows of an Arrow IPC, Parquet or NDJSON input (or plain lines,
//! as kcat's `-P`) written as one record per row. Values are encoded by the codecs
//! `run`'s sinks use (`engine::columnarschema::topology_codecs`: raw, string, json,
//! avro, protobuf, json-sr, arrow, gzip+…; registry framing of docs/formats.md §2),
//! the key is `__key` or `--key-column` encoded by `--key-format`, the timestamp
//! `__timestamp` (else now), the headers `__headers` (formats §3, both layouts of §4),
//! the partition `__partition` (`keep`), Kafka's murmur2 default partitioner
//! (`hash`, formats §1) or a fixed one.
//!
//! Everything that can be checked from the input's schema is checked before the first
//! record is sent (a usage error). A row that cannot be encoded fails the run naming
//! the row, or is skipped or dead-lettered (`--on-error`). The producer is idempotent;
//! with a transactional id every record is sent in one transaction, aborted on any
//! error, so a read_committed reader sees all rows or none.

pub mod dry_registry;
mod feed;
pub mod input;
pub mod lines;
mod ndjson;
mod rows;
mod sender;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::engine::columnar::headers::Header;
pub use crate::engine::columnar::text_view::BinaryText;
use crate::engine::schema::cache::SchemaCache;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, Result};

pub use input::InputFormat;
use input::Opened;
use rows::RowEncoder;
use sender::Sender;

/// Which partition each record goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionChoice {
    /// The row's `__partition`.
    Keep,
    /// murmur2 of the key, as Kafka's default partitioner; a keyless record goes where
    /// librdkafka's partitioner puts a null key (random, sticky for `sticky.partitioning.linger.ms`).
    Hash,
    Fixed(i32),
}

/// What happens to a row that cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnError {
    Fail,
    Skip,
    /// Appended to FILE as one JSON line: the row, its number and the error.
    DeadLetter(PathBuf),
}

/// Everything one `produce` does, decided by the command line.
pub struct ProducePlan {
    pub topic: String,
    /// A path, or `-` for stdin.
    pub input: String,
    pub format: InputFormat,
    pub value_format: String,
    /// The value's writer schema file (`.avsc`, `.proto[:pkg.Msg]`, `.json`).
    pub value_schema: Option<PathBuf>,
    pub key_column: Option<String>,
    /// Input columns left out of the records (e.g. the decoded `key` column `tail
    /// --key-format` adds, which would otherwise be encoded into every value).
    pub drop_columns: Vec<String>,
    pub key_format: Option<String>,
    /// Lines: the key separator (`-K`).
    pub key_separator: Option<Vec<u8>>,
    /// Lines: the key of every record (`-k`; never with `-K`).
    pub line_key: Option<Vec<u8>>,
    /// Lines: headers added to every record (`-H`).
    pub headers: Vec<Header>,
    /// NDJSON: how raw bytes (`__key`, a raw `value`, header values) are written, as
    /// `tail --binary` wrote them: text or `{"base64": …}` (auto), or every one a
    /// base64 string (base64), which nothing in the row itself tells apart from text.
    pub binary: BinaryText,
    pub partition: PartitionChoice,
    /// Set: one transaction under this id.
    pub transactional_id: Option<String>,
    pub on_error: OnError,
    pub dry_run: bool,
    /// `None` only for a dry run without a broker.
    pub kafka: Option<KafkaSettings>,
    pub timeout: Duration,
    pub schemas: Option<SchemaCache>,
    pub batch_rows: usize,
}

/// What the caller sees while records go out.
pub struct Hooks<'a> {
    pub cancelled: Arc<AtomicBool>,
    /// Called when a transaction opens: while the value it returns lives, SIGINT and
    /// SIGTERM set `cancelled` instead of ending the process, so the open transaction
    /// is aborted before the exit, and nothing of it is ever visible to read_committed
    /// readers. `None`: the caller has no signals to catch (tests, the demo).
    pub catch_signals: Option<&'a dyn Fn() -> Box<dyn std::any::Any>>,
    /// Records and bytes sent so far, after each batch.
    pub progress: &'a mut dyn FnMut(u64, u64),
    /// A skipped or dead-lettered row: its name and the error.
    pub refused: &'a mut dyn FnMut(&str, &str),
}

/// What was sent (or, in a dry run, would be).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub topic: String,
    pub input_format: &'static str,
    pub value_format: String,
    pub records: u64,
    /// Key and value bytes.
    pub bytes: u64,
    /// Records per partition.
    pub partitions: BTreeMap<i32, u64>,
    /// Records whose partition the broker's metadata would decide (dry run without -b).
    pub unassigned: u64,
    pub skipped: u64,
    pub dead_lettered: u64,
    pub transactional: bool,
    pub dry_run: bool,
    /// Subjects a real run would register a schema under (dry run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub would_register: Vec<String>,
}

fn inner_format(name: &str) -> &str {
    let mut n = name;
    while let Some(rest) = n.strip_prefix("gzip+") {
        n = rest;
    }
    n
}

/// Checks what needs no input: flags that only make sense together.
fn check_flags(plan: &ProducePlan) -> Result<()> {
    crate::engine::topic_name::validate(&plan.topic).map_err(Error::usage)?;
    crate::engine::columnarschema::topology_codecs::encodable(&plan.value_format)
        .map_err(|e| Error::usage(format!("--value-format: {e}")))?;
    if plan.key_format.is_some() && plan.key_column.is_none() {
        return Err(Error::usage(
            "--key-format encodes the --key-column: name the column too (without it the key is the __key bytes as they are)",
        ));
    }
    if let PartitionChoice::Fixed(n) = plan.partition
        && n < 0
    {
        return Err(Error::usage(format!(
            "--partition {n}: a partition is 0 or more"
        )));
    }
    if plan.value_schema.is_some()
        && !matches!(
            inner_format(&plan.value_format),
            "avro" | "protobuf" | "json-schema" | "json-sr"
        )
    {
        return Err(Error::usage(format!(
            "--value-schema is the writer schema of a registry format (avro, protobuf, json-sr), not of {}",
            plan.value_format
        )));
    }
    Ok(())
}

/// Runs one produce.
pub fn produce(plan: &ProducePlan, hooks: &mut Hooks<'_>) -> Result<Summary> {
    check_flags(plan)?;
    let opened = input::open(&plan.input, plan.format, plan.batch_rows)?;
    let is_lines = matches!(opened, Opened::Lines(_));
    if plan.binary == BinaryText::Base64 && !matches!(opened, Opened::Ndjson(_)) {
        return Err(Error::usage(
            "--binary base64 reads NDJSON rows as `tail --format ndjson --binary base64` writes them; pass --format ndjson (Arrow IPC and Parquet hold bytes as bytes, plain lines are sent as they are)",
        ));
    }
    if !is_lines
        && (plan.key_separator.is_some() || plan.line_key.is_some() || !plan.headers.is_empty())
    {
        return Err(Error::usage(
            "-k, -K and -H apply to plain-text lines (--format lines); columnar and NDJSON rows carry __key and __headers",
        ));
    }
    let (schemas, would_register) = match (&plan.schemas, plan.dry_run) {
        (Some(cache), true) => match cache.registry() {
            Some(registry) => {
                let dry = dry_registry::DryRunRegistry::new(registry.clone());
                let names = dry.would_register.clone();
                (Some(SchemaCache::new(Arc::new(dry))), Some(names))
            }
            None => (Some(cache.clone()), None),
        },
        (schemas, _) => (schemas.clone(), None),
    };
    let mut summary = Summary {
        topic: plan.topic.clone(),
        value_format: plan.value_format.clone(),
        transactional: plan.transactional_id.is_some(),
        dry_run: plan.dry_run,
        ..Summary::default()
    };
    let result = match opened {
        Opened::Lines(input) => {
            summary.input_format = InputFormat::Lines.label();
            if !matches!(inner_format(&plan.value_format), "raw" | "string") {
                return Err(Error::usage(format!(
                    "plain-text lines are sent as they are (raw or string); for --value-format {} give Arrow IPC, Parquet or NDJSON rows",
                    plan.value_format
                )));
            }
            let mut sender = Sender::open(plan, None, hooks)?;
            let r = sender::send_lines(plan, input, &mut sender, hooks);
            sender.finish(r, &mut summary)
        }
        Opened::Columnar(mut reader, format) => {
            summary.input_format = format.label();
            let schema = reader.schema();
            let encoder = RowEncoder::new(plan, &schema, schemas)?;
            let mut sender = Sender::open(plan, Some(&encoder), hooks)?;
            let feed = feed::Feed::spawn(move || {
                reader
                    .next_batch()
                    .map(|b| b.map(|b| (b, None)).map_err(Error::failure))
            })?;
            let flag = hooks.cancelled.clone();
            let r = sender::send_batches(&encoder, &mut || feed.next(&flag), &mut sender, hooks);
            sender.finish(r, &mut summary)
        }
        Opened::Ndjson(input) => {
            summary.input_format = InputFormat::Ndjson.label();
            let mut rows =
                ndjson::NdjsonRows::new(input, &plan.value_format, plan.binary, plan.batch_rows)?;
            let first = rows.next_batch()?;
            let Some(first) = first else {
                let sender = Sender::open(plan, None, hooks)?;
                return sender.finish(Ok(()), &mut summary).map(|_| summary);
            };
            let encoder = RowEncoder::new(plan, &first.schema(), schemas)?;
            let mut sender = Sender::open(plan, Some(&encoder), hooks)?;
            let mut pending = Some((first, rows.lines.clone()));
            let feed = feed::Feed::spawn(move || {
                let batch = rows.next_batch().transpose()?;
                Some(batch.map(|b| (b, Some(rows.lines.clone()))))
            })?;
            let flag = hooks.cancelled.clone();
            let r = sender::send_batches(
                &encoder,
                &mut || match pending.take() {
                    Some((b, lines)) => Some(Ok((b, Some(lines)))),
                    None => feed.next(&flag),
                },
                &mut sender,
                hooks,
            );
            sender.finish(r, &mut summary)
        }
    };
    if let Some(names) = would_register {
        summary.would_register = names.lock().unwrap_or_else(|p| p.into_inner()).clone();
    }
    result.map(|_| summary)
}

/// Whether Ctrl-C was pressed.
fn cancelled(hooks: &Hooks<'_>) -> bool {
    hooks.cancelled.load(Ordering::SeqCst)
}
