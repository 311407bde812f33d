//! A file written as a stream and published atomically: the bytes go to a temp
//! file beside the target, and only [`AtomicWriter::commit`] fsyncs it and renames
//! it over the target. Dropping an uncommitted writer removes the temp file, so a
//! failed run leaves nothing half-written. Permissions follow `io::file_mode`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

pub struct AtomicWriter {
    temp: BufWriter<NamedTempFile>,
    path: PathBuf,
}

impl AtomicWriter {
    /// Starts a temp file `<name>.krabka-<pid>.<random>.tmp` in the target's directory.
    pub fn create(path: &Path) -> io::Result<Self> {
        let temp = crate::io::file_mode::temp_file_for(path)?;
        Ok(AtomicWriter {
            temp: BufWriter::with_capacity(1 << 20, temp),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, fsyncs and renames the temp file over the target, then fsyncs the directory.
    pub fn commit(self) -> io::Result<PathBuf> {
        let temp = self.temp.into_inner().map_err(|e| e.into_error())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.path).map_err(|e| e.error)?;
        #[cfg(unix)]
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(self.path)
    }
}

impl Write for AtomicWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.temp.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_appears_until_commit_and_a_dropped_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.bin");
        let mut w = AtomicWriter::create(&target).unwrap();
        w.write_all(b"abc").unwrap();
        assert!(!target.exists());
        w.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        let mut w = AtomicWriter::create(&dir.path().join("gone.bin")).unwrap();
        w.write_all(b"x").unwrap();
        drop(w);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
