//! `snapshot restore-cut --group G --epoch E|latest --snapshot-dir DIR --consumer-group CG`:
//! puts a Java/Go application back to a complete barrier cut, both halves: the
//! state snapshot of every logical partition of the cut at that epoch becomes
//! live state (`partition-<p>-epoch-<e>.snapshot` → `partition-<p>.snapshot`),
//! and CG's committed offsets are set to the cut offsets. [`find_cut`] is also
//! how `run --restore-cut` finds its cut.
//!
//! With `--state-topic` instead of a directory the same happens in the state
//! topic: each `partition-<p>-epoch-<e>` snapshot is written as `partition-<p>`,
//! recording the cut offsets as its input offsets (`ops::snapshot::topic_restore`),
//! and every snapshot read or replaced must be the consumer group's, of one
//! fingerprint.
//!
//! Only planned unless `execute`: the plan is returned and nothing changes.
//! Everything is checked before the first change: the cut exists and is
//! complete, every snapshot file exists and decodes (D15 otherwise), no target is
//! a link, and CG has no members. State files are written first, then the offsets
//! committed (the runner's order: state before offsets). If something still fails
//! half-way, the error says exactly which files were written and whether the
//! offsets changed (failure; unreachable when the broker did not answer the
//! commit, so its outcome is unknown).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::open_dir;
use super::restore::{PreparedWrite, execute_writes, prepare_epoch_copy};
use super::topic::{self, TopicState, TopicWrite};
use super::topic_restore::plan_copy;
use crate::engine::columnar::barrier::cut_log::{BarrierCut, CutLog};
use crate::engine::columnar::barrier::record::BARRIER_STATE_TOPIC;
use crate::engine::columnar::barrier::require_group;
use crate::engine::columnar::barrier::selection::{
    CutSelection, EpochSelector, logical_partitions, select_cut,
};
use crate::engine::columnar::snapshot::naming::{NO_EPOCH, SnapshotLayout};
use crate::engine::columnar::snapshot::plan::SnapshotUnit;
use crate::engine::topic_partition::TopicPartition;
use crate::io::kafka::barrier_state::{BarrierStateReadError, read_barrier_state};
use crate::io::kafka::groups::{commit_offsets, committed_offsets, group_activity};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, ErrorKind, Result};

/// What to restore to, and whether to do it.
#[derive(Debug, Clone)]
pub struct RestoreCutPlan {
    /// The barrier group.
    pub group: String,
    pub epoch: EpochSelector,
    /// Where the application's state is: a snapshot directory or a state topic
    /// (`--state-topic`, docs/topology.md "State in Kafka"); exactly one.
    pub snapshot_dir: Option<PathBuf>,
    pub state_topic: Option<String>,
    pub consumer_group: String,
    pub layout: SnapshotLayout,
    /// Write and commit; otherwise only plan.
    pub execute: bool,
    pub timeout: Duration,
}

