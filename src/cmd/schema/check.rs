//! `schema check --against SUBJECT[:VERSION] FILE`: the local compatibility check of a
//! schema file against registered versions, by the subject's level (or `--level`):
//! `*_TRANSITIVE` against every version, `NONE` as no check. Exit 3 when incompatible,
//! every incompatibility listed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::schema::connect::{ConnectOptions, connect, registry_error};
use crate::cmd::schema::source::{Kind, read_schema_file};
use crate::engine::schema::compatibility::registered::{Against, AgainstError, check_against};
use crate::engine::schema::compatibility::{Level, Mode};

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
fn parse_against(against: &str) -> CliResult<(String, Option<Option<i32>>)> {
    match against.rsplit_once(':') {
        Some((s, "latest")) => Ok((s.to_string(), Some(None))),
        Some((s, v)) => {
            let n = v.parse::<i32>().ok().filter(|v| *v > 0).ok_or_else(|| {
                CliError::usage(format!(
                    "--against {against}: version {v:?} is not a positive integer or latest"
                ))
            })?;
            Ok((s.to_string(), Some(Some(n))))
        }
        None => Ok((against.to_string(), None)),
    }
}

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: CheckArgs) -> CliResult<()> {
    let (subject, pinned) = parse_against(&args.against)?;
    let candidate_text = read_schema_file(&args.file)?;
    let connected = connect(global, conn)?;
    let against = Against {
        subject: &subject,
        version: pinned.flatten(),
        pinned: pinned.is_some(),
        mode: args.level.map(Into::into),
        candidate: &candidate_text,
        kind: args.kind.map(Into::into),
    };
    let outcome = check_against(connected.registry.as_ref(), &against).map_err(|e| match e {
        AgainstError::Registry { what, error } => registry_error(&error, &what),
        AgainstError::Level(m) => CliError::failure(format!("{subject}: {m}")),
        AgainstError::Kind { registered, given } => CliError::usage(format!(
            "{} is {registered} but --type says {given}; a schema can only be checked against one of its own kind",
            args.against
        )),
        AgainstError::Candidate(e) => CliError::usage(format!("{}: {e}", args.file.display())),
        AgainstError::Registered { version, error } => {
            CliError::failure(format!("{subject}:{version}: {error}"))
        }
    })?;
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
