//! Restoring a group runner to a barrier cut (semantics §8 "Restore"): load the
//! state of every partition of the cut from its epoch snapshots, seek to the cut
//! offsets, and put the aligner at that epoch. A snapshot the store does not
//! hold fails the restore (D15) instead of loading empty state.
//!
//! [`load_cut`] + [`GroupRunner::adopt_cut`] is the same restore for a runner
//! that is not started yet: a subscribing consumer owns nothing to seek, so the
//! caller commits the cut offsets to the group first, and the adopted state is
//! kept when the partitions are first assigned.

use std::collections::{BTreeMap, BTreeSet};

use super::{Consumer, GroupRunner, Producer, RunnerError, StateStore, TopicPartition};
use crate::engine::columnar::barrier::BarrierCut;
use crate::engine::columnar::runner::align::{CutSource, cut_offsets};

/// Node name → state bytes of one partition.
pub type PartitionState = BTreeMap<String, Vec<u8>>;

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

/// The state of every logical partition `cut` names, at its epoch, ascending;
/// fails when the store does not hold one (D15).
pub fn load_cut(
    store: &mut dyn StateStore,
    cut: &BarrierCut,
) -> Result<Vec<(i32, PartitionState)>, RunnerError> {
    let partitions: BTreeSet<i32> = cut_offsets(cut).keys().map(|tp| tp.partition).collect();
    check_retained(store, &partitions, cut.epoch)?;
    partitions
        .into_iter()
        .map(|p| Ok((p, store.load(p, cut.epoch)?)))
        .collect()
}

impl<C: Consumer, P: Producer<GroupMetadata = C::GroupMetadata>, S: StateStore>
    GroupRunner<C, P, S>
{
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
        let targets: Vec<TopicPartition> = offsets
            .keys()
            .filter(|tp| self.owned.is_empty() || self.owned.contains(*tp))
            .cloned()
            .collect();
        let partitions: BTreeSet<i32> = targets.iter().map(|tp| tp.partition).collect();
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

    /// Starts a runner that owns nothing yet from `cut`, with `states` from
    /// [`load_cut`]: the partitions take the cut state and keep it when they are
    /// first assigned (instead of loading live state), and the aligner continues
    /// after the cut's epoch. The caller has set the group's committed offsets to
    /// the cut offsets, since a consumer with no assignment cannot seek.
    pub fn adopt_cut(
        &mut self,
        cut: &BarrierCut,
        states: &[(i32, PartitionState)],
    ) -> Result<(), RunnerError> {
        for (partition, state) in states {
            self.topology.release_partition(*partition);
            self.topology
                .restore_partition(*partition, state)
                .map_err(|e| RunnerError::new(e.to_string()))?;
            self.adopted.insert(*partition);
        }
        self.started_from_cut(cut, &cut_offsets(cut).into_keys().collect::<Vec<_>>());
        Ok(())
    }

    fn started_from_cut(&mut self, cut: &BarrierCut, targets: &[TopicPartition]) {
        if let Some(aligner) = self.barrier.as_mut() {
            aligner.restored(cut, targets);
        }
    }
}
