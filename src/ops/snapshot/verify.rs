//! `snapshot verify DIR`: decodes every snapshot file and every payload whose
//! kind is recognised, and reports each bad one (truncated, trailing bytes, wrong
//! version, duplicate or non-UTF-8 names, legacy gen A, a link or non-file under
//! a snapshot name, a join batch whose Arrow IPC does not decode). The check fails
//! (exit 3) when any file is bad, and for a directory without snapshot files unless
//! `allow_empty`: a check that checked nothing must not pass (a wrong path in CI
//! would otherwise read as verified).
//!
//! Payloads carry no type tag, so a payload that matches no known layout is
//! opaque, not bad: only a payload recognised as a kind and then failing that
//! kind's deeper decode can be reported.

use std::path::PathBuf;

use super::{Identities, decode_listed, dir_error, identities, open_dir};
use crate::engine::columnar::snapshot::container::{Generation, ReadSnapshot};
use crate::engine::columnar::snapshot::payload::{Payload, classify};
use crate::io::atomic_file::temp_name::StaleTemp;
use crate::ops::{Error, Result};

/// What to verify.
#[derive(Debug, Clone)]
pub struct VerifyPlan {
    pub dir: PathBuf,
    /// Pass when the directory holds no snapshot file.
    pub allow_empty: bool,
}

/// What `snapshot verify` found; [`VerifyReport::verdict`] is its exit.
pub struct VerifyReport {
    pub dir: String,
    /// Snapshot files and identity manifests checked.
    pub checked: usize,
    /// (file, problem), a file once per problem.
    pub bad: Vec<(String, String)>,
    pub ignored: usize,
    pub stale_temps: Vec<StaleTemp>,
    pub identities: Identities,
    pub allow_empty: bool,
}

impl VerifyReport {
    /// The bad files, each once.
    pub fn bad_files(&self) -> Vec<&str> {
        let mut files: Vec<&str> = self.bad.iter().map(|(f, _)| f.as_str()).collect();
        files.dedup();
        files
    }

    /// True when the check passes.
    pub fn ok(&self) -> bool {
        self.bad.is_empty() && (self.checked > 0 || self.allow_empty)
    }

    /// The check's answer: `Ok`, or a check failure saying why.
    pub fn verdict(&self) -> Result<()> {
        if self.checked == 0 && !self.allow_empty {
            Err(Error::check_failed(format!(
                "{} holds no snapshot file: nothing was verified (pass --allow-empty if that is expected)",
                self.dir
            )))
        } else if self.bad.is_empty() {
            Ok(())
        } else {
            let bad_files = self.bad_files();
            Err(Error::check_failed(format!(
                "{} of {} snapshot files are bad: {}",
                bad_files.len(),
                self.checked,
                bad_files.join(", ")
            )))
        }
    }
}

/// Why a decoded container is still bad: gen A, or a recognised payload that does not decode.
pub fn problems(snapshot: &ReadSnapshot) -> Vec<String> {
    let mut found = Vec::new();
    if snapshot.generation == Generation::A {
        found.push(
            "legacy (Java ≤ 1.2) gen A container: read-only, current writers and readers expect gen B"
                .to_owned(),
        );
    }
    // Readers accept any order, but the libraries write gen B names in unsigned-byte
    // order (docs/formats.md §8.1): another order means another writer made the file.
    if snapshot.generation == Generation::B
        && let Some(pair) = snapshot
            .entries
            .windows(2)
            .find(|p| p[0].name.as_bytes() > p[1].name.as_bytes())
    {
        found.push(format!(
            "gen B store names are not sorted: {:?} comes before {:?} (the libraries write them in unsigned-byte order)",
            pair[0].name, pair[1].name
        ));
    }
    for entry in &snapshot.entries {
        if let Payload::Join(state) = classify(&entry.value) {
            for (side, batches) in [("left", &state.left), ("right", &state.right)] {
                for (i, batch) in batches.iter().enumerate() {
                    if let Err(e) = batch.record_batches() {
                        found.push(format!(
                            "entry {:?}: join batch {side}[{i}] does not decode as Arrow IPC: {e}",
                            entry.name
                        ));
                    }
                }
            }
        }
    }
    found
}

/// Decodes every snapshot file and identity manifest of the directory.
pub fn verify(plan: &VerifyPlan) -> Result<VerifyReport> {
    let dir = open_dir(&plan.dir)?;
    let listing = dir.list().map_err(dir_error)?;
    let mut bad: Vec<(String, String)> = Vec::new();
    for file in &listing.files {
        match decode_listed(&dir, file) {
            Err(e) => bad.push((file.file_name.clone(), e)),
            Ok(snapshot) => {
                for problem in problems(&snapshot) {
                    bad.push((file.file_name.clone(), problem));
                }
            }
        }
    }
    // A damaged identity manifest is a bad file too: `run` refuses the directory.
    let identities = identities(&dir, &listing.identity_files);
    for (file, read) in &identities {
        if let Err(e) = read {
            bad.push((file.clone(), e.clone()));
        }
    }
    Ok(VerifyReport {
        dir: dir.path().display().to_string(),
        checked: listing.files.len() + identities.len(),
        bad,
        ignored: listing.ignored,
        stale_temps: listing.stale_temps,
        identities,
        allow_empty: plan.allow_empty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ErrorKind;

    #[test]
    fn an_empty_directory_fails_the_check_unless_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let report = verify(&VerifyPlan {
            dir: dir.path().to_path_buf(),
            allow_empty: false,
        })
        .unwrap();
        assert_eq!(report.checked, 0);
        assert!(!report.ok());
        let e = report.verdict().unwrap_err();
        assert_eq!(e.kind, ErrorKind::CheckFailed);
        assert!(e.message.contains("nothing was verified"), "{e}");
        let allowed = verify(&VerifyPlan {
            dir: dir.path().to_path_buf(),
            allow_empty: true,
        })
        .unwrap();
        assert!(allowed.ok());
        assert_eq!(allowed.verdict(), Ok(()));
    }

    #[test]
    fn a_truncated_snapshot_is_bad_and_named_in_the_verdict() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("partition-0.snapshot"), b"\x00\x01").unwrap();
        let report = verify(&VerifyPlan {
            dir: dir.path().to_path_buf(),
            allow_empty: false,
        })
        .unwrap();
        assert_eq!(report.checked, 1);
        assert_eq!(report.bad_files(), ["partition-0.snapshot"]);
        let e = report.verdict().unwrap_err();
        assert_eq!(e.kind, ErrorKind::CheckFailed);
        assert_eq!(
            e.message,
            "1 of 1 snapshot files are bad: partition-0.snapshot"
        );
    }
}
