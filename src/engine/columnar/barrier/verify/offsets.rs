//! Committed offsets against a cut: a consumer group that stopped exactly at cut N has
//! committed the cut offset (the marker's offset, the next record to read) on every partition
//! the cut names. With `at_least`, a group that went on past the cut also passes.

use std::collections::BTreeMap;

use crate::engine::columnar::barrier::record::{Cut, TopicPartition};

/// How one committed offset compares with the cut offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetVerdict {
    /// Committed offset = cut offset.
    AtCut,
    /// Committed offset > cut offset; passes only with `at_least`.
    PastCut { allowed: bool },
    /// Committed offset < cut offset: the group has not reached the cut.
    BeforeCut,
    /// The group has no committed offset for the partition.
    NothingCommitted,
}

impl OffsetVerdict {
    pub fn ok(self) -> bool {
        matches!(
            self,
            OffsetVerdict::AtCut | OffsetVerdict::PastCut { allowed: true }
        )
    }

    /// A short phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            OffsetVerdict::AtCut => "at the cut",
            OffsetVerdict::PastCut { allowed: true } => "past the cut (allowed by --at-least)",
            OffsetVerdict::PastCut { allowed: false } => "past the cut",
            OffsetVerdict::BeforeCut => "before the cut",
            OffsetVerdict::NothingCommitted => "nothing committed",
        }
    }
}

/// One cut partition's committed offset and verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffsetCheck {
    pub partition: TopicPartition,
    pub cut_offset: i64,
    pub committed: Option<i64>,
    pub verdict: OffsetVerdict,
}

/// Compares `committed` (a partition left out = nothing committed) with every partition the
/// cut names, in the cut's order.
pub fn check_committed_offsets(
    cut: &Cut,
    committed: &BTreeMap<TopicPartition, Option<i64>>,
    at_least: bool,
) -> Vec<CommittedOffsetCheck> {
    cut.offsets()
        .map(|(partition, cut_offset)| {
            let got = committed.get(&partition).copied().flatten();
            let verdict = match got {
                None => OffsetVerdict::NothingCommitted,
                Some(o) if o == cut_offset => OffsetVerdict::AtCut,
                Some(o) if o > cut_offset => OffsetVerdict::PastCut { allowed: at_least },
                Some(_) => OffsetVerdict::BeforeCut,
            };
            CommittedOffsetCheck {
                partition,
                cut_offset,
                committed: got,
                verdict,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::barrier::record::{CutOffset, CutStatus, CutTopic};

    fn cut() -> Cut {
        Cut {
            triggered_at: 0,
            completed_at: 0,
            status: CutStatus::Complete,
            topics: vec![CutTopic {
                topic: "in".into(),
                partitions: (0..4)
                    .map(|p| CutOffset {
                        partition: p,
                        offset: 100,
                    })
                    .collect(),
            }],
            missing: vec![],
        }
    }

    fn committed(offsets: &[(i32, Option<i64>)]) -> BTreeMap<TopicPartition, Option<i64>> {
        offsets
            .iter()
            .map(|(p, o)| (TopicPartition::new("in", *p), *o))
            .collect()
    }

    fn verdicts(checks: &[CommittedOffsetCheck]) -> Vec<OffsetVerdict> {
        checks.iter().map(|c| c.verdict).collect()
    }

    #[test]
    fn committed_offsets_must_equal_the_cut_offset_on_every_cut_partition() {
        let got = committed(&[(0, Some(100)), (1, Some(101)), (2, Some(99)), (3, None)]);
        let checks = check_committed_offsets(&cut(), &got, false);
        assert_eq!(
            verdicts(&checks),
            [
                OffsetVerdict::AtCut,
                OffsetVerdict::PastCut { allowed: false },
                OffsetVerdict::BeforeCut,
                OffsetVerdict::NothingCommitted,
            ]
        );
        assert_eq!(checks.iter().filter(|c| c.verdict.ok()).count(), 1);
        assert_eq!(checks[1].committed, Some(101));
    }

    #[test]
    fn at_least_accepts_offsets_past_the_cut_but_never_before_it() {
        let got = committed(&[(0, Some(100)), (1, Some(500)), (2, Some(99))]);
        let checks = check_committed_offsets(&cut(), &got, true);
        let ok: Vec<bool> = checks.iter().map(|c| c.verdict.ok()).collect();
        assert_eq!(ok, [true, true, false, false]);
    }

    #[test]
    fn a_partition_absent_from_the_answer_counts_as_nothing_committed() {
        let checks = check_committed_offsets(&cut(), &BTreeMap::new(), true);
        assert!(
            checks
                .iter()
                .all(|c| c.verdict == OffsetVerdict::NothingCommitted)
        );
    }
}
