//! A tiny tmpfs mounted for one test, to make writes fail with ENOSPC. Needs root (CI
//! runs as root); where mounting is not permitted the caller skips with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs of a few MiB; unmounted (lazily) on drop.
pub struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts `size` (e.g. `2m`) on a fresh directory, or says why it cannot.
    pub fn mount(size: &str) -> Result<SmallDisk, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs is not permitted here: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(SmallDisk { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Every name in the mounted directory, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path())
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
