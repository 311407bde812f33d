//! Planning changes to a snapshot directory before anything is touched: which
//! files an epoch copy reads and writes, which files a prune deletes. Pure: the
//! planners see the names present in the directory and return the whole plan or
//! the reason there is none, so a caller can validate everything first and
//! write nothing when any part would fail (D15 for a missing source epoch).
//!
//! Also parses the selectors the commands take: partition lists (`0-3,7`) and
//! epochs (`41`, `live`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::SystemTime;

use super::naming::{
    EpochNotRetained, NO_EPOCH, NamingError, SnapshotFileName, SnapshotKey, java_map,
    parse_file_name, sanitise,
};

/// How `live` is spelled wherever an epoch is accepted.
pub const LIVE: &str = "live";

/// A set of logical partitions, ascending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionSet(pub BTreeSet<i32>);

impl PartitionSet {
    /// Parses `7`, `0-11`, `0-3,7,9-10`. Ranges are inclusive and ascending;
    /// partitions are decimal and ≥ 0.
    pub fn parse(text: &str) -> Result<PartitionSet, String> {
        let bad =
            |why: &str| format!("invalid partition list {text:?}: {why} (e.g. 0-11 or 0-3,7)");
        let mut set = BTreeSet::new();
        for item in text.split(',') {
            let item = item.trim();
            let (low, high) = match item.split_once('-') {
                Some((low, high)) => (low.trim(), high.trim()),
                None => (item, item),
            };
            let number = |s: &str| {
                if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad(&format!("{s:?} is not a partition number")));
                }
                s.parse::<i32>()
                    .map_err(|_| bad(&format!("{s} is too large")))
            };
            let (low, high) = (number(low)?, number(high)?);
            if low > high {
                return Err(bad(&format!("range {low}-{high} is descending")));
            }
            if (high - low) as u64 >= 1 << 20 {
                return Err(bad(&format!("range {low}-{high} is too long")));
            }
            set.extend(low..=high);
        }
        Ok(PartitionSet(set))
    }

    pub fn contains(&self, partition: i32) -> bool {
        self.0.contains(&partition)
    }
}

/// Parses an epoch: a decimal ≥ 0, or `live` ([`NO_EPOCH`]) when `live_ok`.
pub fn parse_epoch(text: &str, live_ok: bool) -> Result<i64, String> {
    if text == LIVE && live_ok {
        return Ok(NO_EPOCH);
    }
    let expected = if live_ok {
        "an epoch number ≥ 0 or `live`"
    } else {
        "an epoch number ≥ 0"
    };
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("invalid epoch {text:?}: expected {expected}"));
    }
    text.parse()
        .map_err(|_| format!("invalid epoch {text:?}: too large"))
}

/// How an epoch is shown: the number, or `live`.
pub fn epoch_label(epoch: i64) -> String {
    if epoch == NO_EPOCH {
        LIVE.to_owned()
    } else {
        epoch.to_string()
    }
}

/// What one snapshot file belongs to, whatever its epoch: a Java/Go logical
/// partition, or a Rust (group, task).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SnapshotUnit {
    Partition(i32),
    Task { group: String, task: String },
}

impl SnapshotUnit {
    /// The storage key of this unit at `epoch`.
    pub fn key(&self, epoch: i64) -> SnapshotKey {
        match self {
            SnapshotUnit::Partition(partition) => SnapshotKey::JavaGo {
                partition: *partition,
                epoch,
            },
            SnapshotUnit::Task { group, task } => SnapshotKey::Rust {
                group: group.clone(),
                task: task.clone(),
                epoch,
            },
        }
    }

    /// Whether a parsed file name belongs to this unit.
    fn owns(&self, name: &SnapshotFileName) -> bool {
        match (self, name) {
            (SnapshotUnit::Partition(p), SnapshotFileName::JavaGo { partition, .. }) => {
                p == partition
            }
            (SnapshotUnit::Task { group, task }, SnapshotFileName::Rust(rust)) => {
                rust.stem == format!("{}-{}", sanitise(group), sanitise(task))
            }
            _ => false,
        }
    }
}

