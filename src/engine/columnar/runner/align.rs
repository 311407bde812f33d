//! Barrier alignment state of one group runner (semantics §8, "Alignment per
//! runner round"): the pending cut, the topic-partitions it waits for, the
//! records held at or past the cut, and what the runner knows of every
//! partition's position. The runner drives it; [`CutSource`] is how it reads
//! cuts, so the alignment rules are tested with in-memory cuts.
//!
//! Beyond the Go aligner this keeps, per topic-partition, the offset up to which
//! the runner has *accepted* records (processed, committed or restored to).
//! A cut whose offset lies below that was begun too late (D9): its snapshot
//! would hold state past the cut, so none is saved and no commit is lowered.
//!
//! Two more rules keep a caught-up runner aligned instead of late:
//! * An injection start (kind 1) without a cut yet announces a cut: its markers
//!   are being written, so the runner holds every record it fetches from the
//!   targeted partitions it owns until the cut is published (then the cut splits
//!   them as usual), a partial cut or a newer cut ends the injection, or
//!   [`Aligner::hold_limit`] passes. Without this a runner that keeps up with its
//!   input processes records past the marker while the broker is still
//!   collecting the offsets, and every epoch is late.
//! * At start, the complete cuts the group's committed offsets had already
//!   passed (those D9 would call late) are skipped with one notice, so a restart
//!   does not walk and report every old epoch; alignment begins after them.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::error::RunnerError;
use crate::engine::columnar::barrier::{
    BarrierConsumer, BarrierCut, CutReadError, CutReader, InjectionTarget,
};
use crate::engine::columnar::topology::Record;
use crate::engine::topic_partition::TopicPartition;

