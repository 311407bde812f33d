//! `tail TOPIC…`: topics as Arrow record batches — one fetched batch is one batch
//! per topic, Kafka metadata in the five reserved columns (and `__topic` when several
//! topics are read, or with `--topic-column`) — written as an Arrow IPC
//! stream or file, Parquet, NDJSON, or a table preview on a terminal.
//!
//! This module parses and validates the flags and builds a [`run::TailPlan`];
//! `run` drives the consumer, `formats` the per-topic codecs, `positions` the
//! `--from` grammar; sinks live in `io::batch_sink`.

mod dead_letter;
mod decode_side;
pub mod formats;
mod outage;
mod poll_side;
pub mod positions;
mod predicate;
mod run;
mod source;
mod table;

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::refuse_binary_on_tty;
use crate::cmd::schema_cache::SchemaCacheArgs;
use crate::engine::columnar::record_filter::{Glob, RecordFilter};
use crate::engine::columnar::text_view::BinaryText;
use crate::io::batch_sink::DataFormat;

pub use crate::io::batch_sink::DEFAULT_ROW_GROUP_ROWS;
/// Default largest number of records decoded into one batch.
pub const DEFAULT_BATCH_RECORDS: usize = 10_000;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Isolation {
    ReadCommitted,
    ReadUncommitted,
}

/// What to do with a record that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnError {
    Fail,
    Skip,
    DeadLetter(PathBuf),
}

fn parse_on_error(values: &[String]) -> Result<OnError, String> {
    match values {
        [v] if v == "fail" => Ok(OnError::Fail),
        [v] if v == "skip" => Ok(OnError::Skip),
        [v, file] if v == "dead-letter" => Ok(OnError::DeadLetter(PathBuf::from(file))),
        [v] if v == "dead-letter" => Err("--on-error dead-letter needs a FILE".into()),
        other => Err(format!(
            "invalid --on-error {:?}: expected fail, skip or dead-letter FILE",
            other.join(" ")
        )),
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

fn parse_partitions(text: &str) -> Result<Vec<i32>, String> {
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<i32>()
                .ok()
                .filter(|p| *p >= 0)
                .ok_or_else(|| format!("invalid partition {p:?} in -p {text}"))
        })
        .collect()
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

/// The output side after validation.
#[derive(Debug, Clone)]
pub struct OutputPlan {
    pub format: OutputFormat,
    pub path: Option<PathBuf>,
    /// How the text outputs show raw bytes.
    pub binary: BinaryText,
    /// Arrow IPC and Parquet: `__timestamp` and `__headers` typed
    /// (`engine::columnar::reserved_types`) rather than in the library layout.
    pub typed_reserved: bool,
}

fn format_from_extension(path: &std::path::Path) -> Option<OutputFormat> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "arrows" => Some(OutputFormat::Arrow),
        "arrow" | "feather" | "ipc" => Some(OutputFormat::ArrowFile),
        "parquet" | "pq" => Some(OutputFormat::Parquet),
        "ndjson" | "jsonl" | "json" => Some(OutputFormat::Ndjson),
        _ => None,
    }
}

/// Whether fd 1 is a pipe or a socket (`tail … | grep`), not a file or a terminal.
fn stdout_is_pipe() -> bool {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::FileTypeExt;
    // SAFETY: fd 1 stays open for the process's life; ManuallyDrop never closes it.
    let stdout = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) });
    stdout
        .metadata()
        .map(|m| m.file_type().is_fifo() || m.file_type().is_socket())
        .unwrap_or(false)
}

/// The one-line hint for Arrow IPC written into a pipe by default — the commonest
/// newcomer mistake is `tail … | grep` — shown only to a person: stderr a terminal,
/// not `-q`, not `--output json`.
pub const ARROW_PIPE_HINT: &str = "writing an Arrow IPC stream (binary) into the pipe, for pyarrow, DuckDB or `krabka-streams run --input NAME=-`; for text lines pass --format ndjson";

fn arrow_pipe_hint(
    defaulted_to_arrow: bool,
    stdout_is_pipe: bool,
    stderr_is_terminal: bool,
    quiet: bool,
    json: bool,
) -> Option<&'static str> {
    (defaulted_to_arrow && stdout_is_pipe && stderr_is_terminal && !quiet && !json)
        .then_some(ARROW_PIPE_HINT)
}

