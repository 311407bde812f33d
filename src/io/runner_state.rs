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
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::columnar::snapshot::naming::{
    NO_EPOCH, SnapshotFileName, SnapshotKey, sanitise,
};
use crate::engine::columnar::snapshot::store::{MemorySnapshotStore, SnapshotStore};
use crate::io::snapshot_dir::{DirError, IDENTITY_FILE, SnapshotDir, rust_identity_file};

/// Whether a listed snapshot file is one of this store's.
type OwnFiles = Box<dyn Fn(&SnapshotFileName) -> bool>;

/// What checking a store's identity found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// No state kept across processes (memory), or a stateless topology.
    NotNeeded,
    /// The store held no snapshots: its identity manifest was written.
    Fresh,
    /// The store's identity is this run's.
    Matched,
    /// `--adopt-state`: the store held other (or unknown, `None`) state, now this run's.
    Adopted(Option<StateIdentity>),
}

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

    /// The directory, its identity manifest's name, and whether a listed file is
    /// one of this store's snapshots (the Rust layout names files by group).
    fn identity_scope(&self) -> Option<(&SnapshotDir, String, OwnFiles)> {
        match &self.backing {
            Backing::Memory(_) => None,
            Backing::JavaGo(dir) => Some((
                dir,
                IDENTITY_FILE.to_owned(),
                Box::new(|name| matches!(name, SnapshotFileName::JavaGo { .. })),
            )),
            Backing::Rust { dir, group } => {
                let prefix = format!("{}-", sanitise(group));
                Some((
                    dir,
                    rust_identity_file(group),
                    Box::new(move |name| match name {
                        SnapshotFileName::Rust(rust) => rust.stem.starts_with(&prefix),
                        _ => false,
                    }),
                ))
            }
        }
    }

    /// Ties the directory to `identity` before anything is loaded (docs/topology.md
    /// "State identity"): a directory with no snapshots gets the manifest; one whose
    /// manifest names this identity is used; anything else (another group, another
    /// topology, snapshots of unknown origin, a damaged manifest) is refused with
    /// both identities named, unless `adopt`, which rewrites the manifest.
    pub fn claim(&self, identity: &StateIdentity, adopt: bool) -> Result<Claim, String> {
        if !identity.is_stateful() {
            return Ok(Claim::NotNeeded);
        }
        let Some((dir, manifest, ours)) = self.identity_scope() else {
            return Ok(Claim::NotNeeded);
        };
        let where_ = dir.path().display();
        let refuse = |what: String| {
            format!(
                "state_dir {where_}: {what}; nothing was processed (use another state_dir, or pass --adopt-state to take this state over as {identity})"
            )
        };
        let found = match dir.read_identity(&manifest) {
            Ok(found) => found,
            Err(e @ DirError::BadIdentity { .. }) if !adopt => return Err(refuse(e.to_string())),
            Err(DirError::BadIdentity { .. }) => None,
            Err(e) => return Err(e.to_string()),
        };
        let write = || {
            dir.write_identity(&manifest, identity)
                .map_err(|e| e.to_string())
        };
        match found {
            Some(found) => match identity.check(&found) {
                Ok(()) => Ok(Claim::Matched),
                Err(_) if adopt => write().map(|()| Claim::Adopted(Some(found))),
                Err(mismatch) => Err(refuse(format!(
                    "{mismatch} ({})",
                    dir.path().join(&manifest).display()
                ))),
            },
            None => {
                let listing = dir.list().map_err(|e| e.to_string())?;
                let unknown = listing.files.iter().filter(|f| ours(&f.name)).count();
                if unknown == 0 {
                    return write().map(|()| Claim::Fresh);
                }
                if adopt {
                    return write().map(|()| Claim::Adopted(None));
                }
                Err(refuse(format!(
                    "it holds {unknown} snapshot file(s) but no identity manifest {manifest} (written by a Java or Go runner, or by a krabka-streams that recorded no identity), so whose state they are is unknown"
                )))
            }
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

    fn identity(group: &str, node: &str) -> StateIdentity {
        StateIdentity {
            consumer_group: group.to_owned(),
            nodes: vec![format!(
                "group_by {node} keys=[user] aggregates=[sum(amount) AS total]"
            )],
        }
    }

    #[test]
    fn a_state_dir_is_claimed_once_and_refuses_another_group_or_topology() {
        let tmp = tempfile::tempdir().unwrap();
        let store = FileStateStore::java_go(tmp.path()).unwrap();
        let ours = identity("orders-app", "per-user");
        assert_eq!(store.claim(&ours, false), Ok(Claim::Fresh));
        let manifest = std::fs::read(tmp.path().join(IDENTITY_FILE)).unwrap();
        assert_eq!(StateIdentity::decode(&manifest), Ok(ours.clone()));
        assert_eq!(store.claim(&ours, false), Ok(Claim::Matched));
        for other in [
            identity("refunds-app", "per-user"),
            identity("orders-app", "per-country"),
        ] {
            let e = store.claim(&other, false).unwrap_err();
            assert!(e.contains(&format!("found {ours}")), "{e}");
            assert!(e.contains(&format!("expected {other}")), "{e}");
            assert!(e.contains("nothing was processed"), "{e}");
            // Refusing changes nothing.
            assert_eq!(
                std::fs::read(tmp.path().join(IDENTITY_FILE)).unwrap(),
                manifest
            );
        }
        let theirs = identity("refunds-app", "per-user");
        assert_eq!(
            store.claim(&theirs, true),
            Ok(Claim::Adopted(Some(ours.clone())))
        );
        assert_eq!(store.claim(&theirs, false), Ok(Claim::Matched));
        assert!(store.claim(&ours, false).is_err());
    }

    #[test]
    fn snapshots_without_a_manifest_or_with_a_damaged_one_are_refused_unless_adopted() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = FileStateStore::java_go(tmp.path()).unwrap();
        store.save(0, NO_EPOCH, &state()).unwrap();
        let ours = identity("g", "per-user");
        let e = store.claim(&ours, false).unwrap_err();
        assert!(
            e.contains("holds 1 snapshot file(s) but no identity manifest"),
            "{e}"
        );
        assert!(!tmp.path().join(IDENTITY_FILE).exists());
        assert_eq!(store.claim(&ours, true), Ok(Claim::Adopted(None)));
        std::fs::write(tmp.path().join(IDENTITY_FILE), b"{not json").unwrap();
        let e = store.claim(&ours, false).unwrap_err();
        assert!(
            e.contains("is not a state identity manifest: not a JSON document"),
            "{e}"
        );
        assert_eq!(store.claim(&ours, true), Ok(Claim::Adopted(None)));
        assert_eq!(store.claim(&ours, false), Ok(Claim::Matched));
    }

    #[test]
    fn rust_layout_groups_share_a_directory_each_with_its_manifest_and_memory_needs_none() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = FileStateStore::rust(tmp.path(), "ledger").unwrap();
        a.save(1, 3, &state()).unwrap();
        let b = FileStateStore::rust(tmp.path(), "audit").unwrap();
        assert_eq!(b.claim(&identity("audit", "n"), false), Ok(Claim::Fresh));
        assert!(tmp.path().join("audit.krabka-state-identity.json").exists());
        assert!(
            a.claim(&identity("ledger", "n"), false)
                .unwrap_err()
                .contains("holds 1 snapshot file(s)")
        );
        assert_eq!(
            FileStateStore::memory().claim(&identity("g", "n"), false),
            Ok(Claim::NotNeeded)
        );
        let stateless = StateIdentity {
            consumer_group: "g".into(),
            nodes: vec![],
        };
        assert_eq!(a.claim(&stateless, false), Ok(Claim::NotNeeded));
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
