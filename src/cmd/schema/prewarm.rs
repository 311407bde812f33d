//! `schema prewarm`: intern subjects from flags and/or a manifest, resolve them all in
//! one mode, print one row per subject, exit 1 when any failed (4 when the registry
//! could not be reached at all), and optionally write the cache file atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::schema::connect::{ConnectOptions, connect, registry_error};
use crate::engine::schema::avro::canonical::{canonical_text, dropped_attributes};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::cache_file::{CacheFile, SubjectEntry};
use crate::engine::schema::prewarm::{PrewarmMode, PrewarmReport, prewarm_with_written};
use crate::engine::schema::registry::{Registry, SchemaSpec, SchemaType};
use crate::ops::schema::source::{
    Kind, SubjectSource, kind_for, local_spec, parse_reference, read_manifest, reference_texts,
};

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

/// Which text `auto-register` sends for an Avro schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RegisterForm {
    /// The parsing canonical form krabka-streams-go registers (same id as Go and Java
    /// clients registering canonically); drops `default`, `doc`, `aliases`, `order`.
    #[default]
    Canonical,
    /// The file exactly as written (what Confluent serializers and REST users register).
    Written,
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

/// One report row.
struct Row {
    subject: String,
    id: Option<u32>,
    version: Option<i32>,
    texts_differ: Option<bool>,
    /// lookup-only: `written` or `canonical`; auto-register: the form sent.
    form: Option<&'static str>,
    /// auto-register of Avro: whether the text sent is not the file's text.
    differs_from_file: Option<bool>,
    /// Attributes of the file the registered (canonical) text lacks.
    dropped: Vec<String>,
    error: Option<String>,
    unreachable: bool,
}

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: PrewarmArgs) -> CliResult<()> {
    let sources = collect_sources(&args)?;
    if let Some(cache) = &args.write_cache {
        check_paths(global, &args, &sources, cache)?;
    }
    let texts: Vec<String> = sources
        .iter()
        .map(|s| crate::io::schema_file::read(&s.file).map_err(CliError::from))
        .collect::<CliResult<_>>()?;
    let connected = connect(global, conn)?;
    let registry: &dyn Registry = connected.registry.as_ref();
    let cache = SchemaCache::new(connected.registry.clone());
    // Files without references are validated before any registry call, so a bad file
    // never reaches the registry; referenced texts must be fetched first.
    let mut specs: Vec<Option<SchemaSpec>> = Vec::with_capacity(sources.len());
    for (s, text) in sources.iter().zip(&texts) {
        specs.push(if s.references.is_empty() {
            Some(local_spec(
                s.kind,
                text,
                &s.file,
                s.message_type.as_deref(),
                &[],
                &[],
            )?)
        } else {
            None
        });
    }
    let mut mode: PrewarmMode = args.mode.into();
    if global.output.dry_run && mode == PrewarmMode::AutoRegister {
        // Registering is a change: a dry run only looks the schemas up.
        mode = PrewarmMode::LookupOnly;
    }
    let mut locals: Vec<(String, SchemaSpec)> = Vec::new();
    // Avro subjects whose file text is not the registered (canonical) text.
    let mut written: BTreeMap<String, SchemaSpec> = BTreeMap::new();
    let mut dropped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((s, text), spec) in sources.iter().zip(&texts).zip(specs) {
        let spec = match spec {
            Some(spec) => spec,
            None => {
                let refs = reference_texts(Some(registry), &s.references)?;
                local_spec(
                    s.kind,
                    text,
                    &s.file,
                    s.message_type.as_deref(),
                    &s.references,
                    &refs,
                )?
            }
        };
        let mut spec = spec;
        if spec.schema_type == SchemaType::Avro && spec.schema != *text {
            let as_written = SchemaSpec {
                schema: text.clone(),
                ..spec.clone()
            };
            // Only registration sends the written form as ours; a lookup tries it first
            // and falls back to the canonical form either way.
            if args.register_form == RegisterForm::Written && mode == PrewarmMode::AutoRegister {
                spec = as_written.clone();
            } else {
                let lost = dropped_attributes(text).map_err(|e| {
                    CliError::usage(format!("schema file {}: {e}", s.file.display()))
                })?;
                dropped.insert(s.subject.clone(), lost);
            }
            written.insert(s.subject.clone(), as_written);
        }
        if !cache.intern(&s.subject, spec.clone()) {
            return Err(CliError::usage(format!(
                "subject {} is listed twice; the first schema interned for a subject wins, so list it once",
                s.subject
            )));
        }
        locals.push((s.subject.clone(), spec));
    }
    let report = prewarm_with_written(&cache, mode, &written)
        .map_err(|e| CliError::failure(e.to_string()))?;

    let rows = report_rows(
        global,
        &args,
        registry,
        &report,
        &locals,
        mode,
        (&written, &dropped),
    );

    if let Some(path) = &args.write_cache
        && report.failures.is_empty()
        && !global.output.dry_run
    {
        write_cache(
            path,
            &connected.url,
            &connected.registry,
            &report,
            &locals,
            mode,
            &rows,
        )?;
    }

    render(global, &args, mode, &rows, report.failures.is_empty())?;
    outcome(&rows, !report.resolved.is_empty(), &connected.url)
}

