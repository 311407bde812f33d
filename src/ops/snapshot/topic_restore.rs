//! `snapshot restore --state-topic NAME --partition LIST --from-epoch E
//! --to-epoch E|live` and the state half of `snapshot restore-cut
//! --state-topic NAME`: one epoch's snapshot of each partition copied to
//! another key of the same topic, the container verbatim (D12), with the same
//! plan, report, `--dry-run` and `--yes` rules as for a directory
//! (`ops::snapshot::restore`).
//!
//! Everything is checked before the first record is produced: the plan (D15 for
//! a missing source epoch, worded as for a directory), every source assembled,
//! and every snapshot read or replaced belonging to one owner (group and
//! fingerprint, both named when they differ). The records written carry the
//! source's identity; their input offsets are the source's, or the cut's
//! offsets when a cut is restored (the state then reflects exactly the offsets
//! the group is set to, so a run takes it under either guarantee).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::restore::{CopyReport, PreparedWrite};
use super::topic::{self, OwnerCheck, TopicState, TopicWrite, key_of};
use super::{Confirm, live_group};
use crate::engine::columnar::snapshot::plan::{SnapshotUnit, plan_epoch_copy};
use crate::engine::columnar::snapshot::state_record::InputOffsets;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, Result};

/// A planned epoch copy in the topic: the report rows and the writes.
pub struct TopicCopy {
    pub rows: Vec<PreparedWrite>,
    pub writes: Vec<TopicWrite>,
    /// The consumer groups the snapshots read or replaced name (one, by the
    /// owner check): whose members a restore must not run under.
    pub groups: BTreeSet<String>,
}

/// Plans copying epoch `from` of every unit to `to`. `cut` gives the input
/// offsets the copies record (by source topic-partition) when a cut is restored;
/// `group` is the consumer group whose state it must be, when known.
pub fn plan_copy(
    state: &TopicState,
    units: &[SnapshotUnit],
    from: i64,
    to: i64,
    cut: Option<&InputOffsets>,
    group: Option<&str>,
) -> Result<TopicCopy> {
    let steps = plan_epoch_copy(&state.names(), units, from, to)
        .map_err(|e| Error::failure(e.to_string()))?;
    let mut owners = OwnerCheck::new(&state.topic.name, group);
    let mut copy = TopicCopy {
        rows: Vec::new(),
        writes: Vec::new(),
        groups: BTreeSet::new(),
    };
    for step in steps {
        let (source, target) = (key_of(&step.source), key_of(&step.target));
        let found = state.found(source)?.ok_or_else(|| {
            Error::failure(format!(
                "state topic {}: {source} disappeared while being read",
                state.topic.name
            ))
        })?;
        owners.check(source, found)?;
        copy.groups.extend(found.group.clone());
        let replaced = state.found(target)?;
        if let Some(old) = replaced {
            owners.check(target, old)?;
            copy.groups.extend(old.group.clone());
        }
        let offsets = match (cut, &step.unit) {
            (Some(cut), SnapshotUnit::Partition(p)) => cut
                .iter()
                .filter(|(tp, _)| tp.partition == *p)
                .map(|(tp, o)| (tp.clone(), *o))
                .collect(),
            _ => found.offsets.clone(),
        };
        let write = TopicWrite::of(
            &state.topic.name,
            target,
            source,
            found,
            offsets,
            replaced.cloned(),
        )?;
        copy.rows.push(PreparedWrite {
            target: target.to_owned(),
            // A record has no path: the key is the target.
            path: PathBuf::new(),
            source: source.to_owned(),
            bytes: write.container.clone(),
            replaces: replaced.is_some(),
            dir: None,
        });
        copy.writes.push(write);
    }
    Ok(copy)
}

/// Plans, confirms (when replacing) and performs an epoch copy in the topic; a
/// `dry_run` produces nothing. The state's group must have no live members
/// unless `allow_live` (`ops::snapshot::live_group`).
#[allow(clippy::too_many_arguments)] // the plan's parts, each used once
pub fn copy_epoch(
    kafka: &KafkaSettings,
    name: &str,
    units: &[SnapshotUnit],
    (from, to): (i64, i64),
    dry_run: bool,
    allow_live: bool,
    confirm: Confirm<'_>,
    timeout: Duration,
) -> Result<CopyReport> {
    let state = topic::read(kafka, name, timeout)?;
    let planned = plan_copy(&state, units, from, to, None, None)?;
    let location = state.location();
    if !allow_live {
        live_group::refuse_running(&planned.groups, &location, &|| Ok(kafka.clone()), timeout)?;
    }
    if dry_run {
        return Ok(CopyReport {
            location,
            files: planned.rows.into_iter().map(|w| (w, false)).collect(),
            dry_run: true,
        });
    }
    let replacing: Vec<&str> = planned
        .rows
        .iter()
        .filter(|w| w.replaces)
        .map(|w| w.target.as_str())
        .collect();
    if !replacing.is_empty() {
        confirm(&format!(
            "replace {} existing snapshot(s) in {location} ({})?",
            replacing.len(),
            replacing.join(", ")
        ))?;
    }
    topic::execute_writes(kafka, &state, &planned.writes, timeout)?;
    Ok(CopyReport {
        location,
        files: planned.rows.into_iter().map(|w| (w, true)).collect(),
        dry_run: false,
    })
}

/// `snapshot restore --state-topic NAME`: the epoch copy form in the topic.
pub fn restore(
    args: &super::restore::RestorePlan,
    name: &str,
    kafka: &dyn Fn() -> Result<KafkaSettings>,
    timeout: Duration,
    confirm: Confirm<'_>,
) -> Result<CopyReport> {
    if args.from_json.is_some() || args.dir.is_some() {
        return Err(Error::usage(format!(
            "--state-topic {name} restores one epoch of the topic to another epoch or to live state (--partition LIST --from-epoch E --to-epoch E|live); a lossless dump is written to a file or a directory (--from-json DUMP --to FILE|DIR), and `snapshot copy --from-dir DIR --to-topic {name}` copies a directory into the topic"
        )));
    }
    let (Some(from), Some(to)) = (args.from_epoch, args.to_epoch) else {
        return Err(Error::usage(
            "an epoch copy needs --from-epoch E and --to-epoch E|live",
        ));
    };
    if args.layout != crate::engine::columnar::snapshot::naming::SnapshotLayout::JavaGo {
        return Err(Error::usage(
            "a state topic holds Java/Go keys (partition-<p>[-epoch-<e>]): drop --layout rust",
        ));
    }
    let units = super::restore::units_of(args, true)?;
    copy_epoch(
        &kafka()?,
        name,
        &units,
        (from, to),
        args.dry_run,
        args.allow_live_members,
        confirm,
        timeout,
    )
}
