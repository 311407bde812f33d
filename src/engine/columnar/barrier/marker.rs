//! Barrier markers (formats §7): the control record the broker writes into every data
//! partition of a barrier group when it injects a cut. Consumers never see it; its offset is
//! the cut offset of that partition.
//!
//! The marker is a control batch of one record:
//! control bit set, transactional bit clear, `producer_id = -1`, `producer_epoch = -1`,
//! `base_sequence = -1`, `partition_leader_epoch` stamped by the leader, and both batch
//! timestamps equal to the trigger time. Markers leave offset gaps (the log end offset exceeds
//! the record count) and survive compaction but not retention.
//!
//! Encoding and strict decoding of the key and value only; no batch framing, no I/O.

use super::error::{BarrierCodecError, RecordPart};
use super::wire::{PartReader, VERSION, put_kstring};

/// The control type of a barrier marker (Kafka uses 0 for ABORT and 1 for COMMIT).
pub const BARRIER_MARKER_CONTROL_TYPE: i16 = 1000;

/// The control key of every barrier marker: `version i16 = 0`, `type i16 = 1000`.
pub const BARRIER_MARKER_KEY: [u8; 4] = [0x00, 0x00, 0x03, 0xe8];

/// A marker batch has the control attribute bit set.
pub const MARKER_BATCH_IS_CONTROL: bool = true;
/// A marker batch has the transactional attribute bit clear.
pub const MARKER_BATCH_IS_TRANSACTIONAL: bool = false;
/// A marker batch carries no producer id.
pub const MARKER_BATCH_PRODUCER_ID: i64 = -1;
/// A marker batch carries no producer epoch.
pub const MARKER_BATCH_PRODUCER_EPOCH: i16 = -1;
/// A marker batch carries no base sequence.
pub const MARKER_BATCH_BASE_SEQUENCE: i32 = -1;

/// Strictly checks a control key: version 0 and control type 1000, nothing after.
pub fn decode_marker_key(bytes: &[u8]) -> Result<(), BarrierCodecError> {
    let mut r = PartReader::new(bytes, RecordPart::MarkerKey);
    r.version()?;
    let control_type = r.i16()?;
    if control_type != BARRIER_MARKER_CONTROL_TYPE {
        return Err(BarrierCodecError::UnexpectedControlType(control_type));
    }
    r.finish()
}

/// The value of a barrier marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierMarker {
    pub group: String,
    pub epoch: i64,
    /// Epoch milliseconds; also the batch timestamps.
    pub triggered_at: i64,
}

impl BarrierMarker {
    /// The control key; the same for every marker.
    pub fn key(&self) -> [u8; 4] {
        BARRIER_MARKER_KEY
    }

    /// `version i16 = 0`, group kstring, `epoch i64`, `triggered_at i64`.
    pub fn encode(&self) -> Result<Vec<u8>, BarrierCodecError> {
        let mut out = Vec::with_capacity(20 + self.group.len());
        out.extend_from_slice(&VERSION.to_be_bytes());
        put_kstring(&mut out, &self.group, RecordPart::MarkerValue)?;
        out.extend_from_slice(&self.epoch.to_be_bytes());
        out.extend_from_slice(&self.triggered_at.to_be_bytes());
        Ok(out)
    }

    /// Strict decode of a marker value.
    pub fn decode(bytes: &[u8]) -> Result<Self, BarrierCodecError> {
        let mut r = PartReader::new(bytes, RecordPart::MarkerValue);
        r.version()?;
        let group = r.kstring()?;
        let epoch = r.i64()?;
        let triggered_at = r.i64()?;
        r.finish()?;
        Ok(BarrierMarker {
            group,
            epoch,
            triggered_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUE: &str = "0000000a6f72646572732d6375740000000000000007000001918435bd00";

    fn marker() -> BarrierMarker {
        BarrierMarker {
            group: "orders-cut".into(),
            epoch: 7,
            triggered_at: 1_724_500_000_000,
        }
    }

    #[test]
    fn marker_key_is_version_0_control_type_1000() {
        assert_eq!(hex::encode(marker().key()), "000003e8");
        assert_eq!(decode_marker_key(&BARRIER_MARKER_KEY), Ok(()));
    }

    #[test]
    fn commit_and_abort_control_keys_are_not_barrier_markers() {
        for key in [[0, 0, 0, 0], [0, 0, 0, 1]] {
            assert!(matches!(
                decode_marker_key(&key),
                Err(BarrierCodecError::UnexpectedControlType(_))
            ));
        }
        assert_eq!(
            decode_marker_key(&[0, 1, 3, 0xe8]).unwrap_err().to_string(),
            "unsupported barrier marker key version 1"
        );
        assert_eq!(
            decode_marker_key(&[0, 0, 3, 0xe8, 0])
                .unwrap_err()
                .to_string(),
            "trailing bytes in barrier marker key"
        );
    }

    #[test]
    fn marker_value_round_trips_through_the_frozen_bytes() {
        assert_eq!(hex::encode(marker().encode().unwrap()), VALUE);
        assert_eq!(
            BarrierMarker::decode(&hex::decode(VALUE).unwrap()),
            Ok(marker())
        );
    }

    #[test]
    fn every_proper_prefix_of_a_marker_is_rejected_without_panic() {
        let value = hex::decode(VALUE).unwrap();
        for n in 0..value.len() {
            assert!(
                BarrierMarker::decode(&value[..n]).is_err(),
                "value prefix {n}"
            );
        }
        for n in 0..BARRIER_MARKER_KEY.len() {
            assert_eq!(
                decode_marker_key(&BARRIER_MARKER_KEY[..n]),
                Err(BarrierCodecError::Truncated(RecordPart::MarkerKey))
            );
        }
        let mut long = value.clone();
        long.push(0);
        assert_eq!(
            BarrierMarker::decode(&long).unwrap_err().to_string(),
            "trailing bytes in barrier marker value"
        );
    }
}
