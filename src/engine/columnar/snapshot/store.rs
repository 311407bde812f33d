//! The seam between a runner and wherever its partition snapshots are kept
//! (semantics §5, §7 rebalance, §8 restore): load and save one container by
//! (logical partition, epoch), with [`NO_EPOCH`] meaning live state.
//!
//! This is the Java/Go shape (one barrier group per runner, so no group in the
//! key). Loading follows formats §8.3 and D15: live state that was never saved
//! loads as the empty container, but a barrier epoch that is not there fails
//! with [`EpochNotRetained`] instead of silently starting from nothing. The
//! file-backed implementation is `io::snapshot_dir::SnapshotDir`; this module
//! also holds an in-memory one for tests of code that needs a store.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::naming::{EpochNotRetained, NO_EPOCH, NamingError};

/// `0000000100000000`: what a partition with no saved live state loads as.
pub const EMPTY_CONTAINER: [u8; 8] = [0, 0, 0, 1, 0, 0, 0, 0];

/// Why a load or save failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// D15: the barrier epoch asked for is not stored for that partition.
    #[error(transparent)]
    NotRetained(#[from] EpochNotRetained),
    /// The (partition, epoch) cannot name a snapshot (negative partition or epoch).
    #[error(transparent)]
    InvalidKey(#[from] NamingError),
    /// The storage itself failed; the message names the file.
    #[error("{0}")]
    Storage(String),
}

/// Where a runner keeps the state snapshots of its logical partitions.
pub trait SnapshotStore {
    /// The container bytes stored for `(partition, epoch)`. Live state
    /// ([`NO_EPOCH`]) that was never saved is [`EMPTY_CONTAINER`]; a missing
    /// barrier epoch is [`StoreError::NotRetained`].
    fn load(&self, partition: i32, epoch: i64) -> Result<Vec<u8>, StoreError>;

    /// Stores `container` under `(partition, epoch)`, replacing what was there
    /// so that a reader sees either the old or the new bytes, never a mix.
    fn save(&self, partition: i32, epoch: i64, container: &[u8]) -> Result<(), StoreError>;
}

/// A store in memory, for tests of code that needs one.
#[derive(Debug, Default)]
pub struct MemorySnapshotStore {
    containers: Mutex<BTreeMap<(i32, i64), Vec<u8>>>,
}

impl MemorySnapshotStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every stored (partition, epoch), ascending.
    pub fn keys(&self) -> Vec<(i32, i64)> {
        self.lock().keys().copied().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(i32, i64), Vec<u8>>> {
        // A panic while holding the lock cannot leave a half-written map entry.
        self.containers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Checks a key the way the file names do, so both stores reject the same keys.
fn check_key(partition: i32, epoch: i64) -> Result<(), NamingError> {
    if partition < 0 {
        return Err(NamingError::InvalidPartition(partition));
    }
    if epoch < NO_EPOCH {
        return Err(NamingError::InvalidEpoch(epoch));
    }
    Ok(())
}

impl SnapshotStore for MemorySnapshotStore {
    fn load(&self, partition: i32, epoch: i64) -> Result<Vec<u8>, StoreError> {
        check_key(partition, epoch)?;
        let containers = self.lock();
        if let Some(bytes) = containers.get(&(partition, epoch)) {
            return Ok(bytes.clone());
        }
        if epoch == NO_EPOCH {
            return Ok(EMPTY_CONTAINER.to_vec());
        }
        let epochs = containers
            .keys()
            .filter(|(p, e)| *p == partition && *e != NO_EPOCH)
            .map(|(_, e)| *e)
            .collect();
        Err(EpochNotRetained {
            epoch,
            available: BTreeMap::from([(partition, epochs)]),
        }
        .into())
    }

    fn save(&self, partition: i32, epoch: i64, container: &[u8]) -> Result<(), StoreError> {
        check_key(partition, epoch)?;
        self.lock().insert((partition, epoch), container.to_vec());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsaved_live_state_loads_empty_but_a_missing_epoch_fails() {
        let store = MemorySnapshotStore::new();
        assert_eq!(store.load(3, NO_EPOCH).unwrap(), EMPTY_CONTAINER);
        store.save(3, 7, b"seven").unwrap();
        store.save(3, 8, b"eight").unwrap();
        store.save(4, 9, b"other partition").unwrap();
        assert_eq!(store.load(3, 8).unwrap(), b"eight");
        assert_eq!(
            store.load(3, 9).unwrap_err().to_string(),
            "snapshot epoch 9 is not retained; available epochs by partition: {3=[7, 8]}"
        );
    }

    #[test]
    fn keys_that_cannot_name_a_file_are_rejected() {
        let store = MemorySnapshotStore::new();
        assert_eq!(
            store.save(-1, 1, b""),
            Err(StoreError::InvalidKey(NamingError::InvalidPartition(-1)))
        );
        assert_eq!(
            store.load(1, -2),
            Err(StoreError::InvalidKey(NamingError::InvalidEpoch(-2)))
        );
        assert!(store.keys().is_empty());
    }
}
