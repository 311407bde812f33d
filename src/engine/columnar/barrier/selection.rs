//! Which cut an epoch selector (`E|latest`) names in a folded log: the one selector type, its
//! one parser and its one lookup for every command that names a cut (`barrier show`/`verify`,
//! `snapshot restore-cut`, `run --restore-cut`), so `--epoch 0` or `--epoch x` is refused with
//! the same words everywhere.
//!
//! `latest` means the highest-epoch **complete** cut (docs/semantics.md §8 `LatestCompleteCut`).
//! An exact epoch finds its cut whether complete or partial, so a partial one can be shown and
//! reported as such; a missing epoch (never written, or deleted by a tombstone) says what the
//! group does have instead. Snapshot-file epochs (`E|live`, 0 allowed) are another concept:
//! `engine::columnar::snapshot::plan::parse_epoch`.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::engine::columnar::barrier::cut_log::{BarrierCut, CutLog};
use crate::engine::columnar::barrier::record::Cut;

/// `--epoch`: an exact epoch (≥ 1) or the latest complete cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpochSelector {
    Latest,
    Exact(i64),
}

impl FromStr for EpochSelector {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "latest" {
            return Ok(EpochSelector::Latest);
        }
        // Decimal digits only: `+3`, ` 3` or `3.0` name no epoch a user typed on purpose.
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "invalid epoch {text:?}: expected a number (≥ 1) or `latest`"
            ));
        }
        match text.parse::<i64>() {
            Ok(epoch) if epoch >= 1 => Ok(EpochSelector::Exact(epoch)),
            Ok(epoch) => Err(format!(
                "epoch {epoch} cannot name a cut: barrier epochs start at 1"
            )),
            Err(_) => Err(format!("invalid epoch {text:?}: too large")),
        }
    }
}

impl fmt::Display for EpochSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EpochSelector::Latest => f.write_str("latest"),
            EpochSelector::Exact(epoch) => write!(f, "{epoch}"),
        }
    }
}

/// What a selector found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutSelection {
    /// A complete cut: something to verify against or restore to.
    Complete(BarrierCut),
    /// A partial cut: shown, but never verified (its missing partitions have no marker).
    Partial(BarrierCut),
    /// No such cut.
    Missing(MissingCut),
}

impl CutSelection {
    /// The cut found, complete or partial.
    pub fn cut(&self) -> Option<&BarrierCut> {
        match self {
            CutSelection::Complete(cut) | CutSelection::Partial(cut) => Some(cut),
            CutSelection::Missing(_) => None,
        }
    }

    /// Why this selection cannot be verified against, or `None` for a complete cut.
    pub fn problem(&self) -> Option<String> {
        match self {
            CutSelection::Complete(_) => None,
            CutSelection::Partial(cut) => Some(partial_message(cut)),
            CutSelection::Missing(missing) => Some(missing.to_string()),
        }
    }
}

/// A selector that names no cut, with what the group has instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingCut {
    pub group: String,
    pub selector: EpochSelector,
    /// Whether any record of the group (definition or cut) was read.
    pub group_known: bool,
    pub latest_complete: Option<i64>,
    pub partial_epochs: Vec<i64>,
}

impl fmt::Display for MissingCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.selector {
            EpochSelector::Latest => write!(f, "barrier group {} has no complete cut", self.group)?,
            EpochSelector::Exact(epoch) => write!(
                f,
                "barrier group {} has no cut at epoch {epoch}",
                self.group
            )?,
        }
        if !self.group_known {
            return f.write_str(" (no record of this group in __barrier_state)");
        }
        match (self.latest_complete, self.partial_epochs.as_slice()) {
            (Some(latest), _) => write!(f, " (latest complete cut: epoch {latest})"),
            (None, []) => f.write_str(" (the group has no cuts)"),
            (None, partial) => write!(f, " (partial cuts only: epochs {})", join(partial)),
        }
    }
}

/// Finds the cut a selector names.
pub fn select_cut(log: &CutLog, group: &str, selector: EpochSelector) -> CutSelection {
    let found = match selector {
        EpochSelector::Latest => log.latest_complete_cut(group),
        EpochSelector::Exact(epoch) => log.cuts(group).into_iter().find(|c| c.epoch == epoch),
    };
    match found {
        Some(cut) if cut.cut.is_complete() => CutSelection::Complete(cut),
        Some(cut) => CutSelection::Partial(cut),
        None => {
            let cuts = log.cuts(group);
            CutSelection::Missing(MissingCut {
                group: group.to_owned(),
                selector,
                group_known: log.groups().iter().any(|g| g == group),
                latest_complete: log.latest_complete_cut(group).map(|c| c.epoch),
                partial_epochs: cuts
                    .iter()
                    .filter(|c| !c.cut.is_complete())
                    .map(|c| c.epoch)
                    .collect(),
            })
        }
    }
}

/// The distinct partition numbers a cut names, across all its topics, ascending: the
/// logical partitions whose snapshots belong to it (docs/semantics.md §8).
pub fn logical_partitions(cut: &Cut) -> BTreeSet<i32> {
    cut.offsets().map(|(tp, _)| tp.partition).collect()
}

