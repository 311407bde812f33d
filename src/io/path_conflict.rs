//! No output destroys an input or another output: every command that names files
//! hands all of them (inputs and outputs, with the flag that named each) to
//! [`check`] before it reads or creates anything.
//!
//! Paths are compared by what they resolve to, not by spelling: an existing file by
//! device and inode (so `./x`, `dir/../x`, a symbolic link and a hard link to it are
//! all the same file), a file still to be created by its resolved directory and name.
//! Stdout (`-`, `/dev/stdout`, `/proc/self/fd/1`) is one output like any other: two
//! outputs on it would interleave. Devices and FIFOs other than this process's
//! descriptors are never in conflict (two outputs to `/dev/null` destroy nothing).
//!
//! A rotated output (`tail --out out.parquet --rotate-rows N` writes `out-000001.parquet`,
//! `out-000002.parquet`, …) names a family of files: it conflicts with any other file
//! whose resolved name is one of the family's (`out-<digits>.parquet` in the same
//! directory), existing or not, and with another family of the same names.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::io::atomic_file::{Resolved, resolve};

/// Whether a named file is read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Input,
    Output,
}

/// One file a command names: the flag (as the user wrote it, e.g. `--sink totals=x.arrows`)
/// and the path (`-` = stdin for an input, stdout for an output).
#[derive(Debug, Clone)]
pub struct Named {
    pub flag: String,
    pub path: PathBuf,
    pub role: Role,
    /// The path is the pattern of a rotated output's files, not one file.
    pub rotated: bool,
}

impl Named {
    pub fn input(flag: impl Into<String>, path: impl Into<PathBuf>) -> Named {
        Named {
            flag: flag.into(),
            path: path.into(),
            role: Role::Input,
            rotated: false,
        }
    }

    pub fn output(flag: impl Into<String>, path: impl Into<PathBuf>) -> Named {
        Named {
            flag: flag.into(),
            path: path.into(),
            role: Role::Output,
            rotated: false,
        }
    }

    /// An output rotated into numbered files named after `path` (see the module doc).
    pub fn rotated_output(flag: impl Into<String>, path: impl Into<PathBuf>) -> Named {
        Named {
            rotated: true,
            ..Named::output(flag, path)
        }
    }
}

/// The files a broker or registry connection reads (`--command-config`: client
/// properties and the registry's TLS keys), as inputs no output may replace. Every
/// command that connects lists them through here (`cmd::global::ConnectionArgs::
/// read_files`, `ops::run`), so a new command cannot forget one.
pub fn connection_inputs(command_config: Option<&Path>) -> Vec<Named> {
    command_config
        .map(|p| Named::input(format!("--command-config {}", p.display()), p))
        .into_iter()
        .collect()
}

/// The names a rotated output writes: `stem-<digits>[.ext]` in one resolved directory.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Family {
    dir: PathBuf,
    stem: String,
    ext: Option<String>,
}

impl Family {
    fn of(path: &Path) -> Option<Family> {
        let stem = path.file_stem()?.to_string_lossy().into_owned();
        let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
        Some(Family {
            dir: resolved_dir(path),
            stem,
            ext,
        })
    }

    /// True when `name` is one of this family's file names.
    fn holds_name(&self, name: &str) -> bool {
        let rest = match &self.ext {
            Some(ext) => name
                .strip_suffix(ext.as_str())
                .and_then(|r| r.strip_suffix('.')),
            None => Some(name),
        };
        let digits = rest
            .and_then(|r| r.strip_prefix(self.stem.as_str()))
            .and_then(|r| r.strip_prefix('-'));
        digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    }

    /// True when the file another flag names (resolved through links) is in the family.
    fn holds(&self, other: &Path) -> bool {
        let target = match resolve(other) {
            Ok(Resolved::Replace(target)) => target,
            _ => return false,
        };
        let target = target.canonicalize().unwrap_or(target);
        let Some(name) = target.file_name() else {
            return false;
        };
        resolved_dir(&target) == self.dir && self.holds_name(&name.to_string_lossy())
    }
}

/// The canonical directory of a path (its parent, `.` when it has none).
fn resolved_dir(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    New(PathBuf),
    Descriptor(i32),
}

fn identity(named: &Named) -> Option<Identity> {
    if named.path.as_os_str() == "-" {
        return Some(descriptor(match named.role {
            Role::Input => 0,
            Role::Output => 1,
        }));
    }
    match resolve(&named.path) {
        Ok(Resolved::Descriptor(fd)) => Some(descriptor(fd)),
        Ok(Resolved::InPlace) | Err(_) => None,
        Ok(Resolved::Replace(target)) => match std::fs::metadata(&target) {
            Ok(m) => Some(Identity::Inode(m.dev(), m.ino())),
            Err(_) => {
                let name = target.file_name()?;
                let dir = match target.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
                Some(Identity::New(dir.join(name)))
            }
        },
    }
}

/// A descriptor redirected to a regular file (`< x.arrows`, `> x.arrows`) is that
/// file; anything else (a pipe, a terminal) is the descriptor.
fn descriptor(fd: i32) -> Identity {
    match std::fs::metadata(format!("/proc/self/fd/{fd}")) {
        Ok(m) if m.is_file() => Identity::Inode(m.dev(), m.ino()),
        _ => Identity::Descriptor(fd),
    }
}

