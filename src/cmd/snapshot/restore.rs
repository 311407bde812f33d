//! `snapshot restore`, two ways, one report:
//! * `--from-json DUMP --to FILE|DIR [--partition P --epoch E|live]` writes the
//!   container of a lossless dump (byte for byte for gen B);
//! * `DIR --partition 0-11 --from-epoch 41 --to-epoch live|N` copies one epoch's
//!   files to another epoch or to live state, bytes verbatim (D12).
//!
//! With `--state-topic NAME` the epoch copy happens in a state topic
//! (`ops::snapshot::topic_restore`), reported the same way with keys for files.
//!
//! The restore is `ops::snapshot::restore` (validated completely before the
//! first write). Replacing an existing file needs `--yes` (or a yes on a
//! terminal); `--dry-run` reports the same plan and writes nothing.

use std::path::PathBuf;

use clap::{ArgAction, Args};

use super::{epoch_number, epoch_or_live, layout_arg};
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::render::snapshot::{copy_report_human, copy_report_json};
use crate::engine::columnar::snapshot::naming::SnapshotLayout;
use crate::ops::snapshot::restore::{RestorePlan, restore};
use crate::ops::snapshot::topic_restore;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("store").args(["dir", "state_topic"])))]
pub struct RestoreArgs {
    /// Snapshot directory whose --from-epoch files are copied (epoch copy).
    #[arg(value_name = "DIR", conflicts_with = "from_json")]
    pub dir: Option<PathBuf>,

    /// Epoch copy in a state topic (`state_store: kafka`) instead of a directory,
    /// with the broker flags: keys `partition-<p>-epoch-<e>` -> `partition-<p>[-epoch-<e>]`.
    #[arg(long, value_name = "TOPIC", conflicts_with_all = ["dir", "from_json"])]
    pub state_topic: Option<String>,

    /// A lossless dump (`snapshot dump --lossless`) to write back as a container.
    #[arg(long, value_name = "DUMP.json", requires = "to")]
    pub from_json: Option<PathBuf>,

    /// With --from-json: the file to write, or a snapshot directory (then give
    /// --epoch and --partition, or --group and --task with --layout rust).
    #[arg(long, value_name = "FILE|DIR", requires = "from_json")]
    pub to: Option<PathBuf>,

    /// Java/Go logical partitions: one for --from-json into a directory; a list
    /// such as 0-11 or 0-3,7 for an epoch copy.
    #[arg(long, value_name = "LIST")]
    pub partition: Option<String>,

    /// With --from-json into a directory: the epoch to write, or `live`.
    #[arg(long, value_name = "E|live", value_parser = epoch_or_live, requires = "from_json")]
    pub epoch: Option<i64>,

    /// Epoch copy: the epoch whose files are copied.
    #[arg(long, value_name = "E", value_parser = epoch_number, requires = "store", requires = "to_epoch")]
    pub from_epoch: Option<i64>,

    /// Epoch copy: the epoch written, or `live` to make it the live state.
    #[arg(long, value_name = "E|live", value_parser = epoch_or_live, requires = "from_epoch")]
    pub to_epoch: Option<i64>,

    /// File naming written: java-go (`partition-<p>[-epoch-<e>].snapshot`)
    /// or rust (`<group>-<task>-epoch-<e>.snapshot`, needs --group and --task).
    #[arg(long, value_name = "LAYOUT", default_value = "java-go", value_parser = layout_arg)]
    pub layout: SnapshotLayout,

    /// Rust layout: the barrier group.
    #[arg(long, value_name = "G")]
    pub group: Option<String>,

    /// Rust layout: a task `<subtopology>-<partition>` (repeatable for an epoch copy).
    #[arg(long = "task", value_name = "T", action = ArgAction::Append)]
    pub tasks: Vec<String>,

    /// Write the dump of a legacy gen A (Java ≤ 1.2) container as gen B (names re-sorted).
    #[arg(long)]
    pub convert_legacy: bool,

    /// Restore even though the consumer group that owns the state (named by the
    /// directory's identity manifest or the topic's records) has live members,
    /// which keep their state in memory and would overwrite or ignore the restore.
    #[arg(long)]
    pub allow_live_members: bool,
}

pub fn run(global: &GlobalArgs, args: RestoreArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let plan = RestorePlan {
        dir: args.dir,
        from_json: args.from_json,
        to: args.to,
        partition: args.partition,
        epoch: args.epoch,
        from_epoch: args.from_epoch,
        to_epoch: args.to_epoch,
        layout: args.layout,
        group: args.group,
        tasks: args.tasks,
        convert_legacy: args.convert_legacy,
        dry_run: ui.dry_run,
        state_topic: args.state_topic,
        allow_live_members: args.allow_live_members,
    };
    let confirm = |question: &str| ui.confirm(question);
    let report = match &plan.state_topic {
        Some(name) => topic_restore::restore(
            &plan,
            name,
            &|| global.connection.kafka_settings("snapshot restore"),
            global.connection.timeout,
            &confirm,
        )?,
        None => restore(
            &plan,
            &|| global.connection.kafka_settings("snapshot restore"),
            global.connection.timeout,
            &confirm,
        )?,
    };
    ui.report(copy_report_json(&report), |out| {
        copy_report_human(&report, out)
    })
}
