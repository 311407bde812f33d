//! `snapshot restore-cut --group G --epoch E|latest --snapshot-dir DIR --consumer-group CG`:
//! puts a Java/Go application back to a complete barrier cut, both halves: the
//! state snapshot of every logical partition of the cut at that epoch becomes
//! live state, and CG's committed offsets are set to the cut offsets
//! (`ops::snapshot::restore_cut`, which checks everything before the first change).
//!
//! A dry run unless `--yes`: without it the plan is printed under the DRY RUN
//! banner and the command exits 0. If something fails half-way, the error says
//! exactly which files were written and whether the offsets changed (exit 1; 4
//! when the broker did not answer the commit, so its outcome is unknown).

use std::str::FromStr;

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::layout_arg;
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::render::snapshot::utc_text;
use crate::cmd::render::snapshot::write_json;
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::snapshot::naming::SnapshotLayout;
use crate::ops::snapshot::restore_cut::{CutRestore, RestoreCutPlan, restore_cut};

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("state").required(true).args(["snapshot_dir", "state_topic"])))]
#[command(
    after_long_help = "A dry run by default: without --yes the plan (live state files written, \
offsets committed, from and to) is printed under `DRY RUN: no change was made.` and the command exits 0. \
With --yes it first checks everything (the cut is complete, every partition's snapshot at that epoch \
exists and decodes, the consumer group has no members), then writes the live state files and then \
commits the offsets. Exit codes: 0 done (or planned), 1 refused or failed (the message says what was \
and was not changed), 2 usage, 4 broker unreachable or commit outcome unknown."
)]
pub struct RestoreCutArgs {
    /// The barrier group whose cut to restore to.
    #[arg(long, value_name = "G")]
    pub group: String,

    /// The cut's epoch, or `latest` for the highest complete cut.
    #[arg(long, value_name = "E|latest", value_parser = EpochSelector::from_str)]
    pub epoch: EpochSelector,

    /// The application's snapshot directory.
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,

    /// The application's state topic instead (`state_store: kafka`): each
    /// `partition-<p>-epoch-<e>` snapshot of the cut becomes `partition-<p>`.
    #[arg(long, value_name = "TOPIC", conflicts_with = "snapshot_dir")]
    pub state_topic: Option<String>,

    /// The application's consumer group, whose committed offsets are set to the cut.
    #[arg(long, value_name = "CG")]
    pub consumer_group: String,

    /// Snapshot file layout. Only java-go has live state to restore into.
    #[arg(long, value_name = "LAYOUT", default_value = "java-go", value_parser = layout_arg)]
    pub layout: SnapshotLayout,
}

fn plan_json(
    args: &RestoreCutArgs,
    plan: &CutRestore,
    files_written: bool,
    committed: bool,
) -> Value {
    json!({
        "group": args.group,
        "epoch": plan.cut.epoch,
        "completed_at": plan.cut.cut.completed_at,
        "snapshot_dir": args.snapshot_dir.as_ref().map(|d| d.display().to_string()),
        "state_topic": args.state_topic,
        "consumer_group": args.consumer_group,
        "consumer_group_state": plan.group_state,
        "files": plan.writes.iter().map(|w| write_json(w, files_written)).collect::<Vec<_>>(),
        "offsets": plan.offsets.iter().map(|o| json!({
            "topic": o.tp.topic,
            "partition": o.tp.partition,
            "current": o.current,
            "new": o.new,
            "committed": committed,
        })).collect::<Vec<_>>(),
        "executed": files_written && committed,
    })
}

fn plan_human(
    out: &mut dyn Write,
    args: &RestoreCutArgs,
    plan: &CutRestore,
    executed: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "restore barrier group {} to its cut at epoch {} (completed {})",
        args.group,
        plan.cut.epoch,
        utc_text(
            std::time::UNIX_EPOCH
                + std::time::Duration::from_millis(plan.cut.cut.completed_at.max(0) as u64)
        )
    )?;
    let (what, location, column) = match (&args.snapshot_dir, &args.state_topic) {
        (Some(dir), _) => ("files", dir.display().to_string(), "live state file"),
        (None, topic) => (
            "snapshots",
            format!("state topic {}", topic.as_deref().unwrap_or_default()),
            "live state key",
        ),
    };
    writeln!(
        out,
        "\nstate: {} {what} in {location} become live state",
        plan.writes.len(),
    )?;
    let mut t = table(&[column, "from", "bytes", "action"]);
    for w in &plan.writes {
        t.add_row(vec![
            w.target.clone(),
            w.source.clone(),
            w.bytes.len().to_string(),
            w.action().to_owned(),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "\noffsets: committed offsets of consumer group {} (state {}) set to the cut",
        args.consumer_group, plan.group_state
    )?;
    let mut t = table(&["topic", "partition", "committed now", "set to"]);
    for o in &plan.offsets {
        t.add_row(vec![
            o.tp.topic.clone(),
            o.tp.partition.to_string(),
            o.current.map_or("none".to_owned(), |c| c.to_string()),
            o.new.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    if executed {
        writeln!(
            out,
            "\nrestored: {} live state {what} written, {} offsets committed for {}",
            plan.writes.len(),
            plan.offsets.len(),
            args.consumer_group
        )
    } else {
        writeln!(
            out,
            "\nnothing changed; run again with --yes to perform this restore"
        )
    }
}

pub fn run(global: &GlobalArgs, args: RestoreCutArgs) -> CliResult<()> {
    let mut ui = Ui::new(&global.output);
    // Dry run is the default here: only --yes (and no --dry-run) executes.
    let execute = ui.assume_yes && !ui.dry_run;
    ui.dry_run = !execute;
    let plan = RestoreCutPlan {
        group: args.group.clone(),
        epoch: args.epoch,
        snapshot_dir: args.snapshot_dir.clone(),
        state_topic: args.state_topic.clone(),
        consumer_group: args.consumer_group.clone(),
        layout: args.layout,
        execute,
        timeout: global.connection.timeout,
    };
    let restore = restore_cut(&plan, &|| {
        global.connection.kafka_settings("snapshot restore-cut")
    })?;
    let executed = restore.executed;
    ui.report(plan_json(&args, &restore, executed, executed), |out| {
        plan_human(out, &args, &restore, executed)
    })
}
