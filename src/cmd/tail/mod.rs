//! `tail TOPIC…`: the command line of the tail use case (`ops::tail`), which reads
//! topics as Arrow record batches and writes them as an Arrow IPC stream or file,
//! Parquet, NDJSON, or a table preview on a terminal.
//!
//! Here only: the flags ([`TailArgs`]); `plan`, which validates them into an
//! `ops::tail::TailPlan` and the output's shape; one call to `ops::tail::run`; and
//! `render`, which draws the table preview (a sink) and prints the summary and the
//! exit. The pipeline, the codecs (`ops::tail::formats`) and the `--from` grammar
//! (`ops::tail::positions`) live in `ops::tail`; the data sinks in `io::batch_sink`.

mod plan;
mod render;

use std::path::PathBuf;
use std::sync::Arc;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::schema_cache::{SchemaCacheArgs, decoding_cache};
use crate::cmd::tail_host::ConsoleHost;
use crate::cmd::threads::ThreadsArgs;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::ops::tail::{DEFAULT_BATCH_RECORDS, Isolation, TailContext};

pub use crate::io::batch_sink::DEFAULT_ROW_GROUP_ROWS;
pub use plan::ARROW_PIPE_HINT;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Arrow IPC stream (`.arrows`, application/vnd.apache.arrow.stream).
    Arrow,
    /// Arrow IPC file (`.arrow`).
    ArrowFile,
    /// Parquet, zstd-compressed, every timestamp in µs, headers typed (see --headers-encoding).
    Parquet,
    /// One JSON object per line: raw bytes as text when UTF-8 (see --binary), headers as an object, nested values as JSON.
    Ndjson,
    /// A table preview for people.
    Table,
}

/// How NDJSON and the table show raw bytes (raw keys and values, header values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BinaryArg {
    /// Valid UTF-8 as text (as kcat prints it), other bytes as {"base64": "…"}.
    Auto,
    /// Every byte string as a base64 JSON string.
    Base64,
}

/// How Arrow IPC and Parquet hold `__timestamp` and `__headers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HeadersEncoding {
    /// Typed: __headers as list<struct<key: utf8, value: binary>>, __timestamp as timestamp[ms, UTC] (µs in Parquet).
    List,
    /// The library layout (docs/formats.md §3/§4): __headers as the header-list byte cell, __timestamp as Int64 epoch ms.
    Library,
}

/// `--isolation`: the clap side of the one isolation type, `ops::tail::Isolation` (ops never
/// derive clap traits).
impl ValueEnum for Isolation {
    fn value_variants<'a>() -> &'a [Self] {
        &[Isolation::ReadCommitted, Isolation::ReadUncommitted]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            Isolation::ReadCommitted => "read-committed",
            Isolation::ReadUncommitted => "read-uncommitted",
        }))
    }
}

/// Parses a byte size: a number with an optional K/M/G (×1024) suffix, e.g. `128MiB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits_end);
    let n: u64 = n.parse().map_err(|_| format!("invalid size {text:?}"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "invalid size {text:?}: use a number with K, M or G"
            ));
        }
    };
    n.checked_mul(mult)
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("invalid size {text:?}"))
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  krabka-streams tail orders -e --value-format avro --out orders.parquet
  krabka-streams tail orders --from @-1h -n 100 --format ndjson
  krabka-streams tail orders -e --value-format avro --where \"status = 'PAID' AND amount > 100.0\"
  krabka-streams tail orders -g audit --from start:end | duckdb …")]
pub struct TailArgs {
    /// Topics to read.
    #[arg(required = true, value_name = "TOPIC")]
    pub topics: Vec<String>,

    /// Only these partitions (comma list, e.g. 0,3).
    #[arg(short = 'p', long = "partitions", value_name = "LIST")]
    pub partitions: Option<String>,

    /// Start (and optional stop): start|end|+N|-N|N|@TIME|@-1h|s@TIME, then :end|:N|:TIME [default: start].
    #[arg(long = "from", value_name = "POSITION", allow_hyphen_values = true)]
    pub from: Option<String>,

    /// Stop at the end offsets seen when the tail starts (also in group mode).
    #[arg(short = 'e', long = "until-end")]
    pub until_end: bool,