impl fmt::Display for SnapshotUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotUnit::Partition(p) => write!(f, "partition {p}"),
            SnapshotUnit::Task { group, task } => write!(f, "group {group} task {task}"),
        }
    }
}

/// Why no plan can be made. Nothing has been changed when one of these is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// D15, Java's wording: the source epoch is missing for some partitions
    /// (only those are listed, each with the epochs it does have).
    #[error(transparent)]
    NotRetained(#[from] EpochNotRetained),
    /// D15 for the Rust layout, where files are keyed by task, not partition.
    #[error("snapshot epoch {epoch} is not retained; available epochs by task: {}", java_map(.available))]
    TaskEpochNotRetained {
        epoch: i64,
        available: BTreeMap<String, Vec<i64>>,
    },
    #[error(transparent)]
    InvalidKey(#[from] NamingError),
    #[error("the source and target epoch are both {}", epoch_label(*.0))]
    SameEpoch(i64),
    #[error("the Rust layout has no live state: copy to an epoch number")]
    NoLiveStateInRust,
    #[error("nothing selected: give at least one partition or task")]
    NothingSelected,
}

/// One file an epoch copy writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyStep {
    pub unit: SnapshotUnit,
    /// File name of the source epoch.
    pub source: String,
    /// File name written.
    pub target: String,
    /// Whether a file of that name is already there (it will be replaced).
    pub replaces: bool,
}

/// Plans copying `from`'s file of every unit to `to` (an epoch, or live state for
/// Java/Go). `present` holds every name in the directory. Fails, listing the
/// epochs that do exist, when any unit has no file at `from`.
pub fn plan_epoch_copy(
    present: &BTreeSet<String>,
    units: &[SnapshotUnit],
    from: i64,
    to: i64,
) -> Result<Vec<CopyStep>, PlanError> {
    if units.is_empty() {
        return Err(PlanError::NothingSelected);
    }
    if from == to {
        return Err(PlanError::SameEpoch(from));
    }
    if to == NO_EPOCH && units.iter().any(|u| matches!(u, SnapshotUnit::Task { .. })) {
        return Err(PlanError::NoLiveStateInRust);
    }
    let mut steps = Vec::with_capacity(units.len());
    let mut missing = Vec::new();
    for unit in units {
        let source = unit.key(from).file_name()?;
        let target = unit.key(to).file_name()?;
        if !present.contains(&source) {
            missing.push(unit);
            continue;
        }
        steps.push(CopyStep {
            unit: unit.clone(),
            replaces: present.contains(&target),
            source,
            target,
        });
    }
    if missing.is_empty() {
        return Ok(steps);
    }
    Err(not_retained(present, &missing, from))
}

/// The barrier epochs (not live state) stored for `unit`, ascending.
pub fn available_epochs(present: &BTreeSet<String>, unit: &SnapshotUnit) -> Vec<i64> {
    let mut epochs: Vec<i64> = present
        .iter()
        .filter_map(|n| parse_file_name(n))
        .filter(|n| unit.owns(n) && n.epoch() != NO_EPOCH)
        .map(|n| n.epoch())
        .collect();
    epochs.sort_unstable();
    epochs
}

/// The D15 error for `epoch` missing from each of `units`, listing what they do have.
pub fn not_retained(present: &BTreeSet<String>, units: &[&SnapshotUnit], epoch: i64) -> PlanError {
    let mut by_partition = BTreeMap::new();
    let mut by_task = BTreeMap::new();
    for unit in units {
        match unit {
            SnapshotUnit::Partition(p) => {
                by_partition.insert(*p, available_epochs(present, unit));
            }
            SnapshotUnit::Task { group, task } => {
                by_task.insert(format!("{group}/{task}"), available_epochs(present, unit));
            }
        }
    }
    if by_task.is_empty() {
        EpochNotRetained {
            epoch,
            available: by_partition,
        }
        .into()
    } else {
        PlanError::TaskEpochNotRetained {
            epoch,
            available: by_task,
        }
    }
}

/// A snapshot file as a prune sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatedFile {
    pub file_name: String,
    pub name: SnapshotFileName,
    pub modified: Option<SystemTime>,
}

