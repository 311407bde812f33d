//! Join state (formats §8.6), written by Go's stateful join and Java's
//! `StatefulJoinProcessor`: `version` = 1, `streamTime i64`, then the left and
//! right sides, each a count followed by batches of `maxTimestamp i64` + length +
//! Arrow IPC stream bytes. Go writes the version, counts and lengths as `u32`,
//! Java as `i32`; for every valid payload these are the same bytes, so one
//! decoder serves both (a Java negative value is a `u32` ≥ 2³¹, which cannot fit
//! the input and is reported as truncation).

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use crate::engine::bytes::Reader;
use crate::engine::columnar::ipc;

/// The only join snapshot version.
pub const JOIN_SNAPSHOT_VERSION: u32 = 1;

/// Why a join payload could not be decoded; messages follow Go and Java.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    #[error("unsupported join snapshot version")]
    UnsupportedVersion,
    #[error("cannot restore join state: truncated snapshot")]
    Truncated,
    #[error("trailing bytes in join snapshot")]
    Trailing,
}

/// One stored batch of one join side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedBatch {
    pub max_timestamp: i64,
    /// One Arrow IPC stream (schema, one batch, end marker).
    pub ipc: Vec<u8>,
}

impl TimedBatch {
    /// Decodes the stored IPC bytes for display.
    pub fn record_batches(&self) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
        ipc::read_batches(&self.ipc)
    }
}

/// A join's buffered state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinState {
    pub stream_time: i64,
    pub left: Vec<TimedBatch>,
    pub right: Vec<TimedBatch>,
}

impl JoinState {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&JOIN_SNAPSHOT_VERSION.to_be_bytes());
        out.extend_from_slice(&self.stream_time.to_be_bytes());
        for side in [&self.left, &self.right] {
            out.extend_from_slice(&(side.len() as u32).to_be_bytes());
            for batch in side {
                out.extend_from_slice(&batch.max_timestamp.to_be_bytes());
                out.extend_from_slice(&(batch.ipc.len() as u32).to_be_bytes());
                out.extend_from_slice(&batch.ipc);
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<JoinState, JoinError> {
        let mut reader = Reader::new(bytes);
        if reader.u32() != Some(JOIN_SNAPSHOT_VERSION) {
            return Err(JoinError::UnsupportedVersion);
        }
        let stream_time = reader.i64().ok_or(JoinError::Truncated)?;
        let left = read_side(&mut reader)?;
        let right = read_side(&mut reader)?;
        if !reader.is_empty() {
            return Err(JoinError::Trailing);
        }
        Ok(JoinState {
            stream_time,
            left,
            right,
        })
    }
}

fn read_side(reader: &mut Reader<'_>) -> Result<Vec<TimedBatch>, JoinError> {
    let count = reader.u32().ok_or(JoinError::Truncated)?;
    // A batch takes at least twelve bytes (timestamp + length).
    let mut batches = Vec::with_capacity((count as usize).min(reader.remaining() / 12));
    for _ in 0..count {
        let max_timestamp = reader.i64().ok_or(JoinError::Truncated)?;
        let len = reader.u32().ok_or(JoinError::Truncated)?;
        let ipc = reader.take(len as usize).ok_or(JoinError::Truncated)?;
        batches.push(TimedBatch {
            max_timestamp,
            ipc: ipc.to_vec(),
        });
    }
    Ok(batches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_i32_and_go_u32_layouts_are_the_same_bytes() {
        let state = JoinState {
            stream_time: -5,
            left: vec![TimedBatch {
                max_timestamp: 7,
                ipc: vec![1, 2],
            }],
            right: vec![],
        };
        let bytes = state.encode();
        // What Java's DataOutputStream writes: writeInt(1), writeLong, writeInt(count), …
        let mut java = Vec::new();
        java.extend_from_slice(&1i32.to_be_bytes());
        java.extend_from_slice(&(-5i64).to_be_bytes());
        java.extend_from_slice(&1i32.to_be_bytes());
        java.extend_from_slice(&7i64.to_be_bytes());
        java.extend_from_slice(&2i32.to_be_bytes());
        java.extend_from_slice(&[1, 2]);
        java.extend_from_slice(&0i32.to_be_bytes());
        assert_eq!(bytes, java);
        assert_eq!(JoinState::decode(&bytes), Ok(state));
    }

    #[test]
    fn errors_follow_go_and_java() {
        assert_eq!(
            JoinState::decode(&[0, 0, 0, 2]).unwrap_err().to_string(),
            "unsupported join snapshot version"
        );
        assert_eq!(
            JoinState::decode(&[0, 0, 0, 1, 0]).unwrap_err().to_string(),
            "cannot restore join state: truncated snapshot"
        );
        let mut trailing = JoinState {
            stream_time: 0,
            left: vec![],
            right: vec![],
        }
        .encode();
        trailing.push(9);
        assert_eq!(
            JoinState::decode(&trailing).unwrap_err().to_string(),
            "trailing bytes in join snapshot"
        );
        // A Java negative length (0x80000000) is truncation, not an allocation.
        let mut negative = vec![0, 0, 0, 1];
        negative.extend_from_slice(&[0; 8]);
        negative.extend_from_slice(&[0, 0, 0, 1]);
        negative.extend_from_slice(&[0; 8]);
        negative.extend_from_slice(&[0x80, 0, 0, 0]);
        assert_eq!(JoinState::decode(&negative), Err(JoinError::Truncated));
    }
}
