//! `barrier list`: the groups of `__barrier_state`, their cuts and (with `all`) their
//! definitions and injection records, as typed rows the command renders.

use std::num::NonZeroU32;
use std::time::Duration;

use arrow_array::RecordBatch;

use crate::engine::columnar::barrier::rows::cut_rows;
use crate::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierCut, CutLog, GroupDefinition, InjectionStart, group_partition,
    require_group,
};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::barrier::read_state;
use crate::ops::{Error, Result};

/// What to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPlan {
    /// Only this group (it must exist); every group when `None`.
    pub group: Option<String>,
    /// Partial cuts, definitions and injection records too.
    pub all: bool,
}

/// A group's definition record, or why it does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionEntry {
    pub group: String,
    /// The partition of `__barrier_state` the group's records go to (`docs/formats.md` §7);
    /// `None` when the topic has no partitions.
    pub state_partition: Option<u32>,
    pub definition: std::result::Result<GroupDefinition, String>,
}

/// An injection record of a group, or why it does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionEntry {
    pub group: String,
    pub epoch: i64,
    pub injection: std::result::Result<InjectionStart, String>,
}

/// What `list` found.
#[derive(Debug, Clone)]
pub struct Listing {
    pub topic_exists: bool,
    pub partitions: i32,
    pub records: u64,
    /// Complete cuts, or every cut with `all`, group by group.
    pub cuts: Vec<BarrierCut>,
    /// Empty unless `all`.
    pub definitions: Vec<DefinitionEntry>,
    /// Empty unless `all`.
    pub injections: Vec<InjectionEntry>,
}

impl Listing {
    /// One line per record that does not decode; the listing is then a failure (exit 1)
    /// after it is printed.
    pub fn malformed(&self) -> Vec<String> {
        let definitions = self.definitions.iter().filter_map(|d| {
            let e = d.definition.as_ref().err()?;
            Some(format!("group definition of {}: {e}", d.group))
        });
        let injections = self.injections.iter().filter_map(|i| {
            let e = i.injection.as_ref().err()?;
            Some(format!(
                "injection record of {} epoch {}: {e}",
                i.group, i.epoch
            ))
        });
        definitions.chain(injections).collect()
    }

    /// The failure to report once the listing is printed, when a record did not decode.
    pub fn malformed_error(&self) -> Option<Error> {
        let malformed = self.malformed();
        (!malformed.is_empty()).then(|| {
            Error::failure(format!(
                "{} record(s) of {BARRIER_STATE_TOPIC} do not decode: {}",
                malformed.len(),
                malformed.join("; ")
            ))
        })
    }
}

/// Reads the topic and selects what the plan asks for; an unknown `group` is a failure.
pub fn list(settings: &KafkaSettings, timeout: Duration, plan: &ListPlan) -> Result<Listing> {
    let state = read_state(settings, timeout)?;
    let groups: Vec<String> = match &plan.group {
        Some(g) => {
            require_group(&state.log, state.topic_exists, g)
                .map_err(|e| Error::failure(e.to_string()))?;
            vec![g.clone()]
        }
        None => state.log.groups(),
    };
    let cuts = groups
        .iter()
        .flat_map(|g| state.log.cuts(g))
        .filter(|c| plan.all || c.cut.is_complete())
        .collect();
    let (definitions, injections) = if plan.all {
        (
            definitions(&state.log, &groups, state.partitions),
            injections(&state.log, &groups),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(Listing {
        topic_exists: state.topic_exists,
        partitions: state.partitions,
        records: state.records,
        cuts,
        definitions,
        injections,
    })
}

/// The cuts as data rows (`group, epoch, status, …, offset`) for `--format`.
pub fn rows(cuts: &[BarrierCut]) -> Result<RecordBatch> {
    cut_rows(cuts).map_err(|e| Error::failure(format!("cannot build the cut rows: {e}")))
}

fn definitions(log: &CutLog, groups: &[String], partitions: i32) -> Vec<DefinitionEntry> {
    let state_partition = |group: &str| {
        u32::try_from(partitions)
            .ok()
            .and_then(NonZeroU32::new)
            .map(|n| group_partition(group, n))
    };
    groups
        .iter()
        .filter_map(|g| Some((g, log.group_definition(g)?)))
        .map(|(g, definition)| DefinitionEntry {
            group: g.clone(),
            state_partition: state_partition(g),
            definition: definition.map_err(|e| e.to_string()),
        })
        .collect()
}

fn injections(log: &CutLog, groups: &[String]) -> Vec<InjectionEntry> {
    groups
        .iter()
        .flat_map(|g| log.injections(g).into_iter().map(move |i| (g, i)))
        .map(|(g, (epoch, injection))| InjectionEntry {
            group: g.clone(),
            epoch,
            injection: injection.map_err(|e| e.to_string()),
        })
        .collect()
}
