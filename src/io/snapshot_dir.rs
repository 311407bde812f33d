//! A directory of state snapshot files (formats §8.3): listing by layout, and
//! reading, writing and removing one file by its storage key.
//!
//! Names are never taken from outside as paths: every file is addressed by a
//! name that `naming::parse_file_name` accepts (only `[A-Za-z0-9._-]`, ending in
//! `.snapshot`), so nothing can reach outside the directory. Symbolic links
//! inside the directory are deliberately never followed: they are listed as
//! links, reading one is refused (the open uses `O_NOFOLLOW`, so a link swapped
//! in between the check and the open is refused too), and a write or removal
//! never goes through one (a link under a target name is refused). The directory
//! path itself may be a link: the user named it. Writes are atomic (temp file in
//! the same directory, fsync, rename, fsync the directory).
//!
//! [`SnapshotDir`] is also the file-backed [`SnapshotStore`] of the Java/Go layout.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::engine::columnar::snapshot::identity::{MANIFEST_MAX_BYTES, StateIdentity};

/// The identity manifest is small; a larger file is not one of ours.
const STATE_IDENTITY_CAP: crate::io::bounded_read::Cap = crate::io::bounded_read::Cap {
    bytes: MANIFEST_MAX_BYTES,
    what: "a state identity manifest",
};
use crate::engine::columnar::snapshot::naming::{
    EpochNotRetained, NO_EPOCH, SnapshotFileName, SnapshotKey, parse_file_name,
};
use crate::engine::columnar::snapshot::store::{EMPTY_CONTAINER, SnapshotStore, StoreError};
use crate::io::atomic_file::temp_name::{self, StaleTemp};
use crate::io::atomic_file::write_whole;

/// The entry as a temp file of ours whose writer is dead (a regular file, not followed).
fn stale_temp(entry: &fs::DirEntry) -> Option<StaleTemp> {
    let name = entry.file_name();
    let parsed = temp_name::parse(name.to_str()?)?;
    let regular = entry.file_type().is_ok_and(|t| t.is_file());
    (regular && parsed.pid != std::process::id() && !temp_name::process_alive(parsed.pid)).then(
        || StaleTemp {
            path: entry.path(),
            target: parsed.target.to_string(),
            pid: parsed.pid,
        },
    )
}

/// Why the directory or one of its files could not be used. Every message names the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirError {
    #[error("snapshot directory {0} does not exist")]
    Missing(String),
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("cannot read snapshot directory {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error(
        "{0:?} is not a snapshot file name (partition-<p>[-epoch-<e>].snapshot or <group>-<task>-epoch-<e>.snapshot)"
    )]
    NotASnapshotName(String),
    #[error(
        "{0} is a symbolic link; snapshot files inside a directory are never followed through links"
    )]
    Symlink(String),
    #[error("{0} is not a regular file")]
    NotRegular(String),
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
    #[error("cannot remove {path}: {message}")]
    Remove { path: String, message: String },
    #[error("{path} is not a state identity manifest: {message}")]
    BadIdentity { path: String, message: String },
}

/// The identity manifest of a Java/Go-layout directory (docs/topology.md "State
/// identity"): not a snapshot name, so the Java and Go runners never read it.
pub const IDENTITY_FILE: &str = "krabka-state-identity.json";

/// The identity manifest of the Rust layout's `group` (its files are named by
/// group, so groups can share a directory): `<sanitised group>.krabka-state-identity.json`.
pub fn rust_identity_file(group: &str) -> String {
    format!(
        "{}.{IDENTITY_FILE}",
        crate::engine::columnar::snapshot::naming::sanitise(group)
    )
}

/// Whether a directory entry's name is an identity manifest (of either layout).
pub fn is_identity_file(name: &str) -> bool {
    name == IDENTITY_FILE
        || name.strip_suffix(IDENTITY_FILE).is_some_and(|stem| {
            stem.ends_with('.')
                && stem.len() > 1
                && stem[..stem.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        })
}

/// What a directory entry with a snapshot name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    /// Never followed.
    Symlink,
    /// A directory, FIFO, socket or device under a snapshot name.
    Other,
}

impl EntryKind {
    pub fn label(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Symlink => "symbolic link (not followed)",
            EntryKind::Other => "not a regular file",
        }
    }
}