/// The complete cut the selector names (found by [`select_cut`]), with the docs/semantics.md
/// §8 wording when there is none to restore to.
pub fn restorable_cut(
    log: &CutLog,
    topic_exists: bool,
    group: &str,
    selector: EpochSelector,
) -> std::result::Result<BarrierCut, String> {
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
    match (select_cut(log, group, selector), selector) {
        (CutSelection::Complete(cut), _) => Ok(cut),
        (CutSelection::Partial(p), EpochSelector::Exact(epoch)) => Err(format!(
            "barrier group {group} has no complete cut at epoch {epoch}: that cut is {} (missing: {})",
            p.cut.status,
            p.cut
                .missing
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        (_, EpochSelector::Exact(epoch)) => Err(format!(
            "barrier group {group} has no complete cut at epoch {epoch}{context}"
        )),
        (_, EpochSelector::Latest) => Err(format!(
            "barrier group {group} has no complete cut{context}"
        )),
    }
}

/// Why no cut was found: `__barrier_state` could not be read, or holds no such cut.
#[derive(Debug)]
pub enum CutLookupError {
    Read(Error),
    /// The docs/semantics.md §8 wording of [`restorable_cut`].
    NoCut(String),
}

/// Reads `__barrier_state` and picks the cut of `group` the selector names.
pub fn find_cut(
    kafka: &KafkaSettings,
    timeout: Duration,
    group: &str,
    selector: EpochSelector,
) -> std::result::Result<BarrierCut, CutLookupError> {
    let state = read_barrier_state(kafka, timeout).map_err(|e| {
        CutLookupError::Read(match e {
            BarrierStateReadError::Kafka(k) => Error::from(k),
            malformed => Error::failure(malformed.to_string()),
        })
    })?;
    restorable_cut(&state.log, state.topic_exists, group, selector).map_err(CutLookupError::NoCut)
}

/// One committed offset the restore sets.
pub struct OffsetChange {
    pub tp: TopicPartition,
    pub current: Option<i64>,
    pub new: i64,
}

/// The restore, planned (and, when `executed`, done).
pub struct CutRestore {
    pub cut: BarrierCut,
    pub writes: Vec<PreparedWrite>,
    pub offsets: Vec<OffsetChange>,
    /// The consumer group's state when it was checked (e.g. `Empty`).
    pub group_state: String,
    pub executed: bool,
    /// With a state topic: the topic as read and the records the writes produce.
    pub topic: Option<(TopicState, Vec<TopicWrite>)>,
}

/// Plans the restore and, with `plan.execute`, performs it. `connect` gives the
/// cluster settings once the local checks passed (layout, directory), so those
/// are reported before a missing broker.
pub fn restore_cut(
    plan: &RestoreCutPlan,
    connect: &dyn Fn() -> Result<KafkaSettings>,
) -> Result<CutRestore> {
    if plan.layout == SnapshotLayout::Rust {
        return Err(Error::usage(
            "restore-cut restores live state, which the Rust layout does not have \
             (krabka-streams-rs loads <group>-<task>-epoch-<e>.snapshot itself when it restores to a cut); \
             use `barrier verify --snapshot-dir … --layout rust` to check its files",
        ));
    }
    let dir = match (&plan.snapshot_dir, &plan.state_topic) {
        (Some(dir), None) => Some(open_dir(dir)?),
        (None, Some(_)) => None,
        _ => {
            return Err(Error::usage(
                "give the application's state as --snapshot-dir DIR or --state-topic TOPIC",
            ));
        }
    };
    let settings = connect()?;
    let timeout = plan.timeout;

    let cut = find_cut(&settings, timeout, &plan.group, plan.epoch).map_err(|e| match e {
        CutLookupError::Read(e) => e,
        CutLookupError::NoCut(m) => Error::failure(m),
    })?;
    let units: Vec<SnapshotUnit> = logical_partitions(&cut.cut)
        .into_iter()
        .map(SnapshotUnit::Partition)
        .collect();
    let new_offsets: BTreeMap<TopicPartition, i64> = cut.cut.offsets().collect();
    let (writes, topic) = match (&dir, &plan.state_topic) {
        (Some(dir), _) => (prepare_epoch_copy(dir, &units, cut.epoch, NO_EPOCH)?, None),
        (None, Some(name)) => {
            let state = topic::read(&settings, name, timeout)?;
            // The live snapshots record the cut offsets: exactly what the group is set to.
            let planned = plan_copy(
                &state,
                &units,
                cut.epoch,
                NO_EPOCH,
                Some(&new_offsets),
                Some(&plan.consumer_group),
            )?;
            (planned.rows, Some((state, planned.writes)))
        }
        (None, None) => {
            return Err(Error::usage(
                "give the application's state as --snapshot-dir DIR or --state-topic TOPIC",
            ));
        }
    };
    let tps: Vec<TopicPartition> = new_offsets.keys().cloned().collect();
    let activity = group_activity(&settings, &plan.consumer_group, timeout)?;
    if !activity.is_inactive() {
        return Err(Error::failure(format!(
            "consumer group {} is active ({}): stop every consumer of the group \
             before restoring its offsets (the broker takes offsets only from a group's \
             members while it has any, and a running member would overwrite the restored \
             state); nothing was changed",
            plan.consumer_group,
            activity.describe()
        )));
    }
    let current = committed_offsets(&settings, &plan.consumer_group, &tps, timeout)?;
    let mut restore = CutRestore {
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
        executed: false,
        topic,
    };
    if !plan.execute {
        return Ok(restore);
    }
    execute(plan, &settings, &restore, &new_offsets)?;
    restore.executed = true;
    Ok(restore)
}

/// Writes the live state files, then commits the cut offsets.
fn execute(
    plan: &RestoreCutPlan,
    settings: &KafkaSettings,
    restore: &CutRestore,
    new_offsets: &BTreeMap<TopicPartition, i64>,
) -> Result<()> {
    let written = match &restore.topic {
        Some((state, writes)) => topic::execute_writes(settings, state, writes, plan.timeout),
        None => execute_writes(&restore.writes),
    };
    written.map_err(|e| {
        Error::failure(format!(
            "restore to cut {} of {} failed half-way: {}; the committed offsets of {} were NOT changed",
            restore.cut.epoch, plan.group, e.message, plan.consumer_group
        ))
    })?;
    if let Err(e) = commit_offsets(settings, &plan.consumer_group, new_offsets, plan.timeout) {
        let kind = if e.unreachable {
            ErrorKind::Unreachable
        } else {
            ErrorKind::Failure
        };
        let written: Vec<&str> = restore.writes.iter().map(|w| w.target.as_str()).collect();
        let offsets_state = if e.unreachable {
            "may or may not have been changed (the broker did not answer)"
        } else {
            "were NOT changed"
        };
        return Err(Error::new(
            kind,
            format!(
                "restore to cut {} of {} failed half-way: the live state files were written ([{}]), \
                 but committing the cut offsets failed: {}; the committed offsets of {} {offsets_state}. \
                 Run the same command again once the broker is reachable",
                restore.cut.epoch,
                plan.group,
                written.join(", "),
                e.message,
                plan.consumer_group
            ),
        ));
    }
    Ok(())
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
            restorable_cut(&log, true, "app", EpochSelector::Latest)
                .unwrap()
                .epoch,
            3
        );
        assert_eq!(
            restorable_cut(&log, true, "app", EpochSelector::Exact(4)).unwrap_err(),
            "barrier group app has no complete cut at epoch 4: that cut is partial (missing: orders/9)"
        );
        assert_eq!(
            restorable_cut(&log, true, "app", EpochSelector::Exact(7)).unwrap_err(),
            "barrier group app has no complete cut at epoch 7 (cuts of the group: 3 (complete), 4 (partial))"
        );
        assert_eq!(
            restorable_cut(&CutLog::new(), false, "app", EpochSelector::Latest).unwrap_err(),
            "no such barrier group: app (__barrier_state does not exist)"
        );
        assert_eq!(
            restorable_cut(&log, true, "ap", EpochSelector::Latest).unwrap_err(),
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
        let selected = restorable_cut(&log, true, "app", EpochSelector::Exact(1)).unwrap();
        assert_eq!(
            logical_partitions(&selected.cut)
                .into_iter()
                .collect::<Vec<_>>(),
            [0, 2]
        );
    }

    #[test]
    fn the_cut_selector_accepts_numbers_and_latest() {
        assert_eq!("latest".parse(), Ok(EpochSelector::Latest));
        assert_eq!("12".parse(), Ok(EpochSelector::Exact(12)));
        assert!("live".parse::<EpochSelector>().is_err());
    }
}
