//! `__barrier_state` records (formats §7): the key of every kind, the group-definition,
//! injection-start and cut values, tombstones, and the group → partition rule.
//!
//! Encoding and strict decoding only: each decoder consumes its buffer exactly and reports
//! failures as [`BarrierCodecError`] with the frozen strings. No I/O, no Kafka client.

use std::fmt;
use std::num::NonZeroU32;

use super::error::{BarrierCodecError, RecordPart};
use super::wire::{PartReader, VERSION, put_count, put_kstring};
use crate::engine::murmur2::abs_partition;

/// The compacted internal topic holding barrier groups, injections and cuts.
pub const BARRIER_STATE_TOPIC: &str = "__barrier_state";

/// Broker default `barrier_state_num_partitions`; clients read the real count from metadata.
pub const DEFAULT_BARRIER_STATE_PARTITIONS: u32 = 50;

/// Broker default `barrier_state_replication_factor`.
pub const DEFAULT_BARRIER_STATE_REPLICATION_FACTOR: i16 = 3;

/// "No epoch": the epoch of every kind 0 key, and the `after` that asks for all cuts.
/// Real epochs start at 1.
pub const NO_EPOCH: i64 = -1;

/// The `__barrier_state` partition holding a group's records: `abs(murmur2(group)) % partitions`
/// (Kafka `Utils.abs`, not the sign-bit mask of the coordination topic).
pub fn group_partition(group: &str, partitions: NonZeroU32) -> u32 {
    abs_partition(group, partitions.get())
}

/// A topic and partition, as named by cuts, missing lists and reader assignments: the
/// engine's one type (`engine::topic_partition`).
pub use crate::engine::topic_partition::TopicPartition;

/// The kind field of a key. Unknown kinds are kept so readers can skip them (forward compatible).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecordKind {
    /// 0: a barrier group definition.
    Group,
    /// 1: the start of an injection (a triggered, not yet finished cut).
    InjectionStart,
    /// 2: a finished cut, complete or partial.
    Cut,
    /// Any other kind, skipped by readers.
    Unknown(i16),
}

impl RecordKind {
    pub fn from_code(code: i16) -> Self {
        match code {
            0 => RecordKind::Group,
            1 => RecordKind::InjectionStart,
            2 => RecordKind::Cut,
            other => RecordKind::Unknown(other),
        }
    }

    pub fn code(self) -> i16 {
        match self {
            RecordKind::Group => 0,
            RecordKind::InjectionStart => 1,
            RecordKind::Cut => 2,
            RecordKind::Unknown(code) => code,
        }
    }
}

/// A `__barrier_state` key. The version (always 0) is implied: it is written on encode and
/// checked on decode, so a key of another version cannot be represented.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BarrierStateKey {
    pub kind: RecordKind,
    pub group: String,
    /// [`NO_EPOCH`] for kind 0.
    pub epoch: i64,
}

impl BarrierStateKey {
    /// The key of a group definition (epoch −1).
    pub fn group(group: impl Into<String>) -> Self {
        BarrierStateKey {
            kind: RecordKind::Group,
            group: group.into(),
            epoch: NO_EPOCH,
        }
    }

    /// The key of an injection start.
    pub fn injection(group: impl Into<String>, epoch: i64) -> Self {
        BarrierStateKey {
            kind: RecordKind::InjectionStart,
            group: group.into(),
            epoch,
        }
    }

    /// The key of a cut.
    pub fn cut(group: impl Into<String>, epoch: i64) -> Self {
        BarrierStateKey {
            kind: RecordKind::Cut,
            group: group.into(),
            epoch,
        }
    }

    /// `version i16 = 0`, `kind i16`, group kstring, `epoch i64`.
    pub fn encode(&self) -> Result<Vec<u8>, BarrierCodecError> {
        let mut out = Vec::with_capacity(14 + self.group.len());
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&self.kind.code().to_be_bytes());
        put_kstring(&mut out, &self.group, RecordPart::Key)?;
        out.extend_from_slice(&self.epoch.to_be_bytes());
        Ok(out)
    }

    /// Strict decode of a key of any kind (trailing bytes are rejected for every kind).
    pub fn decode(bytes: &[u8]) -> Result<Self, BarrierCodecError> {
        let mut r = PartReader::new(bytes, RecordPart::Key);
        r.version()?;
        let kind = RecordKind::from_code(r.i16()?);
        let group = r.kstring()?;
        let epoch = r.i64()?;
        r.finish()?;
        Ok(BarrierStateKey { kind, group, epoch })
    }
}

