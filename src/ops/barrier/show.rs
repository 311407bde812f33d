//! `barrier show`: one cut of a group, complete or partial.

use std::time::Duration;

use crate::engine::columnar::barrier::BarrierCut;
use crate::engine::columnar::barrier::require_group;
use crate::engine::columnar::barrier::selection::{CutSelection, EpochSelector, select_cut};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::barrier::read_state;
use crate::ops::{Error, Result};

/// The cut of `group` that `epoch` selects. `latest` is the highest complete cut; an exact
/// epoch is shown whether complete or partial. An unknown group or a missing epoch is a
/// failure whose message says which groups or epochs exist.
pub fn show(
    settings: &KafkaSettings,
    timeout: Duration,
    group: &str,
    epoch: EpochSelector,
) -> Result<BarrierCut> {
    let state = read_state(settings, timeout)?;
    require_group(&state.log, state.topic_exists, group)
        .map_err(|e| Error::failure(e.to_string()))?;
    match select_cut(&state.log, group, epoch) {
        CutSelection::Complete(cut) | CutSelection::Partial(cut) => Ok(cut),
        CutSelection::Missing(missing) => Err(Error::failure(missing.to_string())),
    }
}
