//! Part of `io::atomic_file`: permissions of the files the tool writes (outputs,
//! snapshots, dumps, caches, dead letters). Writes go through a temp file, which `tempfile` creates private (0600);
//! left that way, every output would silently become unreadable to the group that runs
//! the application. The rule instead:
//!
//! * a new file gets `0664` filtered by the umask — what `>` in a shell gives (0644
//!   under the usual 022), and never world-writable, even under umask 000;
//! * a file that replaces an existing one keeps that file's permission bits minus
//!   world-write and set-id bits, so restoring a private (0600) snapshot keeps it private.

use std::fs::Permissions;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The mode a new file is created with, before the umask.
pub const NEW_FILE_MODE: u32 = 0o664;

/// Bits a written file never has: set-uid, set-gid, sticky and world-write.
const NEVER: u32 = 0o7002;

/// Creates the temp file that will replace `target`, in `target`'s directory and named
/// as `io::atomic_file::temp_name` says (`<name>.krabka-<pid>.<random>.tmp`), with the permissions
/// `target` is to have (see the module rule). Stale temp files that killed writers of
/// the same target left behind are removed first.
pub fn temp_file_for(target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let file_name = target.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", target.display()),
        )
    })?;
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if let Some(name) = file_name.to_str() {
        crate::io::atomic_file::temp_name::remove_stale(dir, name);
    }
    let temp = tempfile::Builder::new()
        .prefix(&crate::io::atomic_file::temp_name::prefix_for(file_name))
        .suffix(crate::io::atomic_file::temp_name::suffix())
        .permissions(new_file_permissions())
        .tempfile_in(dir)?;
    if let Some(kept) = kept_permissions(target) {
        temp.as_file().set_permissions(kept)?;
    }
    Ok(temp)
}

fn new_file_permissions() -> Permissions {
    Permissions::from_mode(NEW_FILE_MODE)
}

/// The permissions of an existing regular file at `target`, minus [`NEVER`] bits.
fn kept_permissions(target: &Path) -> Option<Permissions> {
    let meta = std::fs::symlink_metadata(target).ok()?;
    meta.is_file()
        .then(|| Permissions::from_mode(meta.permissions().mode() & 0o777 & !NEVER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_file_is_never_world_writable_and_a_replaced_one_keeps_its_bits() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("partition-0.snapshot");
        let t = temp_file_for(&target).unwrap();
        let m = mode(t.path());
        assert_eq!(m & 0o002, 0, "{m:o}");
        assert_eq!(m & 0o600, 0o600, "{m:o}");
        std::fs::write(&target, b"old").unwrap();
        std::fs::set_permissions(&target, Permissions::from_mode(0o600)).unwrap();
        let t = temp_file_for(&target).unwrap();
        assert_eq!(mode(t.path()), 0o600);
        std::fs::set_permissions(&target, Permissions::from_mode(0o4777)).unwrap();
        let t = temp_file_for(&target).unwrap();
        assert_eq!(mode(t.path()), 0o775, "no set-id, no world-write");
    }
}