/// Kind 0 value: a barrier group's definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDefinition {
    pub topics: Vec<String>,
    /// −1 = no periodic injection.
    pub interval_ms: i64,
    pub retained_cuts: i32,
    pub last_epoch: i64,
}

impl GroupDefinition {
    pub fn encode(&self) -> Result<Vec<u8>, BarrierCodecError> {
        let part = RecordPart::GroupValue;
        let mut out = Vec::new();
        out.extend_from_slice(&VERSION.to_be_bytes());
        put_count(&mut out, self.topics.len(), part)?;
        for topic in &self.topics {
            put_kstring(&mut out, topic, part)?;
        }
        out.extend_from_slice(&self.interval_ms.to_be_bytes());
        out.extend_from_slice(&self.retained_cuts.to_be_bytes());
        out.extend_from_slice(&self.last_epoch.to_be_bytes());
        Ok(out)
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, BarrierCodecError> {
        let mut r = PartReader::new(bytes, RecordPart::GroupValue);
        r.version()?;
        let mut topics = Vec::new();
        for _ in 0..r.count()? {
            topics.push(r.kstring()?);
        }
        let interval_ms = r.i64()?;
        let retained_cuts = r.i32()?;
        let last_epoch = r.i64()?;
        r.finish()?;
        Ok(GroupDefinition {
            topics,
            interval_ms,
            retained_cuts,
            last_epoch,
        })
    }
}

/// One target topic of an injection and its partition count at trigger time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionTarget {
    pub topic: String,
    pub partition_count: i32,
}

/// Kind 1 value: an injection was started by a coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionStart {
    pub coordinator_epoch: i32,
    pub triggered_at: i64,
    pub targets: Vec<InjectionTarget>,
}

impl InjectionStart {
    pub fn encode(&self) -> Result<Vec<u8>, BarrierCodecError> {
        let part = RecordPart::InjectionValue;
        let mut out = Vec::new();
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&self.coordinator_epoch.to_be_bytes());
        out.extend_from_slice(&self.triggered_at.to_be_bytes());
        put_count(&mut out, self.targets.len(), part)?;
        for target in &self.targets {
            put_kstring(&mut out, &target.topic, part)?;
            out.extend_from_slice(&target.partition_count.to_be_bytes());
        }
        Ok(out)
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, BarrierCodecError> {
        let mut r = PartReader::new(bytes, RecordPart::InjectionValue);
        r.version()?;
        let coordinator_epoch = r.i32()?;
        let triggered_at = r.i64()?;
        let mut targets = Vec::new();
        for _ in 0..r.count()? {
            let topic = r.kstring()?;
            let partition_count = r.i32()?;
            targets.push(InjectionTarget {
                topic,
                partition_count,
            });
        }
        r.finish()?;
        Ok(InjectionStart {
            coordinator_epoch,
            triggered_at,
            targets,
        })
    }
}

/// Whether every target partition received the marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CutStatus {
    /// 0: every target partition has an offset.
    Complete,
    /// 1: some partitions are missing; never aligned on or restored to.
    Partial,
    /// Any other code; displayed, but rejected by the strict decoder.
    Unknown(i8),
}

impl CutStatus {
    pub fn from_code(code: i8) -> Self {
        match code {
            0 => CutStatus::Complete,
            1 => CutStatus::Partial,
            other => CutStatus::Unknown(other),
        }
    }

    pub fn code(self) -> i8 {
        match self {
            CutStatus::Complete => 0,
            CutStatus::Partial => 1,
            CutStatus::Unknown(code) => code,
        }
    }
}

impl fmt::Display for CutStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CutStatus::Complete => f.write_str("complete"),
            CutStatus::Partial => f.write_str("partial"),
            CutStatus::Unknown(code) => write!(f, "CutStatus({code})"),
        }
    }
}

/// The marker offset of one partition in a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutOffset {
    pub partition: i32,
    /// The marker's offset: records with `offset < this` are before the cut.
    pub offset: i64,
}

/// The offsets of one topic in a cut, partitions in encoded order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutTopic {
    pub topic: String,
    pub partitions: Vec<CutOffset>,
}

/// Kind 2 value: a finished cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub triggered_at: i64,
    /// Epoch milliseconds.
    pub completed_at: i64,
    pub status: CutStatus,
    /// Topics in encoded order.
    pub topics: Vec<CutTopic>,
    /// Target partitions that never received the marker (partial cuts).
    pub missing: Vec<TopicPartition>,
}