/// Where the runner reads complete cuts from: a [`CutReader`] in production.
pub trait CutSource {
    /// Complete cuts of `group` with an epoch above `after`, oldest first.
    fn complete_cuts_after(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Vec<BarrierCut>, RunnerError>;
    /// The complete cut of exactly `epoch`, if any.
    fn complete_cut_at(
        &mut self,
        group: &str,
        epoch: i64,
    ) -> Result<Option<BarrierCut>, RunnerError>;
    /// The complete cut with the highest epoch, if any.
    fn latest_complete_cut(&mut self, group: &str) -> Result<Option<BarrierCut>, RunnerError>;
    /// The oldest injection of `group` above epoch `after` whose cut is not
    /// published yet, as (epoch, targets); called right after
    /// [`Self::complete_cuts_after`], so it answers from what that call read.
    fn open_injection(
        &mut self,
        _group: &str,
        _after: i64,
    ) -> Result<Option<(i64, Vec<InjectionTarget>)>, RunnerError> {
        Ok(None)
    }
}

/// A broker that cannot be read now is worth another round; a malformed record is not.
fn read_error(error: CutReadError) -> RunnerError {
    let retriable = matches!(error, CutReadError::Consumer { .. });
    RunnerError {
        message: error.to_string(),
        retriable,
        fenced: None,
    }
}

impl<C: BarrierConsumer> CutSource for CutReader<C> {
    fn complete_cuts_after(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Vec<BarrierCut>, RunnerError> {
        CutReader::complete_cuts_after(self, group, after).map_err(read_error)
    }
    fn complete_cut_at(
        &mut self,
        group: &str,
        epoch: i64,
    ) -> Result<Option<BarrierCut>, RunnerError> {
        CutReader::complete_cut_at(self, group, epoch).map_err(read_error)
    }
    fn latest_complete_cut(&mut self, group: &str) -> Result<Option<BarrierCut>, RunnerError> {
        CutReader::latest_complete_cut(self, group).map_err(read_error)
    }
    fn open_injection(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Option<(i64, Vec<InjectionTarget>)>, RunnerError> {
        Ok(self
            .log()
            .open_injection(group, after)
            .map(|(epoch, start)| (epoch, start.targets)))
    }
}

/// The barrier a round reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Barrier {
    pub cut: BarrierCut,
    /// Logical partitions whose state is saved under the cut epoch, ascending
    /// (none is saved when `late`).
    pub partitions: Vec<i32>,
    /// The commits of the aligned topic-partitions.
    pub offsets: BTreeMap<TopicPartition, i64>,
    /// D9: why no snapshot is saved for this epoch (a partition was past its cut).
    pub late: Option<String>,
}

/// The offsets of a cut by topic-partition.
pub fn cut_offsets(cut: &BarrierCut) -> BTreeMap<TopicPartition, i64> {
    cut.cut.offsets().collect()
}

/// How long records of an announced cut are held by default: longer than the
/// broker's injection timeout (1 min in its code, D21), after which a crashed
/// injection is published as a partial cut.
pub const DEFAULT_HOLD_LIMIT: Duration = Duration::from_secs(120);

/// An injection whose cut is not published yet.
struct Announced {
    epoch: i64,
    /// Topic → partition count.
    targets: BTreeMap<String, i32>,
    seen: Instant,
    /// The hold limit passed: its partitions are processed again.
    expired: bool,
    /// Partitions already reported as holding records for it.
    holding: BTreeSet<TopicPartition>,
}

impl Announced {
    fn targets(&self, tp: &TopicPartition) -> bool {
        self.targets
            .get(&tp.topic)
            .is_some_and(|count| tp.partition >= 0 && tp.partition < *count)
    }
}

/// The alignment state (see the module documentation).
pub struct Aligner {
    pub(super) group: String,
    pub(super) source: Box<dyn CutSource + Send>,
    last_epoch: i64,
    pending: Option<(BarrierCut, BTreeMap<TopicPartition, i64>)>,
    aligned: BTreeMap<TopicPartition, i64>,
    reached: BTreeSet<TopicPartition>,
    held: BTreeMap<TopicPartition, Vec<Record>>,
    positions: BTreeMap<TopicPartition, i64>,
    accepted: BTreeMap<TopicPartition, i64>,
    assigned: BTreeSet<TopicPartition>,
    /// Whether the cuts passed before this run were skipped (or a restore placed the aligner).
    started: bool,
    announced: Option<Announced>,
    /// How long an announced cut may hold records before they are processed anyway.
    pub hold_limit: Duration,
    notices: Vec<String>,
    warnings: Vec<String>,
}

impl Aligner {
    pub fn new(group: String, source: Box<dyn CutSource + Send>) -> Self {
        Aligner {
            group,
            source,
            last_epoch: -1,
            pending: None,
            aligned: BTreeMap::new(),
            reached: BTreeSet::new(),
            held: BTreeMap::new(),
            positions: BTreeMap::new(),
            accepted: BTreeMap::new(),
            assigned: BTreeSet::new(),
            started: false,
            announced: None,
            hold_limit: DEFAULT_HOLD_LIMIT,
            notices: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Whether [`Self::start`] is still to run.
    pub fn needs_start(&self) -> bool {
        !self.started
    }

    /// Once, before the first alignment: skips every complete cut the group's
    /// committed offsets had passed (D9 would call it late), so alignment begins
    /// after them. `committed` reads the group's committed offsets of the given
    /// topic-partitions (absent = none).
    pub fn start(
        &mut self,
        committed: impl FnOnce(&[TopicPartition]) -> Result<BTreeMap<TopicPartition, i64>, RunnerError>,
    ) -> Result<(), RunnerError> {
        let cuts = self
            .source
            .complete_cuts_after(&self.group, self.last_epoch)?;
        if cuts.is_empty() {
            self.started = true;
            return Ok(());
        }
        let tps: BTreeSet<TopicPartition> = cuts
            .iter()
            .flat_map(|c| cut_offsets(c).into_keys())
            .collect();
        let tps: Vec<TopicPartition> = tps.into_iter().collect();
        let committed = committed(&tps)?;
        let passed: Vec<i64> = cuts
            .iter()
            .filter(|cut| {
                cut_offsets(cut).iter().any(|(tp, offset)| {
                    committed
                        .get(tp)
                        .is_some_and(|c| *c > offset.saturating_add(1))
                })
            })
            .map(|cut| cut.epoch)
            .collect();
        if let Some(&last) = passed.iter().max() {
            let skipped = cuts.iter().filter(|c| c.epoch <= last).count();
            self.notices.push(format!(
                "barrier group {}: the consumer group had committed past {skipped} complete \
                 cut(s) up to epoch {last} before this run started; they get no snapshot, \
                 alignment begins with the next cut",
                self.group
            ));
            self.last_epoch = last;
        }
        self.observe_committed(&committed);
        self.started = true;
        Ok(())
    }

    /// Informational messages since the last call (skipped old cuts, announced cuts).
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Warnings since the last call (an announced cut that never came).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The epoch of the last barrier completed or restored (−1 for none).
    pub fn last_epoch(&self) -> i64 {
        self.last_epoch
    }

    /// The epoch of the cut being aligned on, if any.
    pub fn pending_epoch(&self) -> Option<i64> {
        self.pending.as_ref().map(|(cut, _)| cut.epoch)
    }

    /// Step 1: takes the owned set; begins the oldest complete cut after the last
    /// epoch when none is pending, else follows an injection whose cut is on its way.
    pub fn refresh(&mut self, owned: &BTreeSet<TopicPartition>) -> Result<(), RunnerError> {
        self.assigned = owned.clone();
        if !owned.is_empty() {
            // Held records of a revoked partition were never committed: its next owner reads them.
            self.held.retain(|tp, _| owned.contains(tp));
        }
        if self.pending.is_none() {
            let cuts = self
                .source
                .complete_cuts_after(&self.group, self.last_epoch)?;
            let Some(oldest) = cuts.into_iter().next() else {
                return self.follow_injection();
            };
            let offsets = cut_offsets(&oldest);
            self.pending = Some((oldest, offsets));
            self.reached.clear();
            self.announced = None;
        }
        self.realign();
        Ok(())
    }

    /// With no cut to begin: notes an injection that has started and has no cut
    /// yet, so its partitions hold their records, and ends one that is over.
    fn follow_injection(&mut self) -> Result<(), RunnerError> {
        let open = self.source.open_injection(&self.group, self.last_epoch)?;
        let Some((epoch, targets)) = open else {
            self.announced = None;
            return Ok(());
        };
        if self.announced.as_ref().is_none_or(|a| a.epoch != epoch) {
            let names: Vec<String> = targets
                .iter()
                .map(|t| format!("{} ({} partitions)", t.topic, t.partition_count))
                .collect();
            self.notices.push(format!(
                "barrier epoch {epoch} of group {} is being injected into {}: holding their \
                 records until its cut is published",
                self.group,
                names.join(", ")
            ));
            self.announced = Some(Announced {
                epoch,
                targets: targets
                    .into_iter()
                    .map(|t| (t.topic, t.partition_count))
                    .collect(),
                seen: Instant::now(),
                expired: false,
                holding: BTreeSet::new(),
            });
        }
        if let Some(announced) = self.announced.as_mut()
            && !announced.expired
            && announced.seen.elapsed() >= self.hold_limit
        {
            announced.expired = true;
            self.warnings.push(format!(
                "barrier epoch {epoch} of group {}: no cut was published within {:?} of its \
                 injection start; its partitions' records are processed again",
                self.group, self.hold_limit
            ));
        }
        Ok(())
    }

    /// Reports, once per partition and injection, that records wait for its cut.
    fn note_holding(&mut self, tp: &TopicPartition, records: &[Record]) {
        let Some(first) = records.iter().map(|r| r.offset).min() else {
            return;
        };
        let Some(announced) = self.announced.as_mut() else {
            return;
        };
        if announced.holding.insert(tp.clone()) {
            self.notices.push(format!(
                "holding {}-{} from offset {first} for barrier epoch {}",
                tp.topic, tp.partition, announced.epoch
            ));
        }
    }

    /// Whether records of `tp` wait for an announced cut.
    fn holds_for_injection(&self, tp: &TopicPartition) -> bool {
        self.announced
            .as_ref()
            .is_some_and(|a| !a.expired && a.targets(tp))
            && self.owns(tp)
    }

    /// The aligned topic-partitions, sorted by topic then partition.
    pub fn aligned_tps(&self) -> Vec<TopicPartition> {
        self.aligned.keys().cloned().collect()
    }

    /// Step 2: positions reported by the consumer, taken only while a cut is pending.
    pub fn observe_positions(&mut self, positions: &BTreeMap<TopicPartition, i64>) {
        if self.pending.is_none() {
            return;
        }
        for (tp, position) in positions {
            let known = self.positions.entry(tp.clone()).or_insert(*position);
            *known = (*known).max(*position);
        }
        self.realign();
    }

    /// Offsets the group has committed: records below them were accepted before.
    pub fn observe_committed(&mut self, committed: &BTreeMap<TopicPartition, i64>) {
        for (tp, offset) in committed {
            let known = self.accepted.entry(tp.clone()).or_insert(*offset);
            *known = (*known).max(*offset);
        }
    }

    /// Forgets what was accepted on these topic-partitions (they were just assigned).
    pub fn forget_accepted(&mut self, tps: &[TopicPartition]) {
        for tp in tps {
            self.accepted.remove(tp);
        }
    }

    /// Topic-partitions whose accepted offset is not known yet.
    pub fn unknown_accepted(&self, tps: &[TopicPartition]) -> Vec<TopicPartition> {
        tps.iter()
            .filter(|tp| !self.accepted.contains_key(*tp))
            .cloned()
            .collect()
    }

    /// Step 3 (first half): the records held by the previous round, to go in front of the fetched ones.
    pub fn take_held(&mut self) -> BTreeMap<TopicPartition, Vec<Record>> {
        std::mem::take(&mut self.held)
    }

    /// Step 3: raises the position and, for an aligned partition, keeps the records
    /// before the cut and holds the rest.
    pub fn accept(&mut self, tp: &TopicPartition, mut records: Vec<Record>) -> Vec<Record> {
        if let Some(last) = records.iter().map(|r| r.offset).max() {
            let position = self.positions.entry(tp.clone()).or_insert(0);
            *position = (*position).max(last.saturating_add(1));
        }
        let Some(&cut_offset) = self.aligned.get(tp) else {
            if self.pending.is_none() && self.holds_for_injection(tp) {
                self.note_holding(tp, &records);
                self.held.entry(tp.clone()).or_default().extend(records);
                return Vec::new();
            }
            return records;
        };
        if let Some(split) = records.iter().position(|r| r.offset >= cut_offset) {
            let tail = records.split_off(split);
            self.held.entry(tp.clone()).or_default().extend(tail);
        }
        if self.position(tp) >= cut_offset {
            self.reached.insert(tp.clone());
        }
        records
    }

    /// Step 5: a pending cut whose every aligned partition is reached.
    pub fn fired(&self) -> bool {
        self.pending.is_some() && self.aligned.keys().all(|tp| self.reached.contains(tp))
    }

    /// Step 6: raises the round's commits to the cut offsets (never below what was
    /// already accepted) and describes the barrier. Call only when [`Self::fired`].
    pub fn barrier(&self, offsets: &mut BTreeMap<TopicPartition, i64>) -> Option<Barrier> {
        let (cut, _) = self.pending.as_ref()?;
        let mut committed = BTreeMap::new();
        let mut partitions = BTreeSet::new();
        let mut late = None;
        for (tp, &cut_offset) in &self.aligned {
            let accepted = self.accepted.get(tp).copied().unwrap_or(0);
            // The marker sits at the cut offset, so having accepted up to the
            // offset after it still means no record past the cut was processed.
            if accepted > cut_offset.saturating_add(1) && late.is_none() {
                late = Some(format!(
                    "barrier epoch {} began after {}-{} passed offset {}",
                    cut.epoch, tp.topic, tp.partition, cut_offset
                ));
            }
            if accepted <= cut_offset {
                let commit = offsets.entry(tp.clone()).or_insert(cut_offset);
                *commit = (*commit).max(cut_offset);
            }
            if let Some(commit) = offsets.get(tp) {
                committed.insert(tp.clone(), *commit);
            }
            partitions.insert(tp.partition);
        }
        Some(Barrier {
            cut: cut.clone(),
            partitions: partitions.into_iter().collect(),
            offsets: committed,
            late,
        })
    }

    /// Step 7: the barrier is committed; its epoch is consumed.
    pub fn finish(&mut self, barrier: &Barrier) {
        self.last_epoch = barrier.cut.epoch;
        self.pending = None;
        self.aligned.clear();
        self.reached.clear();
        for (tp, offset) in &barrier.offsets {
            let position = self.positions.entry(tp.clone()).or_insert(*offset);
            *position = (*position).max(*offset);
        }
    }

    /// After a restore to `cut`: the targets sit at their cut offsets; held records belong to a position left behind.
    pub fn restored(&mut self, cut: &BarrierCut, targets: &[TopicPartition]) {
        let offsets = cut_offsets(cut);
        self.started = true;
        self.announced = None;
        self.last_epoch = cut.epoch;
        self.pending = None;
        self.aligned.clear();
        self.reached.clear();
        self.held.clear();
        for tp in targets {
            if let Some(offset) = offsets.get(tp) {
                self.positions.insert(tp.clone(), *offset);
                self.accepted.insert(tp.clone(), *offset);
            }
        }
    }

    /// A failed round sent the consumer back to `offset`: what was held or reached there is void.
    pub fn rewound(&mut self, tp: &TopicPartition, offset: i64) {
        self.held.remove(tp);
        self.reached.remove(tp);
        self.positions.insert(tp.clone(), offset);
    }

    fn position(&self, tp: &TopicPartition) -> i64 {
        self.positions.get(tp).copied().unwrap_or(0)
    }

    fn owns(&self, tp: &TopicPartition) -> bool {
        self.assigned.is_empty() || self.assigned.contains(tp)
    }

    /// Step 4: aligned = the pending cut's partitions the runner owns.
    fn realign(&mut self) {
        let Some((_, offsets)) = &self.pending else {
            return;
        };
        let aligned: BTreeMap<TopicPartition, i64> = offsets
            .iter()
            .filter(|(tp, _)| self.owns(tp))
            .map(|(tp, o)| (tp.clone(), *o))
            .collect();
        for (tp, offset) in &aligned {
            if self.position(tp) >= *offset {
                self.reached.insert(tp.clone());
            }
        }
        self.reached.retain(|tp| aligned.contains_key(tp));
        let owned = |tp: &TopicPartition| self.assigned.is_empty() || self.assigned.contains(tp);
        self.held
            .retain(|tp, _| aligned.contains_key(tp) || owned(tp));
        self.aligned = aligned;
    }
}
