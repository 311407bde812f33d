//! `snapshot verify DIR`: decodes every snapshot file and every payload whose
//! kind is recognised, and reports each bad one (truncated, trailing bytes, wrong
//! version, duplicate or non-UTF-8 names, legacy gen A, a link or non-file under
//! a snapshot name, a join batch whose Arrow IPC does not decode). Exit 3 when
//! any file is bad, 0 when all are good. A directory without snapshot files is exit
//! 3 too unless `--allow-empty`: a check that checked nothing must not pass (a wrong
//! path in CI would otherwise read as verified).
//!
//! Payloads carry no type tag, so a payload that matches no known layout is
//! opaque, not bad: only a payload recognised as a kind and then failing that
//! kind's deeper decode can be reported.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::{decode_listed, open_dir};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::engine::columnar::snapshot::container::{Generation, ReadSnapshot};
use crate::engine::columnar::snapshot::payload::{Payload, classify};
use crate::ops::state_inspect::list_topic;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The snapshot directory.
    #[arg(value_name = "DIR", required_unless_present = "state_topic")]
    pub dir: Option<PathBuf>,

    /// Verify a state topic's snapshots instead (`state_store: kafka`), read with the broker flags.
    #[arg(long, value_name = "TOPIC", conflicts_with = "dir")]
    pub state_topic: Option<String>,

    /// Pass when the directory holds no snapshot file (by default that is exit 3).
    #[arg(long)]
    pub allow_empty: bool,
}

/// Why a decoded container is still bad: gen A, or a recognised payload that does not decode.
pub(super) fn problems(snapshot: &ReadSnapshot) -> Vec<String> {
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

pub fn run(global: &GlobalArgs, args: VerifyArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    if let Some(topic) = &args.state_topic {
        let kafka = global.connection.kafka_settings("snapshot verify")?;
        let listing = list_topic(&kafka, topic, global.connection.timeout)?;
        return super::topic_view::verify(&ui, &listing, args.allow_empty, problems);
    }
    let Some(dir) = &args.dir else {
        return Err(CliError::usage("give a DIR or --state-topic TOPIC"));
    };
    let dir = open_dir(dir)?;
    let listing = dir.list().map_err(super::dir_error)?;
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
    let identities = super::identities(&dir, &listing.identity_files);
    for (file, read) in &identities {
        if let Err(e) = read {
            bad.push((file.clone(), e.clone()));
        }
    }
    let checked = listing.files.len() + identities.len();
    let mut bad_files: Vec<&str> = bad.iter().map(|(f, _)| f.as_str()).collect();
    bad_files.dedup();
    let bad_count = bad_files.len();
    let data = json!({
        "dir": dir.path().display().to_string(),
        "checked": checked,
        "bad": bad.iter().map(|(file, problem)| json!({"file": file, "problem": problem})).collect::<Vec<_>>(),
        "ignored": listing.ignored,
        "stale_temp_files": super::stale_temps_json(&listing.stale_temps),
        "identities": super::identities_json(&identities),
        "ok": bad.is_empty() && (checked > 0 || args.allow_empty),
    });
    ui.report(data, |out| {
        if !bad.is_empty() {
            let mut t = table(&["file", "problem"]);
            for (file, problem) in &bad {
                t.add_row(vec![file.clone(), problem.clone()]);
            }
            writeln!(out, "{t}")?;
        }
        writeln!(
            out,
            "{} of {checked} snapshot files in {} are bad",
            bad_count,
            dir.path().display()
        )?;
        if listing.ignored > 0 {
            writeln!(out, "{} other files ignored", listing.ignored)?;
        }
        super::stale_temps_human(out, &listing.stale_temps)?;
        super::identities_human(out, &identities)?;
        Ok(())
    })?;
    if checked == 0 && !args.allow_empty {
        Err(CliError::check_failed(format!(
            "{} holds no snapshot file: nothing was verified (pass --allow-empty if that is expected)",
            dir.path().display()
        )))
    } else if bad.is_empty() {
        Ok(())
    } else {
        Err(CliError::check_failed(format!(
            "{bad_count} of {checked} snapshot files are bad: {}",
            bad_files.join(", ")
        )))
    }
}
