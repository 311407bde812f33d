//! The pure fold of `__barrier_state` records into cuts (semantics §8), with no consumer:
//! [`CutLog::apply`] takes records in log order; the queries answer which cuts exist.
//!
//! Rules: the key is decoded strictly (a malformed key fails, naming partition and offset);
//! keyless records and kinds other than 0, 1 and 2 are skipped; for a cut key a null or empty
//! value deletes (group, epoch), anything else is decoded strictly and stored by
//! (group, epoch), last writer wins. Group definitions and injection starts are kept as raw
//! bytes for display and decoded strictly only when asked for, so a value the cut fold does not
//! need can never fail a read (krabka-streams-go skips them undecoded too). A group tombstone
//! deletes the group definition; cuts disappear only through their own tombstones.
//!
//! Partial cuts are stored (for `--all` listings) but never returned by the "complete" queries:
//! their missing partitions never get a marker, so aligning on one would wait forever.

use std::collections::BTreeMap;

use super::error::BarrierCodecError;
use super::record::{BarrierStateKey, Cut, GroupDefinition, InjectionStart, RecordKind};

/// One record of `__barrier_state` as a consumer returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// A record the fold cannot accept: its key or cut value is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed barrier state record at partition {partition}, offset {offset}: {error}")]
pub struct MalformedRecord {
    pub partition: i32,
    pub offset: i64,
    pub error: BarrierCodecError,
}

/// A cut with the group and epoch of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierCut {
    pub group: String,
    pub epoch: i64,
    pub cut: Cut,
}

/// Everything read so far from `__barrier_state`, folded by key.
#[derive(Debug, Clone, Default)]
pub struct CutLog {
    /// group → epoch → cut (complete or partial).
    cuts: BTreeMap<String, BTreeMap<i64, Cut>>,
    /// group → raw kind 0 value.
    definitions: BTreeMap<String, Vec<u8>>,
    /// group → epoch → raw kind 1 value.
    injections: BTreeMap<String, BTreeMap<i64, Vec<u8>>>,
}

impl CutLog {
    pub fn new() -> Self {
        CutLog::default()
    }

    /// Folds one record in. On error the log is unchanged.
    pub fn apply(&mut self, record: &ConsumedRecord) -> Result<(), MalformedRecord> {
        let Some(key) = record.key.as_deref() else {
            return Ok(());
        };
        let malformed = |error| MalformedRecord {
            partition: record.partition,
            offset: record.offset,
            error,
        };
        let key = BarrierStateKey::decode(key).map_err(malformed)?;
        let value = record.value.as_deref().filter(|v| !v.is_empty());
        match (key.kind, value) {
            (RecordKind::Cut, None) => remove_nested(&mut self.cuts, &key.group, key.epoch),
            (RecordKind::Cut, Some(bytes)) => {
                let cut = Cut::decode(bytes).map_err(malformed)?;
                self.cuts
                    .entry(key.group)
                    .or_default()
                    .insert(key.epoch, cut);
            }
            (RecordKind::Group, None) => {
                self.definitions.remove(&key.group);
            }
            (RecordKind::Group, Some(bytes)) => {
                self.definitions.insert(key.group, bytes.to_vec());
            }
            (RecordKind::InjectionStart, None) => {
                remove_nested(&mut self.injections, &key.group, key.epoch)
            }
            (RecordKind::InjectionStart, Some(bytes)) => {
                self.injections
                    .entry(key.group)
                    .or_default()
                    .insert(key.epoch, bytes.to_vec());
            }
            (RecordKind::Unknown(_), _) => {}
        }
        Ok(())
    }

    /// The complete cut with the highest epoch, if any.
    pub fn latest_complete_cut(&self, group: &str) -> Option<BarrierCut> {
        let epochs = self.cuts.get(group)?;
        epochs
            .iter()
            .rev()
            .find(|(_, cut)| cut.is_complete())
            .map(|(epoch, cut)| barrier_cut(group, *epoch, cut))
    }

    /// The complete cut of exactly `epoch`, if any (a partial cut of that epoch is none).
    pub fn complete_cut_at(&self, group: &str, epoch: i64) -> Option<BarrierCut> {
        self.cuts
            .get(group)?
            .get(&epoch)
            .filter(|cut| cut.is_complete())
            .map(|cut| barrier_cut(group, epoch, cut))
    }

