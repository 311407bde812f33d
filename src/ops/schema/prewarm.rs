//! `schema prewarm`: intern subjects from flags and/or a manifest, resolve them all in
//! one mode, answer one row per subject, and optionally write the cache file atomically.
//! The exit code follows from the answer ([`Prewarmed::outcome`]): 1 when any subject
//! failed, 4 when the registry could not be reached at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::schema::avro::canonical::{canonical_text, dropped_attributes};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::cache_file::{CacheFile, SubjectEntry};
use crate::engine::schema::prewarm::{PrewarmMode, PrewarmReport, prewarm_with_written};
use crate::engine::schema::registry::{Registry, SchemaSpec, SchemaType};
use crate::io::path_conflict::Named;
use crate::ops::schema::connect::{Connected, registry_error, schema_error};
use crate::ops::schema::source::{SubjectSource, local_spec, read_manifest, reference_texts};
use crate::ops::{Error, Result};

/// Which text `auto-register` sends for an Avro schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RegisterForm {
    /// The parsing canonical form (drops `default`, `doc`, `aliases`, `order`).
    #[default]
    Canonical,
    /// The file exactly as written.
    Written,
}

/// What to prewarm and how.
#[derive(Debug, Clone)]
pub struct PrewarmPlan {
    /// `--subject` with `--schema-file` (and its kind, message type, references).
    pub subject: Option<SubjectSource>,
    /// `--manifest`: more subjects.
    pub manifest: Option<PathBuf>,
    pub mode: PrewarmMode,
    pub register_form: RegisterForm,
    /// `--write-cache`.
    pub write_cache: Option<PathBuf>,
    /// A dry run changes nothing: auto-register only looks the schemas up, and no cache
    /// file is written.
    pub dry_run: bool,
    /// Files the command reads besides the schemas (`--command-config`): the cache file
    /// never replaces one.
    pub read_files: Vec<Named>,
}

/// One row of the answer.
#[derive(Debug, Clone)]
pub struct SubjectRow {
    pub subject: String,
    pub id: Option<u32>,
    pub version: Option<i32>,
    pub texts_differ: Option<bool>,
    /// lookup-only: `written` or `canonical`; auto-register: the form sent.
    pub form: Option<&'static str>,
    /// auto-register of Avro: whether the text sent is not the file's text.
    pub differs_from_file: Option<bool>,
    /// Attributes of the file the registered (canonical) text lacks.
    pub dropped: Vec<String>,
    pub error: Option<String>,
    pub unreachable: bool,
}

/// The answer of a prewarm.
#[derive(Debug)]
pub struct Prewarmed {
    /// The mode used (a dry run's auto-register is a lookup).
    pub mode: PrewarmMode,
    pub rows: Vec<SubjectRow>,
    /// Every subject resolved (and the cache file, if asked for, was written unless a dry run).
    pub all_resolved: bool,
    any_resolved: bool,
    url: String,
}

impl Prewarmed {
    /// Ok when every subject resolved; unreachable (exit 4) when none did because the
    /// registry is unreachable; a failure (exit 1) otherwise.
    pub fn outcome(&self) -> Result<()> {
        let failed: Vec<&SubjectRow> = self.rows.iter().filter(|r| r.error.is_some()).collect();
        if failed.is_empty() {
            return Ok(());
        }
        let summary = format!(
            "{} of {} subjects failed to resolve",
            failed.len(),
            self.rows.len()
        );
        if !self.any_resolved && failed.iter().all(|r| r.unreachable) {
            Err(Error::unreachable(format!(
                "{summary}: the schema registry at {} is unreachable",
                self.url
            )))
        } else {
            Err(Error::failure(summary))
        }
    }
}

