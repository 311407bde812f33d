//! The group runner's partition state on disk: one gen B container per
//! (logical partition, epoch) in the topology's `state_dir`, named as Java and
//! Go name them (`partition-<p>.snapshot` for live state, `partition-<p>-epoch-<e>.snapshot`
//! for barrier cuts; formats §8.3) and written atomically, so `snapshot list/dump`
//! read what `run` writes and a Go or Java runner's directory can be resumed.
//!
//! The Rust layout (`<group>-<task>-epoch-<e>.snapshot`) has no live state: live
//! saves are skipped and live loads are empty there, as in krabka-streams-rs;
//! barrier epochs use task `0-<p>` (one subtopology). Without a state directory
//! the state lives in memory for the life of the process.

use std::collections::BTreeMap;
use std::path::Path;

use crate::engine::columnar::runner::group::{RunnerError, StateStore};
use crate::engine::columnar::snapshot::container;
use crate::engine::columnar::snapshot::naming::{NO_EPOCH, SnapshotKey};
use crate::engine::columnar::snapshot::store::{MemorySnapshotStore, SnapshotStore};
use crate::io::snapshot_dir::SnapshotDir;

enum Backing {
    JavaGo(SnapshotDir),
    Rust { dir: SnapshotDir, group: String },
    Memory(MemorySnapshotStore),
}

pub struct FileStateStore {
    backing: Backing,
}

impl FileStateStore {
    /// Java/Go naming in `dir`, created when missing.
    pub fn java_go(dir: &Path) -> Result<Self, String> {
        Ok(FileStateStore {
            backing: Backing::JavaGo(open(dir)?),
        })
    }

    /// Rust naming in `dir` under `group`, created when missing.
    pub fn rust(dir: &Path, group: &str) -> Result<Self, String> {
        Ok(FileStateStore {
            backing: Backing::Rust {
                dir: open(dir)?,
                group: group.to_owned(),
            },
        })
    }

    /// No directory: state survives rebalances within this process only.
    pub fn memory() -> Self {
        FileStateStore {
            backing: Backing::Memory(MemorySnapshotStore::new()),
        }
    }

    fn load_bytes(&self, partition: i32, epoch: i64) -> Result<Option<Vec<u8>>, String> {
        match &self.backing {
            Backing::JavaGo(dir) => dir
                .load(partition, epoch)
                .map(Some)
                .map_err(|e| e.to_string()),
            Backing::Memory(m) => m
                .load(partition, epoch)
                .map(Some)
                .map_err(|e| e.to_string()),
            Backing::Rust { .. } if epoch == NO_EPOCH => Ok(None),
            Backing::Rust { dir, group } => {
                let name = rust_name(group, partition, epoch)?;
                match dir.read(&name).map_err(|e| e.to_string())? {
                    Some(bytes) => Ok(Some(bytes)),
                    None => Err(format!(
                        "snapshot epoch {epoch} is not retained: {} is missing",
                        dir.path().join(&name).display()
                    )),
                }
            }
        }
    }
}

fn open(dir: &Path) -> Result<SnapshotDir, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the state directory {}: {e}", dir.display()))?;
    SnapshotDir::open(dir).map_err(|e| e.to_string())
}

fn rust_name(group: &str, partition: i32, epoch: i64) -> Result<String, String> {
    SnapshotKey::Rust {
        group: group.to_owned(),
        task: format!("0-{partition}"),
        epoch,
    }
    .file_name()
    .map_err(|e| e.to_string())
}