/// The subjects to resolve: `--subject`/`--schema-file`, then the manifest's entries.
fn collect_sources(args: &PrewarmArgs) -> CliResult<Vec<SubjectSource>> {
    let mut sources: Vec<SubjectSource> = Vec::new();
    if let (Some(subject), Some(file)) = (&args.subject, &args.schema_file) {
        sources.push(SubjectSource {
            subject: subject.clone(),
            kind: args.kind.unwrap_or_else(|| kind_for(file)),
            file: file.clone(),
            message_type: args.message_type.clone(),
            references: args.references.clone(),
        });
    }
    if let Some(manifest) = &args.manifest {
        sources.extend(read_manifest(manifest)?);
    }
    if sources.is_empty() {
        return Err(CliError::usage(
            "nothing to prewarm: pass --subject S --schema-file FILE and/or --manifest FILE",
        ));
    }
    Ok(sources)
}

/// One row per subject: its id and version, or the registry's error.
fn report_rows(
    global: &GlobalArgs,
    args: &PrewarmArgs,
    registry: &dyn Registry,
    report: &PrewarmReport,
    locals: &[(String, SchemaSpec)],
    mode: PrewarmMode,
    (written, dropped): (
        &BTreeMap<String, SchemaSpec>,
        &BTreeMap<String, Vec<String>>,
    ),
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (subject, local) in locals {
        if let Some(e) = report.failures.get(subject) {
            rows.push(Row {
                subject: subject.clone(),
                id: None,
                version: None,
                texts_differ: None,
                form: None,
                differs_from_file: None,
                dropped: Vec::new(),
                error: Some(registry_error(e, subject).message),
                unreachable: e.is_unreachable(),
            });
            continue;
        }
        let Some(res) = report.resolved.get(subject) else {
            continue;
        };
        let mut version = res.version;
        if version.is_none() && !global.output.dry_run {
            // register answers only the id; one lookup per subject fills the report's version.
            version = registry.lookup(subject, local).ok().and_then(|f| f.version);
        }
        rows.push(Row {
            subject: subject.clone(),
            id: Some(res.id as u32),
            version,
            texts_differ: res
                .registry_text
                .as_deref()
                .map(|remote| texts_differ(local, remote)),
            form: match mode {
                PrewarmMode::LookupOnly => res.matched.map(|m| m.name()),
                PrewarmMode::AutoRegister if local.schema_type == SchemaType::Avro => {
                    Some(match args.register_form {
                        RegisterForm::Canonical => "canonical",
                        RegisterForm::Written => "written",
                    })
                }
                _ => None,
            },
            differs_from_file: (mode == PrewarmMode::AutoRegister
                && local.schema_type == SchemaType::Avro)
                .then(|| {
                    args.register_form == RegisterForm::Canonical && written.contains_key(subject)
                }),
            dropped: match mode {
                PrewarmMode::AutoRegister => dropped.get(subject).cloned().unwrap_or_default(),
                _ => Vec::new(),
            },
            error: None,
            unreachable: false,
        });
    }
    rows
}

