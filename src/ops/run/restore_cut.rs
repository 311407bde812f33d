//! `run FILE -b … --restore-cut E|latest`: before the group is joined, find the
//! barrier group's complete cut (the same lookup as `snapshot restore-cut`,
//! `ops::snapshot::restore_cut::find_cut`), load every partition's state at its
//! epoch from the state store, and set the consumer group's committed offsets to
//! the cut offsets; the runner then adopts that state on its first assignment
//! and continues after the cut's epoch. Nothing is changed unless the cut and
//! every snapshot exist and the consumer group has no members.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::engine::columnar::barrier::BarrierCut;
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::runner::align::cut_offsets;
use crate::engine::columnar::runner::group::StateStore;
use crate::engine::columnar::runner::group::restore::{PartitionState, load_cut};
use crate::engine::topic_partition::TopicPartition;
use crate::io::kafka::groups::{commit_offsets, group_activity};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::snapshot::restore_cut::{CutLookupError, find_cut};
use crate::ops::{Error, ErrorKind, Result};

/// The cut the run starts from and the state it adopts.
pub struct RestoredCut {
    pub cut: BarrierCut,
    pub states: Vec<(i32, PartitionState)>,
}

/// Everything `--restore-cut` does before the consumer joins the group.
pub fn prepare(
    kafka: &KafkaSettings,
    timeout: Duration,
    barrier_group: Option<&str>,
    consumer_group: &str,
    selector: EpochSelector,
    store: &mut dyn StateStore,
) -> Result<RestoredCut> {
    let Some(barrier_group) = barrier_group else {
        return Err(Error::usage(
            "--restore-cut: restoring to a cut requires a barrier group (`barrier_group` in the topology settings)",
        ));
    };
    let cut = find_cut(kafka, timeout, barrier_group, selector).map_err(|e| match e {
        CutLookupError::Read(e) => e,
        CutLookupError::NoCut(m) => Error::failure(format!("--restore-cut: {m}")),
    })?;
    let states = load_cut(store, &cut).map_err(|e| {
        Error::failure(format!(
            "--restore-cut: cut {} of {barrier_group}: {}",
            cut.epoch, e.message
        ))
    })?;
    let activity = group_activity(kafka, consumer_group, timeout)?;
    if !activity.is_inactive() {
        return Err(Error::failure(format!(
            "--restore-cut: consumer group {consumer_group} is active ({}): \
             stop every consumer of the group first; nothing was changed",
            activity.describe()
        )));
    }
    let offsets: BTreeMap<TopicPartition, i64> = cut_offsets(&cut);
    commit_offsets(kafka, consumer_group, &offsets, timeout).map_err(|e| {
        let kind = if e.unreachable {
            ErrorKind::Unreachable
        } else {
            ErrorKind::Failure
        };
        Error::new(
            kind,
            format!(
                "--restore-cut: committing the offsets of cut {} to {consumer_group} failed: {}",
                cut.epoch, e.message
            ),
        )
    })?;
    Ok(RestoredCut { cut, states })
}