/// One entry of the directory whose name is a snapshot file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    pub file_name: String,
    pub name: SnapshotFileName,
    pub kind: EntryKind,
    /// Of the entry itself (for a link, the link).
    pub size: u64,
    pub modified: Option<SystemTime>,
}

/// The directory's contents: snapshot files sorted by layout, owner and epoch
/// (live state first), and the count of other names, which are ignored.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub files: Vec<ListedFile>,
    /// Names that are not snapshot files (temp files, other files, non-UTF-8 names),
    /// except the stale temp files and identity manifests below.
    pub ignored: usize,
    /// The identity manifests present (file names), sorted.
    pub identity_files: Vec<String>,
    /// Temp files of writers that were killed (`io::atomic_file::temp_name`): their pid is gone.
    pub stale_temps: Vec<StaleTemp>,
}

impl Listing {
    /// Every snapshot file name present, whatever kind of entry it is.
    pub fn names(&self) -> BTreeSet<String> {
        self.files.iter().map(|f| f.file_name.clone()).collect()
    }

    pub fn get(&self, file_name: &str) -> Option<&ListedFile> {
        self.files.iter().find(|f| f.file_name == file_name)
    }
}

/// A snapshot directory that exists.
#[derive(Debug, Clone)]
pub struct SnapshotDir {
    path: PathBuf,
}