impl OutputPlan {
    fn resolve(args: &TailArgs, global: &GlobalArgs) -> CliResult<Self> {
        let path = args.out.clone().filter(|p| p.as_os_str() != "-");
        let format = match (args.format, &path) {
            (Some(f), _) => f,
            (None, Some(p)) => format_from_extension(p).unwrap_or(OutputFormat::Arrow),
            (None, None) if std::io::stdout().is_terminal() => OutputFormat::Table,
            (None, None) => OutputFormat::Arrow,
        };
        let defaulted = args.format.is_none() && args.out.is_none();
        if let Some(hint) = arrow_pipe_hint(
            defaulted && format == OutputFormat::Arrow,
            stdout_is_pipe(),
            std::io::stderr().is_terminal(),
            global.output.quiet > 0,
            global.output.output == crate::cmd::global::OutputMode::Json,
        ) {
            eprintln!("krabka-streams tail: {hint}");
        }
        if path.is_none() && format != OutputFormat::Table && format != OutputFormat::Ndjson {
            refuse_binary_on_tty(match format {
                OutputFormat::Parquet => "Parquet",
                _ => "Arrow IPC",
            })?;
        }
        if (args.rotate_rows.is_some() || args.rotate_bytes.is_some())
            && format == OutputFormat::Table
        {
            return Err(CliError::usage(
                "--rotate-rows/--rotate-bytes need a file format",
            ));
        }
        if let Some(p) = &path
            && (args.rotate_rows.is_some() || args.rotate_bytes.is_some())
            && !matches!(
                crate::io::output_file::resolve(p),
                Ok(crate::io::output_file::Resolved::Replace(_))
            )
        {
            return Err(CliError::usage(format!(
                "--rotate-rows/--rotate-bytes need --out to name a regular file in a directory, not {}",
                p.display()
            )));
        }
        if args.binary.is_some() && !matches!(format, OutputFormat::Ndjson | OutputFormat::Table) {
            return Err(CliError::usage(
                "--binary applies to NDJSON and the table; Arrow IPC and Parquet keep bytes as binary columns",
            ));
        }
        let binary = match args.binary.unwrap_or(BinaryArg::Auto) {
            BinaryArg::Auto => BinaryText::Auto,
            BinaryArg::Base64 => BinaryText::Base64,
        };
        if args.headers_encoding.is_some()
            && matches!(format, OutputFormat::Ndjson | OutputFormat::Table)
        {
            return Err(CliError::usage(
                "--headers-encoding applies to Arrow IPC and Parquet output; NDJSON and the table always show headers as a JSON object",
            ));
        }
        // Typed by default in every binary format: `run --input` and `barrier verify
        // --input` read both layouts, so a `tail | run` pipe works either way.
        let typed_reserved =
            args.headers_encoding.unwrap_or(HeadersEncoding::List) == HeadersEncoding::List;
        Ok(OutputPlan {
            format,
            path,
            binary,
            typed_reserved,
        })
    }

    /// NDJSON and the table show the text view of each batch.
    pub fn is_text(&self) -> bool {
        matches!(self.format, OutputFormat::Ndjson | OutputFormat::Table)
    }

    pub fn data_format(&self) -> Option<DataFormat> {
        match self.format {
            OutputFormat::Arrow => Some(DataFormat::ArrowStream),
            OutputFormat::ArrowFile => Some(DataFormat::ArrowFile),
            OutputFormat::Parquet => Some(DataFormat::Parquet),
            OutputFormat::Ndjson => Some(DataFormat::Ndjson),
            OutputFormat::Table => None,
        }
    }
}

/// A schema file named by a format (`json:FILE`, `avro:FILE`, under `gzip+`).
fn schema_file(format: &formats::Format) -> Option<&std::path::Path> {
    match format {
        formats::Format::Json(Some(p)) | formats::Format::Avro(Some(p)) => Some(p),
        formats::Format::Gzip(inner) => schema_file(inner),
        _ => None,
    }
}

/// No output destroys a file the tail reads or another output (`io::path_conflict`).
fn check_paths(
    global: &GlobalArgs,
    args: &TailArgs,
    key_specs: &[formats::FormatSpec],
    value_specs: &[formats::FormatSpec],
    on_error: &OnError,
    output: &OutputPlan,
) -> CliResult<()> {
    use crate::io::path_conflict::{Named, check};
    let mut named = Vec::new();
    if let Some(p) = &global.connection.command_config {
        named.push(Named::input(format!("--command-config {}", p.display()), p));
    }
    if let Some(p) = &args.schema_cache.schema_cache {
        named.push(Named::input(format!("--schema-cache {}", p.display()), p));
    }
    for (flag, specs) in [("--key-format", key_specs), ("--value-format", value_specs)] {
        for spec in specs {
            if let Some(p) = schema_file(&spec.format) {
                named.push(Named::input(format!("{flag} {}", p.display()), p));
            }
        }
    }
    let out = output.path.clone().unwrap_or_else(|| PathBuf::from("-"));
    if args.rotate_rows.is_some() || args.rotate_bytes.is_some() {
        named.push(Named::rotated_output(
            format!("--out {}", out.display()),
            out,
        ));
    } else {
        named.push(Named::output(format!("--out {}", out.display()), out));
    }
    if let OnError::DeadLetter(p) = on_error {
        named.push(Named::output(
            format!("--on-error dead-letter {}", p.display()),
            p,
        ));
    }
    check(&named).map_err(CliError::usage)
}

