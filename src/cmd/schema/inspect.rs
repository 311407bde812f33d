//! `schema inspect`: read-only views of the registry. Parses the question, asks
//! `ops::schema::inspect`, renders the answer.

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::schema::connect::{ConnectOptions, connect};
use crate::engine::schema::registry::RegisteredSchema;
use crate::engine::schema::resolve::ResolvedReference;
use crate::ops::schema::inspect::{Answer, Query, inspect};

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
    let query = match args.what {
        InspectCommand::Subjects => Query::Subjects,
        InspectCommand::Versions { subject } => Query::Versions { subject },
        InspectCommand::Get {
            subject,
            version,
            arrow,
        } => Query::Get {
            subject,
            version,
            arrow,
        },
        InspectCommand::Id { id, arrow } => Query::Id { id, arrow },
        InspectCommand::IdUsage { id } => Query::IdUsage { id },
        InspectCommand::Compatibility { subject } => Query::Compatibility { subject },
    };
    let connected = connect(global, conn)?;
    let answer = inspect(connected.registry.as_ref(), query)?;
    render(&Ui::new(&global.output), &answer)
}

/// The answer as text or its JSON document.
fn render(ui: &Ui, answer: &Answer) -> CliResult<()> {
    match answer {
        Answer::Subjects(subjects) => ui.report(json!({"subjects": subjects}), |out| {
            if subjects.is_empty() {
                writeln!(out, "the registry holds no subjects")?;
            }
            for s in subjects {
                writeln!(out, "{s}")?;
            }
            Ok(())
        }),
        Answer::Versions { subject, versions } => {
            ui.report(json!({"subject": subject, "versions": versions}), |out| {
                for v in versions {
                    writeln!(out, "{v}")?;
                }
                Ok(())
            })
        }
        Answer::Schema {
            schema,
            references,
            arrow,
        } => show(ui, schema, references, arrow.as_deref()),
        Answer::IdUsage { id, usage } => ui.report(
            json!({"id": id, "versions": usage.iter().map(|u| json!({"subject": u.subject, "version": u.version})).collect::<Vec<_>>()}),
            |out| {
                let mut t = table(&["subject", "version"]);
                for u in usage {
                    t.add_row(vec![u.subject.clone(), u.version.to_string()]);
                }
                writeln!(out, "{t}")
            },
        ),
        Answer::Compatibility { subject, level } => ui.report(
            json!({"subject": subject, "compatibility": level}),
            |out| match subject {
                Some(s) => writeln!(out, "{s}: {level}"),
                None => writeln!(out, "global: {level}"),
            },
        ),
    }
}

fn show(
    ui: &Ui,
    s: &RegisteredSchema,
    refs: &[ResolvedReference],
    arrow_text: Option<&str>,
) -> CliResult<()> {
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
        if let Some(a) = arrow_text {
            writeln!(out, "arrow schema:\n{a}")?;
        }
        Ok(())
    })
}
