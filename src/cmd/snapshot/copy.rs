//! `snapshot copy --from-dir DIR --to-topic TOPIC | --from-topic TOPIC --to-dir DIR`:
//! state copied between a snapshot directory and a state topic, byte for byte
//! (`ops::state_copy`). Replacing anything asks first (`--yes`); `--dry-run`
//! reports the same plan and writes nothing.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::ops::state_copy::{CopyPlan, CopyReport, Direction, copy};

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// Copy the Java/Go snapshot files of this directory (and its identity manifest) into --to-topic.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "from_topic",
        requires = "to_topic"
    )]
    pub from_dir: Option<PathBuf>,

    /// Copy every snapshot of this state topic into --to-dir, with the identity manifest.
    #[arg(long, value_name = "TOPIC", requires = "to_dir")]
    pub from_topic: Option<String>,

    /// The state topic written (created compacted when missing).
    #[arg(long, value_name = "TOPIC", conflicts_with = "to_dir")]
    pub to_topic: Option<String>,

    /// The snapshot directory written (created when missing).
    #[arg(long, value_name = "DIR")]
    pub to_dir: Option<PathBuf>,

    /// Partitions of a state topic the copy creates (default: the highest
    /// logical partition + 1; a run uses the count it finds).
    #[arg(long, value_name = "N", requires = "to_topic", value_parser = clap::value_parser!(i32).range(1..))]
    pub partitions: Option<i32>,
    /// Copy even when the consumer group owning the state has live members,
    /// which keep their state in memory and would overwrite or ignore the copy.
    #[arg(long)]
    pub allow_live_members: bool,
}

fn report_json(report: &CopyReport) -> Value {
    json!({
        "from": report.from,
        "to": report.to,
        "identity": report.identity.as_ref().map(|i| i.to_json()),
        "snapshots": report.items.iter().map(|i| json!({
            "key": i.key,
            "bytes": i.bytes,
            "action": if i.replaces { "replace" } else { "create" },
            "written": i.written,
        })).collect::<Vec<_>>(),
        "written": report.items.iter().filter(|i| i.written).count(),
        "identity_manifest": report.manifest,
        "creates_topic": report.creates_topic,
        "dry_run": report.dry_run,
    })
}

fn report_human(report: &CopyReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut t = table(&["snapshot", "bytes", "action", "written"]);
    for i in &report.items {
        t.add_row(vec![
            i.key.clone(),
            i.bytes.to_string(),
            if i.replaces { "replace" } else { "create" }.to_owned(),
            if i.written { "yes" } else { "no" }.to_owned(),
        ]);
    }
    writeln!(out, "{t}")?;
    let verb = if report.dry_run {
        "would copy"
    } else {
        "copied"
    };
    let count = if report.dry_run {
        report.items.len()
    } else {
        report.items.iter().filter(|i| i.written).count()
    };
    writeln!(
        out,
        "{verb} {count} snapshots from {} to {}",
        report.from, report.to
    )?;
    if report.creates_topic {
        writeln!(out, "the state topic is created (cleanup.policy=compact)")?;
    }
    match &report.identity {
        Some(identity) => writeln!(out, "state identity: {identity}")?,
        None => writeln!(
            out,
            "state identity: none recorded in the topic; no identity manifest is written (a run on the directory needs --adopt-state)"
        )?,
    }
    Ok(())
}

pub fn run(global: &GlobalArgs, args: CopyArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let direction = match (args.from_dir, args.from_topic, args.to_topic, args.to_dir) {
        (Some(dir), None, Some(topic), None) => Direction::DirToTopic {
            dir,
            topic,
            partitions: args.partitions,
        },
        (None, Some(topic), None, Some(dir)) => Direction::TopicToDir { topic, dir },
        _ => {
            return Err(CliError::usage(
                "give either --from-dir DIR --to-topic TOPIC, or --from-topic TOPIC --to-dir DIR",
            ));
        }
    };
    let kafka = global.connection.kafka_settings("snapshot copy")?;
    let confirm = |question: &str| ui.confirm(question);
    let report = copy(&CopyPlan {
        kafka: &kafka,
        direction,
        timeout: global.connection.timeout,
        dry_run: ui.dry_run,
        allow_live_members: args.allow_live_members,
        confirm: &confirm,
    })?;
    ui.report(report_json(&report), |out| report_human(&report, out))
}
