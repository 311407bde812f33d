//! Every file this tool writes (`--out`, `--sink`, dead letters, dumps, restores,
//! snapshots, caches, the runner's state) is opened here, and the caller never picks
//! the method: what the path names decides it ([`resolve`] → [`Resolved`]).
//!
//! * [`Resolved::Replace`] — a regular file, a path that does not exist yet, or a
//!   symbolic link (chain) to a regular file: the bytes go to a temp file beside the
//!   file the link resolves to (named by [`temp_name`], permissions by [`mode`]), are
//!   fsynced and renamed over it on [`OutputFile::commit`], and the directory is
//!   fsynced. The link itself stays a link. Dropping an uncommitted output removes the
//!   temp file, so a failure leaves the previous file untouched and nothing half-written;
//! * [`Resolved::Descriptor`] — a descriptor of this process (`/dev/stdout`,
//!   `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`): that descriptor is duplicated and
//!   written, so the bytes go wherever the shell pointed it (a pipe, a terminal, `>>`);
//! * [`Resolved::InPlace`] — anything else (a character device such as `/dev/null`, a
//!   FIFO, a socket, a descriptor of another process): opened for writing and written
//!   in place. Replacing such a path would destroy it, and a temp file beside
//!   `/dev/null` is not even allowed for a plain user.
//!
//! A dangling link and a directory are refused: there is no file to write.
//!
//! Which function to call: [`write_whole`] for bytes in memory, [`write_streamed`] for
//! content written piece by piece, [`OutputFile::create`] + [`OutputFile::commit`] for an
//! output kept open across batches, [`open_append`] for the dead-letter logs (appended
//! to, never replaced), [`check_writable`] to refuse a bad path before any input is read
//! (it returns what [`resolve`] found, so the caller need not resolve again).

pub mod mode;
pub mod temp_name;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::FromRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempPath;

/// How many links a chain may have before it counts as a loop (the kernel's limit).
const MAX_LINKS: usize = 40;

/// Buffer of a streamed output.
const BUFFER: usize = 1 << 20;

/// Where writes to a path end up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A regular file (existing or new) at this resolved path: replaced atomically.
    Replace(PathBuf),
    /// A descriptor of this process: duplicated and written.
    Descriptor(i32),
    /// A device, FIFO, socket or another process's descriptor: written in place.
    InPlace,
}

fn invalid(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} {what}", path.display()),
    )
}

/// Whether `dir` is a `/proc/<pid>/fd` directory of this process, by its resolved path.
fn own_fd_dir(dir: &Path) -> Option<bool> {
    let real = dir.canonicalize().ok()?;
    let mut parts = real.components().map(|c| c.as_os_str().to_str());
    let (root, proc_, pid, fd) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if root != Some("/") || proc_ != Some("proc") || fd != Some("fd") || parts.next().is_some() {
        return None;
    }
    Some(pid? == std::process::id().to_string())
}

/// Resolves what writing to `path` means (see the module rules).
pub fn resolve(path: &Path) -> io::Result<Resolved> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if current != path {
                    return Err(invalid(
                        path,
                        &format!(
                            "is a symbolic link to {}, which does not exist; name the file to create",
                            current.display()
                        ),
                    ));
                }
                if path.file_name().is_none() {
                    return Err(invalid(path, "does not name a file"));
                }
                return Ok(Resolved::Replace(path.to_path_buf()));
            }
            Err(e) => return Err(e),
        };
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            let dir = match current.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            match own_fd_dir(&dir) {
                Some(true) => {
                    if let Some(fd) = current
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.parse::<i32>().ok())
                    {
                        return Ok(Resolved::Descriptor(fd));
                    }
                }
                // Another process's descriptor: its link text is not a path.
                Some(false) => return Ok(Resolved::InPlace),
                None => {}
            }
            let next = std::fs::read_link(&current)?;
            current = dir.join(next);
            continue;
        }
        if file_type.is_dir() {
            return Err(invalid(path, "is a directory"));
        }
        if file_type.is_file() {
            if current == path {
                return Ok(Resolved::Replace(current));
            }
            // The file the chain ends at, by a path free of links.
            return Ok(Resolved::Replace(current.canonicalize()?));
        }
        return Ok(Resolved::InPlace);
    }
    Err(invalid(path, "is a chain of too many symbolic links"))
}

