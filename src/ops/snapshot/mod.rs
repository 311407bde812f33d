//! `snapshot`: list, dump, restore, verify and prune state snapshot files, and
//! restore an application to a barrier cut (state files and consumer offsets).
//!
//! One module per subcommand, each a plain function over its plan struct that
//! returns a typed report for `cmd::snapshot` to render. The engine's
//! `snapshot::plan` decides what a restore or prune would touch before anything
//! is touched, `io::snapshot_dir` does the file I/O, and a restore or prune asks
//! its caller to confirm (the `confirm` callback) before it replaces or deletes.

pub mod dump;
pub mod list;
pub mod live_group;
pub mod prune;
pub mod restore;
pub mod restore_cut;
pub mod topic;
pub mod topic_prune;
pub mod topic_restore;
pub mod verify;

use crate::engine::columnar::snapshot::container::{self, ReadSnapshot};
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::io::snapshot_dir::{DirError, EntryKind, ListedFile, SnapshotDir};
use crate::ops::{Error, Result};

/// Asks the user whether to go on (`Err` when declined); `cmd` passes its prompt.
pub type Confirm<'a> = &'a dyn Fn(&str) -> Result<()>;

/// Identity manifests: (file name, identity or why it does not decode).
pub type Identities = Vec<(String, std::result::Result<StateIdentity, String>)>;

/// Opens a snapshot directory; a missing one or a non-directory is a failure naming the path.
pub fn open_dir(path: &std::path::Path) -> Result<SnapshotDir> {
    SnapshotDir::open(path).map_err(dir_error)
}

/// Directory and file errors are failures (exit 1): the path named is the thing to fix.
pub fn dir_error(e: DirError) -> Error {
    Error::failure(e.to_string())
}

/// Reads and decodes one listed file without following links; the error is the reason it is bad.
pub fn decode_listed(
    dir: &SnapshotDir,
    file: &ListedFile,
) -> std::result::Result<ReadSnapshot, String> {
    if file.kind != EntryKind::File {
        return Err(format!("not read: {}", file.kind.label()));
    }
    let bytes = dir
        .read(&file.file_name)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "the file disappeared while being read".to_owned())?;
    container::read(&bytes).map_err(|e| e.to_string())
}

/// The directory's identity manifests (docs/topology.md "State identity"), each
/// decoded or with why it does not decode.
pub fn identities(dir: &SnapshotDir, files: &[String]) -> Identities {
    files
        .iter()
        .map(|file| {
            let read = match dir.read_identity(file) {
                Ok(Some(identity)) => Ok(identity),
                Ok(None) => Err("the file disappeared while being read".to_owned()),
                Err(e) => Err(e.to_string()),
            };
            (file.clone(), read)
        })
        .collect()
}