    /// Complete cuts with an epoch above `after`, oldest first; [`super::NO_EPOCH`] for all.
    pub fn complete_cuts_after(&self, group: &str, after: i64) -> Vec<BarrierCut> {
        self.cuts_of(group)
            .filter(|(epoch, cut)| *epoch > after && cut.is_complete())
            .map(|(epoch, cut)| barrier_cut(group, epoch, cut))
            .collect()
    }

    /// Every cut of a group, partial ones included, oldest first.
    pub fn cuts(&self, group: &str) -> Vec<BarrierCut> {
        self.cuts_of(group)
            .map(|(epoch, cut)| barrier_cut(group, epoch, cut))
            .collect()
    }

    /// Every cut of every group, partial ones included, by group then epoch.
    pub fn all_cuts(&self) -> Vec<BarrierCut> {
        self.cuts
            .iter()
            .flat_map(|(group, epochs)| {
                epochs
                    .iter()
                    .map(move |(epoch, cut)| barrier_cut(group, *epoch, cut))
            })
            .collect()
    }

    /// Every group with a definition or at least one cut, sorted.
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = self
            .definitions
            .keys()
            .chain(self.cuts.keys())
            .cloned()
            .collect();
        groups.sort();
        groups.dedup();
        groups
    }

    /// The group's definition, decoded strictly now; `None` when none was read.
    pub fn group_definition(
        &self,
        group: &str,
    ) -> Option<Result<GroupDefinition, BarrierCodecError>> {
        self.definitions
            .get(group)
            .map(|bytes| GroupDefinition::decode(bytes))
    }

    /// The group's injection starts by epoch, each decoded strictly now, oldest first.
    pub fn injections(&self, group: &str) -> Vec<(i64, Result<InjectionStart, BarrierCodecError>)> {
        self.injections
            .get(group)
            .into_iter()
            .flatten()
            .map(|(epoch, bytes)| (*epoch, InjectionStart::decode(bytes)))
            .collect()
    }

    /// The oldest injection of the group with an epoch above `after` that no cut (complete or
    /// partial) has finished yet: markers are being written and the cut is on its way. Only
    /// injections newer than the newest cut of the group count (an old injection whose cut was
    /// since tombstoned is not open); an undecodable one is skipped, never an error.
    pub fn open_injection(&self, group: &str, after: i64) -> Option<(i64, InjectionStart)> {
        let newest_cut = self.cuts_of(group).map(|(epoch, _)| epoch).max();
        let floor = after.max(newest_cut.unwrap_or(after));
        self.injections
            .get(group)?
            .range(floor.saturating_add(1)..)
            .find_map(|(epoch, bytes)| Some((*epoch, InjectionStart::decode(bytes).ok()?)))
    }

    fn cuts_of<'a>(&'a self, group: &str) -> impl Iterator<Item = (i64, &'a Cut)> + 'a {
        self.cuts
            .get(group)
            .into_iter()
            .flatten()
            .map(|(epoch, cut)| (*epoch, cut))
    }
}

fn barrier_cut(group: &str, epoch: i64, cut: &Cut) -> BarrierCut {
    BarrierCut {
        group: group.to_owned(),
        epoch,
        cut: cut.clone(),
    }
}