/// Which barrier epochs a prune keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneRule {
    /// The newest N epochs (by epoch number) of each partition or task.
    KeepNewest(usize),
    /// Epoch files modified at or after this instant (Java's duration rule).
    ModifiedSince(SystemTime),
}

/// What a prune deletes and keeps, both in name order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PrunePlan {
    pub delete: Vec<DatedFile>,
    pub keep: Vec<DatedFile>,
}

/// Plans a prune. Live state is never deleted; files outside `only` (when given,
/// Java/Go partitions) are neither deleted nor listed; a file whose modification
/// time is unknown is kept by the duration rule.
pub fn plan_prune(files: &[DatedFile], rule: PruneRule, only: Option<&PartitionSet>) -> PrunePlan {
    let selected = |f: &&DatedFile| match (&f.name, only) {
        (_, None) => true,
        (SnapshotFileName::JavaGo { partition, .. }, Some(set)) => set.contains(*partition),
        (SnapshotFileName::Rust(_), Some(_)) => false,
    };
    // Group epoch files by partition or Rust stem.
    let mut groups: BTreeMap<String, Vec<&DatedFile>> = BTreeMap::new();
    let mut plan = PrunePlan::default();
    for file in files.iter().filter(selected) {
        let unit = match &file.name {
            SnapshotFileName::JavaGo {
                epoch: NO_EPOCH, ..
            } => {
                plan.keep.push(file.clone());
                continue;
            }
            SnapshotFileName::JavaGo { partition, .. } => format!("p{partition}"),
            SnapshotFileName::Rust(rust) => format!("r{}", rust.stem),
        };
        groups.entry(unit).or_default().push(file);
    }
    for mut members in groups.into_values() {
        members.sort_by_key(|f| std::cmp::Reverse(f.name.epoch()));
        for (rank, file) in members.into_iter().enumerate() {
            let keep = match rule {
                PruneRule::KeepNewest(n) => rank < n,
                PruneRule::ModifiedSince(cutoff) => file.modified.is_none_or(|m| m >= cutoff),
            };
            if keep {
                plan.keep.push(file.clone());
            } else {
                plan.delete.push(file.clone());
            }
        }
    }
    plan.delete.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    plan.keep.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    plan
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn names(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn partition_lists_accept_ranges_and_lists() {
        assert_eq!(
            PartitionSet::parse("0-3,7").unwrap().0,
            BTreeSet::from([0, 1, 2, 3, 7])
        );
        assert_eq!(PartitionSet::parse("5").unwrap().0, BTreeSet::from([5]));
        assert_eq!(PartitionSet::parse("0-11").unwrap().0.len(), 12);
        for bad in ["", "3-1", "-1", "a", "1,,2", "0-99999999", "1-2-3"] {
            assert!(PartitionSet::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn epochs_are_numbers_or_live_where_allowed() {
        assert_eq!(parse_epoch("41", false), Ok(41));
        assert_eq!(parse_epoch("live", true), Ok(NO_EPOCH));
        assert!(parse_epoch("live", false).is_err());
        assert!(parse_epoch("-1", true).is_err());
        assert!(parse_epoch("+3", true).is_err());
        assert_eq!(epoch_label(NO_EPOCH), "live");
    }

    #[test]
    fn epoch_copy_to_live_marks_replaced_files() {
        let present = names(&[
            "partition-0-epoch-41.snapshot",
            "partition-1-epoch-41.snapshot",
            "partition-1.snapshot",
        ]);
        let units = [SnapshotUnit::Partition(0), SnapshotUnit::Partition(1)];
        let steps = plan_epoch_copy(&present, &units, 41, NO_EPOCH).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].source, "partition-0-epoch-41.snapshot");
        assert_eq!(steps[0].target, "partition-0.snapshot");
        assert!(!steps[0].replaces);
        assert!(steps[1].replaces);
    }

    #[test]
    fn a_missing_source_epoch_fails_the_whole_plan_with_the_java_message() {
        let present = names(&[
            "partition-0-epoch-41.snapshot",
            "partition-1-epoch-40.snapshot",
            "partition-1-epoch-42.snapshot",
            "partition-1.snapshot",
        ]);
        let units = [
            SnapshotUnit::Partition(0),
            SnapshotUnit::Partition(1),
            SnapshotUnit::Partition(2),
        ];
        let err = plan_epoch_copy(&present, &units, 41, NO_EPOCH).unwrap_err();
        assert_eq!(
            err.to_string(),
            "snapshot epoch 41 is not retained; available epochs by partition: {1=[40, 42], 2=[]}"
        );
    }

    #[test]
    fn rust_tasks_copy_between_epochs_but_never_to_live() {
        let present = names(&["app-0-1-epoch-3.snapshot", "app-0-1-epoch-4.snapshot"]);
        let unit = SnapshotUnit::Task {
            group: "app".into(),
            task: "0-1".into(),
        };
        let steps = plan_epoch_copy(&present, std::slice::from_ref(&unit), 3, 9).unwrap();
        assert_eq!(steps[0].target, "app-0-1-epoch-9.snapshot");
        assert_eq!(
            plan_epoch_copy(&present, std::slice::from_ref(&unit), 3, NO_EPOCH),
            Err(PlanError::NoLiveStateInRust)
        );
        assert_eq!(
            plan_epoch_copy(&present, &[unit], 5, 9)
                .unwrap_err()
                .to_string(),
            "snapshot epoch 5 is not retained; available epochs by task: {app/0-1=[3, 4]}"
        );
    }

    #[test]
    fn copying_an_epoch_onto_itself_or_nothing_is_refused() {
        let present = names(&["partition-0-epoch-1.snapshot"]);
        assert_eq!(
            plan_epoch_copy(&present, &[SnapshotUnit::Partition(0)], 1, 1),
            Err(PlanError::SameEpoch(1))
        );
        assert_eq!(
            plan_epoch_copy(&present, &[], 1, 2),
            Err(PlanError::NothingSelected)
        );
    }

    fn dated(name: &str, age_secs: u64) -> DatedFile {
        DatedFile {
            file_name: name.into(),
            name: parse_file_name(name).unwrap(),
            modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 - age_secs)),
        }
    }

    fn deleted(plan: &PrunePlan) -> Vec<&str> {
        plan.delete.iter().map(|f| f.file_name.as_str()).collect()
    }

    #[test]
    fn prune_keeps_the_newest_epochs_per_partition_and_never_live_state() {
        let files = [
            dated("partition-0.snapshot", 999),
            dated("partition-0-epoch-1.snapshot", 30),
            dated("partition-0-epoch-2.snapshot", 20),
            dated("partition-0-epoch-10.snapshot", 10),
            dated("partition-1-epoch-1.snapshot", 30),
            dated("app-0-1-epoch-5.snapshot", 30),
            dated("app-0-1-epoch-6.snapshot", 30),
        ];
        let plan = plan_prune(&files, PruneRule::KeepNewest(1), None);
        assert_eq!(
            deleted(&plan),
            [
                "app-0-1-epoch-5.snapshot",
                "partition-0-epoch-1.snapshot",
                "partition-0-epoch-2.snapshot"
            ]
        );
        assert!(
            plan.keep
                .iter()
                .any(|f| f.file_name == "partition-0.snapshot")
        );
        let plan = plan_prune(&files, PruneRule::KeepNewest(0), None);
        assert_eq!(plan.delete.len(), 6, "everything but live state");
    }

    #[test]
    fn prune_by_age_and_partition_filter() {
        let files = [
            dated("partition-0.snapshot", 999),
            dated("partition-0-epoch-1.snapshot", 30),
            dated("partition-0-epoch-2.snapshot", 5),
            dated("partition-1-epoch-1.snapshot", 30),
            dated("app-0-1-epoch-5.snapshot", 30),
        ];
        let cutoff = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 - 10);
        let only = PartitionSet::parse("0").unwrap();
        let plan = plan_prune(&files, PruneRule::ModifiedSince(cutoff), Some(&only));
        assert_eq!(deleted(&plan), ["partition-0-epoch-1.snapshot"]);
        assert_eq!(plan.keep.len(), 2);
        let mut unknown = dated("partition-5-epoch-1.snapshot", 0);
        unknown.modified = None;
        let plan = plan_prune(&[unknown], PruneRule::ModifiedSince(cutoff), None);
        assert!(plan.delete.is_empty());
    }
}
