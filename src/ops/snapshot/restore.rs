//! `snapshot restore`, two ways, one report:
//! * `--from-json DUMP --to FILE|DIR [--partition P --epoch E|live]` writes the
//!   container of a lossless dump (byte for byte for gen B);
//! * `DIR --partition 0-11 --from-epoch 41 --to-epoch live|N` copies one epoch's
//!   files to another epoch or to live state, bytes verbatim (D12).
//!
//! Everything is validated before the first write: the plan (D15 for a missing
//! source epoch), every source read and decoded, every target checked. Then each
//! file is written atomically. Replacing an existing file needs the caller's
//! confirmation; a dry run reports the same plan and writes nothing. If a write
//! still fails half-way, the error names what was and was not written.
//! `snapshot restore-cut` shares the preparation and the writes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Confirm, dir_error, live_group, open_dir};
use crate::engine::columnar::snapshot::container::{self, Generation};
use crate::engine::columnar::snapshot::lossless::read_lossless;
use crate::engine::columnar::snapshot::naming::SnapshotLayout;
use crate::engine::columnar::snapshot::plan::{PartitionSet, SnapshotUnit, plan_epoch_copy};
use crate::io::atomic_file::write_whole;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::snapshot_dir::{EntryKind, SnapshotDir};
use crate::ops::{Error, Result};

/// What to restore: a lossless dump (`from_json` and `to`) or an epoch copy
/// (`dir`, `from_epoch`, `to_epoch`), as the command line gave it.
#[derive(Debug, Clone)]
pub struct RestorePlan {
    pub dir: Option<PathBuf>,
    pub from_json: Option<PathBuf>,
    pub to: Option<PathBuf>,
    /// Java/Go partitions as given (one, or a list for an epoch copy).
    pub partition: Option<String>,
    pub epoch: Option<i64>,
    pub from_epoch: Option<i64>,
    pub to_epoch: Option<i64>,
    pub layout: SnapshotLayout,
    pub group: Option<String>,
    pub tasks: Vec<String>,
    pub convert_legacy: bool,
    pub dry_run: bool,
    /// `--state-topic`: the epoch copy happens in this state topic (`ops::snapshot::topic_restore`).
    pub state_topic: Option<String>,
    /// `--allow-live-members`: restore even when the state's consumer group
    /// has live members (`ops::snapshot::live_group`).
    pub allow_live_members: bool,
}

/// One file a restore writes, with the bytes ready before anything is written.
pub struct PreparedWrite {
    /// What the report calls the target (a file name in a directory, else the path).
    pub target: String,
    pub path: PathBuf,
    pub source: String,
    pub bytes: Vec<u8>,
    pub replaces: bool,
    /// The snapshot directory the target is in, if any (writes then refuse links).
    pub dir: Option<SnapshotDir>,
}

impl PreparedWrite {
    /// `create` or `replace`.
    pub fn action(&self) -> &'static str {
        if self.replaces { "replace" } else { "create" }
    }
}

/// The report of a restore: the same shape for a dry run and a real one.
pub struct CopyReport {
    pub location: String,
    pub files: Vec<(PreparedWrite, bool)>,
    pub dry_run: bool,
}

/// Validates an epoch copy completely and returns the writes it needs: the plan
/// (D15 when a source is missing), each source read without following links and
/// decoded (a legacy gen A source is refused: gen A is never written), each
/// target checked not to be a link or a non-file.
pub fn prepare_epoch_copy(
    dir: &SnapshotDir,
    units: &[SnapshotUnit],
    from: i64,
    to: i64,
) -> Result<Vec<PreparedWrite>> {
    let listing = dir.list().map_err(dir_error)?;
    let steps = plan_epoch_copy(&listing.names(), units, from, to)
        .map_err(|e| Error::failure(e.to_string()))?;
    let mut writes = Vec::with_capacity(steps.len());
    for step in steps {
        let bytes = dir.read(&step.source).map_err(dir_error)?.ok_or_else(|| {
            Error::failure(format!("{} disappeared while being read", step.source))
        })?;
        let generation = container::detect(&bytes).map_err(|e| {
            Error::failure(format!("{}: {e}", dir.path().join(&step.source).display()))
        })?;
        if generation == Generation::A {
            return Err(Error::failure(format!(
                "{} is a legacy gen A (Java ≤ 1.2) container and krabka-streams never writes gen A: \
                 dump it with `snapshot dump --lossless` and write it with `snapshot restore --from-json … --convert-legacy`",
                step.source
            )));
        }
        check_target(dir, &step.target)?;
        writes.push(PreparedWrite {
            path: dir.path().join(&step.target),
            target: step.target,
            source: step.source,
            bytes,
            replaces: step.replaces,
            dir: Some(dir.clone()),
        });
    }
    Ok(writes)
}

