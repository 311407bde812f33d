//! `produce TOPIC`: arguments → [`ProducePlan`] → `ops::produce::produce` → the
//! summary (records, bytes, partitions) on stderr, or one JSON document with
//! `--output json`. A progress line is shown on a terminal only.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::schema_cache::decoding_cache;
use crate::ops::produce::{
    BinaryText, Hooks, InputFormat, OnError, PartitionChoice, ProducePlan, Summary, lines, produce,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// From the extension, else the first bytes (Arrow IPC, Parquet), else lines.
    Auto,
    /// Arrow IPC, stream or file.
    Arrow,
    Parquet,
    /// Rows as `tail --format ndjson` writes them.
    Ndjson,
    /// One record per line, as kcat -P (-K key separator, -H headers).
    Lines,
}

/// How the NDJSON input holds raw bytes (tail's --binary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BinaryArg {
    /// Text when valid UTF-8, other bytes as {"base64": "…"}.
    Auto,
    /// Every byte string a base64 JSON string.
    Base64,
}

/// Write rows of Arrow IPC, Parquet or NDJSON (or plain lines, as kcat -P) to a topic, one record per row.
#[derive(Debug, Args)]
pub struct ProduceArgs {
    /// The topic to write to (it must exist).
    pub topic: String,

    /// Read from this file (`-` = stdin; a FIFO is read as a stream).
    #[arg(short = 'i', long = "input", value_name = "PATH", default_value = "-")]
    pub input: String,

    /// Input format.
    #[arg(long = "format", value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,

    /// Value encoding: raw|string (the `value` column)|json|avro|protobuf|json-sr (registry, schema from the columns or --value-schema)|arrow|gzip+….
    #[arg(long = "value-format", value_name = "FORMAT", default_value = "raw")]
    pub value_format: String,

    /// Writer schema of a registry value format: FILE.avsc, FILE.proto[:pkg.Msg] or FILE.json.
    #[arg(long = "value-schema", value_name = "FILE")]
    pub value_schema: Option<PathBuf>,

    /// Key from this column (encoded by --key-format) instead of __key.
    #[arg(long = "key-column", value_name = "COLUMN")]
    pub key_column: Option<String>,

    /// Leave these input columns out (comma list), e.g. `key`, the decoded key column `tail --key-format` adds.
    #[arg(long = "drop-columns", value_name = "LIST", value_delimiter = ',')]
    pub drop_columns: Vec<String>,

    /// Encoding of --key-column: string|raw|json|avro|protobuf|json-sr [default: string].
    #[arg(long = "key-format", value_name = "FORMAT", requires = "key_column")]
    pub key_format: Option<String>,

    /// Lines: this key for every record (kcat -k).
    #[arg(
        short = 'k',
        long = "key",
        value_name = "KEY",
        conflicts_with = "key_separator"
    )]
    pub key: Option<String>,

    /// Lines: the bytes before the first SEP are the key (kcat -K).
    #[arg(short = 'K', long = "key-separator", value_name = "SEP")]
    pub key_separator: Option<String>,

    /// Lines: add this header to every record, NAME=VALUE or NAME for a null value (repeatable; kcat -H).
    #[arg(short = 'H', long = "header", value_name = "NAME=VALUE", action = clap::ArgAction::Append)]
    pub headers: Vec<String>,

    /// NDJSON: raw keys, raw values and header values are text or {"base64": …} (auto), or every one base64 (base64), as `tail --binary` wrote them.
    #[arg(long = "binary", value_enum, default_value_t = BinaryArg::Auto)]
    pub binary: BinaryArg,

    /// keep (each row's __partition), hash (murmur2 of the key as Kafka's default partitioner; a keyless record goes where librdkafka's partitioner puts it, a random partition kept for sticky.partitioning.linger.ms) or a partition number (kcat -p).
    #[arg(
        short = 'p',
        long = "partition",
        value_name = "keep|hash|N",
        default_value = "hash"
    )]
    pub partition: String,

    /// All or nothing: one transaction, aborted on any error, Ctrl-C or SIGTERM (exit 130) (read_committed readers see all rows or none).
    #[arg(long = "transactional")]
    pub transactional: bool,

    /// The transactional id [default: krabka-streams-produce-TOPIC-PID].
    #[arg(
        long = "transactional-id",
        value_name = "ID",
        requires = "transactional"
    )]
    pub transactional_id: Option<String>,

    /// Rows that cannot be encoded: fail (exit 1 naming the row), skip (reported on stderr), or dead-letter FILE (NDJSON).
    #[arg(long = "on-error", value_name = "POLICY", num_args = 1..=2, default_value = "fail")]
    pub on_error: Vec<String>,

    /// Rows read and encoded at a time.
    #[arg(long = "batch-rows", value_name = "N", default_value_t = 10_000)]
    pub batch_rows: usize,
}

