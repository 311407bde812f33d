//! The flags of `tail` validated into an `ops::tail::TailPlan` (positions,
//! partitions, formats, filters, `--on-error`) and an [`OutputPlan`] (format, path,
//! how rows are shaped), before any broker is asked.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::refuse_binary_on_tty;
use crate::cmd::tail::{BinaryArg, HeadersEncoding, OutputFormat, TailArgs};
use crate::engine::columnar::record_filter::{Glob, RecordFilter};
use crate::engine::columnar::text_view::BinaryText;
use crate::io::batch_sink::DataFormat;
use crate::ops::tail::{OnError, Rows, TailPlan, formats, positions, predicate};

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
        if args.threads.threads.is_some() && format != OutputFormat::Parquet {
            // The only work `tail` shares out is Parquet encoding: a count for
            // any other format would be a flag that changes nothing.
            return Err(CliError::usage(
                "--threads sets the threads Parquet columns are encoded on: it needs \
                 --format parquet (or an --out ending in .parquet)",
            ));
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
                crate::io::atomic_file::resolve(p),
                Ok(crate::io::atomic_file::Resolved::Replace(_))
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
    named.extend(global.connection.read_files());
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

/// `--from` and `-e`, and what a group allows of them.
fn positions(args: &TailArgs) -> CliResult<positions::Positions> {
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
    Ok(positions)
}

/// Validates the flags into the use case's plan and the output's shape.
pub fn build(global: &GlobalArgs, args: &TailArgs) -> CliResult<(TailPlan, OutputPlan)> {
    let positions = positions(args)?;
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
    let output = OutputPlan::resolve(args, global)?;
    check_paths(global, args, &key_specs, &value_specs, &on_error, &output)?;
    let filter = build_filter(args, &partitions)?;
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
    let rows = match output.is_text() {
        true => Rows::Text(output.binary),
        false => Rows::Binary {
            typed_reserved: output.typed_reserved,
        },
    };
    let plan = TailPlan {
        topics: args.topics.clone(),
        topic_column: args.topic_column || several_topics,
        partitions,
        positions,
        max_records: args.max_records,
        group: args.group.clone(),
        isolation: args.isolation,
        filter,
        predicate,
        columns: args.columns.clone(),
        key_specs,
        value_specs,
        rows,
        on_error,
        batch_records: args.batch_records,
    };
    Ok((plan, output))
}

#[cfg(test)]
mod tests {
    use super::*;

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