/// A link or a non-file under a target name is never replaced.
fn check_target(dir: &SnapshotDir, name: &str) -> Result<()> {
    match dir.entry_kind(name).map_err(dir_error)? {
        Some(EntryKind::Symlink) => Err(Error::failure(format!(
            "{} is a symbolic link; refusing to replace it",
            dir.path().join(name).display()
        ))),
        Some(EntryKind::Other) => Err(Error::failure(format!(
            "{} is not a regular file; refusing to replace it",
            dir.path().join(name).display()
        ))),
        _ => Ok(()),
    }
}

/// Writes every prepared file in order, each atomically. On a failure the error
/// says which files were written and which were not; nothing else is attempted.
pub fn execute_writes(writes: &[PreparedWrite]) -> Result<()> {
    for (i, w) in writes.iter().enumerate() {
        let result = match &w.dir {
            Some(dir) => dir.write(&w.target, &w.bytes).map_err(|e| e.to_string()),
            None => write_whole(&w.path, &w.bytes)
                .map_err(|e| format!("cannot write {}: {e}", w.path.display())),
        };
        if let Err(e) = result {
            return Err(Error::failure(format!(
                "{e}; written before the failure: [{}]; not written: [{}]",
                names(&writes[..i]),
                names(&writes[i..])
            )));
        }
    }
    Ok(())
}