fn parse_partition(text: &str) -> CliResult<PartitionChoice> {
    match text {
        "keep" => Ok(PartitionChoice::Keep),
        "hash" => Ok(PartitionChoice::Hash),
        n => n
            .parse::<i32>()
            .ok()
            .filter(|n| *n >= 0)
            .map(PartitionChoice::Fixed)
            .ok_or_else(|| {
                CliError::usage(format!(
                    "invalid --partition {n:?}: expected keep, hash or a partition number"
                ))
            }),
    }
}

fn parse_on_error(values: &[String]) -> CliResult<OnError> {
    match values {
        [v] if v == "fail" => Ok(OnError::Fail),
        [v] if v == "skip" => Ok(OnError::Skip),
        [v, file] if v == "dead-letter" => Ok(OnError::DeadLetter(PathBuf::from(file))),
        [v] if v == "dead-letter" => Err(CliError::usage("--on-error dead-letter needs a FILE")),
        other => Err(CliError::usage(format!(
            "invalid --on-error {:?}: expected fail, skip or dead-letter FILE",
            other.join(" ")
        ))),
    }
}

/// The dead-letter file never replaces or grows a file this command reads
/// (`io::path_conflict`): the input, `--value-schema`, `--command-config`.
fn check_paths(global: &GlobalArgs, args: &ProduceArgs) -> CliResult<()> {
    use crate::io::path_conflict::{Named, check};
    let OnError::DeadLetter(dead_letter) = parse_on_error(&args.on_error)? else {
        return Ok(());
    };
    let mut named = vec![
        Named::input(format!("--input {}", args.input), &args.input),
        Named::output(
            format!("--on-error dead-letter {}", dead_letter.display()),
            &dead_letter,
        ),
    ];
    if let Some(p) = &args.value_schema {
        named.push(Named::input(format!("--value-schema {}", p.display()), p));
    }
    named.extend(global.connection.read_files());
    check(&named).map_err(CliError::usage)
}

fn plan(global: &GlobalArgs, args: &ProduceArgs) -> CliResult<ProducePlan> {
    let dry_run = global.output.dry_run;
    let kafka = if dry_run && global.connection.bootstrap_server.is_none() {
        None
    } else {
        Some(global.connection.kafka_settings("produce")?)
    };
    if args.batch_rows == 0 {
        return Err(CliError::usage("--batch-rows must be at least 1"));
    }
    check_paths(global, args)?;
    let headers = args
        .headers
        .iter()
        .map(|h| lines::parse_header(h).map_err(CliError::usage))
        .collect::<CliResult<Vec<_>>>()?;
    if args.key_separator.as_deref() == Some("") {
        return Err(CliError::usage("-K needs a separator of at least one byte"));
    }
    Ok(ProducePlan {
        topic: args.topic.clone(),
        input: args.input.clone(),
        format: match args.format {
            FormatArg::Auto => InputFormat::Auto,
            FormatArg::Arrow => InputFormat::Arrow,
            FormatArg::Parquet => InputFormat::Parquet,
            FormatArg::Ndjson => InputFormat::Ndjson,
            FormatArg::Lines => InputFormat::Lines,
        },
        value_format: args.value_format.clone(),
        value_schema: args.value_schema.clone(),
        key_column: args.key_column.clone(),
        drop_columns: args.drop_columns.clone(),
        key_format: args.key_format.clone(),
        key_separator: args.key_separator.as_ref().map(|s| s.as_bytes().to_vec()),
        line_key: args.key.as_ref().map(|s| s.as_bytes().to_vec()),
        headers,
        binary: match args.binary {
            BinaryArg::Auto => BinaryText::Auto,
            BinaryArg::Base64 => BinaryText::Base64,
        },
        partition: parse_partition(&args.partition)?,
        transactional_id: args.transactional.then(|| {
            args.transactional_id.clone().unwrap_or_else(|| {
                format!(
                    "krabka-streams-produce-{}-{}",
                    args.topic,
                    std::process::id()
                )
            })
        }),
        on_error: parse_on_error(&args.on_error)?,
        dry_run,
        kafka,
        timeout: global.connection.timeout,
        schemas: decoding_cache(global, None)?,
        batch_rows: args.batch_rows,
    })
}