/// The temp files of outputs not yet published, for [`remove_unpublished`].
static UNPUBLISHED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the temp file of every output not yet published, so each target keeps
/// its previous content: what a signal does before it ends the process
/// (`cmd::interrupt`).
///
/// The list stays locked until the process ends: a temp file is created and
/// listed under the same lock ([`Unpublished::create`]), so no output can appear
/// between this sweep and the exit that follows it (a worker thread opening one
/// then waits on the lock instead of leaving a temp file behind).
pub fn remove_unpublished() {
    let mut list = match UNPUBLISHED.lock() {
        Ok(list) => list,
        Err(poisoned) => poisoned.into_inner(),
    };
    for p in list.drain(..) {
        let _ = std::fs::remove_file(p);
    }
    std::mem::forget(list);
}

/// A temp file listed in [`UNPUBLISHED`] while it lives; dropping it removes the
/// file (`TempPath`) and the entry.
struct Unpublished {
    temp: Option<TempPath>,
}

impl Unpublished {
    /// Creates the temp file for `target` and lists it under one lock, so a
    /// signal's sweep sees either neither or both.
    fn create(target: &Path) -> io::Result<(File, Unpublished)> {
        let mut list = match UNPUBLISHED.lock() {
            Ok(list) => list,
            Err(poisoned) => poisoned.into_inner(),
        };
        let (file, temp) = crate::io::atomic_file::mode::temp_file_for(target)?.into_parts();
        list.push(temp.to_path_buf());
        Ok((file, Unpublished { temp: Some(temp) }))
    }

    fn unlist(&self) {
        if let (Some(temp), Ok(mut list)) = (&self.temp, UNPUBLISHED.lock()) {
            list.retain(|p| p.as_path() != temp.as_ref() as &Path);
        }
    }

    /// Renames the temp file over `target`; it is no longer ours to remove.
    /// The rename happens under the list's lock: a signal's sweep either removes
    /// the temp file first (the target keeps its previous content) or finds it
    /// published.
    fn persist(mut self, target: &Path) -> io::Result<()> {
        let mut list = match UNPUBLISHED.lock() {
            Ok(list) => list,
            Err(poisoned) => poisoned.into_inner(),
        };
        let temp = self.temp.take().expect("present until persisted");
        list.retain(|p| p.as_path() != temp.as_ref() as &Path);
        temp.persist(target).map_err(|e| e.error)
    }
}

impl Drop for Unpublished {
    fn drop(&mut self) {
        self.unlist();
    }
}

enum Inner {
    Replace {
        out: BufWriter<File>,
        temp: Unpublished,
        target: PathBuf,
    },
    InPlace(BufWriter<File>),
}

/// An output being written; see the module rules for where the bytes go.
pub struct OutputFile {
    inner: Inner,
    path: PathBuf,
}

impl OutputFile {
    /// Opens `path` for writing as the module rules say. A regular file is not
    /// touched before [`OutputFile::commit`].
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        let inner = match resolve(path)? {
            Resolved::Replace(target) => {
                let (file, temp) = Unpublished::create(&target)?;
                Inner::Replace {
                    out: BufWriter::with_capacity(BUFFER, file),
                    temp,
                    target,
                }
            }
            Resolved::Descriptor(fd) => Inner::InPlace(BufWriter::with_capacity(BUFFER, dup(fd)?)),
            Resolved::InPlace => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOCTTY)
                    .open(path)?;
                Inner::InPlace(BufWriter::with_capacity(BUFFER, file))
            }
        };
        Ok(OutputFile {
            inner,
            path: path.to_path_buf(),
        })
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the bytes go straight to a device, FIFO or descriptor (no temp file).
    pub fn is_in_place(&self) -> bool {
        matches!(self.inner, Inner::InPlace(_))
    }

    /// Publishes the output: a regular file is fsynced and renamed over its target
    /// (then the directory is fsynced); a direct output is flushed. Returns the path
    /// as given.
    pub fn commit(self) -> io::Result<PathBuf> {
        match self.inner {
            Inner::Replace { out, temp, target } => {
                let file = out.into_inner().map_err(|e| e.into_error())?;
                file.sync_all()?;
                drop(file);
                temp.persist(&target)?;
                sync_parent(&target)?;
            }
            Inner::InPlace(mut out) => out.flush()?,
        }
        Ok(self.path)
    }
}

fn dup(fd: i32) -> io::Result<File> {
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) on any integer either fails or returns a new
    // descriptor this process owns; the File takes ownership of that one only.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a freshly duplicated descriptor nothing else owns.
    Ok(unsafe { File::from_raw_fd(new) })
}

