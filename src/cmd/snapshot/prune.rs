//! `snapshot prune DIR --keep N | --older-than DUR [--partition LIST]`: deletes
//! barrier-epoch files, keeping the newest N epochs of each partition (or Rust
//! task), or those modified within DUR (Java's two retention rules). Live state
//! is never pruned. Prints the plan, asks (skip with --yes), `--dry-run` previews;
//! the prune itself is `ops::snapshot::prune` (`ops::snapshot::topic_prune` for
//! `--state-topic`, which tombstones the keys).

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args};
use serde_json::json;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::render::snapshot::{epoch_text, owner_label, utc_text};
use crate::engine::columnar::snapshot::plan::PartitionSet;
use crate::ops::snapshot::prune::{PrunePlan, prune};
use crate::ops::snapshot::topic_prune;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("rule").required(true).args(["keep", "older_than"])))]
#[command(group(ArgGroup::new("store").required(true).args(["dir", "state_topic"])))]
pub struct PruneArgs {
    /// The snapshot directory.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Prune a state topic's barrier-epoch keys instead (`state_store: kafka`), with the
    /// broker flags: each pruned key gets a tombstone (dated by its record's write time).
    #[arg(long, value_name = "TOPIC", conflicts_with = "dir")]
    pub state_topic: Option<String>,

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
    let plan = PrunePlan {
        dir: args.dir,
        keep: args.keep,
        older_than: args.older_than,
        partition: args.partition,
        dry_run: ui.dry_run,
    };
    let confirm = |question: &str| ui.confirm(question);
    let report = match &args.state_topic {
        Some(name) => topic_prune::prune(
            &plan,
            name,
            &|| global.connection.kafka_settings("snapshot prune"),
            global.connection.timeout,
            &confirm,
        )?,
        None => prune(&plan, &confirm)?,
    };
    let (plan, deleted) = (&report.plan, report.deleted);
    let data = json!({
        "dir": report.dir,
        "state_topic": args.state_topic,
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