impl Cut {
    pub fn is_complete(&self) -> bool {
        self.status == CutStatus::Complete
    }

    /// Every (topic/partition, offset) in encoded order.
    pub fn offsets(&self) -> impl Iterator<Item = (TopicPartition, i64)> + '_ {
        self.topics.iter().flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (TopicPartition::new(t.topic.clone(), p.partition), p.offset))
        })
    }

    /// The cut offset of a partition, or `None` when the cut does not name it.
    pub fn offset(&self, topic: &str, partition: i32) -> Option<i64> {
        self.topics
            .iter()
            .filter(|t| t.topic == topic)
            .flat_map(|t| t.partitions.iter())
            .find(|p| p.partition == partition)
            .map(|p| p.offset)
    }

    /// Whether a consumer at `position` (the next offset to read) has passed the cut:
    /// `position ≥ cut offset`. A partition the cut does not name is always reached.
    pub fn reached(&self, topic: &str, partition: i32, position: i64) -> bool {
        self.offset(topic, partition)
            .is_none_or(|offset| position >= offset)
    }

    /// `version i16 = 0`, `triggered_at i64`, `completed_at i64`, `status i8`, topics, missing.
    pub fn encode(&self) -> Result<Vec<u8>, BarrierCodecError> {
        let part = RecordPart::CutValue;
        let mut out = Vec::with_capacity(27);
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&self.triggered_at.to_be_bytes());
        out.extend_from_slice(&self.completed_at.to_be_bytes());
        out.extend_from_slice(&self.status.code().to_be_bytes());
        put_count(&mut out, self.topics.len(), part)?;
        for topic in &self.topics {
            put_kstring(&mut out, &topic.topic, part)?;
            put_count(&mut out, topic.partitions.len(), part)?;
            for p in &topic.partitions {
                out.extend_from_slice(&p.partition.to_be_bytes());
                out.extend_from_slice(&p.offset.to_be_bytes());
            }
        }
        put_count(&mut out, self.missing.len(), part)?;
        for tp in &self.missing {
            put_kstring(&mut out, &tp.topic, part)?;
            out.extend_from_slice(&tp.partition.to_be_bytes());
        }
        Ok(out)
    }

    /// Strict decode of a non-empty cut value (an empty value is a tombstone, see [`decode_value`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, BarrierCodecError> {
        let mut r = PartReader::new(bytes, RecordPart::CutValue);
        r.version()?;
        let triggered_at = r.i64()?;
        let completed_at = r.i64()?;
        let status = match CutStatus::from_code(r.i8()?) {
            CutStatus::Unknown(code) => return Err(BarrierCodecError::UnknownCutStatus(code)),
            known => known,
        };
        let mut topics = Vec::new();
        for _ in 0..r.count()? {
            let topic = r.kstring()?;
            let mut partitions = Vec::new();
            for _ in 0..r.count()? {
                let partition = r.i32()?;
                let offset = r.i64()?;
                partitions.push(CutOffset { partition, offset });
            }
            topics.push(CutTopic { topic, partitions });
        }
        let mut missing = Vec::new();
        for _ in 0..r.count()? {
            let topic = r.kstring()?;
            let partition = r.i32()?;
            missing.push(TopicPartition { topic, partition });
        }
        r.finish()?;
        Ok(Cut {
            triggered_at,
            completed_at,
            status,
            topics,
            missing,
        })
    }
}

/// A decoded `__barrier_state` value, interpreted by the kind of its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BarrierStateValue {
    /// Null or empty value: deletes the group (kind 0) or the (group, epoch) record.
    Tombstone,
    Group(GroupDefinition),
    InjectionStart(InjectionStart),
    Cut(Cut),
    /// A value of an unknown kind, left undecoded.
    Skipped,
}

/// Whether a value is a tombstone: null or empty.
pub fn is_tombstone(value: Option<&[u8]>) -> bool {
    value.is_none_or(<[u8]>::is_empty)
}

