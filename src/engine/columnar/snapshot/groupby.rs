//! Go GroupBy / WindowedGroupBy state (formats §8.5): `version u8 = 1`,
//! `streamTime i64` (MinInt64 when unwindowed or nothing seen), `groupCount u32`,
//! then per group in first-appearance order `partCount u32` + tagged parts and
//! `aggCount u32` + tagged aggregates. Windowed groups carry the window start
//! and end as two trailing `Int` parts. Java's GroupBy state is Java
//! serialization and is not decoded here (it is opaque).

use std::collections::HashSet;

use super::tagged::{TaggedError, TaggedValue, read_value};
use crate::engine::bytes::Reader;

/// The only GroupBy snapshot version.
pub const GROUP_BY_SNAPSHOT_VERSION: u8 = 1;

/// The stream time of an unwindowed GroupBy, or one that has seen nothing.
pub const NO_STREAM_TIME: i64 = i64::MIN;

/// Why a GroupBy payload could not be decoded; messages follow Go's `restore`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupByError {
    #[error("cannot restore groupBy state: unsupported snapshot")]
    Unsupported,
    #[error("cannot restore groupBy state: {0}")]
    Value(#[from] TaggedError),
    #[error("cannot restore groupBy state: trailing bytes")]
    Trailing,
    /// Go would silently keep the last of two equal keys; we refuse the payload.
    #[error("cannot restore groupBy state: duplicate group")]
    DuplicateGroup,
}

/// One group: its key parts and its aggregate accumulators.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupState {
    pub parts: Vec<TaggedValue>,
    pub aggregates: Vec<TaggedValue>,
}

impl GroupState {
    /// For a windowed group: the (start, end) carried as the two last parts.
    pub fn window(&self) -> Option<(i64, i64)> {
        match self.parts.as_slice() {
            [.., TaggedValue::Int(start), TaggedValue::Int(end)] => Some((*start, *end)),
            _ => None,
        }
    }
}

/// A GroupBy or WindowedGroupBy snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupByState {
    pub stream_time: i64,
    /// In first-appearance order.
    pub groups: Vec<GroupState>,
}

impl GroupByState {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        encode_header(&mut out, self.stream_time, self.groups.len());
        for group in &self.groups {
            encode_group(&mut out, &group.parts, &group.aggregates);
        }
        out
    }

    /// Decodes strictly; two groups with the same key parts (by their tagged
    /// encoding, which is Go's key equality) are rejected.
    pub fn decode(bytes: &[u8]) -> Result<GroupByState, GroupByError> {
        let mut reader = Reader::new(bytes);
        if reader.u8() != Some(GROUP_BY_SNAPSHOT_VERSION) {
            return Err(GroupByError::Unsupported);
        }
        let stream_time = reader.i64().ok_or(TaggedError::Truncated)?;
        let group_count = reader.u32().ok_or(TaggedError::Truncated)?;
        // A group takes at least eight bytes (two counts).
        let mut groups = Vec::with_capacity((group_count as usize).min(reader.remaining() / 8));
        let mut keys = HashSet::new();
        for _ in 0..group_count {
            let start = reader.position();
            let parts = read_values(&mut reader)?;
            let key = &bytes[start..reader.position()];
            if !keys.insert(key) {
                return Err(GroupByError::DuplicateGroup);
            }
            let aggregates = read_values(&mut reader)?;
            groups.push(GroupState { parts, aggregates });
        }
        if !reader.is_empty() {
            return Err(GroupByError::Trailing);
        }
        Ok(GroupByState {
            stream_time,
            groups,
        })
    }
}

/// Bytes of the header before the first group: version, stream time, group count.
pub const HEADER_LEN: usize = 13;

/// Appends the header ([`HEADER_LEN`] bytes); a writer that keeps the groups'
/// bytes between snapshots rewrites only this and the groups that changed.
pub fn encode_header(out: &mut Vec<u8>, stream_time: i64, groups: usize) {
    out.push(GROUP_BY_SNAPSHOT_VERSION);
    out.extend_from_slice(&stream_time.to_be_bytes());
    out.extend_from_slice(&(groups as u32).to_be_bytes());
}

/// Appends one group as [`GroupByState::encode`] writes it.
pub fn encode_group(out: &mut Vec<u8>, parts: &[TaggedValue], aggregates: &[TaggedValue]) {
    for values in [parts, aggregates] {
        out.extend_from_slice(&(values.len() as u32).to_be_bytes());
        for value in values {
            value.encode_into(out);
        }
    }
}

fn read_values(reader: &mut Reader<'_>) -> Result<Vec<TaggedValue>, TaggedError> {
    let count = reader.u32().ok_or(TaggedError::Truncated)?;
    // A tagged value takes at least one byte.
    let mut values = Vec::with_capacity((count as usize).min(reader.remaining()));
    for _ in 0..count {
        values.push(read_value(reader)?);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windowed() -> GroupByState {
        GroupByState {
            stream_time: 1_000,
            groups: vec![
                GroupState {
                    parts: vec![
                        TaggedValue::String("b".into()),
                        TaggedValue::Int(0),
                        TaggedValue::Int(60_000),
                    ],
                    aggregates: vec![TaggedValue::Int(2), TaggedValue::Null],
                },
                GroupState {
                    parts: vec![
                        TaggedValue::String("a".into()),
                        TaggedValue::Int(0),
                        TaggedValue::Int(60_000),
                    ],
                    aggregates: vec![TaggedValue::Float64(1.5), TaggedValue::Int(1)],
                },
            ],
        }
    }

    #[test]
    fn windowed_state_round_trips_in_first_appearance_order() {
        let state = windowed();
        let decoded = GroupByState::decode(&state.encode()).unwrap();
        assert_eq!(decoded, state);
        assert_eq!(decoded.groups[0].window(), Some((0, 60_000)));
    }

    #[test]
    fn errors_carry_go_wording() {
        assert_eq!(
            GroupByState::decode(&[2]).unwrap_err().to_string(),
            "cannot restore groupBy state: unsupported snapshot"
        );
        assert_eq!(
            GroupByState::decode(&[]).unwrap_err().to_string(),
            "cannot restore groupBy state: unsupported snapshot"
        );
        assert_eq!(
            GroupByState::decode(&[1, 0]).unwrap_err().to_string(),
            "cannot restore groupBy state: truncated snapshot"
        );
        let mut trailing = windowed().encode();
        trailing.push(0);
        assert_eq!(
            GroupByState::decode(&trailing).unwrap_err().to_string(),
            "cannot restore groupBy state: trailing bytes"
        );
    }

    #[test]
    fn duplicate_groups_are_rejected() {
        let mut state = windowed();
        state.groups[1].parts = state.groups[0].parts.clone();
        assert_eq!(
            GroupByState::decode(&state.encode()),
            Err(GroupByError::DuplicateGroup)
        );
    }
}
