//! Prewarm (semantics §2): resolve every interned subject to an id, concurrently,
//! with exactly one registry call per subject. This is where registry I/O belongs;
//! the poll loop then only reads the cache.

use std::collections::BTreeMap;
use std::fmt;

use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::error::SchemaError;
use crate::engine::schema::registry::{Registry, RegistryError, SCHEMA_NOT_FOUND, SchemaSpec};

/// How a subject gets its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrewarmMode {
    /// `POST /subjects/{s}/versions`: idempotent register.
    #[default]
    AutoRegister,
    /// `POST /subjects/{s}`: the schema must already be under the subject (40403 otherwise).
    /// The text as the author wrote it is looked up first (other clients register it
    /// verbatim), then the registered form (Avro: the canonical form).
    LookupOnly,
    /// `GET /subjects/{s}/versions/latest`: adopt the registry's id and messageType.
    UseLatest,
}

impl PrewarmMode {
    pub fn name(self) -> &'static str {
        match self {
            PrewarmMode::AutoRegister => "auto-register",
            PrewarmMode::LookupOnly => "lookup-only",
            PrewarmMode::UseLatest => "use-latest",
        }
    }

    /// The Go library's numeric mode; anything else is `unknown register mode <n>`.
    pub fn from_code(code: i32) -> Result<Self, SchemaError> {
        match code {
            0 => Ok(PrewarmMode::AutoRegister),
            1 => Ok(PrewarmMode::LookupOnly),
            2 => Ok(PrewarmMode::UseLatest),
            n => Err(SchemaError::invalid(format!("unknown register mode {n}"))),
        }
    }
}

impl fmt::Display for PrewarmMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What one subject resolved to, with what the registry said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub id: i32,
    /// Known for lookup-only and use-latest (register answers only the id).
    pub version: Option<i32>,
    /// The registry's text when the call answered one (lookup-only, use-latest).
    pub registry_text: Option<String>,
    pub message_type: Option<String>,
    /// Lookup-only: which form the registry knew.
    pub matched: Option<Matched>,
}

/// The form of a schema a lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched {
    /// The text exactly as the author wrote it.
    Written,
    /// The form krabka registers (Avro: the parsing canonical form).
    Registered,
}

impl Matched {
    pub fn name(self) -> &'static str {
        match self {
            Matched::Written => "written",
            Matched::Registered => "canonical",
        }
    }
}

/// The outcome of one prewarm: successes stay cached even when others failed.
#[derive(Debug, Clone, Default)]
pub struct PrewarmReport {
    pub resolved: BTreeMap<String, Resolution>,
    pub failures: BTreeMap<String, RegistryError>,
}

impl PrewarmReport {
    pub fn successful(&self) -> bool {
        self.failures.is_empty()
    }

    /// `subject → id` of the successes.
    pub fn resolved_ids(&self) -> BTreeMap<String, i32> {
        self.resolved
            .iter()
            .map(|(s, r)| (s.clone(), r.id))
            .collect()
    }

    /// The joined error: one `<subject>: <err>` per failure, or `None` when all resolved.
    pub fn joined_error(&self) -> Option<String> {
        (!self.failures.is_empty()).then(|| {
            self.failures
                .iter()
                .map(|(s, e)| format!("{s}: {e}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }
}

/// At most this many registry calls run at once.
const MAX_PARALLEL: usize = 8;

/// Resolves every interned subject of `cache` through its registry in `mode`.
pub fn prewarm(cache: &SchemaCache, mode: PrewarmMode) -> Result<PrewarmReport, SchemaError> {
    prewarm_with_written(cache, mode, &BTreeMap::new())
}

/// [`prewarm`], with the author's text of subjects whose registered form differs from
/// it (subject → spec as written): lookup-only tries that text first.
pub fn prewarm_with_written(
    cache: &SchemaCache,
    mode: PrewarmMode,
    written: &BTreeMap<String, SchemaSpec>,
) -> Result<PrewarmReport, SchemaError> {
    let registry = cache
        .registry()
        .cloned()
        .ok_or_else(|| SchemaError::invalid("prewarm needs a schema registry"))?;
    let subjects = cache.interned();
    let mut report = PrewarmReport::default();
    for chunk in subjects.chunks(MAX_PARALLEL) {
        let results: Vec<(String, Result<Resolution, RegistryError>)> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|(subject, local)| {
                        let registry = registry.as_ref();
                        scope.spawn(move || {
                            (
                                subject.clone(),
                                resolve_one(
                                    registry,
                                    subject,
                                    &local.spec,
                                    written.get(subject),
                                    mode,
                                ),
                            )
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .zip(chunk)
                    .map(|(h, (subject, _))| {
                        h.join().unwrap_or_else(|_| {
                            (
                                subject.clone(),
                                Err(RegistryError::protocol("the prewarm worker panicked")),
                            )
                        })
                    })
                    .collect()
            });
        for ((subject, result), (_, local)) in results.into_iter().zip(chunk) {
            match result {
                Ok(res) => {
                    cache.record_resolved(&subject, res.id, &local.spec, res.message_type.clone());
                    report.resolved.insert(subject, res);
                }
                Err(e) => {
                    report.failures.insert(subject, e);
                }
            }
        }
    }
    Ok(report)
}

fn resolve_one(
    registry: &dyn Registry,
    subject: &str,
    local: &SchemaSpec,
    written: Option<&SchemaSpec>,
    mode: PrewarmMode,
) -> Result<Resolution, RegistryError> {
    match mode {
        PrewarmMode::AutoRegister => Ok(Resolution {
            id: registry.register(subject, local)?,
            version: None,
            registry_text: None,
            message_type: local.message_type.clone(),
            matched: None,
        }),
        PrewarmMode::LookupOnly => {
            let written = written.filter(|w| w.schema != local.schema);
            let (found, matched) = match written {
                None => (registry.lookup(subject, local)?, Matched::Registered),
                Some(w) => match registry.lookup(subject, w) {
                    Ok(found) => (found, Matched::Written),
                    Err(e) if e.code() == Some(SCHEMA_NOT_FOUND) => {
                        match registry.lookup(subject, local) {
                            Ok(found) => (found, Matched::Registered),
                            Err(mut e) => {
                                if e.code() == Some(SCHEMA_NOT_FOUND) {
                                    e.message = format!(
                                        "neither the schema as written nor its canonical form is registered under {subject}: {}",
                                        e.message
                                    );
                                }
                                return Err(e);
                            }
                        }
                    }
                    Err(e) => return Err(e),
                },
            };
            Ok(Resolution {
                id: found.id,
                version: found.version,
                registry_text: Some(found.spec.schema),
                message_type: local.message_type.clone(),
                matched: Some(matched),
            })
        }
        PrewarmMode::UseLatest => {
            let latest = registry.latest(subject)?;
            Ok(Resolution {
                id: latest.id,
                version: latest.version,
                registry_text: Some(latest.spec.schema),
                message_type: latest.spec.message_type,
                matched: None,
            })
        }
    }
}