/// Refuses (with a message naming both flags and paths) when an output names the
/// same file as an input or another output. Two inputs may share a file, and
/// stdin and stdout are different descriptors.
pub fn check(named: &[Named]) -> Result<(), String> {
    let ids: Vec<Option<Identity>> = named
        .iter()
        .map(|n| if n.rotated { None } else { identity(n) })
        .collect();
    let families: Vec<Option<Family>> = named
        .iter()
        .map(|n| if n.rotated { Family::of(&n.path) } else { None })
        .collect();
    for (i, a) in named.iter().enumerate() {
        for (j, b) in named.iter().enumerate().skip(i + 1) {
            if a.role == Role::Input && b.role == Role::Input {
                continue;
            }
            let same = match (&families[i], &families[j]) {
                (Some(x), Some(y)) => x == y,
                (Some(x), None) => x.holds(&b.path),
                (None, Some(y)) => y.holds(&a.path),
                (None, None) => matches!((&ids[i], &ids[j]), (Some(x), Some(y)) if x == y),
            };
            if !same {
                continue;
            }
            let what = if a.role == Role::Input || b.role == Role::Input {
                "the output would destroy the input"
            } else {
                "one output would destroy the other"
            };
            let same = if a.path == b.path {
                format!("({})", a.path.display())
            } else {
                format!("({} and {})", a.path.display(), b.path.display())
            };
            return Err(format!(
                "{} and {} name the same file {same}: {what}; give each its own path",
                a.flag, b.flag
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_links_and_hard_links_of_one_file_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.arrows");
        std::fs::write(&input, b"x").unwrap();
        let link = dir.path().join("link.arrows");
        std::os::unix::fs::symlink("in.arrows", &link).unwrap();
        let hard = dir.path().join("hard.arrows");
        std::fs::hard_link(&input, &hard).unwrap();
        let dotted = dir
            .path()
            .join(".")
            .join("sub")
            .join("..")
            .join("in.arrows");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        for other in [&input, &link, &hard, &dotted] {
            let err = check(&[
                Named::input("--input a", &input),
                Named::output("--sink b", other),
            ])
            .unwrap_err();
            assert!(err.contains("--input a and --sink b"), "{err}");
        }
    }

    #[test]
    fn two_new_outputs_on_one_path_conflict_but_two_inputs_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.arrows");
        let dotted = dir.path().join(".").join("new.arrows");
        assert!(
            check(&[
                Named::output("--sink a", &new),
                Named::output("--sink b", &dotted)
            ])
            .is_err()
        );
        let input = dir.path().join("in");
        std::fs::write(&input, b"x").unwrap();
        assert!(
            check(&[
                Named::input("--input a", &input),
                Named::input("--input b", &input)
            ])
            .is_ok()
        );
        assert!(
            check(&[
                Named::output("--sink a", &new),
                Named::output("--sink b", dir.path().join("other"))
            ])
            .is_ok()
        );
    }

    #[test]
    fn a_rotated_output_conflicts_with_every_file_of_its_family() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.parquet");
        let existing = dir.path().join("out-000002.parquet");
        std::fs::write(&existing, b"x").unwrap();
        let link = dir.path().join("dl.ndjson");
        std::os::unix::fs::symlink("out-000002.parquet", &link).unwrap();
        for other in [
            dir.path().join("out-000001.parquet"),
            dir.path().join("./out-1234567.parquet"),
            existing.clone(),
            link.clone(),
        ] {
            let err = check(&[
                Named::rotated_output("--out", &out),
                Named::output("--on-error dead-letter", &other),
            ])
            .unwrap_err();
            assert!(err.contains("--out and --on-error dead-letter"), "{err}");
            let err = check(&[
                Named::input("--schema-cache", &other),
                Named::rotated_output("--out", &out),
            ])
            .unwrap_err();
            assert!(err.contains("--schema-cache and --out"), "{err}");
        }
        for other in [
            dir.path().join("out.parquet"),
            dir.path().join("out-.parquet"),
            dir.path().join("out-12x.parquet"),
            dir.path().join("out-000001.arrows"),
            dir.path().join("other-000001.parquet"),
        ] {
            assert!(
                check(&[
                    Named::rotated_output("--out", &out),
                    Named::output("--on-error dead-letter", &other),
                ])
                .is_ok(),
                "{}",
                other.display()
            );
        }
        let plain = dir.path().join("plain");
        assert!(
            check(&[
                Named::rotated_output("--out", &plain),
                Named::output("--dead-letter", dir.path().join("plain-000003")),
            ])
            .is_err()
        );
        assert!(
            check(&[
                Named::rotated_output("--out a", &out),
                Named::rotated_output("--out b", dir.path().join("./out.parquet")),
            ])
            .is_err()
        );
    }

    #[test]
    fn stdout_conflicts_with_its_aliases_and_devices_never_do() {
        assert!(
            check(&[
                Named::output("--sink a", "-"),
                Named::output("--sink b", "/dev/stdout")
            ])
            .is_err()
        );
        assert!(
            check(&[
                Named::input("--input a", "-"),
                Named::output("--sink b", "-")
            ])
            .is_ok()
        );
        assert!(
            check(&[
                Named::output("--sink a", "/dev/null"),
                Named::output("--sink b", "/dev/null")
            ])
            .is_ok()
        );
    }
}
