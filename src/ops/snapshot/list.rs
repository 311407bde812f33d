//! `snapshot list DIR`: every snapshot file of a directory, by layout, with what
//! decoding it gave, the files ignored, stale temp files and identity manifests.

use std::path::Path;

use super::{Identities, decode_listed, dir_error, identities, open_dir};
use crate::engine::columnar::snapshot::container::Generation;
use crate::io::atomic_file::temp_name::StaleTemp;
use crate::io::snapshot_dir::{ListedFile, SnapshotDir};
use crate::ops::Result;

/// One listed file and what decoding it gave: (generation, entry count) or why not.
pub struct ListRow {
    pub file: ListedFile,
    pub decoded: std::result::Result<(Generation, usize), String>,
}

/// What `snapshot list` reports.
pub struct ListReport {
    pub dir: String,
    pub rows: Vec<ListRow>,
    pub ignored: usize,
    pub stale_temps: Vec<StaleTemp>,
    /// Identity manifests: whose state the files are.
    pub identities: Identities,
}

/// Opens `dir` and lists it.
pub fn list(dir: &Path) -> Result<ListReport> {
    ListReport::collect(&open_dir(dir)?)
}

impl ListReport {
    /// Lists and decodes every snapshot file of `dir`.
    pub fn collect(dir: &SnapshotDir) -> Result<ListReport> {
        let listing = dir.list().map_err(dir_error)?;
        let rows = listing
            .files
            .into_iter()
            .map(|file| {
                let decoded = decode_listed(dir, &file).map(|s| (s.generation, s.entries.len()));
                ListRow { file, decoded }
            })
            .collect();
        Ok(ListReport {
            identities: identities(dir, &listing.identity_files),
            dir: dir.path().display().to_string(),
            rows,
            ignored: listing.ignored,
            stale_temps: listing.stale_temps,
        })
    }
}
