//! `snapshot prune --state-topic NAME --keep N | --older-than DUR [--partition
//! LIST]`: the directory prune's rules over a state topic's barrier-epoch
//! keys (`partition-<p>-epoch-<e>`), planned by the same engine planner, so
//! the plan, the report, `--dry-run` and the confirmation are the same. An
//! epoch snapshot is dated by the write time of its (manifest) record, as a
//! file by its modification time. Live state (`partition-<p>`) is never pruned.
//! A pruned key gets a tombstone, then the chunks its manifest named do
//! (`ops::snapshot::topic`); compaction then drops their bytes.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use super::Confirm;
use super::prune::{PrunePlan, PruneReport, rule};
use super::topic;
use crate::engine::columnar::snapshot::naming::SnapshotFileName;
use crate::engine::columnar::snapshot::plan::{DatedFile, PruneRule, plan_prune};
use crate::engine::columnar::snapshot::state_record::parse_key;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::state_times::record_times;
use crate::ops::{Error, Result};

pub fn prune(
    plan: &PrunePlan,
    name: &str,
    kafka: &dyn Fn() -> Result<KafkaSettings>,
    timeout: Duration,
    confirm: Confirm<'_>,
) -> Result<PruneReport> {
    let rule = rule(plan)?;
    let kafka = kafka()?;
    let state = topic::read(&kafka, name, timeout)?;
    let mut times: BTreeMap<i32, BTreeMap<i64, SystemTime>> = BTreeMap::new();
    if matches!(rule, PruneRule::ModifiedSince(_)) {
        let partitions: std::collections::BTreeSet<i32> =
            state.keys.values().map(|(p, _)| *p).collect();
        for partition in partitions {
            times.insert(
                partition,
                record_times(&kafka, name, partition, timeout).map_err(Error::failure)?,
            );
        }
    }
    let files: Vec<DatedFile> = state
        .keys
        .iter()
        .filter_map(|(key, (state_partition, found))| {
            let (partition, epoch) = parse_key(key)?;
            let modified = found.as_ref().ok().and_then(|f| {
                times
                    .get(state_partition)
                    .and_then(|t| t.get(&f.offset))
                    .copied()
            });
            Some(DatedFile {
                file_name: key.clone(),
                name: SnapshotFileName::JavaGo { partition, epoch },
                modified,
            })
        })
        .collect();
    let planned = plan_prune(&files, rule, plan.partition.as_ref());
    // A snapshot that cannot be assembled names no chunks to remove: refused
    // before anything is deleted.
    for file in &planned.delete {
        state.found(&file.file_name)?;
    }
    let location = state.location();
    if !plan.dry_run && !planned.delete.is_empty() {
        confirm(&format!(
            "delete {} snapshot(s) from {location}?",
            planned.delete.len()
        ))?;
    }
    let deleted = if plan.dry_run {
        0
    } else {
        let keys: Vec<String> = planned.delete.iter().map(|f| f.file_name.clone()).collect();
        topic::execute_removals(&kafka, &state, &keys, timeout)?
    };
    Ok(PruneReport {
        dir: location,
        plan: planned,
        deleted,
        dry_run: plan.dry_run,
    })
}
