//! `snapshot dump FILE | DIR --partition P --epoch E|live | DIR --group G --task T --epoch E`:
//! reads the one container the plan selects (D15 for a missing epoch) and, for
//! `--lossless --out FILE`, writes the lossless JSON document that `snapshot
//! restore --from-json` turns back into the same bytes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{dir_error, open_dir};
use crate::engine::columnar::snapshot::container::{self, ReadSnapshot};
use crate::engine::columnar::snapshot::lossless::write_lossless;
use crate::engine::columnar::snapshot::naming::NO_EPOCH;
use crate::engine::columnar::snapshot::plan::{SnapshotUnit, not_retained};
use crate::io::snapshot_dir::{SnapshotDir, read_named_file};
use crate::ops::{Error, Result};

/// Which container to dump, and where a lossless document goes.
#[derive(Debug, Clone, Default)]
pub struct DumpPlan {
    /// A snapshot file, or a directory with the selectors below.
    pub path: PathBuf,
    pub partition: Option<i32>,
    pub epoch: Option<i64>,
    pub group: Option<String>,
    pub task: Option<String>,
    /// With `lossless`: the file the document is written to (else stdout, by `cmd`).
    pub out: Option<PathBuf>,
}

/// A container that was read: where from, and what it holds.
pub struct Dumped {
    pub source: String,
    /// The file name (for the lossless document's `source`).
    pub file_name: Option<String>,
    pub size: usize,
    pub snapshot: ReadSnapshot,
}

/// Refuses an `--out` that is the snapshot read, then reads the selected container.
pub fn dump(plan: &DumpPlan) -> Result<Dumped> {
    if let Some(out) = &plan.out {
        use crate::io::path_conflict::{Named, check};
        check(&[
            Named::input(format!("the snapshot {}", plan.path.display()), &plan.path),
            Named::output(format!("--out {}", out.display()), out),
        ])
        .map_err(Error::usage)?;
    }
    read_selected(plan)
}

/// Reads the container `plan` selects, failing with D15 for a missing epoch.
fn read_selected(plan: &DumpPlan) -> Result<Dumped> {
    let selectors = plan.partition.is_some() || plan.epoch.is_some() || plan.group.is_some();
    let is_dir = std::fs::metadata(&plan.path).is_ok_and(|m| m.is_dir());
    if !is_dir {
        if selectors {
            return Err(Error::usage(format!(
                "--partition, --epoch, --group and --task select a file inside a directory, but {} is not a directory",
                plan.path.display()
            )));
        }
        let bytes = read_named_file(&plan.path).map_err(dir_error)?;
        return dump_bytes(
            plan.path.display().to_string(),
            plan.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            bytes,
        );
    }
    let dir = open_dir(&plan.path)?;
    let epoch = plan.epoch.ok_or_else(|| {
        Error::usage("dumping from a directory needs --epoch E|live and --partition P (or --group G --task T)")
    })?;
    let unit = match (&plan.partition, &plan.group, &plan.task) {
        (Some(p), None, None) => SnapshotUnit::Partition(*p),
        (None, Some(group), Some(task)) => SnapshotUnit::Task {
            group: group.clone(),
            task: task.clone(),
        },
        _ => {
            return Err(Error::usage(
                "dumping from a directory needs --partition P (Java/Go) or --group G --task T (Rust)",
            ));
        }
    };
    let name = unit
        .key(epoch)
        .file_name()
        .map_err(|e| Error::usage(e.to_string()))?;
    match dir.read(&name).map_err(dir_error)? {
        Some(bytes) => dump_bytes(
            dir.path().join(&name).display().to_string(),
            Some(name),
            bytes,
        ),
        None => Err(missing(&dir, &unit, epoch, &name)),
    }
}

fn missing(dir: &SnapshotDir, unit: &SnapshotUnit, epoch: i64, name: &str) -> Error {
    if epoch == NO_EPOCH {
        return Error::failure(format!(
            "no live state file {name} in {} (a runner starts that partition from empty state)",
            dir.path().display()
        ));
    }
    let present: BTreeSet<String> = dir.list().map(|l| l.names()).unwrap_or_default();
    Error::failure(not_retained(&present, &[unit], epoch).to_string())
}

/// Decodes container bytes read from `source` for dumping.
pub fn dump_bytes(source: String, file_name: Option<String>, bytes: Vec<u8>) -> Result<Dumped> {
    let snapshot = container::read(&bytes).map_err(|e| Error::failure(format!("{source}: {e}")))?;
    Ok(Dumped {
        source,
        file_name,
        size: bytes.len(),
        snapshot,
    })
}

/// Streams the lossless document into `path` (`io::atomic_file`: a regular file
/// through a temp file renamed into place, a device or descriptor directly).
pub fn write_lossless_file(path: &Path, dumped: &Dumped) -> Result<()> {
    crate::io::atomic_file::write_streamed(path, |out| {
        write_lossless(out, dumped.file_name.as_deref(), &dumped.snapshot)
    })
    .map_err(|e| Error::failure(format!("cannot write {}: {e}", path.display())))
}