impl StateStore for FileStateStore {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        let fail = |m: String| RunnerError::new(format!("load partition {partition} state: {m}"));
        let Some(bytes) = self.load_bytes(partition, epoch).map_err(fail)? else {
            return Ok(BTreeMap::new());
        };
        container::read(&bytes)
            .map(container::ReadSnapshot::into_map)
            .map_err(|e| fail(e.to_string()))
    }

    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        let fail = |m: String| RunnerError::new(format!("save partition {partition} state: {m}"));
        let bytes = container::encode(state);
        match &self.backing {
            Backing::JavaGo(dir) => dir
                .save(partition, epoch, &bytes)
                .map_err(|e| fail(e.to_string())),
            Backing::Memory(m) => m
                .save(partition, epoch, &bytes)
                .map_err(|e| fail(e.to_string())),
            Backing::Rust { .. } if epoch == NO_EPOCH => Ok(()),
            Backing::Rust { dir, group } => {
                let name = rust_name(group, partition, epoch).map_err(fail)?;
                dir.write(&name, &bytes).map_err(|e| fail(e.to_string()))
            }
        }
    }

    fn epochs(&mut self, partition: i32) -> Result<Option<Vec<i64>>, RunnerError> {
        let fail = |m: String| RunnerError::new(format!("list partition {partition} epochs: {m}"));
        let mut epochs: Vec<i64> = match &self.backing {
            Backing::Memory(m) => m
                .keys()
                .into_iter()
                .filter(|(p, e)| *p == partition && *e != NO_EPOCH)
                .map(|(_, e)| e)
                .collect(),
            Backing::JavaGo(dir) => dir
                .barrier_epochs(partition)
                .map_err(|e| fail(e.to_string()))?,
            Backing::Rust { dir, group } => {
                let prefix = rust_name(group, partition, 0)
                    .map_err(fail)?
                    .trim_end_matches("0.snapshot")
                    .to_owned();
                dir.list()
                    .map_err(|e| fail(e.to_string()))?
                    .files
                    .iter()
                    .filter(|f| f.file_name.starts_with(&prefix))
                    .map(|f| f.name.epoch())
                    .collect()
            }
        };
        epochs.sort_unstable();
        epochs.dedup();
        Ok(Some(epochs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> BTreeMap<String, Vec<u8>> {
        BTreeMap::from([
            ("by-user".to_owned(), vec![1, 2, 3]),
            ("f".to_owned(), vec![]),
        ])
    }

    #[test]
    fn live_state_is_saved_under_the_java_go_name_as_a_gen_b_container() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        let mut store = FileStateStore::java_go(&dir).unwrap();
        assert!(store.load(3, NO_EPOCH).unwrap().is_empty());
        store.save(3, NO_EPOCH, &state()).unwrap();
        store.save(3, 7, &state()).unwrap();
        let bytes = std::fs::read(dir.join("partition-3.snapshot")).unwrap();
        assert_eq!(bytes, container::encode(&state()));
        assert!(dir.join("partition-3-epoch-7.snapshot").exists());
        let mut again = FileStateStore::java_go(&dir).unwrap();
        assert_eq!(again.load(3, NO_EPOCH).unwrap(), state());
        let missing = again.load(3, 9).unwrap_err().message;
        assert!(
            missing.contains("snapshot epoch 9 is not retained"),
            "{missing}"
        );
    }

    #[test]
    fn the_rust_layout_keeps_no_live_state_and_names_epochs_by_group_and_task() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = FileStateStore::rust(tmp.path(), "ledger/x").unwrap();
        store.save(2, NO_EPOCH, &state()).unwrap();
        assert!(store.load(2, NO_EPOCH).unwrap().is_empty());
        store.save(2, 4, &state()).unwrap();
        assert!(tmp.path().join("ledger_x-0-2-epoch-4.snapshot").exists());
        assert_eq!(store.load(2, 4).unwrap(), state());
    }

    #[test]
    fn epochs_lists_a_partitions_barrier_epochs_in_every_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let mut stores = [
            FileStateStore::java_go(&tmp.path().join("jg")).unwrap(),
            FileStateStore::rust(&tmp.path().join("rs"), "ledger").unwrap(),
            FileStateStore::memory(),
        ];
        for store in &mut stores {
            for (partition, epoch) in [(1, NO_EPOCH), (1, 8), (1, 3), (10, 5), (0, 2)] {
                store.save(partition, epoch, &state()).unwrap();
            }
            assert_eq!(store.epochs(1).unwrap(), Some(vec![3, 8]));
            assert_eq!(store.epochs(4).unwrap(), Some(vec![]));
        }
    }

    #[test]
    fn a_corrupt_snapshot_fails_the_load_naming_the_partition() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("partition-0.snapshot"),
            b"\0\0\0\x01\0\0\0\x05",
        )
        .unwrap();
        let mut store = FileStateStore::java_go(tmp.path()).unwrap();
        let e = store.load(0, NO_EPOCH).unwrap_err().message;
        assert!(e.starts_with("load partition 0 state: "), "{e}");
    }
}
