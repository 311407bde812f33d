//! `snapshot restore-cut --group G --epoch E|latest --snapshot-dir DIR --consumer-group CG`:
//! puts a Java/Go application back to a complete barrier cut, both halves: the
//! state snapshot of every logical partition of the cut at that epoch becomes
//! live state (`partition-<p>-epoch-<e>.snapshot` → `partition-<p>.snapshot`),
//! and CG's committed offsets are set to the cut offsets.
//!
//! A dry run unless `--yes`: without it the plan is printed under the DRY RUN
//! banner and the command exits 0. Everything is checked before the first
//! change: the cut exists and is complete, every snapshot file exists and
//! decodes (D15 otherwise), no target is a link, and CG has no members. State
//! files are written first, then the offsets committed (the runner's order: state
//! before offsets). If something still fails half-way, the error says exactly
//! which files were written and whether the offsets changed (exit 1; 4 when the
//! broker did not answer the commit, so its outcome is unknown).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::restore::{PreparedWrite, execute_writes, prepare_epoch_copy};
use super::{layout_arg, open_dir, utc_text};
use crate::cmd::exit::{CliError, CliResult, ExitCode};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::engine::columnar::barrier::cut_log::{BarrierCut, CutLog};
use crate::engine::columnar::barrier::record::BARRIER_STATE_TOPIC;
use crate::engine::columnar::barrier::require_group;
use crate::engine::columnar::snapshot::naming::{NO_EPOCH, SnapshotLayout};
use crate::engine::columnar::snapshot::plan::{SnapshotUnit, parse_epoch};
use crate::io::kafka::barrier_state::{BarrierStateReadError, read_barrier_state};
use crate::io::kafka::groups::{TopicPartition, commit_offsets, committed_offsets, group_activity};

/// Which cut: an epoch number or the latest complete one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutSelector {
    Epoch(i64),
    Latest,
}

pub fn cut_selector(text: &str) -> Result<CutSelector, String> {
    if text == "latest" {
        return Ok(CutSelector::Latest);
    }
    parse_epoch(text, false)
        .map(CutSelector::Epoch)
        .map_err(|e| format!("{e} or `latest`"))
}

#[derive(Debug, Args)]
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
    #[arg(long, value_name = "E|latest", value_parser = cut_selector)]
    pub epoch: CutSelector,

    /// The application's snapshot directory.
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: PathBuf,

    /// The application's consumer group, whose committed offsets are set to the cut.
    #[arg(long, value_name = "CG")]
    pub consumer_group: String,

    /// Snapshot file layout. Only java-go has live state to restore into.
    #[arg(long, value_name = "LAYOUT", default_value = "java-go", value_parser = layout_arg)]
    pub layout: SnapshotLayout,
}

