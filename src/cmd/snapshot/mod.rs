//! `snapshot`: list, dump, restore, verify and prune state snapshot files, and
//! restore an application to a barrier cut (state files and consumer offsets).
//!
//! Each subcommand module turns its flags into the plan of its use case in
//! `ops::snapshot`, calls it and renders the report (table or JSON, exit code);
//! this file holds the clap parsers and the rendering pieces they share.

mod copy;
mod dump;
mod list;
mod prune;
pub mod render;
mod restore;
mod restore_cut;
mod topic_view;
mod verify;

pub use copy::CopyArgs;
pub use dump::{DumpArgs, dumped_human, dumped_json};
pub use list::{ListArgs, list_human, list_json};
pub use prune::PruneArgs;
pub use restore::{RestoreArgs, copy_report_human, copy_report_json};
pub use restore_cut::RestoreCutArgs;
pub use verify::VerifyArgs;

use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::engine::columnar::snapshot::naming::{SnapshotFileName, SnapshotLayout};
use crate::engine::columnar::snapshot::plan::{epoch_label, parse_epoch};
use crate::engine::time::rfc3339_millis;
use crate::io::atomic_file::temp_name::StaleTemp;
use crate::ops::snapshot::Identities;

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    pub command: SnapshotCommand,
}

#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// List a directory's snapshot files (or a state topic's snapshots): owner, epoch, size, entries, whether each decodes.
    List(ListArgs),
    /// Print one snapshot's entries with their payloads decoded where the format is known.
    Dump(DumpArgs),
    /// Write a snapshot from a lossless dump, or copy one epoch's files to another epoch or to live state.
    Restore(RestoreArgs),
    /// Decode every snapshot file of a directory (or snapshot of a state topic); exit 3 when any is bad.
    Verify(VerifyArgs),
    /// Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned).
    Prune(PruneArgs),
    /// Put an application back to a barrier cut: state snapshots become live state and the
    /// consumer group's offsets are set to the cut (a dry run unless --yes).
    RestoreCut(RestoreCutArgs),
    /// Copy state between a snapshot directory and a state topic, byte for byte, both ways.
    Copy(CopyArgs),
}

impl SnapshotCommand {
    /// The name used in error lines, e.g. `snapshot restore`.
    pub fn name(&self) -> &'static str {
        match self {
            SnapshotCommand::List(_) => "snapshot list",
            SnapshotCommand::Dump(_) => "snapshot dump",
            SnapshotCommand::Restore(_) => "snapshot restore",
            SnapshotCommand::Verify(_) => "snapshot verify",
            SnapshotCommand::Prune(_) => "snapshot prune",
            SnapshotCommand::RestoreCut(_) => "snapshot restore-cut",
            SnapshotCommand::Copy(_) => "snapshot copy",
        }
    }

    /// Why `--dry-run` cannot be honoured, when it cannot. `restore`, `prune` and
    /// `restore-cut` honour it (they report what they would change); the rest only read.
    pub fn dry_run_refusal(&self) -> Option<String> {
        match self {
            SnapshotCommand::Dump(a) => a.out.as_ref().map(|out| {
                format!(
                    "--out {} writes a file; drop --out to print the dump, or drop --dry-run",
                    out.display()
                )
            }),
            _ => None,
        }
    }
}

pub fn run(global: &GlobalArgs, args: SnapshotArgs) -> CliResult<()> {
    match args.command {
        SnapshotCommand::List(a) => list::run(global, a),
        SnapshotCommand::Dump(a) => dump::run(global, a),
        SnapshotCommand::Restore(a) => restore::run(global, a),
        SnapshotCommand::Verify(a) => verify::run(global, a),
        SnapshotCommand::Prune(a) => prune::run(global, a),
        SnapshotCommand::RestoreCut(a) => restore_cut::run(global, a),
        SnapshotCommand::Copy(a) => copy::run(global, a),
    }
}

/// clap parser for `--epoch E|live`.
pub(crate) fn epoch_or_live(text: &str) -> Result<i64, String> {
    parse_epoch(text, true)
}

