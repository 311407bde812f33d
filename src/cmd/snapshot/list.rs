//! `snapshot list DIR`: every snapshot file of a directory, by layout, with its
//! owner, epoch (live state marked `live`), size, entry count, modification time
//! and whether it decodes (and as which container generation).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::{decode_listed, epoch_text, open_dir, owner_json, owner_label, utc_text};
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::engine::columnar::snapshot::container::Generation;
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::io::snapshot_dir::{ListedFile, SnapshotDir};
use crate::io::temp_file::StaleTemp;
use crate::ops::state_inspect::list_topic;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The snapshot directory (Java/Go and Rust layouts are told apart by file name).
    #[arg(value_name = "DIR", required_unless_present = "state_topic")]
    pub dir: Option<PathBuf>,

    /// List a state topic's snapshots instead (`state_store: kafka`), read with the broker flags.
    #[arg(long, value_name = "TOPIC", conflicts_with = "dir")]
    pub state_topic: Option<String>,
}

/// One listed file and what decoding it gave: (generation, entry count) or why not.
pub struct ListRow {
    pub file: ListedFile,
    pub decoded: Result<(Generation, usize), String>,
}

/// What `snapshot list` reports.
pub struct ListReport {
    pub dir: String,
    pub rows: Vec<ListRow>,
    pub ignored: usize,
    pub stale_temps: Vec<StaleTemp>,
    /// Identity manifests: whose state the files are.
    pub identities: Vec<(String, Result<StateIdentity, String>)>,
}

impl ListReport {
    /// Lists and decodes every snapshot file of `dir`.
    pub fn collect(dir: &SnapshotDir) -> CliResult<ListReport> {
        let listing = dir.list().map_err(super::dir_error)?;
        let rows = listing
            .files
            .into_iter()
            .map(|file| {
                let decoded = decode_listed(dir, &file).map(|s| (s.generation, s.entries.len()));
                ListRow { file, decoded }
            })
            .collect();
        Ok(ListReport {
            identities: super::identities(dir, &listing.identity_files),
            dir: dir.path().display().to_string(),
            rows,
            ignored: listing.ignored,
            stale_temps: listing.stale_temps,
        })
    }

    pub fn json(&self) -> Value {
        let files: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let mut v = owner_json(&row.file.name);
                v["file"] = json!(row.file.file_name);
                v["size"] = json!(row.file.size);
                v["modified"] = json!(row.file.modified.map(utc_text));
                v["decodes"] = json!(row.decoded.is_ok());
                match &row.decoded {
                    Ok((generation, entries)) => {
                        v["entries"] = json!(entries);
                        v["generation"] = json!(generation.label());
                    }
                    Err(e) => {
                        v["entries"] = Value::Null;
                        v["error"] = json!(e);
                    }
                }
                v
            })
            .collect();
        json!({
            "dir": self.dir,
            "files": files,
            "ignored": self.ignored,
            "stale_temp_files": super::stale_temps_json(&self.stale_temps),
            "identities": super::identities_json(&self.identities),
        })
    }

    pub fn human(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.rows.is_empty() {
            writeln!(out, "no snapshot files in {}", self.dir)?;
        } else {
            let mut t = table(&[
                "file", "owner", "epoch", "size", "entries", "modified", "decodes",
            ]);
            for row in &self.rows {
                let (entries, decodes) = match &row.decoded {
                    Ok((generation, entries)) => (
                        entries.to_string(),
                        match generation {
                            Generation::A => format!("yes, {}", generation.label()),
                            _ => "yes".to_owned(),
                        },
                    ),
                    Err(e) => ("-".to_owned(), format!("no: {e}")),
                };
                t.add_row(vec![
                    row.file.file_name.clone(),
                    owner_label(&row.file.name),
                    epoch_text(&row.file.name),
                    row.file.size.to_string(),
                    entries,
                    row.file.modified.map(utc_text).unwrap_or_default(),
                    decodes,
                ]);
            }
            writeln!(out, "{t}")?;
            writeln!(out, "{} snapshot files in {}", self.rows.len(), self.dir)?;
        }
        if self.ignored > 0 {
            writeln!(
                out,
                "{} other files ignored (not snapshot file names)",
                self.ignored
            )?;
        }
        super::stale_temps_human(out, &self.stale_temps)?;
        super::identities_human(out, &self.identities)?;
        Ok(())
    }
}

pub fn run(global: &GlobalArgs, args: ListArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    if let Some(topic) = &args.state_topic {
        let kafka = global.connection.kafka_settings("snapshot list")?;
        let listing = list_topic(&kafka, topic, global.connection.timeout)?;
        return ui.report(super::topic_view::listing_json(&listing), |out| {
            super::topic_view::listing_human(&listing, out)
        });
    }
    let Some(dir) = &args.dir else {
        return Err(crate::cmd::exit::CliError::usage(
            "give a DIR or --state-topic TOPIC",
        ));
    };
    let dir = open_dir(dir)?;
    let report = ListReport::collect(&dir)?;
    ui.report(report.json(), |out| report.human(out))
}
