//! Part of `io::atomic_file`: the names of the temp files written beside a file being
//! replaced, and the stale ones a killed writer leaves behind.
//!
//! Every atomic write (snapshots, restores, tail and run outputs, dumps, cache
//! files) streams into `<target name>.krabka-<pid>.<random>.tmp` in the target's
//! directory and renames it over the target. `kill -9` between the create and the
//! rename leaves that file. The name says whose it is: the `krabka-` tag marks it
//! as ours and the pid says which process wrote it, so a later writer of the same
//! target (and `snapshot list`/`verify`, which report them) can tell a stale temp
//! file — its writer is dead — from a live writer's. Only a temp file whose pid no
//! longer exists is ever removed; a pid that is alive (even a reused one) keeps its
//! file. This assumes the writers of a directory share one PID namespace (one host
//! or container); a temp file of a writer in another namespace whose pid happens
//! to be unused here would be taken for stale.
//!
//! The name still starts with the target's name and ends in `.tmp`, so Java's
//! stale `partition-*.tmp` sweep removes it too, and no reader takes it for a
//! snapshot (it does not end in `.snapshot`).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

const TAG: &str = ".krabka-";
const SUFFIX: &str = ".tmp";

/// A temp file of ours, parsed from its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempName<'a> {
    /// The file name the temp file was to replace.
    pub target: &'a str,
    pub pid: u32,
}

/// `<target name>.krabka-<pid>.`: the prefix of this process's temp files for `target`.
pub fn prefix_for(target_name: &std::ffi::OsStr) -> OsString {
    let mut prefix = target_name.to_os_string();
    prefix.push(format!("{TAG}{}.", std::process::id()));
    prefix
}

/// The suffix every temp file of ours ends with.
pub fn suffix() -> &'static str {
    SUFFIX
}

/// Parses `<target>.krabka-<pid>.<random>.tmp`; anything else is not ours.
pub fn parse(file_name: &str) -> Option<TempName<'_>> {
    let rest = file_name.strip_suffix(SUFFIX)?;
    let tag = rest.rfind(TAG)?;
    let target = &rest[..tag];
    let (pid, random) = rest[tag + TAG.len()..].split_once('.')?;
    let pid_ok = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    if target.is_empty() || random.is_empty() || random.contains('.') || !pid_ok {
        return None;
    }
    Some(TempName {
        target,
        pid: pid.parse().ok()?,
    })
}

/// Whether process `pid` exists. Unknown answers count as alive, so nothing is removed.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // Signal 0 checks existence and permission without sending anything. EPERM
    // means the process exists but belongs to someone else: alive.
    // SAFETY: kill with signal 0 has no effect on the target process.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// A temp file whose writer is dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleTemp {
    pub path: PathBuf,
    pub target: String,
    pub pid: u32,
}

/// The stale temp files in `dir`, for `target` only when given; sorted by path.
pub fn find_stale(dir: &Path, target: Option<&str>) -> io::Result<Vec<StaleTemp>> {
    let own = std::process::id();
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(parsed) = file_name.to_str().and_then(parse) else {
            continue;
        };
        if target.is_some_and(|t| t != parsed.target) || parsed.pid == own {
            continue;
        }
        // Only regular files: a directory or link under such a name is not ours.
        if !entry.file_type().is_ok_and(|t| t.is_file()) || process_alive(parsed.pid) {
            continue;
        }
        stale.push(StaleTemp {
            path: entry.path(),
            target: parsed.target.to_string(),
            pid: parsed.pid,
        });
    }
    stale.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(stale)
}

/// Removes the stale temp files of `target` in `dir`; returns what was removed.
/// Best effort: a file that vanished meanwhile, or cannot be removed, is skipped
/// (it never stops the write that asked).
pub fn remove_stale(dir: &Path, target: &str) -> Vec<StaleTemp> {
    let Ok(stale) = find_stale(dir, Some(target)) else {
        return Vec::new();
    };
    stale
        .into_iter()
        .filter(|s| std::fs::remove_file(&s.path).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_of_the_tagged_shape_are_ours() {
        assert_eq!(
            parse("partition-4.snapshot.krabka-123.aB9x.tmp"),
            Some(TempName {
                target: "partition-4.snapshot",
                pid: 123
            })
        );
        assert_eq!(
            parse("out.krabka-7.parquet.krabka-42.Zz.tmp").map(|t| (t.target, t.pid)),
            Some(("out.krabka-7.parquet", 42))
        );
        for other in [
            "partition-4.snapshot.aB9x.tmp",
            "partition-4.snapshot.krabka-.aB9x.tmp",
            "partition-4.snapshot.krabka-12x.aB9x.tmp",
            "partition-4.snapshot.krabka-12..tmp",
            "partition-4.snapshot.krabka-12.a.b.tmp",
            ".krabka-12.aB.tmp",
            "partition-4.snapshot.krabka-99999999999.aB.tmp",
            "partition-4.snapshot",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }

    #[test]
    fn the_prefix_and_suffix_make_a_name_that_parses_back_to_this_process() {
        let mut name = prefix_for("x.parquet".as_ref());
        name.push("Rnd12");
        name.push(suffix());
        let name = name.into_string().unwrap();
        let parsed = parse(&name).unwrap();
        assert_eq!(
            (parsed.target, parsed.pid),
            ("x.parquet", std::process::id())
        );
    }

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn only_temp_files_of_dead_writers_are_stale_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let alive = std::process::id();
        let parent = std::os::unix::process::parent_id();
        let names = [
            format!("a.snapshot.krabka-{dead}.x1.tmp"),
            format!("b.snapshot.krabka-{dead}.x2.tmp"),
            format!("a.snapshot.krabka-{alive}.x3.tmp"),
            format!("a.snapshot.krabka-{parent}.x4.tmp"),
            "a.snapshot.x5.tmp".to_string(),
            "a.snapshot".to_string(),
        ];
        for n in &names {
            std::fs::write(dir.path().join(n), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join(format!("c.snapshot.krabka-{dead}.x6.tmp"))).unwrap();
        let all = find_stale(dir.path(), None).unwrap();
        let stale: Vec<&str> = all.iter().map(|s| s.target.as_str()).collect();
        assert_eq!(stale, ["a.snapshot", "b.snapshot"]);
        let removed = remove_stale(dir.path(), "a.snapshot");
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].pid, dead);
        assert!(!dir.path().join(&names[0]).exists());
        for kept in &names[1..] {
            assert!(dir.path().join(kept).exists(), "{kept}");
        }
    }
}