/// clap parser for an epoch number.
pub(crate) fn epoch_number(text: &str) -> Result<i64, String> {
    parse_epoch(text, false)
}

/// clap parser for `--layout java-go|rust`.
pub(crate) fn layout_arg(text: &str) -> Result<SnapshotLayout, String> {
    text.parse()
        .map_err(|e: crate::engine::columnar::snapshot::naming::NamingError| e.to_string())
}

/// Identity manifests as JSON: the file and its group, fingerprint and stateful
/// nodes, or the error.
pub(crate) fn identities_json(found: &Identities) -> serde_json::Value {
    found
        .iter()
        .map(|(file, read)| match read {
            Ok(identity) => {
                let mut v = identity.to_json();
                if let Some(object) = v.as_object_mut() {
                    object.remove("format");
                    object.remove("version");
                    object.insert("file".into(), serde_json::json!(file));
                }
                v
            }
            Err(e) => serde_json::json!({"file": file, "error": e}),
        })
        .collect()
}

/// One human line per identity manifest.
pub(crate) fn identities_human(
    out: &mut dyn std::io::Write,
    found: &Identities,
) -> std::io::Result<()> {
    for (file, read) in found {
        match read {
            Ok(identity) => writeln!(out, "state identity ({file}): {identity}")?,
            Err(e) => writeln!(out, "state identity ({file}): does not decode: {e}")?,
        }
    }
    Ok(())
}

/// Who a file belongs to: `partition 3`, or the Rust group and task when the name tells them.
pub(crate) fn owner_label(name: &SnapshotFileName) -> String {
    match name {
        SnapshotFileName::JavaGo { partition, .. } => format!("partition {partition}"),
        SnapshotFileName::Rust(rust) => match rust.group_and_task() {
            Some((group, task)) => format!("group {group} task {task}"),
            None => format!("{} (group-task)", rust.stem),
        },
    }
}

/// The owner as JSON fields.
pub(crate) fn owner_json(name: &SnapshotFileName) -> serde_json::Value {
    match name {
        SnapshotFileName::JavaGo { partition, epoch } => serde_json::json!({
            "layout": "java-go", "partition": partition, "epoch": epoch, "live": *epoch == crate::engine::columnar::snapshot::naming::NO_EPOCH,
        }),
        SnapshotFileName::Rust(rust) => {
            let (group, task) = match rust.group_and_task() {
                Some((g, t)) => (Some(g), Some(t)),
                None => (None, None),
            };
            serde_json::json!({
                "layout": "rust", "stem": rust.stem, "group": group, "task": task,
                "epoch": rust.epoch, "live": false,
            })
        }
    }
}

pub(crate) fn epoch_text(name: &SnapshotFileName) -> String {
    epoch_label(name.epoch())
}

/// Stale temp files (their writer was killed) as JSON: file name, target, pid.
pub(crate) fn stale_temps_json(stale: &[StaleTemp]) -> serde_json::Value {
    stale
        .iter()
        .map(|s| {
            serde_json::json!({
                "file": s.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "target": s.target,
                "pid": s.pid,
            })
        })
        .collect()
}

/// The human line for stale temp files, if any.
pub(crate) fn stale_temps_human(
    out: &mut dyn std::io::Write,
    stale: &[StaleTemp],
) -> std::io::Result<()> {
    if stale.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = stale
        .iter()
        .filter_map(|s| s.path.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    writeln!(
        out,
        "{} stale temp files of killed writers (removed by the next write of the same file): {}",
        stale.len(),
        names.join(", ")
    )
}

/// RFC 3339 in UTC with millisecond precision (`2024-11-29T09:00:00.000Z`).
pub(crate) fn utc_text(time: SystemTime) -> String {
    let epoch_ms = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    };
    rfc3339_millis(epoch_ms)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn utc_text_is_rfc3339() {
        assert_eq!(utc_text(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            utc_text(UNIX_EPOCH + Duration::from_millis(1_732_870_800_123)),
            "2024-11-29T09:00:00.123Z"
        );
        assert_eq!(
            utc_text(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            utc_text(UNIX_EPOCH - Duration::from_millis(1)),
            "1969-12-31T23:59:59.999Z"
        );
    }
}