fn sync_parent(target: &Path) -> io::Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Replace { out, .. } | Inner::InPlace(out) => out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            Inner::Replace { out, .. } | Inner::InPlace(out) => out.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Replace { out, .. } | Inner::InPlace(out) => out.flush(),
        }
    }
}

/// Checks, without creating anything, that `path` can be opened as an output: it
/// resolves (see the module rules) and a regular file's directory exists. For outputs
/// opened late (with their first batch), so a typo fails before any input is read.
/// Returns what the path resolved to.
pub fn check_writable(path: &Path) -> io::Result<Resolved> {
    let resolved = resolve(path)?;
    if let Resolved::Replace(target) = &resolved {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("directory {} does not exist", dir.display()),
            ));
        }
    }
    Ok(resolved)
}

/// Writes `bytes` to `path` as the module rules say (atomically for a regular file).
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_streamed(path, |out| out.write_all(bytes))
}

/// Like [`write_whole`], but `write` streams the content, so large outputs are
/// never held in memory. A `write` error leaves a regular target untouched.
pub fn write_streamed(
    path: &Path,
    write: impl FnOnce(&mut OutputFile) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = OutputFile::create(path)?;
    write(&mut out)?;
    out.commit().map(|_| ())
}

/// Opens `path` to append to (the dead-letter log of `tail`): a regular file (or a
/// link to one) is created or appended to, never world-writable; anything else is
/// opened as [`OutputFile::create`] would.
pub fn open_append(path: &Path) -> io::Result<File> {
    match resolve(path)? {
        Resolved::Replace(target) => std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(crate::io::atomic_file::mode::NEW_FILE_MODE)
            .open(target),
        Resolved::Descriptor(fd) => dup(fd),
        Resolved::InPlace => std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(path),
    }
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
        write_whole(&target, b"one").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"one");
        write_whole(&target, b"").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"");
        assert_eq!(names(dir.path()), ["partition-4.snapshot"]);
    }

    #[test]
    fn nothing_appears_until_commit_and_a_dropped_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let mut w = OutputFile::create(&target).unwrap();
        w.write_all(b"abc").unwrap();
        assert!(!target.exists());
        w.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        let mut w = OutputFile::create(&dir.path().join("gone.bin")).unwrap();
        w.write_all(b"x").unwrap();
        drop(w);
        assert_eq!(names(dir.path()), ["out.bin"]);
    }

    #[test]
    fn a_non_empty_directory_in_the_way_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("blocked.snapshot");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), b"x").unwrap();
        assert!(write_whole(&target, b"new").is_err());
        assert!(target.is_dir());
        assert_eq!(names(dir.path()), ["blocked.snapshot"]);
    }

    #[test]
    fn missing_directory_fails_without_creating_anything() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing").join("x.snapshot");
        assert!(write_whole(&target, b"new").is_err());
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_failing_streamed_write_leaves_the_old_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("cuts.parquet");
        write_whole(&target, b"old").unwrap();
        let err = write_streamed(&target, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("encoder failed"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "encoder failed");
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(names(dir.path()), ["cuts.parquet"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_rejected() {
        assert!(write_whole(Path::new("/"), b"x").is_err());
    }

    #[test]
    fn a_link_to_a_regular_file_replaces_the_file_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.arrows");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.arrows");
        std::os::unix::fs::symlink("real.arrows", &link).unwrap();
        let chained = dir.path().join("chained.arrows");
        std::os::unix::fs::symlink(&link, &chained).unwrap();
        write_whole(&chained, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::symlink_metadata(&chained)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert_eq!(
            names(dir.path()),
            ["chained.arrows", "link.arrows", "real.arrows"]
        );
    }

    #[test]
    fn dangling_links_loops_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
        let err = OutputFile::create(&dangling).err().unwrap();
        assert!(err.to_string().contains("does not exist"), "{err}");
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(OutputFile::create(&a).is_err());
        assert!(OutputFile::create(dir.path()).is_err());
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn devices_and_own_descriptors_are_written_in_place() {
        assert_eq!(resolve(Path::new("/dev/null")).unwrap(), Resolved::InPlace);
        assert_eq!(
            resolve(Path::new("/dev/stdout")).unwrap(),
            Resolved::Descriptor(1)
        );
        assert_eq!(
            resolve(Path::new("/proc/self/fd/2")).unwrap(),
            Resolved::Descriptor(2)
        );
        let mut null = OutputFile::create(Path::new("/dev/null")).unwrap();
        null.write_all(b"gone").unwrap();
        assert!(null.is_in_place());
        null.commit().unwrap();
        let kind = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&kind));
    }
}
