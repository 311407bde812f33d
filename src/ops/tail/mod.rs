//! The `tail` use case: topics read as Arrow record batches — one fetched batch is
//! one batch per topic, Kafka metadata in the reserved columns (and `__topic` with
//! several topics or on request) — decoded, filtered and written to a sink.
//!
//! `cmd::tail` parses the flags into a [`TailPlan`], builds the [`TailContext`]
//! (client settings, writer schemas, the sink, the host's signals and progress
//! line), calls [`run`] once and renders the [`Finished`] answer. Here:
//!
//! - `run`: positions the consumer (`--from`, `-e`, `-p`, `-g`) and drives the
//!   pipeline — the poll side on the calling thread, the decode side on its own —
//!   then closes the sink, commits (group mode) and counts;
//! - `poll_side`: fetching into arenas, stops, pause/resume, offset stores, outage
//!   detection (`outage`), the progress line's numbers;
//! - `decode_side`: decoding, holds for a pending writer schema, `--on-error`
//!   (`dead_letter`), `--where` (`predicate`), projection, `--max-records` cuts,
//!   which offsets a group may commit;
//! - `handoff`: what the two sides exchange (neither imports the other);
//! - `source` and `sink`: the traits the pipeline runs behind (`TailConsumer` and
//!   `io::batch_sink` in the product, fakes in the unit tests);
//! - `formats` (per-topic codecs) and `positions` (the `--from` grammar), which
//!   `cmd::tail` also uses to build the plan.
//!
//! Rules: docs/semantics.md §2 (pending writer schemas) and docs/formats.md §10
//! (dead-letter headers).

pub mod dead_letter;
mod decode_side;
pub mod formats;
pub mod handoff;
mod outage;
mod poll_side;
pub mod positions;
pub mod predicate;
mod run;
pub mod sink;
pub mod source;

#[cfg(test)]
mod pipeline_tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::engine::columnar::record_filter::RecordFilter;
use crate::engine::columnar::text_view::BinaryText;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::io::kafka::settings::KafkaSettings;

pub use run::{Parts, run, run_with};

/// Default largest number of records decoded into one batch.
pub const DEFAULT_BATCH_RECORDS: usize = 10_000;

/// What to do with a record that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnError {
    Fail,
    Skip,
    DeadLetter(PathBuf),
}

/// Transaction isolation of the reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    ReadUncommitted,
}

impl Isolation {
    /// librdkafka's `isolation.level` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read_committed",
            Isolation::ReadUncommitted => "read_uncommitted",
        }
    }
}

/// How rows are shaped for the sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// NDJSON and the table: the text view of each batch, raw bytes shown this way.
    Text(BinaryText),
    /// Arrow IPC and Parquet: `__timestamp` and `__headers` typed
    /// (`engine::columnar::reserved_types`) or in the library layout.
    Binary { typed_reserved: bool },
}

impl Rows {
    /// Binary outputs with the typed reserved columns.
    pub fn typed_reserved(self) -> bool {
        matches!(
            self,
            Rows::Binary {
                typed_reserved: true
            }
        )
    }
}

/// Everything `tail` was asked to do, validated.
pub struct TailPlan {
    pub topics: Vec<String>,
    /// Write the `__topic` column (several topics, or `--topic-column`).
    pub topic_column: bool,
    pub partitions: Vec<i32>,
    pub positions: positions::Positions,
    pub max_records: Option<u64>,
    pub group: Option<String>,
    pub isolation: Isolation,
    pub filter: RecordFilter,
    /// `--where`: rows of the decoded batches to keep.
    pub predicate: Option<predicate::WherePredicate>,
    pub columns: Vec<String>,
    pub key_specs: Vec<formats::FormatSpec>,
    pub value_specs: Vec<formats::FormatSpec>,
    pub rows: Rows,
    pub on_error: OnError,
    pub batch_records: usize,
}

/// What the tail asks of whoever runs it once the consumer is positioned, just
/// before the pipeline starts.
pub trait TailHost {
    /// From here on Ctrl-C and SIGTERM raise `cancelled`: the tail then ends by
    /// itself, closing its output.
    fn cooperate(&self, cancelled: Arc<AtomicBool>);
    /// The progress line to keep up to date, if any.
    fn progress(&self) -> Option<Box<dyn Progress>>;
}

/// A progress line (drawn on stderr by `cmd`).
pub trait Progress {
    fn show(&self, now: &ProgressNumbers);
    /// The tail is over: remove the line.
    fn clear(&self);
}

/// The numbers a progress line shows.
#[derive(Debug, Clone, Copy)]
pub struct ProgressNumbers {
    pub records: u64,
    /// Bytes of keys and values fetched.
    pub bytes: u64,
    pub records_per_second: f64,
    /// Records between the fetch positions and the stops (or the ends).
    pub lag: Option<i64>,
}

/// What a tail is run with besides its plan.
pub struct TailContext<'a> {
    pub settings: KafkaSettings,
    /// `--timeout`: how long the broker may be unreachable and a writer schema pending.
    pub timeout: Duration,
    /// The schema cache (registry, `--schema-cache`), if the formats need one.
    pub schemas: Option<Arc<dyn WriterSchemas>>,
    pub sink: Box<dyn sink::TailSink>,
    pub host: &'a dyn TailHost,
}

/// The summary's numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub records: u64,
    pub bytes: u64,
    pub skipped: u64,
    pub dead_lettered: u64,
    /// Files published (none for stdout, the table, or a failed tail).
    pub files: Vec<PathBuf>,
}

/// A tail that got as far as running its pipeline: what it did, and how it ended
/// (`Err` on failure or Ctrl-C, the summary still counts what was written).
#[derive(Debug)]
pub struct Finished {
    pub summary: Summary,
    pub outcome: crate::ops::Result<()>,
}
