//! Replacing a file atomically: readers see the old bytes or the new ones, never a mix.
//!
//! The bytes go to a temp file in the target's directory (named
//! `<target name>.krabka-<pid>.<random>.tmp` by `io::temp_file`, which also
//! removes the ones killed writers left), are fsynced, renamed over the target, and the directory is fsynced
//! so the rename survives a crash. On failure the temp file is removed and the
//! target is untouched. Permissions follow `io::file_mode`.

use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically (temp file, fsync, rename, fsync directory).
///
/// Errors before the rename leave the target as it was and no temp file behind.
/// An error from the final directory fsync is reported, but the new content is
/// already in place under `path` by then.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically_with(path, |file| file.write_all(bytes))
}

/// Like [`write_atomically`], but `write` streams the content into the temp file, so large
/// outputs never need to be held in memory. A `write` error leaves the target untouched.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut temp = crate::io::file_mode::temp_file_for(path)?;
    // On any early return `temp` is dropped, which deletes the temp file.
    write(temp.as_file_mut())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir)
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    // Directories cannot be opened for syncing on this platform; the rename is
    // still atomic.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn creates_then_replaces_leaving_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("partition-4.snapshot");
        write_atomically(&target, b"one").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"one");
        write_atomically(&target, b"").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"");
        assert_eq!(names(dir.path()), ["partition-4.snapshot"]);
    }

    #[test]
    fn failed_rename_keeps_the_target_and_removes_the_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory under the target name cannot be replaced by a file.
        let target = dir.path().join("blocked.snapshot");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), b"x").unwrap();
        assert!(write_atomically(&target, b"new").is_err());
        assert!(target.is_dir());
        assert_eq!(names(dir.path()), ["blocked.snapshot"]);
    }

    #[test]
    fn missing_directory_fails_without_creating_anything() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing").join("x.snapshot");
        assert!(write_atomically(&target, b"new").is_err());
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_failing_streamed_write_leaves_the_old_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("cuts.parquet");
        write_atomically(&target, b"old").unwrap();
        let err = write_atomically_with(&target, |file| {
            file.write_all(b"half")?;
            Err(io::Error::other("encoder failed"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "encoder failed");
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["cuts.parquet"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_rejected() {
        let err = write_atomically(Path::new("/"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
