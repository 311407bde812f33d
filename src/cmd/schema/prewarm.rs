//! `schema prewarm`: arguments into an `ops::schema::prewarm` plan, and its answer as
//! one row per subject (table or JSON); the use case, the cache file and the exit code's
//! rule are `ops::schema::prewarm`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::schema::connect::{ConnectOptions, connect};
use crate::engine::schema::prewarm::PrewarmMode;
use crate::ops::schema::prewarm::{PrewarmPlan, Prewarmed, SubjectRow, prewarm};
use crate::ops::schema::source::{Kind, SubjectSource, kind_for, parse_reference};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ModeArg {
    /// Register the schema (idempotent): POST /subjects/{s}/versions.
    #[default]
    AutoRegister,
    /// The exact schema must already be registered under the subject: POST /subjects/{s}.
    LookupOnly,
    /// Adopt the subject's latest version: GET /subjects/{s}/versions/latest.
    UseLatest,
}

impl From<ModeArg> for PrewarmMode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::AutoRegister => PrewarmMode::AutoRegister,
            ModeArg::LookupOnly => PrewarmMode::LookupOnly,
            ModeArg::UseLatest => PrewarmMode::UseLatest,
        }
    }
}

/// Which text `auto-register` sends for an Avro schema (`ops`'s `RegisterForm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RegisterForm {
    /// The parsing canonical form krabka-streams-go registers (same id as Go and Java
    /// clients registering canonically); drops `default`, `doc`, `aliases`, `order`.
    #[default]
    Canonical,
    /// The file exactly as written (what Confluent serializers and REST users register).
    Written,
}

impl From<RegisterForm> for crate::ops::schema::prewarm::RegisterForm {
    fn from(f: RegisterForm) -> Self {
        match f {
            RegisterForm::Canonical => Self::Canonical,
            RegisterForm::Written => Self::Written,
        }
    }
}

#[derive(Debug, Args)]
pub struct PrewarmArgs {
    /// Subject to resolve (with --schema-file); more subjects go in --manifest.
    #[arg(long, value_name = "SUBJECT", requires = "schema_file")]
    pub subject: Option<String>,
    /// Schema file of --subject (.avsc/.json Avro, .proto Protobuf, or set --type).
    #[arg(long = "schema-file", value_name = "FILE", requires = "subject")]
    pub schema_file: Option<PathBuf>,
    /// Schema kind of --schema-file [default: protobuf for .proto, else avro].
    #[arg(long = "type", value_enum, value_name = "KIND")]
    pub kind: Option<Kind>,
    /// Full Protobuf message name [default: the file's first message].
    #[arg(long = "message-type", value_name = "NAME")]
    pub message_type: Option<String>,
    /// Schema reference of --subject, repeatable.
    #[arg(long = "reference", value_name = "NAME=SUBJECT:VERSION", value_parser = parse_reference)]
    pub references: Vec<crate::engine::schema::registry::SchemaReference>,
    /// JSON manifest of subjects (see the `schema` docs: subject or topic+role, schema_file,
    /// kind, message_type, references).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// How each subject gets its id. lookup-only tries the file as written first, then
    /// its canonical form, and reports which one the registry knew.
    #[arg(long, value_enum, default_value_t = ModeArg::AutoRegister)]
    pub mode: ModeArg,
    /// The text auto-register sends for Avro schemas (Protobuf and JSON Schema are always
    /// sent as written).
    #[arg(long = "register-form", value_enum, default_value_t = RegisterForm::Canonical)]
    pub register_form: RegisterForm,
    /// Write the resolved subjects and their writer schemas to this cache file (atomically),
    /// for `tail --schema-cache` and `run --schema-cache`.
    #[arg(long = "write-cache", value_name = "FILE")]
    pub write_cache: Option<PathBuf>,
}

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: PrewarmArgs) -> CliResult<()> {
    let plan = PrewarmPlan {
        subject: match (&args.subject, &args.schema_file) {
            (Some(subject), Some(file)) => Some(SubjectSource {
                subject: subject.clone(),
                kind: args.kind.unwrap_or_else(|| kind_for(file)),
                file: file.clone(),
                message_type: args.message_type.clone(),
                references: args.references.clone(),
            }),
            _ => None,
        },
        manifest: args.manifest.clone(),
        mode: args.mode.into(),
        register_form: args.register_form.into(),
        write_cache: args.write_cache.clone(),
        dry_run: global.output.dry_run,
        read_files: global.connection.read_files(),
    };
    let answer = prewarm(&plan, || connect(global, conn))?;
    render(global, &args, &answer)?;
    answer.outcome()
}

/// The report: a table (and notes) or the JSON document.
fn render(global: &GlobalArgs, args: &PrewarmArgs, answer: &Prewarmed) -> CliResult<()> {
    let (mode, rows, all_resolved): (PrewarmMode, &[SubjectRow], bool) =
        (answer.mode, &answer.rows, answer.all_resolved);
    let ui = Ui::new(&global.output);
    let data = json!({
        "mode": mode.name(),
        "subjects": rows.iter().map(|r| json!({
            "subject": r.subject,
            "id": r.id,
            "version": r.version,
            "mode": mode.name(),
            "texts_differ": r.texts_differ,
            "form": r.form,
            "registered_text_differs_from_file": r.differs_from_file,
            "dropped_attributes": r.dropped,
            "error": r.error.as_ref().map(|m| json!({"message": m})),
        })).collect::<Vec<Value>>(),
        "cache_file": args.write_cache.as_ref().filter(|_| all_resolved).map(|p| p.display().to_string()),
    });
    ui.report(data, |out| {
        let mut t = table(&[
            "subject",
            "id",
            "version",
            "mode",
            "form",
            "texts differ",
            "error",
        ]);
        for r in rows {
            t.add_row(vec![
                r.subject.clone(),
                r.id.map_or("-".into(), |i| i.to_string()),
                r.version.map_or("-".into(), |v| v.to_string()),
                mode.name().to_string(),
                r.form.unwrap_or("-").to_string(),
                match r.texts_differ {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "-".into(),
                },
                r.error.clone().unwrap_or_default(),
            ]);
        }
        writeln!(out, "{t}")?;
        for r in rows.iter().filter(|r| !r.dropped.is_empty()) {
            writeln!(
                out,
                "note: {} was registered in canonical form, which differs from the file: it has no {} (a reader evolving from it sees no defaults); --register-form written registers the file as written",
                r.subject,
                r.dropped.join(", ")
            )?;
        }
        if let Some(p) = &args.write_cache {
            if all_resolved {
                writeln!(out, "wrote schema cache {}", p.display())?;
            } else {
                writeln!(
                    out,
                    "schema cache {} not written: some subjects failed",
                    p.display()
                )?;
            }
        }
        Ok(())
    })?;
    Ok(())
}