/// Removes (group, epoch) and drops the group's map once it is empty.
fn remove_nested<V>(map: &mut BTreeMap<String, BTreeMap<i64, V>>, group: &str, epoch: i64) {
    if let Some(epochs) = map.get_mut(group) {
        epochs.remove(&epoch);
        if epochs.is_empty() {
            map.remove(group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::barrier::record::{CutOffset, CutStatus, CutTopic};
    use crate::engine::columnar::barrier::{NO_EPOCH, RecordPart};

    fn cut(epoch: i64, status: CutStatus, offset: i64) -> Cut {
        Cut {
            triggered_at: 10 * epoch,
            completed_at: 10 * epoch + 1,
            status,
            topics: vec![CutTopic {
                topic: "in".into(),
                partitions: vec![CutOffset {
                    partition: 0,
                    offset,
                }],
            }],
            missing: vec![],
        }
    }

    fn record(offset: i64, key: &BarrierStateKey, value: Option<Vec<u8>>) -> ConsumedRecord {
        ConsumedRecord {
            partition: 0,
            offset,
            key: Some(key.encode().unwrap()),
            value,
        }
    }

    fn cut_record(offset: i64, group: &str, epoch: i64, status: CutStatus) -> ConsumedRecord {
        let value = cut(epoch, status, 10 * epoch).encode().unwrap();
        record(offset, &BarrierStateKey::cut(group, epoch), Some(value))
    }

    fn epochs(cuts: &[BarrierCut]) -> Vec<i64> {
        cuts.iter().map(|c| c.epoch).collect()
    }

    #[test]
    fn complete_cuts_after_are_ascending_and_exclude_partial_ones() {
        let mut log = CutLog::new();
        for (offset, epoch, status) in [
            (0, 4, CutStatus::Complete),
            (1, 1, CutStatus::Complete),
            (2, 2, CutStatus::Partial),
            (3, 3, CutStatus::Complete),
        ] {
            log.apply(&cut_record(offset, "audit", epoch, status))
                .unwrap();
        }
        assert_eq!(
            epochs(&log.complete_cuts_after("audit", NO_EPOCH)),
            [1, 3, 4]
        );
        assert_eq!(epochs(&log.complete_cuts_after("audit", 3)), [4]);
        assert_eq!(log.latest_complete_cut("audit").unwrap().epoch, 4);
        assert_eq!(epochs(&log.cuts("audit")), [1, 2, 3, 4]);
        assert!(log.complete_cut_at("audit", 2).is_none());
        assert_eq!(
            log.complete_cut_at("audit", 3).unwrap().cut.completed_at,
            31
        );
        assert!(log.latest_complete_cut("other").is_none());
    }

    #[test]
    fn partial_cut_after_complete_drops_the_epoch() {
        let mut log = CutLog::new();
        log.apply(&cut_record(0, "audit", 1, CutStatus::Complete))
            .unwrap();
        log.apply(&cut_record(1, "audit", 1, CutStatus::Partial))
            .unwrap();
        assert!(log.latest_complete_cut("audit").is_none());
        assert_eq!(log.all_cuts().len(), 1);
    }

    #[test]
    fn null_or_empty_cut_value_deletes_that_epoch_only() {
        let mut log = CutLog::new();
        log.apply(&cut_record(0, "audit", 1, CutStatus::Complete))
            .unwrap();
        log.apply(&cut_record(1, "audit", 2, CutStatus::Complete))
            .unwrap();
        log.apply(&record(2, &BarrierStateKey::cut("audit", 2), Some(vec![])))
            .unwrap();
        assert_eq!(epochs(&log.complete_cuts_after("audit", NO_EPOCH)), [1]);
        log.apply(&record(3, &BarrierStateKey::cut("audit", 1), None))
            .unwrap();
        assert!(log.all_cuts().is_empty());
        assert!(log.groups().is_empty());
    }

    #[test]
    fn keyless_and_unknown_kind_records_are_skipped() {
        let mut log = CutLog::new();
        let keyless = ConsumedRecord {
            partition: 0,
            offset: 0,
            key: None,
            value: Some(vec![1, 2, 3]),
        };
        log.apply(&keyless).unwrap();
        let unknown = BarrierStateKey {
            kind: RecordKind::Unknown(7),
            group: "audit".into(),
            epoch: 1,
        };
        log.apply(&record(1, &unknown, Some(vec![0xff]))).unwrap();
        assert!(log.groups().is_empty());
    }

    #[test]
    fn malformed_key_fails_naming_partition_and_offset_and_changes_nothing() {
        let mut log = CutLog::new();
        let bad = ConsumedRecord {
            partition: 3,
            offset: 17,
            key: Some(vec![0]),
            value: None,
        };
        let error = log.apply(&bad).unwrap_err();
        assert_eq!(
            error.to_string(),
            "malformed barrier state record at partition 3, offset 17: truncated barrier state key"
        );
        assert_eq!(error.error.part(), RecordPart::Key);
    }

    #[test]
    fn malformed_cut_value_fails_and_keeps_the_previous_cut() {
        let mut log = CutLog::new();
        log.apply(&cut_record(0, "audit", 1, CutStatus::Complete))
            .unwrap();
        let bad = record(1, &BarrierStateKey::cut("audit", 1), Some(vec![0, 0, 1]));
        let error = log.apply(&bad).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("truncated barrier state cut value")
        );
        assert_eq!(log.latest_complete_cut("audit").unwrap().epoch, 1);
    }

    #[test]
    fn group_and_injection_values_are_kept_raw_and_decoded_only_for_display() {
        let mut log = CutLog::new();
        let group_key = BarrierStateKey::group("audit");
        log.apply(&record(0, &group_key, Some(vec![0, 0]))).unwrap();
        log.apply(&record(
            1,
            &BarrierStateKey::injection("audit", 4),
            Some(vec![0, 0]),
        ))
        .unwrap();
        assert_eq!(log.groups(), ["audit"]);
        assert_eq!(
            log.group_definition("audit")
                .unwrap()
                .unwrap_err()
                .to_string(),
            "truncated barrier state group value"
        );
        let injections = log.injections("audit");
        assert_eq!(injections.len(), 1);
        assert_eq!(injections[0].0, 4);
        assert!(injections[0].1.is_err());

        let definition = GroupDefinition {
            topics: vec!["in".into()],
            interval_ms: -1,
            retained_cuts: 3,
            last_epoch: 4,
        };
        log.apply(&record(2, &group_key, Some(definition.encode().unwrap())))
            .unwrap();
        assert_eq!(log.group_definition("audit"), Some(Ok(definition)));
        log.apply(&record(3, &group_key, None)).unwrap();
        assert!(log.group_definition("audit").is_none());
        log.apply(&record(4, &BarrierStateKey::injection("audit", 4), None))
            .unwrap();
        assert!(log.injections("audit").is_empty());
    }

    #[test]
    fn an_injection_is_open_until_a_cut_of_its_epoch_or_a_newer_one_is_read() {
        use crate::engine::columnar::barrier::record::InjectionTarget;
        let injection = |epoch: i64| InjectionStart {
            coordinator_epoch: 1,
            triggered_at: epoch,
            targets: vec![InjectionTarget {
                topic: "in".into(),
                partition_count: 2,
            }],
        };
        let start = |offset, epoch| {
            record(
                offset,
                &BarrierStateKey::injection("audit", epoch),
                Some(injection(epoch).encode().unwrap()),
            )
        };
        let mut log = CutLog::new();
        log.apply(&start(0, 1)).unwrap();
        assert_eq!(
            log.open_injection("audit", NO_EPOCH),
            Some((1, injection(1)))
        );
        assert_eq!(log.open_injection("audit", 1), None, "epoch 1 is done");
        assert_eq!(log.open_injection("other", NO_EPOCH), None);
        // A partial cut finishes its injection as much as a complete one.
        log.apply(&cut_record(1, "audit", 1, CutStatus::Partial))
            .unwrap();
        assert_eq!(log.open_injection("audit", NO_EPOCH), None);
        log.apply(&start(2, 2)).unwrap();
        log.apply(&start(3, 3)).unwrap();
        assert_eq!(
            log.open_injection("audit", NO_EPOCH),
            Some((2, injection(2))),
            "oldest first"
        );
        log.apply(&cut_record(4, "audit", 3, CutStatus::Complete))
            .unwrap();
        assert_eq!(
            log.open_injection("audit", NO_EPOCH),
            None,
            "a newer cut closes older ones"
        );
        // A malformed injection value is skipped, not an error.
        log.apply(&record(
            5,
            &BarrierStateKey::injection("audit", 4),
            Some(vec![0, 0]),
        ))
        .unwrap();
        assert_eq!(log.open_injection("audit", NO_EPOCH), None);
    }

    #[test]
    fn group_tombstone_deletes_the_definition_but_not_the_cuts() {
        let mut log = CutLog::new();
        let definition = GroupDefinition {
            topics: vec![],
            interval_ms: -1,
            retained_cuts: 3,
            last_epoch: 1,
        };
        let group_key = BarrierStateKey::group("audit");
        log.apply(&record(0, &group_key, Some(definition.encode().unwrap())))
            .unwrap();
        log.apply(&cut_record(1, "audit", 1, CutStatus::Complete))
            .unwrap();
        log.apply(&record(2, &group_key, Some(vec![]))).unwrap();
        assert!(log.group_definition("audit").is_none());
        assert_eq!(log.latest_complete_cut("audit").unwrap().epoch, 1);
    }
}