impl SnapshotDir {
    /// Opens an existing directory (a missing one is an error, never created).
    pub fn open(path: impl Into<PathBuf>) -> Result<SnapshotDir, DirError> {
        let path = path.into();
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => Ok(SnapshotDir { path }),
            Ok(_) => Err(DirError::NotADirectory(path.display().to_string())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(DirError::Missing(path.display().to_string()))
            }
            Err(e) => Err(DirError::Unreadable {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of a snapshot name inside this directory.
    pub fn path_of(&self, file_name: &str) -> Result<PathBuf, DirError> {
        check_name(file_name)?;
        Ok(self.path.join(file_name))
    }

    /// Lists the directory without following any entry.
    pub fn list(&self) -> Result<Listing, DirError> {
        let unreadable = |e: io::Error| DirError::Unreadable {
            path: self.path.display().to_string(),
            message: e.to_string(),
        };
        let mut listing = Listing::default();
        for entry in fs::read_dir(&self.path).map_err(unreadable)? {
            let entry = entry.map_err(unreadable)?;
            let Some(name) = entry
                .file_name()
                .to_str()
                .and_then(|n| parse_file_name(n).map(|p| (n.to_owned(), p)))
            else {
                if let Some(name) = entry.file_name().to_str().filter(|n| is_identity_file(n)) {
                    listing.identity_files.push(name.to_owned());
                    continue;
                }
                match stale_temp(&entry) {
                    Some(stale) => listing.stale_temps.push(stale),
                    None => listing.ignored += 1,
                }
                continue;
            };
            let (file_name, name) = name;
            // DirEntry::metadata does not follow links. A file removed while
            // listing (a writer's temp file being renamed) is simply not there.
            let meta = match entry.metadata() {
                Ok(meta) => meta,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(DirError::Read {
                        path: entry.path().display().to_string(),
                        message: e.to_string(),
                    });
                }
            };
            listing.files.push(ListedFile {
                file_name,
                name,
                kind: kind_of(&meta.file_type()),
                size: meta.len(),
                modified: meta.modified().ok(),
            });
        }
        listing.files.sort_by_key(|f| sort_key(&f.name));
        listing.stale_temps.sort_by(|a, b| a.path.cmp(&b.path));
        listing.identity_files.sort();
        Ok(listing)
    }

    /// What is under `file_name` now, without following it; `None` when nothing is.
    pub fn entry_kind(&self, file_name: &str) -> Result<Option<EntryKind>, DirError> {
        let path = self.path_of(file_name)?;
        match fs::symlink_metadata(&path) {
            Ok(m) => Ok(Some(kind_of(&m.file_type()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DirError::Read {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    }

    /// Reads one snapshot file; `None` when it does not exist. Links are refused.
    pub fn read(&self, file_name: &str) -> Result<Option<Vec<u8>>, DirError> {
        let path = self.path_of(file_name)?;
        match read_regular_file(&path, false, crate::io::bounded_read::SNAPSHOT) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(ReadFailure::NotFound) => Ok(None),
            Err(failure) => Err(failure.into_error(&path)),
        }
    }

    /// Reads and decodes an identity manifest; `None` when there is none. Links
    /// are refused like snapshot files', and the read is bounded.
    pub fn read_identity(&self, file_name: &str) -> Result<Option<StateIdentity>, DirError> {
        let path = self.identity_path(file_name)?;
        let bytes = match read_regular_file(&path, false, STATE_IDENTITY_CAP) {
            Ok(bytes) => bytes,
            Err(ReadFailure::NotFound) => return Ok(None),
            Err(failure) => return Err(failure.into_error(&path)),
        };
        StateIdentity::decode(&bytes)
            .map(Some)
            .map_err(|message| DirError::BadIdentity {
                path: display(&path),
                message,
            })
    }

    /// Writes an identity manifest atomically (a link under its name is refused).
    pub fn write_identity(
        &self,
        file_name: &str,
        identity: &StateIdentity,
    ) -> Result<(), DirError> {
        let path = self.identity_path(file_name)?;
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => return Err(DirError::Symlink(display(&path))),
            Ok(m) if !m.is_file() => return Err(DirError::NotRegular(display(&path))),
            _ => {}
        }
        write_whole(&path, &identity.encode()).map_err(|e| DirError::Write {
            path: display(&path),
            message: e.to_string(),
        })
    }

    fn identity_path(&self, file_name: &str) -> Result<PathBuf, DirError> {
        if !is_identity_file(file_name) {
            return Err(DirError::NotASnapshotName(file_name.to_owned()));
        }
        Ok(self.path.join(file_name))
    }

    /// Writes one snapshot file atomically. A link or non-file under that name is
    /// refused rather than replaced.
    pub fn write(&self, file_name: &str, bytes: &[u8]) -> Result<(), DirError> {
        let path = self.path_of(file_name)?;
        match self.entry_kind(file_name)? {
            Some(EntryKind::Symlink) => return Err(DirError::Symlink(display(&path))),
            Some(EntryKind::Other) => return Err(DirError::NotRegular(display(&path))),
            _ => {}
        }
        write_whole(&path, bytes).map_err(|e| DirError::Write {
            path: display(&path),
            message: e.to_string(),
        })
    }

    /// Removes one snapshot file (a link is removed as a link, never followed),
    /// then syncs the directory so the removal is durable.
    pub fn remove(&self, file_name: &str) -> Result<(), DirError> {
        let path = self.path_of(file_name)?;
        if self.entry_kind(file_name)? == Some(EntryKind::Other) {
            return Err(DirError::NotRegular(display(&path)));
        }
        let fail = |e: io::Error| DirError::Remove {
            path: display(&path),
            message: e.to_string(),
        };
        fs::remove_file(&path).map_err(fail)?;
        File::open(&self.path)
            .and_then(|d| d.sync_all())
            .map_err(fail)
    }

    /// The barrier epochs of a partition's Java/Go snapshot files, in listing
    /// order (the live snapshot, epoch −1, left out).
    pub fn barrier_epochs(&self, partition: i32) -> Result<Vec<i64>, DirError> {
        Ok(self
            .list()?
            .files
            .iter()
            .filter_map(|f| match f.name {
                SnapshotFileName::JavaGo {
                    partition: p,
                    epoch,
                } if p == partition && epoch != NO_EPOCH => Some(epoch),
                _ => None,
            })
            .collect())
    }

    /// The file name of a Java/Go key, or the naming error as a store error.
    fn java_go_name(partition: i32, epoch: i64) -> Result<String, StoreError> {
        Ok(SnapshotKey::JavaGo { partition, epoch }.file_name()?)
    }
}

impl SnapshotStore for SnapshotDir {
    fn load(&self, partition: i32, epoch: i64) -> Result<Vec<u8>, StoreError> {
        let name = Self::java_go_name(partition, epoch)?;
        let storage = |e: DirError| StoreError::Storage(e.to_string());
        if let Some(bytes) = self.read(&name).map_err(storage)? {
            return Ok(bytes);
        }
        if epoch == NO_EPOCH {
            return Ok(EMPTY_CONTAINER.to_vec());
        }
        let mut epochs = self.barrier_epochs(partition).map_err(storage)?;
        epochs.sort_unstable();
        Err(EpochNotRetained {
            epoch,
            available: [(partition, epochs)].into(),
        }
        .into())
    }

    fn save(&self, partition: i32, epoch: i64, container: &[u8]) -> Result<(), StoreError> {
        let name = Self::java_go_name(partition, epoch)?;
        self.write(&name, container)
            .map_err(|e| StoreError::Storage(e.to_string()))
    }
}

/// Reads a snapshot file the user named directly (`snapshot dump FILE`). The
/// user chose the path, so a link is followed here; FIFOs and devices are still
/// refused without blocking.
pub fn read_named_file(path: &Path) -> Result<Vec<u8>, DirError> {
    read_regular_file(path, true, crate::io::bounded_read::SNAPSHOT).map_err(
        |failure| match failure {
            ReadFailure::NotFound => DirError::Read {
                path: display(path),
                message: "no such file".into(),
            },
            other => other.into_error(path),
        },
    )
}

enum ReadFailure {
    NotFound,
    Symlink,
    NotRegular,
    Io(io::Error),
}

impl ReadFailure {
    fn into_error(self, path: &Path) -> DirError {
        match self {
            ReadFailure::NotFound => DirError::Read {
                path: display(path),
                message: "no such file".into(),
            },
            ReadFailure::Symlink => DirError::Symlink(display(path)),
            ReadFailure::NotRegular => DirError::NotRegular(display(path)),
            ReadFailure::Io(e) => DirError::Read {
                path: display(path),
                message: e.to_string(),
            },
        }
    }
}

/// Opens without blocking on a FIFO and, unless `follow`, without following a
/// final link (`ELOOP`), then requires a regular file before reading it.
fn read_regular_file(
    path: &Path,
    follow: bool,
    cap: crate::io::bounded_read::Cap,
) -> Result<Vec<u8>, ReadFailure> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = match OpenOptions::new().read(true).custom_flags(flags).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadFailure::NotFound),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) && !follow => {
            return Err(ReadFailure::Symlink);
        }
        Err(e) => return Err(ReadFailure::Io(e)),
    };
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    if !meta.is_file() {
        return Err(ReadFailure::NotRegular);
    }
    // The size is compared with the cap, never trusted for an allocation.
    crate::io::bounded_read::read_file(file, cap).map_err(ReadFailure::Io)
}

fn check_name(file_name: &str) -> Result<(), DirError> {
    // parse_file_name accepts only [A-Za-z0-9._-] names ending in .snapshot:
    // never a separator, never `.` or `..`.
    match parse_file_name(file_name) {
        Some(_) => Ok(()),
        None => Err(DirError::NotASnapshotName(file_name.to_owned())),
    }
}

fn kind_of(file_type: &fs::FileType) -> EntryKind {
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        debug_assert!(
            file_type.is_dir()
                || file_type.is_fifo()
                || file_type.is_socket()
                || file_type.is_block_device()
                || file_type.is_char_device()
        );
        EntryKind::Other
    }
}

