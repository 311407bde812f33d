//! `schema check --against SUBJECT[:VERSION] FILE`: the local compatibility check of a
//! schema file against registered versions, by the subject's level (or `--level`):
//! `*_TRANSITIVE` against every version, `NONE` as no check. Exit 3 when incompatible,
//! every incompatibility listed. Arguments and rendering; the check is
//! `ops::schema::check`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::schema::connect::{ConnectOptions, connect};
use crate::engine::schema::compatibility::{Level, Mode};
use crate::ops::schema::check::{CheckPlan, Checked, check};
use crate::ops::schema::source::Kind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    Backward,
    BackwardTransitive,
    Forward,
    ForwardTransitive,
    Full,
    FullTransitive,
    None,
}

impl From<LevelArg> for Mode {
    fn from(l: LevelArg) -> Self {
        let (level, transitive) = match l {
            LevelArg::Backward => (Some(Level::Backward), false),
            LevelArg::BackwardTransitive => (Some(Level::Backward), true),
            LevelArg::Forward => (Some(Level::Forward), false),
            LevelArg::ForwardTransitive => (Some(Level::Forward), true),
            LevelArg::Full => (Some(Level::Full), false),
            LevelArg::FullTransitive => (Some(Level::Full), true),
            LevelArg::None => (None, false),
        };
        Mode { level, transitive }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// What to check against: SUBJECT (the versions its level names: the latest, or
    /// every version for a *-transitive level) or SUBJECT:VERSION (that version only;
    /// VERSION may be `latest`).
    #[arg(long, value_name = "SUBJECT[:VERSION]")]
    pub against: String,
    /// The candidate schema file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Compatibility level [default: the subject's level, else the global level; a
    /// failed lookup is an error].
    #[arg(long, value_enum)]
    pub level: Option<LevelArg>,
    /// Kind of FILE [default: the registered schema's kind].
    #[arg(long = "type", value_enum, value_name = "KIND")]
    pub kind: Option<Kind>,
}

/// `SUBJECT`, `SUBJECT:latest` or `SUBJECT:N`; `Some(None)` version means latest only.
pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: CheckArgs) -> CliResult<()> {
    let plan = CheckPlan {
        against: args.against.clone(),
        file: args.file.clone(),
        mode: args.level.map(Into::into),
        kind: args.kind.map(Into::into),
    };
    let Checked { subject, outcome } = check(&plan, || Ok(connect(global, conn)?.registry))?;
    let many = outcome.checked.len() > 1;
    let mut flat = Vec::new();
    for c in &outcome.checked {
        for i in &c.result.incompatibilities {
            flat.push(if many {
                format!("version {}: {i}", c.version)
            } else {
                i.clone()
            });
        }
    }
    let versions: Vec<i32> = outcome.checked.iter().map(|c| c.version).collect();
    let shown = match versions.as_slice() {
        [] => String::new(),
        [v] => format!("version {v}"),
        vs => format!(
            "versions {}",
            vs.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")
        ),
    };
    let compatible = outcome.compatible();
    let level = outcome.mode.to_string();
    let ui = Ui::new(&global.output);
    ui.report(
        json!({
            "subject": subject,
            "version": outcome.target.version,
            "id": outcome.target.id as u32,
            "level": level,
            "level_source": outcome.level_source.as_str(),
            "compatible": compatible,
            "checked_versions": versions,
            "checked": outcome.checked.iter().map(|c| json!({
                "version": c.version,
                "id": c.id as u32,
                "compatible": c.result.compatible(),
                "incompatibilities": c.result.incompatibilities,
            })).collect::<Vec<_>>(),
            "incompatibilities": flat,
        }),
        |out| {
            let file = args.file.display();
            if outcome.checked.is_empty() {
                writeln!(
                    out,
                    "{file}: the level of {subject} is NONE; no compatibility check applies"
                )
            } else if compatible {
                writeln!(out, "{file} is {level} compatible with {subject} {shown}")
            } else {
                writeln!(
                    out,
                    "{file} is NOT {level} compatible with {subject} {shown}:"
                )?;
                for i in &flat {
                    writeln!(out, "  {i}")?;
                }
                Ok(())
            }
        },
    )?;
    if compatible {
        Ok(())
    } else {
        Err(CliError::check_failed(format!(
            "{} incompatibilit{} with {subject} {shown}",
            flat.len(),
            if flat.len() == 1 { "y" } else { "ies" }
        )))
    }
}
