//! `snapshot prune DIR --keep N | --older-than DUR [--partition LIST]`: deletes
//! barrier-epoch files, keeping the newest N epochs of each partition (or Rust
//! task), or those modified within DUR (Java's two retention rules). Live state
//! is never pruned. The engine plans; the caller confirms; a dry run deletes nothing.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::{Confirm, dir_error, open_dir};
use crate::engine::columnar::snapshot::plan::{
    DatedFile, PartitionSet, PrunePlan as PlannedPrune, PruneRule, plan_prune,
};
use crate::io::snapshot_dir::EntryKind;
use crate::ops::{Error, Result};

/// What to prune. One of `keep` and `older_than` is given.
#[derive(Debug, Clone)]
pub struct PrunePlan {
    /// The directory; `None` with `--state-topic` (`ops::snapshot::topic_prune`).
    pub dir: Option<PathBuf>,
    pub keep: Option<usize>,
    pub older_than: Option<Duration>,
    pub partition: Option<PartitionSet>,
    pub dry_run: bool,
}

/// What a prune deleted (or, in a dry run, would delete) and kept.
pub struct PruneReport {
    pub dir: String,
    pub plan: PlannedPrune,
    pub deleted: usize,
    pub dry_run: bool,
}

/// The retention rule the plan gives (Java's two).
pub(super) fn rule(plan: &PrunePlan) -> Result<PruneRule> {
    Ok(match (plan.keep, plan.older_than) {
        (Some(n), _) => PruneRule::KeepNewest(n),
        (None, Some(age)) => PruneRule::ModifiedSince(
            SystemTime::now()
                .checked_sub(age)
                .unwrap_or(SystemTime::UNIX_EPOCH),
        ),
        (None, None) => return Err(Error::usage("give --keep N or --older-than DURATION")),
    })
}

/// Plans the prune, confirms a non-empty one and deletes in plan order; a failed
/// delete stops there, naming what was and was not deleted.
pub fn prune(plan: &PrunePlan, confirm: Confirm<'_>) -> Result<PruneReport> {
    let Some(dir) = &plan.dir else {
        return Err(Error::usage("give a DIR or --state-topic TOPIC"));
    };
    let dir = open_dir(dir)?;
    let rule = rule(plan)?;
    let listing = dir.list().map_err(dir_error)?;
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
    let planned = plan_prune(&files, rule, plan.partition.as_ref());
    if !plan.dry_run && !planned.delete.is_empty() {
        confirm(&format!(
            "delete {} snapshot file(s) from {}?",
            planned.delete.len(),
            dir.path().display()
        ))?;
    }
    let mut deleted = 0;
    if !plan.dry_run {
        for (i, file) in planned.delete.iter().enumerate() {
            if let Err(e) = dir.remove(&file.file_name) {
                let rest: Vec<&str> = planned.delete[i..]
                    .iter()
                    .map(|f| f.file_name.as_str())
                    .collect();
                let done: Vec<&str> = planned.delete[..i]
                    .iter()
                    .map(|f| f.file_name.as_str())
                    .collect();
                return Err(Error::failure(format!(
                    "{e}; deleted before the failure: [{}]; not deleted: [{}]",
                    done.join(", "),
                    rest.join(", ")
                )));
            }
            deleted += 1;
        }
    }
    Ok(PruneReport {
        dir: dir.path().display().to_string(),
        plan: planned,
        deleted,
        dry_run: plan.dry_run,
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn plan(dir: &std::path::Path, dry_run: bool) -> PrunePlan {
        PrunePlan {
            dir: Some(dir.to_path_buf()),
            keep: Some(1),
            older_than: None,
            partition: None,
            dry_run,
        }
    }

    #[test]
    fn a_dry_run_asks_nothing_and_deletes_nothing_and_a_declined_prompt_deletes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "partition-0-epoch-1.snapshot",
            "partition-0-epoch-2.snapshot",
            "partition-0.snapshot",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let asked = Cell::new(0);
        let report = prune(&plan(dir.path(), true), &|_| {
            asked.set(asked.get() + 1);
            Ok(())
        })
        .unwrap();
        assert_eq!(asked.get(), 0);
        assert_eq!(report.deleted, 0);
        let planned: Vec<&str> = report
            .plan
            .delete
            .iter()
            .map(|f| f.file_name.as_str())
            .collect();
        assert_eq!(planned, ["partition-0-epoch-1.snapshot"]);

        let Err(e) = prune(&plan(dir.path(), false), &|_| Err(Error::cancelled())) else {
            panic!("a declined prompt must end the prune");
        };
        assert_eq!(e.kind, crate::ops::ErrorKind::Cancelled);
        assert!(dir.path().join("partition-0-epoch-1.snapshot").exists());

        let report = prune(&plan(dir.path(), false), &|_| Ok(())).unwrap();
        assert_eq!(report.deleted, 1);
        assert!(!dir.path().join("partition-0-epoch-1.snapshot").exists());
        assert!(dir.path().join("partition-0-epoch-2.snapshot").exists());
        assert!(dir.path().join("partition-0.snapshot").exists());
    }
}
