//! `schema check --against SUBJECT[:VERSION] FILE`: the local compatibility check of a
//! schema file against a registered version; exit 3 when incompatible, every
//! incompatibility listed.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::schema::connect::{ConnectOptions, connect, registry_error};
use crate::cmd::schema::source::{Kind, read_schema_file};
use crate::engine::schema::compatibility::{self, Level, SchemaText};
use crate::engine::schema::registry::{Registry, SchemaType};
use crate::engine::schema::resolve::resolved_schema_by_id;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    Backward,
    Forward,
    Full,
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Self {
        match l {
            LevelArg::Backward => Level::Backward,
            LevelArg::Forward => Level::Forward,
            LevelArg::Full => Level::Full,
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The registered schema to check against: SUBJECT or SUBJECT:VERSION (default latest).
    #[arg(long, value_name = "SUBJECT[:VERSION]")]
    pub against: String,
    /// The candidate schema file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Direction of the check [default: the subject's compatibility level, else backward].
    #[arg(long, value_enum)]
    pub level: Option<LevelArg>,
    /// Kind of FILE [default: the registered schema's kind].
    #[arg(long = "type", value_enum, value_name = "KIND")]
    pub kind: Option<Kind>,
}

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: CheckArgs) -> CliResult<()> {
    let (subject, version) = match args.against.rsplit_once(':') {
        Some((s, "latest")) => (s.to_string(), None),
        Some((s, v)) => (
            s.to_string(),
            Some(v.parse::<i32>().ok().filter(|v| *v > 0).ok_or_else(|| {
                CliError::usage(format!(
                    "--against {}: version {v:?} is not a positive integer or latest",
                    args.against
                ))
            })?),
        ),
        None => (args.against.clone(), None),
    };
    let candidate_text = read_schema_file(&args.file)?;
    let connected = connect(global, conn)?;
    let registry: &dyn Registry = connected.registry.as_ref();
    let what = format!("get {}", args.against);
    let previous = match version {
        Some(v) => registry.version(&subject, v),
        None => registry.latest(&subject),
    }
    .map_err(|e| registry_error(&e, &what))?;
    let resolved = resolved_schema_by_id(registry, previous.id).map_err(|e| {
        registry_error(
            &e,
            &format!("resolve the references of schema {}", previous.id as u32),
        )
    })?;
    let refs: Vec<(String, String)> = resolved
        .references
        .iter()
        .map(|r| (r.name.clone(), r.spec_text.clone()))
        .collect();
    let kind: SchemaType = args.kind.map_or(previous.spec.schema_type, Into::into);
    if kind != previous.spec.schema_type {
        return Err(CliError::usage(format!(
            "{} is {} but --type says {kind}; a schema can only be checked against one of its own kind",
            args.against, previous.spec.schema_type
        )));
    }
    let level: Level = match args.level {
        Some(l) => l.into(),
        None => registry
            .compatibility(Some(&subject))
            .ok()
            .and_then(|l| Level::from_registry(&l))
            .unwrap_or(Level::Backward),
    };
    let result = compatibility::check(
        SchemaText {
            schema_type: kind,
            text: &previous.spec.schema,
            references: &refs,
        },
        SchemaText {
            schema_type: kind,
            text: &candidate_text,
            references: &refs,
        },
        level,
    )
    .map_err(|e| {
        let m = e.to_string();
        if m.contains("candidate") {
            CliError::usage(format!("{}: {m}", args.file.display()))
        } else {
            CliError::failure(format!("{}: {m}", args.against))
        }
    })?;
    let ui = Ui::new(&global.output);
    let version_shown = previous
        .version
        .map_or("latest".to_string(), |v| v.to_string());
    ui.report(
        json!({
            "subject": subject,
            "version": previous.version,
            "id": previous.id as u32,
            "level": level.to_string(),
            "compatible": result.compatible(),
            "incompatibilities": result.incompatibilities,
        }),
        |out| {
            if result.compatible() {
                writeln!(
                    out,
                    "{} is {level} compatible with {subject} version {version_shown}",
                    args.file.display()
                )
            } else {
                writeln!(
                    out,
                    "{} is NOT {level} compatible with {subject} version {version_shown}:",
                    args.file.display()
                )?;
                for i in &result.incompatibilities {
                    writeln!(out, "  {i}")?;
                }
                Ok(())
            }
        },
    )?;
    if result.compatible() {
        Ok(())
    } else {
        Err(CliError::check_failed(format!(
            "{} incompatibilit{} with {subject} version {version_shown}",
            result.incompatibilities.len(),
            if result.incompatibilities.len() == 1 {
                "y"
            } else {
                "ies"
            }
        )))
    }
}