    /// Stop after this many records (after filtering).
    #[arg(
        short = 'n',
        long = "max-records",
        visible_alias = "num",
        value_name = "N"
    )]
    pub max_records: Option<u64>,

    /// Consume as this consumer group (positions from its committed offsets; commits what was written).
    #[arg(short = 'g', long = "group", value_name = "GROUP")]
    pub group: Option<String>,

    /// Transaction isolation of the reads.
    #[arg(long = "isolation", value_enum, default_value_t = Isolation::ReadUncommitted)]
    pub isolation: Isolation,

    /// Keep only records whose key matches this glob (*, ?, [a-z]).
    #[arg(long = "key-glob", value_name = "GLOB")]
    pub key_glob: Option<String>,

    /// Keep only records with a header NAME whose value matches GLOB (repeatable; all must match).
    #[arg(long = "header", value_name = "NAME=GLOB", action = clap::ArgAction::Append)]
    pub headers: Vec<String>,

    /// Keep only rows for which this SQL predicate over the decoded columns is true
    /// (payload and reserved columns, e.g. "amount > 100 AND __partition = 0"); null is false.
    #[arg(long = "where", value_name = "PREDICATE")]
    pub predicate: Option<String>,

    /// Add the `__topic` column (dictionary-encoded utf8, before `__key`) also when one
    /// topic is read; with several topics it is always there.
    #[arg(long = "topic-column")]
    pub topic_column: bool,

    /// Output only these columns, in this order (payload and reserved names, comma list).
    #[arg(long = "columns", value_name = "LIST", value_delimiter = ',')]
    pub columns: Vec<String>,

    /// Key format, optionally per topic: [TOPIC=]raw|string|json|json:FILE|json-sr|protobuf|avro|avro:FILE|gzip+… (repeatable).
    #[arg(long = "key-format", value_name = "[TOPIC=]FORMAT", action = clap::ArgAction::Append)]
    pub key_formats: Vec<String>,

    /// Value format, optionally per topic: [TOPIC=]raw|string|json|json:FILE|json-sr|protobuf|avro|avro:FILE|arrow|gzip+… (repeatable).
    #[arg(long = "value-format", value_name = "[TOPIC=]FORMAT", action = clap::ArgAction::Append)]
    pub value_formats: Vec<String>,

    /// Output format [default: table on a terminal, else arrow; with --out, from the extension].
    #[arg(long = "format", value_enum)]
    pub format: Option<OutputFormat>,

    /// Write to this file (published atomically when the tail ends; `-` = stdout).
    #[arg(long = "out", value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// NDJSON and table: raw keys, raw values and header values as text when valid UTF-8 (auto) or always as base64 [default: auto].
    #[arg(long = "binary", value_enum)]
    pub binary: Option<BinaryArg>,

    /// Arrow IPC and Parquet: typed reserved columns (list) or the library's byte layout (library) [default: list].
    #[arg(long = "headers-encoding", value_enum, value_name = "ENCODING")]
    pub headers_encoding: Option<HeadersEncoding>,

    /// Parquet row-group size in rows.
    #[arg(long = "row-group-size", default_value_t = DEFAULT_ROW_GROUP_ROWS, value_name = "ROWS")]
    pub row_group_size: usize,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    /// Start a new output file (PATH-000000.ext, …) after this many rows.
    #[arg(long = "rotate-rows", value_name = "ROWS", requires = "out")]
    pub rotate_rows: Option<u64>,

    /// Start a new output file after about this many bytes (e.g. 256MiB).
    #[arg(long = "rotate-bytes", value_name = "SIZE", value_parser = parse_size, requires = "out")]
    pub rotate_bytes: Option<u64>,

    /// Undecodable records: fail (exit 1), skip (reported on stderr), or dead-letter FILE (NDJSON).
    #[arg(long = "on-error", value_name = "POLICY", num_args = 1..=2, default_value = "fail")]
    pub on_error: Vec<String>,

    /// Largest number of records decoded into one Arrow batch.
    #[arg(long = "batch-records", default_value_t = DEFAULT_BATCH_RECORDS, value_name = "N")]
    pub batch_records: usize,

    #[command(flatten)]
    pub schema_cache: SchemaCacheArgs,
}

pub fn run(global: &GlobalArgs, args: TailArgs) -> CliResult<()> {
    let (plan, output) = plan::build(global, &args)?;
    let settings = global.connection.kafka_settings("tail")?;
    // The cache file is read before the broker is touched: a bad file fails fast.
    let schemas = decoding_cache(global, args.schema_cache.schema_cache.as_deref())?
        .map(|c| Arc::new(c) as Arc<dyn WriterSchemas>);
    let host = ConsoleHost {
        progress: render::shows_progress(global),
    };
    let context = TailContext {
        settings,
        timeout: global.connection.timeout,
        schemas,
        sink: render::sink(&output, &args),
        host: &host,
    };
    let finished = crate::ops::tail::run(plan, context)?;
    render::summary(global, &output, &finished.summary);
    finished.outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("128MiB").unwrap(), 128 << 20);
        assert_eq!(parse_size("2g").unwrap(), 2 << 30);
        assert!(parse_size("0").is_err());
        assert!(parse_size("12 parsecs").is_err());
    }
}