/// The report: a table (and notes) or the JSON document.
fn render(
    global: &GlobalArgs,
    args: &PrewarmArgs,
    mode: PrewarmMode,
    rows: &[Row],
    all_resolved: bool,
) -> CliResult<()> {
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

/// Exit 0 when every subject resolved; 4 when none did because the registry is
/// unreachable; 1 otherwise.
fn outcome(rows: &[Row], any_resolved: bool, url: &str) -> CliResult<()> {
    let failed: Vec<&Row> = rows.iter().filter(|r| r.error.is_some()).collect();
    if failed.is_empty() {
        return Ok(());
    }
    let summary = format!(
        "{} of {} subjects failed to resolve",
        failed.len(),
        rows.len()
    );
    if !any_resolved && failed.iter().all(|r| r.unreachable) {
        Err(CliError::unreachable(format!(
            "{summary}: the schema registry at {} is unreachable",
            url
        )))
    } else {
        Err(CliError::failure(summary))
    }
}

/// Whether the registry's text differs from ours (Avro compared in canonical form).
fn texts_differ(local: &SchemaSpec, remote: &str) -> bool {
    if local.schema == remote {
        return false;
    }
    match local.schema_type {
        SchemaType::Avro => canonical_text(remote).map_or(true, |c| c != local.schema),
        _ => true,
    }
}

/// `--write-cache` never replaces a file this command reads (`io::path_conflict`):
/// the manifest, a schema file, `--command-config`. Checked before the registry is asked.
fn check_paths(
    global: &GlobalArgs,
    args: &PrewarmArgs,
    sources: &[SubjectSource],
    cache: &std::path::Path,
) -> CliResult<()> {
    use crate::io::path_conflict::{Named, check};
    let mut named = vec![Named::output(
        format!("--write-cache {}", cache.display()),
        cache,
    )];
    named.extend(global.connection.read_files());
    if let Some(p) = &args.manifest {
        named.push(Named::input(format!("--manifest {}", p.display()), p));
    }
    for s in sources {
        named.push(Named::input(
            format!("the schema file of {} ({})", s.subject, s.file.display()),
            &s.file,
        ));
    }
    check(&named).map_err(CliError::usage)
}

fn write_cache(
    path: &Path,
    url: &str,
    registry: &std::sync::Arc<crate::io::registry_client::HttpRegistry>,
    report: &crate::engine::schema::prewarm::PrewarmReport,
    locals: &[(String, SchemaSpec)],
    mode: PrewarmMode,
    rows: &[Row],
) -> CliResult<()> {
    let mut file = CacheFile::new(Some(url.to_string()));
    // Writer schemas come from the registry by id (D6), references resolved.
    let fetcher = SchemaCache::new(registry.clone());
    for (subject, local) in locals {
        let Some(res) = report.resolved.get(subject) else {
            continue;
        };
        file.subjects.insert(
            subject.clone(),
            SubjectEntry {
                id: res.id as u32,
                version: rows
                    .iter()
                    .find(|r| &r.subject == subject)
                    .and_then(|r| r.version),
                mode: Some(mode.name().to_string()),
                schema_type: local.schema_type.to_string(),
                schema: Some(local.schema.clone()),
            },
        );
        if file.schemas.contains_key(&(res.id as u32).to_string()) {
            continue;
        }
        let writer = fetcher
            .writer_schema_wait(res.id, std::time::Duration::from_secs(60))
            .map_err(|e| {
                crate::cmd::schema::connect::schema_error(
                    &e,
                    &format!("fetch writer schema {}", res.id as u32),
                )
            })?;
        file.add_writer(&writer);
    }
    crate::io::atomic_file::write_whole(path, file.to_json().as_bytes()).map_err(|e| {
        CliError::failure(format!("cannot write schema cache {}: {e}", path.display()))
    })
}
