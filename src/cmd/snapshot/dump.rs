//! `snapshot dump FILE | DIR --partition P --epoch E|live | DIR --group G --task T --epoch E`:
//! one container's entries with their payloads decoded where the format is known
//! (D12), as a table, as JSON, or as the lossless JSON document that `snapshot
//! restore --from-json` turns back into the same bytes. Reading and writing the
//! document to a file are `ops::snapshot::dump`; this file renders.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::epoch_or_live;
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, finish_stdout};
use crate::cmd::render::snapshot::{dumped_human, dumped_json};
use crate::engine::columnar::snapshot::lossless::write_lossless;
use crate::ops::snapshot::dump::{DumpPlan, dump, dump_bytes, write_lossless_file};

#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A snapshot file, or a snapshot directory together with --epoch and either
    /// --partition (Java/Go) or --group and --task (Rust).
    #[arg(value_name = "FILE|DIR", required_unless_present = "state_topic")]
    pub path: Option<PathBuf>,

    /// Dump from a state topic instead (`state_store: kafka`, with --partition and
    /// --epoch), read with the broker flags.
    #[arg(long, value_name = "TOPIC", conflicts_with_all = ["path", "group", "task"])]
    pub state_topic: Option<String>,

    /// Java/Go logical partition (with a directory).
    #[arg(long, value_name = "P", conflicts_with_all = ["group", "task"])]
    pub partition: Option<i32>,

    /// Epoch number, or `live` for Java/Go live state (with a directory).
    #[arg(long, value_name = "E|live", value_parser = epoch_or_live)]
    pub epoch: Option<i64>,

    /// Rust barrier group (with a directory and --task).
    #[arg(long, value_name = "G", requires = "task")]
    pub group: Option<String>,

    /// Rust task `<subtopology>-<partition>` (with a directory and --group).
    #[arg(long, value_name = "T", requires = "group")]
    pub task: Option<String>,

    /// Write the lossless JSON document (names as hex, values as base64) that
    /// `snapshot restore --from-json` writes back byte for byte.
    #[arg(long)]
    pub lossless: bool,

    /// With --lossless: write the document to this file instead of stdout.
    #[arg(long, value_name = "FILE", requires = "lossless")]
    pub out: Option<PathBuf>,
}

pub fn run(global: &GlobalArgs, args: DumpArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let dumped = match (&args.state_topic, args.path) {
        (Some(topic), _) => {
            let (Some(partition), Some(epoch)) = (args.partition, args.epoch) else {
                return Err(crate::cmd::exit::CliError::usage(
                    "dumping from a state topic needs --partition P and --epoch E|live",
                ));
            };
            let kafka = global.connection.kafka_settings("snapshot dump")?;
            let (source, bytes) = crate::ops::state_inspect::topic_container(
                &kafka,
                topic,
                partition,
                epoch,
                global.connection.timeout,
            )?;
            let name =
                crate::engine::columnar::snapshot::state_record::snapshot_key(partition, epoch);
            dump_bytes(source, Some(format!("{name}.snapshot")), bytes)?
        }
        (None, Some(path)) => dump(&DumpPlan {
            path,
            partition: args.partition,
            epoch: args.epoch,
            group: args.group,
            task: args.task,
            out: args.out.clone(),
        })?,
        (None, None) => {
            return Err(crate::cmd::exit::CliError::usage(
                "give a FILE, a DIR or --state-topic TOPIC",
            ));
        }
    };
    if !args.lossless {
        // The JSON of a large container holds every opaque byte as hex: build it only when asked.
        let data = if ui.is_json() {
            dumped_json(&dumped)
        } else {
            Value::Null
        };
        return ui.report(data, |out| dumped_human(&dumped, out));
    }
    match &args.out {
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
            finish_stdout(
                write_lossless(&mut out, dumped.file_name.as_deref(), &dumped.snapshot)
                    .and_then(|_| out.flush()),
            )
        }
        Some(path) => {
            write_lossless_file(path, &dumped)?;
            ui.report(
                json!({"file": dumped.source, "out": path.display().to_string(), "entries": dumped.snapshot.entries.len()}),
                |out| {
                    writeln!(
                        out,
                        "wrote the lossless dump of {} ({} entries) to {}",
                        dumped.source,
                        dumped.snapshot.entries.len(),
                        path.display()
                    )
                },
            )
        }
    }
}
