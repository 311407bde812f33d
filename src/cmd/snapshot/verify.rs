//! `snapshot verify DIR`: decodes every snapshot file and every payload whose
//! kind is recognised (`ops::snapshot::verify`) and renders each bad one. Exit 3
//! when any file is bad, 0 when all are good; a directory without snapshot files
//! is exit 3 too unless `--allow-empty`.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::ops::snapshot::verify::{VerifyPlan, problems, verify};
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

pub fn run(global: &GlobalArgs, args: VerifyArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    if let Some(topic) = &args.state_topic {
        let kafka = global.connection.kafka_settings("snapshot verify")?;
        let listing = list_topic(&kafka, topic, global.connection.timeout)?;
        return super::topic_view::verify(&ui, &listing, args.allow_empty, problems);
    }
    let Some(dir) = args.dir else {
        return Err(crate::cmd::exit::CliError::usage(
            "give a DIR or --state-topic TOPIC",
        ));
    };
    let report = verify(&VerifyPlan {
        dir,
        allow_empty: args.allow_empty,
    })?;
    let bad_count = report.bad_files().len();
    let data = json!({
        "dir": report.dir,
        "checked": report.checked,
        "bad": report.bad.iter().map(|(file, problem)| json!({"file": file, "problem": problem})).collect::<Vec<_>>(),
        "ignored": report.ignored,
        "stale_temp_files": crate::cmd::render::snapshot::stale_temps_json(&report.stale_temps),
        "identities": crate::cmd::render::snapshot::identities_json(&report.identities),
        "ok": report.ok(),
    });
    ui.report(data, |out| {
        if !report.bad.is_empty() {
            let mut t = table(&["file", "problem"]);
            for (file, problem) in &report.bad {
                t.add_row(vec![file.clone(), problem.clone()]);
            }
            writeln!(out, "{t}")?;
        }
        writeln!(
            out,
            "{} of {} snapshot files in {} are bad",
            bad_count, report.checked, report.dir
        )?;
        if report.ignored > 0 {
            writeln!(out, "{} other files ignored", report.ignored)?;
        }
        crate::cmd::render::snapshot::stale_temps_human(out, &report.stale_temps)?;
        crate::cmd::render::snapshot::identities_human(out, &report.identities)?;
        Ok(())
    })?;
    report.verdict()
}