/// Picks the cut, with the semantics §8 wording when there is none to restore to.
pub fn select_cut(
    log: &CutLog,
    topic_exists: bool,
    group: &str,
    selector: CutSelector,
) -> Result<BarrierCut, String> {
    require_group(log, topic_exists, group).map_err(|e| e.to_string())?;
    let known: Vec<String> = log
        .cuts(group)
        .iter()
        .map(|c| format!("{} ({})", c.epoch, c.cut.status))
        .collect();
    let context = if !topic_exists {
        format!(" (topic {BARRIER_STATE_TOPIC} does not exist)")
    } else if known.is_empty() {
        " (the group has no cuts)".to_owned()
    } else {
        format!(" (cuts of the group: {})", known.join(", "))
    };
    match selector {
        CutSelector::Latest => log
            .latest_complete_cut(group)
            .ok_or_else(|| format!("barrier group {group} has no complete cut{context}")),
        CutSelector::Epoch(epoch) => {
            if let Some(cut) = log.complete_cut_at(group, epoch) {
                return Ok(cut);
            }
            let partial = log.cuts(group).into_iter().find(|c| c.epoch == epoch);
            Err(match partial {
                Some(p) => format!(
                    "barrier group {group} has no complete cut at epoch {epoch}: that cut is {} (missing: {})",
                    p.cut.status,
                    p.cut
                        .missing
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => {
                    format!("barrier group {group} has no complete cut at epoch {epoch}{context}")
                }
            })
        }
    }
}

/// The distinct logical partitions of a cut, ascending (semantics §5, §8).
fn logical_partitions(cut: &BarrierCut) -> Vec<i32> {
    let mut partitions: Vec<i32> = cut.cut.offsets().map(|(tp, _)| tp.partition).collect();
    partitions.sort_unstable();
    partitions.dedup();
    partitions
}

struct OffsetChange {
    tp: TopicPartition,
    current: Option<i64>,
    new: i64,
}

struct Plan {
    cut: BarrierCut,
    writes: Vec<PreparedWrite>,
    offsets: Vec<OffsetChange>,
    group_state: String,
}

fn plan_json(args: &RestoreCutArgs, plan: &Plan, files_written: bool, committed: bool) -> Value {
    json!({
        "group": args.group,
        "epoch": plan.cut.epoch,
        "completed_at": plan.cut.cut.completed_at,
        "snapshot_dir": args.snapshot_dir.display().to_string(),
        "consumer_group": args.consumer_group,
        "consumer_group_state": plan.group_state,
        "files": plan.writes.iter().map(|w| w.json(files_written)).collect::<Vec<_>>(),
        "offsets": plan.offsets.iter().map(|o| json!({
            "topic": o.tp.0,
            "partition": o.tp.1,
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
    plan: &Plan,
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
    writeln!(
        out,
        "\nstate: {} files in {} become live state",
        plan.writes.len(),
        args.snapshot_dir.display()
    )?;
    let mut t = table(&["live state file", "from", "bytes", "action"]);
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
            o.tp.0.clone(),
            o.tp.1.to_string(),
            o.current.map_or("none".to_owned(), |c| c.to_string()),
            o.new.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    if executed {
        writeln!(
            out,
            "\nrestored: {} live state files written, {} offsets committed for {}",
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
    if args.layout == SnapshotLayout::Rust {
        return Err(CliError::usage(
            "restore-cut restores live state, which the Rust layout does not have \
             (krabka-streams-rs loads <group>-<task>-epoch-<e>.snapshot itself when it restores to a cut); \
             use `barrier verify --snapshot-dir … --layout rust` to check its files",
        ));
    }
    let dir = open_dir(&args.snapshot_dir)?;
    let settings = global.connection.kafka_settings("snapshot restore-cut")?;
    let timeout = global.connection.timeout;

    let state = read_barrier_state(&settings, timeout).map_err(|e| match e {
        BarrierStateReadError::Kafka(k) => CliError::from(k),
        malformed => CliError::failure(malformed.to_string()),
    })?;
    let cut = select_cut(&state.log, state.topic_exists, &args.group, args.epoch)
        .map_err(CliError::failure)?;
    let units: Vec<SnapshotUnit> = logical_partitions(&cut)
        .into_iter()
        .map(SnapshotUnit::Partition)
        .collect();
    let writes = prepare_epoch_copy(&dir, &units, cut.epoch, NO_EPOCH)?;

    let new_offsets: BTreeMap<TopicPartition, i64> = cut
        .cut
        .offsets()
        .map(|(tp, offset)| ((tp.topic, tp.partition), offset))
        .collect();
    let tps: Vec<TopicPartition> = new_offsets.keys().cloned().collect();
    let activity = group_activity(&settings, &args.consumer_group, timeout)?;
    if !activity.is_inactive() {
        return Err(CliError::failure(format!(
            "consumer group {} is active (state {}, {} members): stop every consumer of the group \
             before restoring its offsets; nothing was changed",
            args.consumer_group, activity.state, activity.members
        )));
    }
    let current = committed_offsets(&settings, &args.consumer_group, &tps, timeout)?;
    let plan = Plan {
        offsets: new_offsets
            .iter()
            .map(|(tp, new)| OffsetChange {
                tp: tp.clone(),
                current: current.get(tp).copied().flatten(),
                new: *new,
            })
            .collect(),
        cut,
        writes,
        group_state: activity.state,
    };

    if !execute {
        return ui.report(plan_json(&args, &plan, false, false), |out| {
            plan_human(out, &args, &plan, false)
        });
    }

    execute_writes(&plan.writes).map_err(|e| {
        CliError::failure(format!(
            "restore to cut {} of {} failed half-way: {}; the committed offsets of {} were NOT changed",
            plan.cut.epoch, args.group, e.message, args.consumer_group
        ))
    })?;
    if let Err(e) = commit_offsets(&settings, &args.consumer_group, &new_offsets, timeout) {
        let code = if e.unreachable {
            ExitCode::Unreachable
        } else {
            ExitCode::Failure
        };
        let written: Vec<&str> = plan.writes.iter().map(|w| w.target.as_str()).collect();
        let offsets_state = if e.unreachable {
            "may or may not have been changed (the broker did not answer)"
        } else {
            "were NOT changed"
        };
        return Err(CliError::new(
            code,
            format!(
                "restore to cut {} of {} failed half-way: the live state files were written ([{}]), \
                 but committing the cut offsets failed: {}; the committed offsets of {} {offsets_state}. \
                 Run the same command again once the broker is reachable",
                plan.cut.epoch,
                args.group,
                written.join(", "),
                e.message,
                args.consumer_group
            ),
        ));
    }
    ui.report(plan_json(&args, &plan, true, true), |out| {
        plan_human(out, &args, &plan, true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::barrier::cut_log::ConsumedRecord;
    use crate::engine::columnar::barrier::record::{
        BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic, TopicPartition as BarrierTp,
    };

    fn cut(status: CutStatus, partitions: &[(i32, i64)]) -> Cut {
        Cut {
            triggered_at: 1,
            completed_at: 2,
            status,
            topics: vec![CutTopic {
                topic: "orders".into(),
                partitions: partitions
                    .iter()
                    .map(|(partition, offset)| CutOffset {
                        partition: *partition,
                        offset: *offset,
                    })
                    .collect(),
            }],
            missing: if status == CutStatus::Partial {
                vec![BarrierTp::new("orders", 9)]
            } else {
                vec![]
            },
        }
    }

    fn log_of(cuts: &[(i64, Cut)]) -> CutLog {
        let mut log = CutLog::new();
        for (i, (epoch, c)) in cuts.iter().enumerate() {
            log.apply(&ConsumedRecord {
                partition: 0,
                offset: i as i64,
                key: Some(BarrierStateKey::cut("app", *epoch).encode().unwrap()),
                value: Some(c.encode().unwrap()),
            })
            .unwrap();
        }
        log
    }

    #[test]
    fn latest_picks_the_highest_complete_cut_and_partial_cuts_are_named() {
        let log = log_of(&[
            (3, cut(CutStatus::Complete, &[(0, 10)])),
            (4, cut(CutStatus::Partial, &[(0, 12)])),
        ]);
        assert_eq!(
            select_cut(&log, true, "app", CutSelector::Latest)
                .unwrap()
                .epoch,
            3
        );
        assert_eq!(
            select_cut(&log, true, "app", CutSelector::Epoch(4)).unwrap_err(),
            "barrier group app has no complete cut at epoch 4: that cut is partial (missing: orders/9)"
        );
        assert_eq!(
            select_cut(&log, true, "app", CutSelector::Epoch(7)).unwrap_err(),
            "barrier group app has no complete cut at epoch 7 (cuts of the group: 3 (complete), 4 (partial))"
        );
        assert_eq!(
            select_cut(&CutLog::new(), false, "app", CutSelector::Latest).unwrap_err(),
            "no such barrier group: app (__barrier_state does not exist)"
        );
        assert_eq!(
            select_cut(&log, true, "ap", CutSelector::Latest).unwrap_err(),
            "no such barrier group: ap (no record of it in __barrier_state; groups: app)"
        );
    }

    #[test]
    fn logical_partitions_are_distinct_across_topics() {
        let mut c = cut(CutStatus::Complete, &[(2, 10), (0, 4)]);
        c.topics.push(CutTopic {
            topic: "payments".into(),
            partitions: vec![CutOffset {
                partition: 2,
                offset: 1,
            }],
        });
        let log = log_of(&[(1, c)]);
        let selected = select_cut(&log, true, "app", CutSelector::Epoch(1)).unwrap();
        assert_eq!(logical_partitions(&selected), [0, 2]);
    }

    #[test]
    fn the_cut_selector_accepts_numbers_and_latest() {
        assert_eq!(cut_selector("latest"), Ok(CutSelector::Latest));
        assert_eq!(cut_selector("12"), Ok(CutSelector::Epoch(12)));
        assert!(cut_selector("live").is_err());
    }
}
