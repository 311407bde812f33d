//! Best-effort classification of one snapshot entry's payload for display (D12).
//!
//! Entry payloads are private to the library (and language) that wrote them and
//! carry no type tag, so this only guesses, in a fixed order, and never fails:
//! empty → Go GroupBy (version byte 1, strict tagged decode) → Go/Java join
//! (strict, every stored batch must look like Arrow IPC) → Rust byte store
//! (strict) → an 8-byte `u64` counter → opaque. Java GroupBy state (Java
//! serialization, `aced0005…`) and anything else shows as opaque size + hex.
//! Restores never use this: they copy entry bytes verbatim.

use super::byte_store::ByteStore;
use super::groupby::GroupByState;
use super::join::JoinState;
use crate::engine::columnar::ipc::{self, IpcFormat};

/// What an entry's payload looks like.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A stateless built-in (Java/Go) snapshots to no bytes.
    Empty,
    /// Go GroupBy / WindowedGroupBy (tagged values).
    GroupBy(GroupByState),
    /// Go or Java join buffers.
    Join(JoinState),
    /// krabka-streams-rs byte-backed store.
    ByteStore(ByteStore),
    /// Eight bytes read as a big-endian row counter (a custom processor's usual state).
    Counter(u64),
    /// Anything else: shown as size + hex.
    Opaque,
}

impl Payload {
    /// A short name for listings.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::Empty => "empty",
            Payload::GroupBy(_) => "groupBy",
            Payload::Join(_) => "join",
            Payload::ByteStore(_) => "byte store",
            Payload::Counter(_) => "u64 counter",
            Payload::Opaque => "opaque",
        }
    }
}

/// Guesses what `bytes` hold; never panics, whatever the input.
pub fn classify(bytes: &[u8]) -> Payload {
    if bytes.is_empty() {
        return Payload::Empty;
    }
    if let Ok(state) = GroupByState::decode(bytes) {
        return Payload::GroupBy(state);
    }
    if let Ok(state) = JoinState::decode(bytes)
        && state
            .left
            .iter()
            .chain(&state.right)
            .all(|batch| ipc::sniff(&batch.ipc) != IpcFormat::Unknown)
    {
        return Payload::Join(state);
    }
    if let Ok(store) = ByteStore::decode(bytes) {
        return Payload::ByteStore(store);
    }
    if let Ok(counter) = <[u8; 8]>::try_from(bytes) {
        return Payload::Counter(u64::from_be_bytes(counter));
    }
    Payload::Opaque
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::snapshot::byte_store::ByteStoreEntry;
    use crate::engine::columnar::snapshot::groupby::{GroupState, NO_STREAM_TIME};
    use crate::engine::columnar::snapshot::join::TimedBatch;
    use crate::engine::columnar::snapshot::tagged::TaggedValue;

    #[test]
    fn each_known_payload_is_recognised() {
        assert_eq!(classify(&[]), Payload::Empty);
        let group_by = GroupByState {
            stream_time: NO_STREAM_TIME,
            groups: vec![GroupState {
                parts: vec![TaggedValue::String("a".into())],
                aggregates: vec![TaggedValue::Int(2)],
            }],
        };
        assert_eq!(classify(&group_by.encode()), Payload::GroupBy(group_by));
        let join = JoinState {
            stream_time: 3,
            left: vec![TimedBatch {
                max_timestamp: 3,
                ipc: vec![0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
            }],
            right: vec![],
        };
        assert_eq!(classify(&join.encode()), Payload::Join(join));
        let store = ByteStore {
            entries: vec![ByteStoreEntry {
                key: b"k".to_vec(),
                value: b"v".to_vec(),
            }],
        };
        assert_eq!(classify(&store.encode()), Payload::ByteStore(store));
        assert_eq!(classify(&[0, 0, 0, 0, 0, 0, 0, 2]), Payload::Counter(2));
        assert_eq!(classify(&[0xac, 0xed, 0, 5, 0x77]), Payload::Opaque);
    }

    #[test]
    fn a_join_whose_batches_are_not_arrow_is_not_a_join() {
        let join = JoinState {
            stream_time: 0,
            left: vec![TimedBatch {
                max_timestamp: 0,
                ipc: vec![1, 2, 3],
            }],
            right: vec![],
        };
        assert_eq!(classify(&join.encode()).kind(), "opaque");
    }
}
