//! Restoring a group runner to a barrier cut (behaviour §8 "Restore"): load the
//! state of every partition of the cut from its epoch snapshots, seek to the cut
//! offsets, and put the aligner at that epoch. A snapshot the store does not
//! hold fails the restore (D15) instead of loading empty state.
//!
//! [`stage_cut`] is the same restore for a runner that is not started yet: a
//! subscribing consumer owns nothing to seek, so the cut's snapshots become the
//! live state that assignment loads, and the caller commits the cut offsets.

use std::collections::{BTreeMap, BTreeSet};

use super::{Consumer, GroupRunner, LIVE_EPOCH, Producer, RunnerError, StateStore, Tp};
use crate::engine::columnar::barrier::BarrierCut;
use crate::engine::columnar::runner::align::{CutSource, cut_offsets};

/// Which cut to restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutChoice {
    Epoch(i64),
    Latest,
}

/// Finds the complete cut `choice` names in `group`.
pub fn find_cut(
    source: &mut dyn CutSource,
    group: &str,
    choice: CutChoice,
) -> Result<BarrierCut, RunnerError> {
    match choice {
        CutChoice::Epoch(epoch) if epoch < 0 => {
            Err(RunnerError::new("barrier epoch must not be negative"))
        }
        CutChoice::Epoch(epoch) => source.complete_cut_at(group, epoch)?.ok_or_else(|| {
            RunnerError::new(format!(
                "barrier group {group} has no complete cut at epoch {epoch}"
            ))
        }),
        CutChoice::Latest => source
            .latest_complete_cut(group)?
            .ok_or_else(|| RunnerError::new(format!("barrier group {group} has no complete cut"))),
    }
}

/// Fails unless the store holds `epoch` for every partition (when it can tell).
fn check_retained(
    store: &mut dyn StateStore,
    partitions: &BTreeSet<i32>,
    epoch: i64,
) -> Result<(), RunnerError> {
    let mut available = Vec::new();
    let mut missing = false;
    for partition in partitions {
        let Some(epochs) = store.epochs(*partition)? else {
            return Ok(());
        };
        missing |= !epochs.contains(&epoch);
        let list: Vec<String> = epochs.iter().map(i64::to_string).collect();
        available.push(format!("{partition}=[{}]", list.join(", ")));
    }
    if missing {
        return Err(RunnerError::new(format!(
            "snapshot epoch {epoch} is not retained; available epochs by partition: {{{}}}",
            available.join(", ")
        )));
    }
    Ok(())
}

/// Copies the cut's epoch snapshot of every partition it names to the live
/// state and returns the offsets to commit before the runner starts.
pub fn stage_cut(
    store: &mut dyn StateStore,
    cut: &BarrierCut,
) -> Result<BTreeMap<Tp, i64>, RunnerError> {
    let offsets = cut_offsets(cut);
    let partitions: BTreeSet<i32> = offsets.keys().map(|tp| tp.1).collect();
    check_retained(store, &partitions, cut.epoch)?;
    for partition in &partitions {
        let state = store.load(*partition, cut.epoch)?;
        store.save(*partition, LIVE_EPOCH, &state)?;
    }
    Ok(offsets)
}

impl<C: Consumer, P: Producer, S: StateStore> GroupRunner<C, P, S> {
    /// `RestoreToEpoch(e)`.
    pub fn restore_to_epoch(&mut self, epoch: i64) -> Result<BarrierCut, RunnerError> {
        self.restore_to(CutChoice::Epoch(epoch))
    }

    /// `RestoreToLatestCut()`.
    pub fn restore_to_latest_cut(&mut self) -> Result<BarrierCut, RunnerError> {
        self.restore_to(CutChoice::Latest)
    }

    pub fn restore_to(&mut self, choice: CutChoice) -> Result<BarrierCut, RunnerError> {
        let aligner = self
            .barrier
            .as_mut()
            .ok_or_else(|| RunnerError::new("restoring to a cut requires a barrier group"))?;
        let group = aligner.group.clone();
        let cut = find_cut(aligner.source.as_mut(), &group, choice)?;
        let offsets = cut_offsets(&cut);
        let targets: Vec<Tp> = offsets
            .keys()
            .filter(|tp| self.owned.is_empty() || self.owned.contains(*tp))
            .cloned()
            .collect();
        let partitions: BTreeSet<i32> = targets.iter().map(|tp| tp.1).collect();
        check_retained(&mut self.store, &partitions, cut.epoch)?;
        for partition in &partitions {
            let state = self.store.load(*partition, cut.epoch)?;
            self.topology.release_partition(*partition);
            self.topology
                .restore_partition(*partition, &state)
                .map_err(|e| RunnerError::new(e.to_string()))?;
        }
        for tp in &targets {
            self.consumer.seek(tp, offsets[tp])?;
        }
        self.started_from_cut(&cut, &targets);
        Ok(cut)
    }

    /// Puts the aligner at `cut` for `targets` (all of the cut when empty): the
    /// runner resumes there, after [`stage_cut`] and a commit of its offsets.
    pub fn started_from_cut(&mut self, cut: &BarrierCut, targets: &[Tp]) {
        let all: Vec<Tp>;
        let targets = if targets.is_empty() {
            all = cut_offsets(cut).into_keys().collect();
            &all
        } else {
            targets
        };
        if let Some(aligner) = self.barrier.as_mut() {
            aligner.restored(cut, targets);
        }
    }
}