/// Strictly decodes a value as the kind says; null or empty is a tombstone for every kind.
pub fn decode_value(
    kind: RecordKind,
    value: Option<&[u8]>,
) -> Result<BarrierStateValue, BarrierCodecError> {
    let bytes = match value {
        Some(bytes) if !bytes.is_empty() => bytes,
        _ => return Ok(BarrierStateValue::Tombstone),
    };
    Ok(match kind {
        RecordKind::Group => BarrierStateValue::Group(GroupDefinition::decode(bytes)?),
        RecordKind::InjectionStart => {
            BarrierStateValue::InjectionStart(InjectionStart::decode(bytes)?)
        }
        RecordKind::Cut => BarrierStateValue::Cut(Cut::decode(bytes)?),
        RecordKind::Unknown(_) => BarrierStateValue::Skipped,
    })
}

/// Strictly decodes a whole record: the key, then the value by the key's kind.
pub fn decode_record(
    key: &[u8],
    value: Option<&[u8]>,
) -> Result<(BarrierStateKey, BarrierStateValue), BarrierCodecError> {
    let key = BarrierStateKey::decode(key)?;
    let value = decode_value(key.kind, value)?;
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN_KEY: &str = "00000002000a6f72646572732d6375740000000000000007";
    const GOLDEN_VALUE: &str = "0000000001918435bd00000001918435bd2a000000000100066f72646572730000000200000000000000000000040000000001000000000000080000000000";
    const GROUP_VALUE: &str =
        "00000000000200066f726465727300087061796d656e7473000000000000ea60000000200000000000000007";
    const INJECTION_VALUE: &str =
        "000000000004000001918435bd000000000200066f72646572730000000300087061796d656e747300000001";

    fn golden_cut() -> Cut {
        Cut {
            triggered_at: 1_724_500_000_000,
            completed_at: 1_724_500_000_042,
            status: CutStatus::Complete,
            topics: vec![CutTopic {
                topic: "orders".into(),
                partitions: vec![
                    CutOffset {
                        partition: 0,
                        offset: 1024,
                    },
                    CutOffset {
                        partition: 1,
                        offset: 2048,
                    },
                ],
            }],
            missing: vec![],
        }
    }

    #[test]
    fn golden_cut_encodes_to_the_frozen_bytes_and_back() {
        let key = BarrierStateKey::cut("orders-cut", 7);
        assert_eq!(hex::encode(key.encode().unwrap()), GOLDEN_KEY);
        assert_eq!(hex::encode(golden_cut().encode().unwrap()), GOLDEN_VALUE);
        let value = hex::decode(GOLDEN_VALUE).unwrap();
        let (k, v) = decode_record(&hex::decode(GOLDEN_KEY).unwrap(), Some(&value)).unwrap();
        assert_eq!(k, key);
        assert_eq!(v, BarrierStateValue::Cut(golden_cut()));
    }

    #[test]
    fn cut_status_is_byte_18_and_topic_count_starts_at_byte_19() {
        let bytes = golden_cut().encode().unwrap();
        assert_eq!(bytes[18], 0);
        assert_eq!(&bytes[19..23], &[0, 0, 0, 1]);
    }

    #[test]
    fn every_proper_prefix_of_the_golden_records_is_rejected_without_panic() {
        let key = hex::decode(GOLDEN_KEY).unwrap();
        let value = hex::decode(GOLDEN_VALUE).unwrap();
        for n in 0..key.len() {
            assert!(
                BarrierStateKey::decode(&key[..n]).is_err(),
                "key prefix {n}"
            );
        }
        for n in 0..value.len() {
            assert!(Cut::decode(&value[..n]).is_err(), "cut prefix {n}");
        }
        let group = hex::decode(GROUP_VALUE).unwrap();
        for n in 0..group.len() {
            assert!(
                GroupDefinition::decode(&group[..n]).is_err(),
                "group prefix {n}"
            );
        }
        let injection = hex::decode(INJECTION_VALUE).unwrap();
        for n in 0..injection.len() {
            assert!(
                InjectionStart::decode(&injection[..n]).is_err(),
                "injection prefix {n}"
            );
        }
    }

    #[test]
    fn any_bytes_fed_to_any_decoder_return_instead_of_panicking() {
        let samples = [GOLDEN_KEY, GOLDEN_VALUE, GROUP_VALUE, INJECTION_VALUE];
        for sample in samples {
            let bytes = hex::decode(sample).unwrap();
            for start in 0..bytes.len() {
                for end in start..=bytes.len() {
                    let slice = &bytes[start..end];
                    let _ = BarrierStateKey::decode(slice);
                    let _ = Cut::decode(slice);
                    let _ = GroupDefinition::decode(slice);
                    let _ = InjectionStart::decode(slice);
                }
            }
        }
    }

    #[test]
    fn group_and_injection_values_round_trip() {
        let group = GroupDefinition {
            topics: vec!["orders".into(), "payments".into()],
            interval_ms: 60_000,
            retained_cuts: 32,
            last_epoch: 7,
        };
        assert_eq!(hex::encode(group.encode().unwrap()), GROUP_VALUE);
        assert_eq!(
            GroupDefinition::decode(&hex::decode(GROUP_VALUE).unwrap()),
            Ok(group)
        );
        let injection = InjectionStart {
            coordinator_epoch: 4,
            triggered_at: 1_724_500_000_000,
            targets: vec![
                InjectionTarget {
                    topic: "orders".into(),
                    partition_count: 3,
                },
                InjectionTarget {
                    topic: "payments".into(),
                    partition_count: 1,
                },
            ],
        };
        assert_eq!(hex::encode(injection.encode().unwrap()), INJECTION_VALUE);
        assert_eq!(
            InjectionStart::decode(&hex::decode(INJECTION_VALUE).unwrap()),
            Ok(injection)
        );
    }

    #[test]
    fn trailing_bytes_are_rejected_in_group_and_injection_values() {
        let mut group = hex::decode(GROUP_VALUE).unwrap();
        group.push(0);
        assert_eq!(
            GroupDefinition::decode(&group).unwrap_err().to_string(),
            "trailing bytes in barrier state group value"
        );
        let mut injection = hex::decode(INJECTION_VALUE).unwrap();
        injection.push(0);
        assert_eq!(
            InjectionStart::decode(&injection).unwrap_err().to_string(),
            "trailing bytes in barrier state injection value"
        );
    }

    #[test]
    fn empty_or_null_value_is_a_tombstone_for_every_kind() {
        for kind in [
            RecordKind::Group,
            RecordKind::InjectionStart,
            RecordKind::Cut,
            RecordKind::Unknown(7),
        ] {
            assert_eq!(decode_value(kind, None), Ok(BarrierStateValue::Tombstone));
            assert_eq!(
                decode_value(kind, Some(&[])),
                Ok(BarrierStateValue::Tombstone)
            );
        }
        assert!(is_tombstone(None) && is_tombstone(Some(&[])) && !is_tombstone(Some(&[0])));
    }

    #[test]
    fn unknown_kind_key_decodes_and_its_value_is_skipped_undecoded() {
        let key = BarrierStateKey {
            kind: RecordKind::Unknown(9),
            group: "g".into(),
            epoch: 3,
        };
        let (k, v) = decode_record(&key.encode().unwrap(), Some(&[0xff])).unwrap();
        assert_eq!(k.kind, RecordKind::Unknown(9));
        assert_eq!(v, BarrierStateValue::Skipped);
    }

    #[test]
    fn unknown_status_is_rejected_but_displayed_as_cut_status_n() {
        let mut bytes = golden_cut().encode().unwrap();
        bytes[18] = 2;
        assert_eq!(
            Cut::decode(&bytes),
            Err(BarrierCodecError::UnknownCutStatus(2))
        );
        assert_eq!(CutStatus::from_code(9).to_string(), "CutStatus(9)");
        assert_eq!(CutStatus::Complete.to_string(), "complete");
        assert_eq!(CutStatus::Partial.to_string(), "partial");
    }

    #[test]
    fn non_utf8_topic_in_a_cut_value_is_rejected() {
        let mut cut = golden_cut();
        cut.topics[0].topic = "o".into();
        let mut bytes = cut.encode().unwrap();
        bytes[25] = 0xff;
        assert_eq!(
            Cut::decode(&bytes).unwrap_err().to_string(),
            "non-UTF-8 string in barrier state cut value"
        );
    }

    #[test]
    fn reached_means_position_at_or_after_the_cut_offset() {
        let cut = golden_cut();
        assert!(!cut.reached("orders", 0, 1023));
        assert!(cut.reached("orders", 0, 1024));
        assert!(cut.reached("orders", 7, 0));
        assert!(cut.reached("payments", 0, 0));
        assert_eq!(cut.offset("orders", 1), Some(2048));
    }

    #[test]
    fn group_partition_uses_abs_not_the_sign_mask() {
        let fifty = NonZeroU32::new(DEFAULT_BARRIER_STATE_PARTITIONS).unwrap();
        assert_eq!(group_partition("producer-1", fifty), 45);
        assert_eq!(group_partition("anything", NonZeroU32::MIN), 0);
    }
}