/// Resolves the plan's subjects through the registry `connect` gives (asked only once
/// the local files are read and checked).
pub fn prewarm(
    plan: &PrewarmPlan,
    connect: impl FnOnce() -> Result<Connected>,
) -> Result<Prewarmed> {
    let sources = collect_sources(plan)?;
    if let Some(cache) = &plan.write_cache {
        check_paths(plan, &sources, cache)?;
    }
    let texts: Vec<String> = sources
        .iter()
        .map(|s| crate::io::schema_file::read(&s.file).map_err(Error::from))
        .collect::<Result<_>>()?;
    let connected = connect()?;
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
    let mut mode = plan.mode;
    if plan.dry_run && mode == PrewarmMode::AutoRegister {
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
            if plan.register_form == RegisterForm::Written && mode == PrewarmMode::AutoRegister {
                spec = as_written.clone();
            } else {
                let lost = dropped_attributes(text)
                    .map_err(|e| Error::usage(format!("schema file {}: {e}", s.file.display())))?;
                dropped.insert(s.subject.clone(), lost);
            }
            written.insert(s.subject.clone(), as_written);
        }
        if !cache.intern(&s.subject, spec.clone()) {
            return Err(Error::usage(format!(
                "subject {} is listed twice; the first schema interned for a subject wins, so list it once",
                s.subject
            )));
        }
        locals.push((s.subject.clone(), spec));
    }
    let report =
        prewarm_with_written(&cache, mode, &written).map_err(|e| Error::failure(e.to_string()))?;

    let rows = report_rows(plan, registry, &report, &locals, mode, (&written, &dropped));

    if let Some(path) = &plan.write_cache
        && report.failures.is_empty()
        && !plan.dry_run
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
    Ok(Prewarmed {
        mode,
        rows,
        all_resolved: report.failures.is_empty(),
        any_resolved: !report.resolved.is_empty(),
        url: connected.url,
    })
}

/// The subjects to resolve: `--subject`/`--schema-file`, then the manifest's entries.
fn collect_sources(plan: &PrewarmPlan) -> Result<Vec<SubjectSource>> {
    let mut sources: Vec<SubjectSource> = plan.subject.iter().cloned().collect();
    if let Some(manifest) = &plan.manifest {
        sources.extend(read_manifest(manifest)?);
    }
    if sources.is_empty() {
        return Err(Error::usage(
            "nothing to prewarm: pass --subject S --schema-file FILE and/or --manifest FILE",
        ));
    }
    Ok(sources)
}

/// One row per subject: its id and version, or the registry's error.
fn report_rows(
    plan: &PrewarmPlan,
    registry: &dyn Registry,
    report: &PrewarmReport,
    locals: &[(String, SchemaSpec)],
    mode: PrewarmMode,
    (written, dropped): (
        &BTreeMap<String, SchemaSpec>,
        &BTreeMap<String, Vec<String>>,
    ),
) -> Vec<SubjectRow> {
    let mut rows = Vec::new();
    for (subject, local) in locals {
        if let Some(e) = report.failures.get(subject) {
            rows.push(SubjectRow {
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
        if version.is_none() && !plan.dry_run {
            // register answers only the id; one lookup per subject fills the report's version.
            version = registry.lookup(subject, local).ok().and_then(|f| f.version);
        }
        rows.push(SubjectRow {
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
                    Some(match plan.register_form {
                        RegisterForm::Canonical => "canonical",
                        RegisterForm::Written => "written",
                    })
                }
                _ => None,
            },
            differs_from_file: (mode == PrewarmMode::AutoRegister
                && local.schema_type == SchemaType::Avro)
                .then(|| {
                    plan.register_form == RegisterForm::Canonical && written.contains_key(subject)
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
fn check_paths(plan: &PrewarmPlan, sources: &[SubjectSource], cache: &Path) -> Result<()> {
    use crate::io::path_conflict::check;
    let mut named = vec![Named::output(
        format!("--write-cache {}", cache.display()),
        cache,
    )];
    named.extend(plan.read_files.iter().cloned());
    if let Some(p) = &plan.manifest {
        named.push(Named::input(format!("--manifest {}", p.display()), p));
    }
    for s in sources {
        named.push(Named::input(
            format!("the schema file of {} ({})", s.subject, s.file.display()),
            &s.file,
        ));
    }
    check(&named).map_err(Error::usage)
}

fn write_cache(
    path: &Path,
    url: &str,
    registry: &std::sync::Arc<crate::io::registry_client::HttpRegistry>,
    report: &PrewarmReport,
    locals: &[(String, SchemaSpec)],
    mode: PrewarmMode,
    rows: &[SubjectRow],
) -> Result<()> {
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
            .map_err(|e| schema_error(&e, &format!("fetch writer schema {}", res.id as u32)))?;
        file.add_writer(&writer);
    }
    crate::io::atomic_file::write_whole(path, file.to_json().as_bytes())
        .map_err(|e| Error::failure(format!("cannot write schema cache {}: {e}", path.display())))
}