fn human_summary(s: &Summary) -> String {
    let verb = if s.dry_run { "would send" } else { "sent" };
    let mut parts: Vec<String> = s
        .partitions
        .iter()
        .map(|(p, n)| format!("{p}: {n}"))
        .collect();
    if s.unassigned > 0 {
        parts.push(format!("unassigned: {}", s.unassigned));
    }
    let mut text = format!(
        "{verb} {} records ({} bytes of keys and values) to {} [{}]",
        s.records,
        s.bytes,
        s.topic,
        parts.join(", ")
    );
    if s.transactional {
        text.push_str(if s.dry_run {
            " in one transaction"
        } else {
            ", committed in one transaction"
        });
    }
    if s.skipped > 0 {
        text.push_str(&format!("; skipped {} rows", s.skipped));
    }
    if s.dead_lettered > 0 {
        text.push_str(&format!("; dead-lettered {} rows", s.dead_lettered));
    }
    if !s.would_register.is_empty() {
        text.push_str(&format!(
            "; would register a schema under {}",
            s.would_register.join(", ")
        ));
    }
    text
}

pub fn run(global: &GlobalArgs, args: ProduceArgs) -> CliResult<()> {
    let plan = plan(global, &args)?;
    let ui = Ui::new(&global.output);
    let show_progress =
        std::io::stderr().is_terminal() && global.output.quiet == 0 && !ui.is_json();
    let bar = show_progress.then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(format!("producing to {}", plan.topic));
        bar
    });
    let mut progress = |records: u64, bytes: u64| {
        if let Some(bar) = &bar {
            bar.set_message(format!(
                "{records} records, {} to {}",
                indicatif::HumanBytes(bytes),
                plan.topic
            ));
            bar.tick();
        }
    };
    let quiet = global.output.quiet > 0;
    let mut refused = |row: &str, why: &str| {
        if !quiet {
            tracing::warn!("{row}: {why}");
        }
    };
    let cancelled = Arc::new(AtomicBool::new(false));
    let catch_signals = {
        let flag = cancelled.clone();
        move || -> Box<dyn std::any::Any> {
            Box::new(crate::cmd::interrupt::cooperate(flag.clone()))
        }
    };
    let mut hooks = Hooks {
        cancelled,
        catch_signals: Some(&catch_signals),
        progress: &mut progress,
        refused: &mut refused,
    };
    let result = produce(&plan, &mut hooks);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let summary = result?;
    if ui.is_json() {
        let mut data =
            serde_json::to_value(&summary).map_err(|e| CliError::failure(e.to_string()))?;
        data["partitions"] = json!(
            summary
                .partitions
                .iter()
                .map(|(p, n)| json!({"partition": p, "records": n}))
                .collect::<Vec<_>>()
        );
        ui.report(data, |_| Ok(()))
    } else {
        if global.output.quiet == 0 {
            let mut err = std::io::stderr().lock();
            if summary.dry_run {
                let _ = writeln!(err, "{}", crate::cmd::output::DRY_RUN_BANNER);
            }
            let _ = writeln!(err, "{}", human_summary(&summary));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_and_policies_parse() {
        assert_eq!(parse_partition("keep").unwrap(), PartitionChoice::Keep);
        assert_eq!(parse_partition("3").unwrap(), PartitionChoice::Fixed(3));
        assert!(parse_partition("-1").is_err());
        assert!(parse_partition("round").is_err());
        assert_eq!(
            parse_on_error(&["dead-letter".into(), "d.ndjson".into()]).unwrap(),
            OnError::DeadLetter("d.ndjson".into())
        );
        assert!(parse_on_error(&["dead-letter".into()]).is_err());
    }
}
