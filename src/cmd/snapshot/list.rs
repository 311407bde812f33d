//! `snapshot list DIR`: every snapshot file of a directory, by layout, with its
//! owner, epoch (live state marked `live`), size, entry count, modification time
//! and whether it decodes (and as which container generation). The listing is
//! `ops::snapshot::list`; this file renders it.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::{epoch_text, owner_json, owner_label, utc_text};
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::engine::columnar::snapshot::container::Generation;
use crate::ops::snapshot::list::{ListReport, list};
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

/// The listing as the JSON document of `snapshot list`.
pub fn list_json(report: &ListReport) -> Value {
    let files: Vec<Value> = report
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
        "dir": report.dir,
        "files": files,
        "ignored": report.ignored,
        "stale_temp_files": super::stale_temps_json(&report.stale_temps),
        "identities": super::identities_json(&report.identities),
    })
}

/// The listing as the table of `snapshot list`.
pub fn list_human(report: &ListReport, out: &mut dyn Write) -> std::io::Result<()> {
    if report.rows.is_empty() {
        writeln!(out, "no snapshot files in {}", report.dir)?;
    } else {
        let mut t = table(&[
            "file", "owner", "epoch", "size", "entries", "modified", "decodes",
        ]);
        for row in &report.rows {
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
        writeln!(
            out,
            "{} snapshot files in {}",
            report.rows.len(),
            report.dir
        )?;
    }
    if report.ignored > 0 {
        writeln!(
            out,
            "{} other files ignored (not snapshot file names)",
            report.ignored
        )?;
    }
    super::stale_temps_human(out, &report.stale_temps)?;
    super::identities_human(out, &report.identities)?;
    Ok(())
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
    let report = list(dir)?;
    ui.report(list_json(&report), |out| list_human(&report, out))
}
