//! `schema inspect`: read-only views of the registry.

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::schema::connect::{ConnectOptions, connect, registry_error};
use crate::engine::schema::registry::{RegisteredSchema, Registry};
use crate::engine::schema::resolve::{ResolvedReference, resolved_schema_by_id};

#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(subcommand)]
    pub what: InspectCommand,
}

#[derive(Debug, Subcommand)]
pub enum InspectCommand {
    /// Every registered subject.
    Subjects,
    /// The versions of a subject.
    Versions { subject: String },
    /// One version of a subject (default: latest).
    #[command(disable_version_flag = true)]
    Get {
        subject: String,
        /// A version number or `latest`.
        #[arg(long, default_value = "latest", value_name = "V|latest")]
        version: String,
        /// Also print the Arrow schema the engine maps it to.
        #[arg(long)]
        arrow: bool,
    },
    /// A schema by id, with the schemas it references.
    Id {
        /// The schema id (unsigned 32-bit).
        id: u32,
        /// Also print the Arrow schema the engine maps it to.
        #[arg(long)]
        arrow: bool,
    },
    /// The subjects and versions that use a schema id.
    IdUsage { id: u32 },
    /// The global compatibility level, or a subject's.
    Compatibility { subject: Option<String> },
}

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: InspectArgs) -> CliResult<()> {
    let connected = connect(global, conn)?;
    let registry: &dyn Registry = connected.registry.as_ref();
    let ui = Ui::new(&global.output);
    match args.what {
        InspectCommand::Subjects => {
            let subjects = registry
                .subjects()
                .map_err(|e| registry_error(&e, "list subjects"))?;
            ui.report(json!({"subjects": subjects}), |out| {
                if subjects.is_empty() {
                    writeln!(out, "the registry holds no subjects")?;
                }
                for s in &subjects {
                    writeln!(out, "{s}")?;
                }
                Ok(())
            })
        }
        InspectCommand::Versions { subject } => {
            let versions = registry
                .versions(&subject)
                .map_err(|e| registry_error(&e, &format!("list versions of {subject}")))?;
            ui.report(json!({"subject": subject, "versions": versions}), |out| {
                for v in &versions {
                    writeln!(out, "{v}")?;
                }
                Ok(())
            })
        }
        InspectCommand::Get {
            subject,
            version,
            arrow,
        } => {
            let what = format!("get {subject} version {version}");
            let found = if version == "latest" {
                registry.latest(&subject)
            } else {
                let v: i32 = version
                    .parse()
                    .ok()
                    .filter(|v: &i32| *v > 0)
                    .ok_or_else(|| {
                        CliError::usage(format!(
                            "--version {version:?} is not a positive integer or latest"
                        ))
                    })?;
                registry.version(&subject, v)
            }
            .map_err(|e| registry_error(&e, &what))?;
            let resolved = resolved_schema_by_id(registry, found.id).map_err(|e| {
                registry_error(
                    &e,
                    &format!("resolve the references of schema {}", found.id as u32),
                )
            })?;
            show(&ui, &found, &resolved.references, arrow)
        }
        InspectCommand::Id { id, arrow } => {
            let resolved = resolved_schema_by_id(registry, id as i32)
                .map_err(|e| registry_error(&e, &format!("get schema id {id}")))?;
            show(&ui, &resolved.schema, &resolved.references, arrow)
        }
        InspectCommand::IdUsage { id } => {
            let usage = registry.id_versions(id as i32).map_err(|e| {
                registry_error(&e, &format!("list the subjects using schema id {id}"))
            })?;
            ui.report(
                json!({"id": id, "versions": usage.iter().map(|u| json!({"subject": u.subject, "version": u.version})).collect::<Vec<_>>()}),
                |out| {
                    let mut t = table(&["subject", "version"]);
                    for u in &usage {
                        t.add_row(vec![u.subject.clone(), u.version.to_string()]);
                    }
                    writeln!(out, "{t}")
                },
            )
        }
        InspectCommand::Compatibility { subject } => {
            let level = registry
                .compatibility(subject.as_deref())
                .map_err(|e| registry_error(&e, "get the compatibility level"))?;
            ui.report(
                json!({"subject": subject, "compatibility": level}),
                |out| match &subject {
                    Some(s) => writeln!(out, "{s}: {level}"),
                    None => writeln!(out, "global: {level}"),
                },
            )
        }
    }
}

fn show(ui: &Ui, s: &RegisteredSchema, refs: &[ResolvedReference], arrow: bool) -> CliResult<()> {
    let arrow_text = if arrow {
        Some(
            crate::engine::columnarschema::describe_arrow(
                s.spec.schema_type,
                &s.spec.schema,
                s.spec.message_type.as_deref(),
                &refs
                    .iter()
                    .map(|r| (r.name.clone(), r.spec_text.clone()))
                    .collect::<Vec<_>>(),
            )
            .map_err(|e| CliError::failure(format!("map schema {} to Arrow: {e}", s.id as u32)))?,
        )
    } else {
        None
    };
    let data = json!({
        "subject": s.subject,
        "id": s.id as u32,
        "version": s.version,
        "schemaType": s.spec.schema_type.to_string(),
        "messageType": s.spec.message_type,
        "schema": s.spec.schema,
        "references": refs.iter().map(|r| json!({"name": r.name, "subject": r.subject, "version": r.version, "schema": r.spec_text})).collect::<Vec<Value>>(),
        "arrow": arrow_text.as_ref().map(|a| a.lines().map(str::to_string).collect::<Vec<_>>()),
    });
    ui.report(data, |out| {
        if let Some(subject) = &s.subject {
            writeln!(out, "subject:     {subject}")?;
        }
        writeln!(out, "id:          {}", s.id as u32)?;
        if let Some(v) = s.version {
            writeln!(out, "version:     {v}")?;
        }
        writeln!(out, "type:        {}", s.spec.schema_type)?;
        if let Some(m) = &s.spec.message_type {
            writeln!(out, "messageType: {m}")?;
        }
        writeln!(out, "schema:\n{}", s.spec.schema)?;
        for r in refs {
            writeln!(
                out,
                "reference {} ({}@{}):\n{}",
                r.name, r.subject, r.version, r.spec_text
            )?;
        }
        if let Some(a) = &arrow_text {
            writeln!(out, "arrow schema:\n{a}")?;
        }
        Ok(())
    })
}