fn build_filter(args: &TailArgs, partitions: &[i32]) -> CliResult<RecordFilter> {
    let key = args
        .key_glob
        .as_deref()
        .map(Glob::new)
        .transpose()
        .map_err(CliError::usage)?;
    let headers = args
        .headers
        .iter()
        .map(|h| {
            let (name, glob) = h.split_once('=').ok_or_else(|| {
                CliError::usage(format!("invalid --header {h:?}: expected NAME=GLOB"))
            })?;
            Ok((name.to_string(), Glob::new(glob).map_err(CliError::usage)?))
        })
        .collect::<CliResult<Vec<_>>>()?;
    Ok(RecordFilter {
        partitions: partitions.to_vec(),
        key,
        headers,
    })
}

pub fn run(global: &GlobalArgs, args: TailArgs) -> CliResult<()> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let mut positions = match &args.from {
        Some(f) => positions::parse_from(f, now_ms).map_err(CliError::usage)?,
        None => positions::Positions {
            start: positions::Start::Beginning,
            stop: positions::Stop::Never,
        },
    };
    if args.until_end {
        if positions.stop != positions::Stop::Never {
            return Err(CliError::usage(
                "--until-end conflicts with the stop position given in --from",
            ));
        }
        positions.stop = positions::Stop::End;
    }
    if args.group.is_some()
        && !matches!(
            positions.start,
            positions::Start::Beginning | positions::Start::End
        )
    {
        return Err(CliError::usage(
            "with -g the group's committed offsets decide where to start: --from takes only start or end (optionally with :end)",
        ));
    }
    if args.group.is_some()
        && !matches!(
            positions.stop,
            positions::Stop::Never | positions::Stop::End
        )
    {
        return Err(CliError::usage(
            "with -g the only stop position is end (-e)",
        ));
    }
    let partitions = args
        .partitions
        .as_deref()
        .map(parse_partitions)
        .transpose()
        .map_err(CliError::usage)?
        .unwrap_or_default();
    let key_specs = args
        .key_formats
        .iter()
        .map(|s| formats::parse_spec(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::usage)?;
    let value_specs = args
        .value_formats
        .iter()
        .map(|s| formats::parse_spec(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::usage)?;
    for t in &args.topics {
        crate::engine::topic_name::validate(t).map_err(CliError::usage)?;
    }
    let registry = global.registry.settings()?;
    for t in &args.topics {
        formats::check(
            t,
            &formats::format_for(&key_specs, t),
            &formats::format_for(&value_specs, t),
            registry.is_some() || args.schema_cache.schema_cache.is_some(),
        )?;
    }
    let on_error = parse_on_error(&args.on_error).map_err(CliError::usage)?;
    if args.batch_records == 0 {
        return Err(CliError::usage("--batch-records must be at least 1"));
    }
    let output = OutputPlan::resolve(&args, global)?;
    check_paths(global, &args, &key_specs, &value_specs, &on_error, &output)?;
    let filter = build_filter(&args, &partitions)?;
    let predicate = args
        .predicate
        .as_deref()
        .map(predicate::WherePredicate::parse)
        .transpose()?;
    let several_topics = args
        .topics
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let plan = run::TailPlan {
        topics: args.topics.clone(),
        topic_column: args.topic_column || several_topics,
        partitions,
        positions,
        max_records: args.max_records,
        group: args.group.clone(),
        isolation: match args.isolation {
            Isolation::ReadCommitted => "read_committed",
            Isolation::ReadUncommitted => "read_uncommitted",
        }
        .to_string(),
        filter,
        predicate,
        columns: args.columns.clone(),
        key_specs,
        value_specs,
        output,
        row_group_size: args.row_group_size,
        rotate_rows: args.rotate_rows,
        rotate_bytes: args.rotate_bytes,
        on_error,
        batch_records: args.batch_records,
        schema_cache: args.schema_cache.schema_cache.clone(),
        report: true,
    };
    run::run(global, plan)
}

/// For the demo: tails `topic` (`value_format` values via the registry, writer
/// schemas from `schema_cache` first) to the end into a Parquet file, then
/// renders the file's first rows as a table preview.
pub fn demo_to_parquet(
    bootstrap: &str,
    registry_url: &str,
    schema_cache: Option<&std::path::Path>,
    topic: &str,
    value_format: &str,
    path: &std::path::Path,
    preview_rows: usize,
) -> CliResult<(u64, String)> {
    let mut global = GlobalArgs::default();
    global.connection.bootstrap_server = Some(bootstrap.to_string());
    global.connection.request_timeout_ms = 30_000;
    global.connection.timeout = std::time::Duration::from_secs(30);
    global.registry.registry = Some(registry_url.to_string());
    let plan = run::TailPlan {
        topics: vec![topic.to_string()],
        topic_column: false,
        partitions: Vec::new(),
        positions: positions::Positions {
            start: positions::Start::Beginning,
            stop: positions::Stop::End,
        },
        max_records: None,
        group: None,
        isolation: "read_uncommitted".into(),
        filter: RecordFilter::default(),
        predicate: None,
        columns: Vec::new(),
        key_specs: vec![formats::parse_spec("string").map_err(CliError::failure)?],
        value_specs: vec![formats::parse_spec(value_format).map_err(CliError::failure)?],
        output: OutputPlan {
            format: OutputFormat::Parquet,
            path: Some(path.to_path_buf()),
            binary: BinaryText::Auto,
            typed_reserved: true,
        },
        row_group_size: DEFAULT_ROW_GROUP_ROWS,
        rotate_rows: None,
        rotate_bytes: None,
        on_error: OnError::Fail,
        batch_records: DEFAULT_BATCH_RECORDS,
        schema_cache: schema_cache.map(|p| p.to_path_buf()),
        report: false,
    };
    run::run(&global, plan)?;
    let file = std::fs::File::open(path)
        .map_err(|e| CliError::failure(format!("cannot open {}: {e}", path.display())))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(preview_rows.max(1)).build())
        .map_err(|e| CliError::failure(format!("cannot read {}: {e}", path.display())))?;
    let mut rows = 0u64;
    let mut preview = Vec::new();
    for batch in reader {
        let batch =
            batch.map_err(|e| CliError::failure(format!("cannot read {}: {e}", path.display())))?;
        if rows == 0 {
            let shown = batch
                .project(
                    &(0..batch.num_columns())
                        .filter(|&i| {
                            !matches!(
                                batch.schema().field(i).name().as_str(),
                                "__headers" | "__key"
                            )
                        })
                        .collect::<Vec<_>>(),
                )
                .map_err(|e| CliError::failure(e.to_string()))?;
            table::render(
                &mut preview,
                &shown.slice(0, shown.num_rows().min(preview_rows)),
            )?;
        }
        rows += batch.num_rows() as u64;
    }
    Ok((rows, String::from_utf8_lossy(&preview).into_owned()))
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

    #[test]
    fn on_error_takes_a_file_only_for_dead_letters() {
        assert_eq!(parse_on_error(&["fail".into()]).unwrap(), OnError::Fail);
        assert_eq!(
            parse_on_error(&["dead-letter".into(), "x.ndjson".into()]).unwrap(),
            OnError::DeadLetter("x.ndjson".into())
        );
        assert!(parse_on_error(&["dead-letter".into()]).is_err());
        assert!(parse_on_error(&["skip".into(), "x".into()]).is_err());
    }

    #[test]
    fn the_arrow_pipe_hint_is_for_a_person_watching_a_default_arrow_pipe_only() {
        assert_eq!(
            arrow_pipe_hint(true, true, true, false, false),
            Some(ARROW_PIPE_HINT)
        );
        assert!(arrow_pipe_hint(false, true, true, false, false).is_none());
        assert!(arrow_pipe_hint(true, false, true, false, false).is_none());
        assert!(arrow_pipe_hint(true, true, false, false, false).is_none());
        assert!(arrow_pipe_hint(true, true, true, true, false).is_none());
        assert!(arrow_pipe_hint(true, true, true, false, true).is_none());
    }

    #[test]
    fn partition_lists_are_non_negative_integers() {
        assert_eq!(parse_partitions("0,3").unwrap(), vec![0, 3]);
        assert!(parse_partitions("0,-1").is_err());
        assert!(parse_partitions("a").is_err());
    }
}
