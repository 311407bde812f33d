//! `snapshot dump FILE | DIR --partition P --epoch E|live | DIR --group G --task T --epoch E`:
//! one container's entries with their payloads decoded where the format is known
//! (D12), as a table, as JSON, or as the lossless JSON document that `snapshot
//! restore --from-json` turns back into the same bytes.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};

use super::render::{payload_human, payload_json};
use super::{epoch_or_live, open_dir};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, finish_stdout};
use crate::engine::columnar::snapshot::container::{self, Generation, ReadSnapshot};
use crate::engine::columnar::snapshot::lossless::write_lossless;
use crate::engine::columnar::snapshot::naming::NO_EPOCH;
use crate::engine::columnar::snapshot::payload::classify;
use crate::engine::columnar::snapshot::plan::{SnapshotUnit, not_retained};
use crate::io::snapshot_dir::{SnapshotDir, read_named_file};

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

/// A container that was read: where from, and what it holds.
pub struct Dumped {
    pub source: String,
    /// The file name (for the lossless document's `source`).
    pub file_name: Option<String>,
    pub size: usize,
    pub snapshot: ReadSnapshot,
}

/// Reads the container `args` select, failing with D15 for a missing epoch.
fn read_selected(global: &GlobalArgs, args: &DumpArgs) -> CliResult<Dumped> {
    if let Some(topic) = &args.state_topic {
        let (Some(partition), Some(epoch)) = (args.partition, args.epoch) else {
            return Err(CliError::usage(
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
        let name = crate::engine::columnar::snapshot::state_record::snapshot_key(partition, epoch);
        return dump_bytes(source, Some(format!("{name}.snapshot")), bytes);
    }
    let Some(path) = &args.path else {
        return Err(CliError::usage("give a FILE, a DIR or --state-topic TOPIC"));
    };
    let selectors = args.partition.is_some() || args.epoch.is_some() || args.group.is_some();
    let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
    if !is_dir {
        if selectors {
            return Err(CliError::usage(format!(
                "--partition, --epoch, --group and --task select a file inside a directory, but {} is not a directory",
                path.display()
            )));
        }
        let bytes = read_named_file(path).map_err(super::dir_error)?;
        return dump_bytes(
            path.display().to_string(),
            path.file_name().map(|n| n.to_string_lossy().into_owned()),
            bytes,
        );
    }
    let dir = open_dir(path)?;
    let epoch = args.epoch.ok_or_else(|| {
        CliError::usage("dumping from a directory needs --epoch E|live and --partition P (or --group G --task T)")
    })?;
    let unit = match (&args.partition, &args.group, &args.task) {
        (Some(p), None, None) => SnapshotUnit::Partition(*p),
        (None, Some(group), Some(task)) => SnapshotUnit::Task {
            group: group.clone(),
            task: task.clone(),
        },
        _ => {
            return Err(CliError::usage(
                "dumping from a directory needs --partition P (Java/Go) or --group G --task T (Rust)",
            ));
        }
    };
    let name = unit
        .key(epoch)
        .file_name()
        .map_err(|e| CliError::usage(e.to_string()))?;
    match dir.read(&name).map_err(super::dir_error)? {
        Some(bytes) => dump_bytes(
            dir.path().join(&name).display().to_string(),
            Some(name),
            bytes,
        ),
        None => Err(missing(&dir, &unit, epoch, &name)),
    }
}

fn missing(dir: &SnapshotDir, unit: &SnapshotUnit, epoch: i64, name: &str) -> CliError {
    if epoch == NO_EPOCH {
        return CliError::failure(format!(
            "no live state file {name} in {} (a runner starts that partition from empty state)",
            dir.path().display()
        ));
    }
    let present: BTreeSet<String> = dir.list().map(|l| l.names()).unwrap_or_default();
    CliError::failure(not_retained(&present, &[unit], epoch).to_string())
}

/// Decodes container bytes read from `source` for dumping.
pub fn dump_bytes(source: String, file_name: Option<String>, bytes: Vec<u8>) -> CliResult<Dumped> {
    let snapshot =
        container::read(&bytes).map_err(|e| CliError::failure(format!("{source}: {e}")))?;
    Ok(Dumped {
        source,
        file_name,
        size: bytes.len(),
        snapshot,
    })
}

impl Dumped {
    pub fn json(&self) -> Value {
        let entries: Vec<Value> = self
            .snapshot
            .entries
            .iter()
            .map(|e| {
                let payload = classify(&e.value);
                json!({
                    "name": e.name,
                    "size": e.value.len(),
                    "kind": payload.kind(),
                    "payload": payload_json(&payload, &e.value),
                })
            })
            .collect();
        json!({
            "file": self.source,
            "size": self.size,
            "generation": self.snapshot.generation.label(),
            "entries": entries,
        })
    }

    pub fn human(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}: {} bytes, container {}, {} entries",
            self.source,
            self.size,
            match self.snapshot.generation {
                Generation::B => "gen B",
                other => other.label(),
            },
            self.snapshot.entries.len()
        )?;
        if self.snapshot.generation == Generation::A {
            writeln!(
                out,
                "legacy (Java ≤ 1.2): read-only; restoring it writes gen B only with --convert-legacy"
            )?;
        }
        for e in &self.snapshot.entries {
            let payload = classify(&e.value);
            writeln!(
                out,
                "\n── {} ({}, {} bytes)",
                e.name,
                payload.kind(),
                e.value.len()
            )?;
            writeln!(out, "{}", payload_human(&payload, &e.value))?;
        }
        Ok(())
    }
}

pub fn run(global: &GlobalArgs, args: DumpArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    if let (Some(out), Some(path)) = (&args.out, &args.path) {
        use crate::io::path_conflict::{Named, check};
        check(&[
            Named::input(format!("the snapshot {}", path.display()), path),
            Named::output(format!("--out {}", out.display()), out),
        ])
        .map_err(CliError::usage)?;
    }
    let dumped = read_selected(global, &args)?;
    if !args.lossless {
        // The JSON of a large container holds every opaque byte as hex: build it only when asked.
        let data = if ui.is_json() {
            dumped.json()
        } else {
            Value::Null
        };
        return ui.report(data, |out| dumped.human(out));
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

/// Streams the document into `path` (`io::output_file`: a regular file through a
/// temp file renamed into place, a device or descriptor directly).
fn write_lossless_file(path: &Path, dumped: &Dumped) -> CliResult<()> {
    crate::io::output_file::write_atomically_with(path, |out| {
        write_lossless(out, dumped.file_name.as_deref(), &dumped.snapshot)
    })
    .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
}