fn partial_message(cut: &BarrierCut) -> String {
    let missing: Vec<String> = cut.cut.missing.iter().map(|tp| tp.to_string()).collect();
    format!(
        "barrier group {} epoch {} is a {} cut (missing: {}); it is never aligned on or restored to, so it is not verified",
        cut.group,
        cut.epoch,
        cut.cut.status,
        if missing.is_empty() {
            "none listed".to_owned()
        } else {
            missing.join(", ")
        }
    )
}

fn join(epochs: &[i64]) -> String {
    let shown: Vec<String> = epochs.iter().take(10).map(i64::to_string).collect();
    let more = epochs.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::barrier::cut_log::ConsumedRecord;
    use crate::engine::columnar::barrier::record::{
        BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic, GroupDefinition, TopicPartition,
    };

    fn log_with(cuts: &[(&str, i64, CutStatus)]) -> CutLog {
        let mut log = CutLog::new();
        for (offset, (group, epoch, status)) in cuts.iter().enumerate() {
            let cut = Cut {
                triggered_at: 1,
                completed_at: 2,
                status: *status,
                topics: vec![CutTopic {
                    topic: "in".into(),
                    partitions: vec![CutOffset {
                        partition: 0,
                        offset: 10,
                    }],
                }],
                missing: if *status == CutStatus::Partial {
                    vec![TopicPartition::new("in", 1)]
                } else {
                    vec![]
                },
            };
            log.apply(&ConsumedRecord {
                partition: 0,
                offset: offset as i64,
                key: Some(BarrierStateKey::cut(*group, *epoch).encode().unwrap()),
                value: Some(cut.encode().unwrap()),
            })
            .unwrap();
        }
        log
    }

    #[test]
    fn epoch_selector_accepts_latest_or_a_positive_epoch_only() {
        assert_eq!("latest".parse(), Ok(EpochSelector::Latest));
        assert_eq!("7".parse(), Ok(EpochSelector::Exact(7)));
        assert!(
            "0".parse::<EpochSelector>()
                .unwrap_err()
                .contains("start at 1")
        );
        assert!("-1".parse::<EpochSelector>().is_err());
        assert!("+3".parse::<EpochSelector>().is_err());
        assert!(
            "99999999999999999999"
                .parse::<EpochSelector>()
                .unwrap_err()
                .contains("too large")
        );
        assert!(
            "seven"
                .parse::<EpochSelector>()
                .unwrap_err()
                .contains("latest")
        );
    }

    #[test]
    fn latest_is_the_highest_complete_cut_even_when_a_later_one_is_partial() {
        let log = log_with(&[
            ("audit", 1, CutStatus::Complete),
            ("audit", 2, CutStatus::Partial),
        ]);
        let selection = select_cut(&log, "audit", EpochSelector::Latest);
        assert_eq!(selection.cut().unwrap().epoch, 1);
        assert_eq!(selection.problem(), None);
    }

    #[test]
    fn an_exact_partial_epoch_is_found_but_reported_as_not_verifiable() {
        let log = log_with(&[("audit", 2, CutStatus::Partial)]);
        let selection = select_cut(&log, "audit", EpochSelector::Exact(2));
        assert!(matches!(selection, CutSelection::Partial(_)));
        let problem = selection.problem().unwrap();
        assert!(
            problem.contains("epoch 2 is a partial cut (missing: in/1)"),
            "{problem}"
        );
        assert!(problem.contains("not verified"), "{problem}");
    }

    #[test]
    fn a_missing_epoch_says_what_the_group_has_instead() {
        let log = log_with(&[
            ("audit", 1, CutStatus::Complete),
            ("audit", 2, CutStatus::Partial),
        ]);
        assert_eq!(
            select_cut(&log, "audit", EpochSelector::Exact(9))
                .problem()
                .unwrap(),
            "barrier group audit has no cut at epoch 9 (latest complete cut: epoch 1)"
        );
        let partial_only = log_with(&[("audit", 2, CutStatus::Partial)]);
        assert_eq!(
            select_cut(&partial_only, "audit", EpochSelector::Latest)
                .problem()
                .unwrap(),
            "barrier group audit has no complete cut (partial cuts only: epochs 2)"
        );
        assert_eq!(
            select_cut(&log, "nobody", EpochSelector::Latest)
                .problem()
                .unwrap(),
            "barrier group nobody has no complete cut (no record of this group in __barrier_state)"
        );
    }

    #[test]
    fn a_defined_group_without_cuts_is_known_but_has_no_cuts() {
        let mut log = CutLog::new();
        let definition = GroupDefinition {
            topics: vec!["in".into()],
            interval_ms: -1,
            retained_cuts: 3,
            last_epoch: 0,
        };
        log.apply(&ConsumedRecord {
            partition: 0,
            offset: 0,
            key: Some(BarrierStateKey::group("audit").encode().unwrap()),
            value: Some(definition.encode().unwrap()),
        })
        .unwrap();
        assert_eq!(
            select_cut(&log, "audit", EpochSelector::Exact(1))
                .problem()
                .unwrap(),
            "barrier group audit has no cut at epoch 1 (the group has no cuts)"
        );
    }
}
