//! `snapshot prune DIR --keep N | --older-than DUR [--partition LIST]`: deletes
//! barrier-epoch files, keeping the newest N epochs of each partition (or Rust
//! task), or those modified within DUR (Java's two retention rules). Live state
//! is never pruned. Prints the plan, asks (skip with --yes), `--dry-run` previews.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{ArgGroup, Args};
use serde_json::json;

use super::{epoch_text, open_dir, owner_label, utc_text};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::engine::columnar::snapshot::plan::{DatedFile, PartitionSet, PruneRule, plan_prune};
use crate::io::snapshot_dir::EntryKind;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("rule").required(true).args(["keep", "older_than"])))]
pub struct PruneArgs {
    /// The snapshot directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Keep the newest N barrier epochs of each partition or task (Java keeps 100).
    #[arg(long, value_name = "N")]
    pub keep: Option<usize>,

    /// Delete barrier-epoch files last modified longer ago than this (e.g. 7d, 12h).
    #[arg(long, value_name = "DURATION", value_parser = crate::engine::units::parse_duration)]
    pub older_than: Option<Duration>,

    /// Only these Java/Go partitions (e.g. 0-11 or 0-3,7); Rust files are then left alone.
    #[arg(long, value_name = "LIST", value_parser = PartitionSet::parse)]
    pub partition: Option<PartitionSet>,
}

pub fn run(global: &GlobalArgs, args: PruneArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let dir = open_dir(&args.dir)?;
    let rule = match (args.keep, args.older_than) {
        (Some(n), _) => PruneRule::KeepNewest(n),
        (None, Some(age)) => PruneRule::ModifiedSince(
            SystemTime::now()
                .checked_sub(age)
                .unwrap_or(SystemTime::UNIX_EPOCH),
        ),
        (None, None) => return Err(CliError::usage("give --keep N or --older-than DURATION")),
    };
    let listing = dir.list().map_err(super::dir_error)?;
    // Directories, FIFOs and the like under a snapshot name are never deleted.
    let files: Vec<DatedFile> = listing
        .files
        .iter()
        .filter(|f| f.kind != EntryKind::Other)
        .map(|f| DatedFile {
            file_name: f.file_name.clone(),
            name: f.name.clone(),
            modified: f.modified,
        })
        .collect();
    let plan = plan_prune(&files, rule, args.partition.as_ref());
    if !ui.dry_run && !plan.delete.is_empty() {
        ui.confirm(&format!(
            "delete {} snapshot file(s) from {}?",
            plan.delete.len(),
            dir.path().display()
        ))?;
    }
    let mut deleted = 0;
    if !ui.dry_run {
        for (i, file) in plan.delete.iter().enumerate() {
            if let Err(e) = dir.remove(&file.file_name) {
                let rest: Vec<&str> = plan.delete[i..]
                    .iter()
                    .map(|f| f.file_name.as_str())
                    .collect();
                let done: Vec<&str> = plan.delete[..i]
                    .iter()
                    .map(|f| f.file_name.as_str())
                    .collect();
                return Err(CliError::failure(format!(
                    "{e}; deleted before the failure: [{}]; not deleted: [{}]",
                    done.join(", "),
                    rest.join(", ")
                )));
            }
            deleted += 1;
        }
    }
    let data = json!({
        "dir": dir.path().display().to_string(),
        "delete": plan.delete.iter().map(|f| json!({
            "file": f.file_name,
            "epoch": f.name.epoch(),
            "modified": f.modified.map(utc_text),
        })).collect::<Vec<_>>(),
        "kept": plan.keep.len(),
        "deleted": deleted,
    });
    ui.report(data, |out| {
        if !plan.delete.is_empty() {
            let mut t = table(&["file", "owner", "epoch", "modified"]);
            for f in &plan.delete {
                t.add_row(vec![
                    f.file_name.clone(),
                    owner_label(&f.name),
                    epoch_text(&f.name),
                    f.modified.map(utc_text).unwrap_or_default(),
                ]);
            }
            writeln!(out, "{t}")?;
        }
        if ui.dry_run {
            writeln!(
                out,
                "would delete {} snapshot files, keeping {}",
                plan.delete.len(),
                plan.keep.len()
            )
        } else {
            writeln!(
                out,
                "deleted {deleted} snapshot files, kept {}",
                plan.keep.len()
            )
        }
    })
}