/// Java/Go before Rust; by partition or stem; live state before epochs, epochs ascending.
fn sort_key(name: &SnapshotFileName) -> (u8, i64, String, i64) {
    match name {
        SnapshotFileName::JavaGo { partition, epoch } => {
            (0, i64::from(*partition), String::new(), *epoch)
        }
        SnapshotFileName::Rust(rust) => (1, 0, rust.stem.clone(), rust.epoch),
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn dir_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, SnapshotDir) {
        let tmp = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            fs::write(tmp.path().join(name), bytes).unwrap();
        }
        let dir = SnapshotDir::open(tmp.path()).unwrap();
        (tmp, dir)
    }

    #[test]
    fn listing_sorts_by_layout_owner_and_epoch_and_counts_other_names() {
        let (_tmp, dir) = dir_with(&[
            ("partition-10-epoch-2.snapshot", b"x"),
            ("partition-2-epoch-10.snapshot", b""),
            ("partition-2.snapshot", b""),
            ("partition-2-epoch-9.snapshot", b""),
            ("app-0-1-epoch-3.snapshot", b""),
            ("partition-2-123.tmp", b""),
            ("notes.txt", b""),
        ]);
        let listing = dir.list().unwrap();
        let names: Vec<&str> = listing.files.iter().map(|f| f.file_name.as_str()).collect();
        assert_eq!(
            names,
            [
                "partition-2.snapshot",
                "partition-2-epoch-9.snapshot",
                "partition-2-epoch-10.snapshot",
                "partition-10-epoch-2.snapshot",
                "app-0-1-epoch-3.snapshot"
            ]
        );
        assert_eq!(listing.ignored, 2);
        assert_eq!(
            listing.get("partition-10-epoch-2.snapshot").unwrap().size,
            1
        );
    }

    #[test]
    fn names_that_are_not_snapshot_names_never_become_paths() {
        let (_tmp, dir) = dir_with(&[]);
        for name in [
            "../partition-1.snapshot",
            "/etc/passwd",
            "..",
            "a/b-0-1-epoch-1.snapshot",
        ] {
            assert!(matches!(dir.read(name), Err(DirError::NotASnapshotName(_))));
            assert!(matches!(
                dir.write(name, b""),
                Err(DirError::NotASnapshotName(_))
            ));
            assert!(matches!(
                dir.remove(name),
                Err(DirError::NotASnapshotName(_))
            ));
        }
    }

    #[test]
    fn links_are_listed_but_never_followed_read_or_written_through() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        fs::write(&secret, b"outside").unwrap();
        let (tmp, dir) = dir_with(&[]);
        symlink(&secret, tmp.path().join("partition-0.snapshot")).unwrap();
        let listing = dir.list().unwrap();
        assert_eq!(listing.files[0].kind, EntryKind::Symlink);
        assert!(matches!(
            dir.read("partition-0.snapshot"),
            Err(DirError::Symlink(_))
        ));
        assert!(matches!(
            dir.write("partition-0.snapshot", b"new"),
            Err(DirError::Symlink(_))
        ));
        assert_eq!(fs::read(&secret).unwrap(), b"outside");
        dir.remove("partition-0.snapshot").unwrap();
        assert!(secret.exists(), "removing the link keeps its target");
        // A file named directly by the user may be a link.
        symlink(&secret, tmp.path().join("named")).unwrap();
        assert_eq!(
            read_named_file(&tmp.path().join("named")).unwrap(),
            b"outside"
        );
    }

    #[test]
    fn a_fifo_under_a_snapshot_name_is_refused_without_blocking() {
        let (tmp, dir) = dir_with(&[]);
        let fifo = tmp.path().join("partition-1.snapshot");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo does not retain it.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        assert_eq!(dir.list().unwrap().files[0].kind, EntryKind::Other);
        assert!(matches!(
            dir.read("partition-1.snapshot"),
            Err(DirError::NotRegular(_))
        ));
        assert!(matches!(
            read_named_file(&fifo),
            Err(DirError::NotRegular(_))
        ));
    }

    #[test]
    fn the_store_saves_atomically_and_loads_by_partition_and_epoch() {
        let (tmp, dir) = dir_with(&[]);
        dir.save(3, 7, b"seven").unwrap();
        dir.save(3, NO_EPOCH, b"live").unwrap();
        assert_eq!(
            fs::read(tmp.path().join("partition-3-epoch-7.snapshot")).unwrap(),
            b"seven"
        );
        assert_eq!(dir.load(3, NO_EPOCH).unwrap(), b"live");
        assert_eq!(dir.load(4, NO_EPOCH).unwrap(), EMPTY_CONTAINER);
        assert_eq!(
            dir.load(3, 9).unwrap_err().to_string(),
            "snapshot epoch 9 is not retained; available epochs by partition: {3=[7]}"
        );
        assert!(matches!(
            dir.save(-1, 1, b""),
            Err(StoreError::InvalidKey(_))
        ));
        assert_eq!(
            dir.list().unwrap().ignored,
            0,
            "no temp file is left behind"
        );
    }

    #[test]
    fn missing_and_non_directories_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            SnapshotDir::open(tmp.path().join("nope")),
            Err(DirError::Missing(_))
        ));
        let file = tmp.path().join("file");
        fs::write(&file, b"").unwrap();
        assert!(matches!(
            SnapshotDir::open(&file),
            Err(DirError::NotADirectory(_))
        ));
    }
}