fn names(writes: &[PreparedWrite]) -> String {
    writes
        .iter()
        .map(|w| w.target.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Plans, confirms (when replacing) and performs an epoch copy; the demo and
/// `restore` share it. A `dry_run` writes nothing.
pub fn copy_epoch(
    dir: &SnapshotDir,
    units: &[SnapshotUnit],
    from: i64,
    to: i64,
    dry_run: bool,
    confirm: Confirm<'_>,
) -> Result<CopyReport> {
    let writes = prepare_epoch_copy(dir, units, from, to)?;
    finish(dry_run, confirm, dir.path().display().to_string(), writes)
}

fn finish(
    dry_run: bool,
    confirm: Confirm<'_>,
    location: String,
    writes: Vec<PreparedWrite>,
) -> Result<CopyReport> {
    if dry_run {
        return Ok(CopyReport {
            location,
            files: writes.into_iter().map(|w| (w, false)).collect(),
            dry_run: true,
        });
    }
    let replacing: Vec<&str> = writes
        .iter()
        .filter(|w| w.replaces)
        .map(|w| w.target.as_str())
        .collect();
    if !replacing.is_empty() {
        confirm(&format!(
            "replace {} existing snapshot file(s) in {location} ({})?",
            replacing.len(),
            replacing.join(", ")
        ))?;
    }
    execute_writes(&writes)?;
    Ok(CopyReport {
        location,
        files: writes.into_iter().map(|w| (w, true)).collect(),
        dry_run: false,
    })
}

/// The units an epoch copy or a directory target names.
pub(super) fn units_of(args: &RestorePlan, many: bool) -> Result<Vec<SnapshotUnit>> {
    match args.layout {
        SnapshotLayout::JavaGo => {
            if args.group.is_some() || !args.tasks.is_empty() {
                return Err(Error::usage(
                    "--group and --task name Rust files: add --layout rust",
                ));
            }
            let text = args.partition.as_deref().ok_or_else(|| {
                Error::usage("give the partitions with --partition (e.g. 0-11 or 0-3,7)")
            })?;
            let set = PartitionSet::parse(text).map_err(Error::usage)?;
            if !many && set.0.len() != 1 {
                return Err(Error::usage(
                    "--from-json writes one file: give a single --partition",
                ));
            }
            Ok(set.0.into_iter().map(SnapshotUnit::Partition).collect())
        }
        SnapshotLayout::Rust => {
            if args.partition.is_some() {
                return Err(Error::usage(
                    "the Rust layout is keyed by --group and --task, not --partition",
                ));
            }
            let group = args
                .group
                .clone()
                .ok_or_else(|| Error::usage("the Rust layout needs --group G and --task T"))?;
            if args.tasks.is_empty() || (!many && args.tasks.len() != 1) {
                return Err(Error::usage(if many {
                    "the Rust layout needs at least one --task T"
                } else {
                    "--from-json writes one file: give a single --task"
                }));
            }
            Ok(args
                .tasks
                .iter()
                .map(|task| SnapshotUnit::Task {
                    group: group.clone(),
                    task: task.clone(),
                })
                .collect())
        }
    }
}

/// Validates a `--from-json` restore and returns its one write.
fn prepare_from_json(
    args: &RestorePlan,
    dump: &Path,
    to: &Path,
) -> Result<(String, PreparedWrite)> {
    let text = crate::io::bounded_read::read(dump, crate::io::bounded_read::DUMP)
        .map_err(|e| Error::failure(format!("cannot read {}: {e}", dump.display())))?;
    let parsed =
        read_lossless(&text).map_err(|e| Error::failure(format!("{}: {e}", dump.display())))?;
    drop(text);
    let bytes = parsed
        .to_container(args.convert_legacy)
        .map_err(|e| Error::failure(format!("{}: {e}", dump.display())))?;
    let source = dump.display().to_string();
    if std::fs::metadata(to).is_ok_and(|m| m.is_dir()) {
        let dir = open_dir(to)?;
        let epoch = args.epoch.ok_or_else(|| {
            Error::usage(format!(
                "{} is a directory: give --epoch E|live and --partition P (or --layout rust --group G --task T)",
                to.display()
            ))
        })?;
        let unit = units_of(args, false)?.remove(0);
        let target = unit
            .key(epoch)
            .file_name()
            .map_err(|e| Error::usage(e.to_string()))?;
        check_target(&dir, &target)?;
        let replaces = dir.entry_kind(&target).map_err(dir_error)?.is_some();
        let location = dir.path().display().to_string();
        return Ok((
            location,
            PreparedWrite {
                path: dir.path().join(&target),
                target,
                source,
                bytes,
                replaces,
                dir: Some(dir),
            },
        ));
    }
    if args.partition.is_some()
        || args.epoch.is_some()
        || args.group.is_some()
        || !args.tasks.is_empty()
    {
        return Err(Error::usage(format!(
            "--partition, --epoch, --group and --task name a file inside a directory, but {} is not a directory",
            to.display()
        )));
    }
    // A file outside a snapshot directory follows the rule of every output
    // (`io::atomic_file`): a link to a regular file replaces the file it points to, a
    // device, FIFO or descriptor is written in place.
    let replaces = match crate::io::atomic_file::check_writable(to) {
        Ok(crate::io::atomic_file::Resolved::Replace(target)) => target.is_file(),
        Ok(_) => false,
        Err(e) => return Err(Error::usage(format!("--to {}: {e}", to.display()))),
    };
    let location = match to.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
        _ => ".".to_owned(),
    };
    Ok((
        location,
        PreparedWrite {
            target: to.display().to_string(),
            path: to.to_path_buf(),
            source,
            bytes,
            replaces,
            dir: None,
        },
    ))
}

/// Refuses a restore into a directory whose identity manifest names a
/// consumer group with live members, unless the plan allows it.
fn refuse_running_dir(
    args: &RestorePlan,
    dir: &SnapshotDir,
    connect: &dyn Fn() -> Result<KafkaSettings>,
    timeout: Duration,
) -> Result<()> {
    if args.allow_live_members {
        return Ok(());
    }
    let groups = live_group::groups_of_dir(dir)?;
    live_group::refuse_running(&groups, &dir.path().display().to_string(), connect, timeout)
}

/// Checks, prepares, confirms and performs the restore the plan names;
/// `connect` gives the broker settings, asked for only when a directory's
/// manifest names a consumer group whose members must be checked.
pub fn restore(
    args: &RestorePlan,
    connect: &dyn Fn() -> Result<KafkaSettings>,
    timeout: Duration,
    confirm: Confirm<'_>,
) -> Result<CopyReport> {
    match (&args.from_json, &args.to, &args.dir) {
        (Some(dump), Some(to), None) => {
            use crate::io::path_conflict::{Named, check};
            check(&[
                Named::input(format!("--from-json {}", dump.display()), dump),
                Named::output(format!("--to {}", to.display()), to),
            ])
            .map_err(Error::usage)?;
            let (location, write) = prepare_from_json(args, dump, to)?;
            if let Some(dir) = &write.dir {
                refuse_running_dir(args, dir, connect, timeout)?;
            }
            finish(args.dry_run, confirm, location, vec![write])
        }
        (None, None, Some(dir)) => {
            let (Some(from), Some(to)) = (args.from_epoch, args.to_epoch) else {
                return Err(Error::usage(
                    "an epoch copy needs --from-epoch E and --to-epoch E|live",
                ));
            };
            let dir = open_dir(dir)?;
            let units = units_of(args, true)?;
            let writes = prepare_epoch_copy(&dir, &units, from, to)?;
            refuse_running_dir(args, &dir, connect, timeout)?;
            finish(
                args.dry_run,
                confirm,
                dir.path().display().to_string(),
                writes,
            )
        }
        _ => Err(Error::usage(
            "give either --from-json DUMP --to FILE|DIR, or DIR --partition LIST --from-epoch E --to-epoch E|live",
        )),
    }
}
