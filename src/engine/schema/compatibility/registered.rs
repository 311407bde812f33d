//! A candidate checked against registered versions the way a registration would be:
//! the subject's level (subject config, else the global one when the subject has none)
//! decides the direction and the versions (`*_TRANSITIVE`: every registered version,
//! newest first; otherwise the latest; `NONE`: none). A failed level lookup is an error.

use super::{CompatibilityResult, Level, Mode, SchemaText, check};
use crate::engine::schema::error::SchemaError;
use crate::engine::schema::registry::{
    RegisteredSchema, Registry, RegistryError, SUBJECT_NOT_FOUND, SchemaType,
};
use crate::engine::schema::resolve::resolved_schema_by_id;

/// The registry's answer for a subject with no subject-level compatibility of its own.
pub const SUBJECT_LEVEL_NOT_CONFIGURED: i64 = 40408;

/// What to check against.
#[derive(Debug, Clone)]
pub struct Against<'a> {
    pub subject: &'a str,
    /// `Some`: that version; `None`: the latest.
    pub version: Option<i32>,
    /// Check the chosen version alone; otherwise the level names the versions
    /// (`*_TRANSITIVE`: every one).
    pub pinned: bool,
    /// `None`: the subject's level from the registry.
    pub mode: Option<Mode>,
    pub candidate: &'a str,
    /// `None`: the registered schema's kind.
    pub kind: Option<SchemaType>,
}

/// Where the level came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelSource {
    Flag,
    Subject,
    Global,
}

impl LevelSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LevelSource::Flag => "flag",
            LevelSource::Subject => "subject",
            LevelSource::Global => "global",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Checked {
    pub version: i32,
    pub id: i32,
    pub result: CompatibilityResult,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub mode: Mode,
    pub level_source: LevelSource,
    /// The named version, or the latest.
    pub target: RegisteredSchema,
    /// Newest first; empty for `NONE`.
    pub checked: Vec<Checked>,
}

impl Outcome {
    pub fn compatible(&self) -> bool {
        self.checked.iter().all(|c| c.result.compatible())
    }
}

#[derive(Debug, Clone)]
pub enum AgainstError {
    /// A registry call failed; `what` says which.
    Registry { what: String, error: RegistryError },
    /// The subject's level is not one of the registry levels.
    Level(String),
    /// `--type` differs from the registered kind.
    Kind {
        registered: SchemaType,
        given: SchemaType,
    },
    /// The candidate does not parse.
    Candidate(SchemaError),
    /// A registered version does not parse.
    Registered { version: i32, error: SchemaError },
}

fn registry(what: impl Into<String>) -> impl FnOnce(RegistryError) -> AgainstError {
    let what = what.into();
    move |error| AgainstError::Registry { what, error }
}

/// The subject's level: its own, else (no subject-level config) the global one.
pub fn subject_mode(
    registry_: &dyn Registry,
    subject: &str,
) -> Result<(Mode, LevelSource), AgainstError> {
    let (text, source) = match registry_.compatibility(Some(subject)) {
        Ok(l) => (l, LevelSource::Subject),
        Err(e)
            if matches!(
                e.code(),
                Some(SUBJECT_LEVEL_NOT_CONFIGURED) | Some(SUBJECT_NOT_FOUND)
            ) =>
        {
            let l = registry_
                .compatibility(None)
                .map_err(registry("get the global compatibility level"))?;
            (l, LevelSource::Global)
        }
        Err(e) => {
            return Err(AgainstError::Registry {
                what: format!("get the compatibility level of {subject}"),
                error: e,
            });
        }
    };
    let mode = Mode::from_registry(&text).map_err(AgainstError::Level)?;
    Ok((mode, source))
}

pub fn check_against(registry_: &dyn Registry, a: &Against<'_>) -> Result<Outcome, AgainstError> {
    let (mode, level_source) = match a.mode {
        Some(m) => (m, LevelSource::Flag),
        None => subject_mode(registry_, a.subject)?,
    };
    let target = match a.version {
        Some(v) => registry_.version(a.subject, v),
        None => registry_.latest(a.subject),
    }
    .map_err(registry(match a.version {
        Some(v) => format!("get {}:{v}", a.subject),
        None => format!("get {}", a.subject),
    }))?;
    let kind = a.kind.unwrap_or(target.spec.schema_type);
    if kind != target.spec.schema_type {
        return Err(AgainstError::Kind {
            registered: target.spec.schema_type,
            given: kind,
        });
    }
    let target_refs = references(registry_, target.id)?;
    // The candidate imports what the target version imports (by reference name).
    let candidate = SchemaText {
        schema_type: kind,
        text: a.candidate,
        references: &target_refs,
    };
    let Some(level) = mode.level else {
        // NONE checks nothing, but an unparsable candidate is still refused, as the
        // registry refuses it (42201).
        check(candidate, candidate, Level::Backward).map_err(AgainstError::Candidate)?;
        return Ok(Outcome {
            mode,
            level_source,
            target,
            checked: Vec::new(),
        });
    };
    let every = !a.pinned && a.version.is_none() && mode.transitive;
    let mut versions: Vec<i32> = if every {
        registry_
            .versions(a.subject)
            .map_err(registry(format!("list the versions of {}", a.subject)))?
    } else {
        vec![target.version.unwrap_or(0)]
    };
    versions.sort_unstable_by(|x, y| y.cmp(x));
    let mut checked = Vec::new();
    for v in versions {
        let (previous, refs) = if !every || Some(v) == target.version {
            (target.clone(), target_refs.clone())
        } else {
            let p = registry_
                .version(a.subject, v)
                .map_err(registry(format!("get {}:{v}", a.subject)))?;
            let r = references(registry_, p.id)?;
            (p, r)
        };
        let result = check(
            SchemaText {
                schema_type: kind,
                text: &previous.spec.schema,
                references: &refs,
            },
            candidate,
            level,
        )
        .map_err(|e| {
            if e.to_string().starts_with("invalid candidate") {
                AgainstError::Candidate(e)
            } else {
                AgainstError::Registered {
                    version: v,
                    error: e,
                }
            }
        })?;
        checked.push(Checked {
            version: previous.version.unwrap_or(v),
            id: previous.id,
            result,
        });
    }
    Ok(Outcome {
        mode,
        level_source,
        target,
        checked,
    })
}

fn references(registry_: &dyn Registry, id: i32) -> Result<Vec<(String, String)>, AgainstError> {
    let resolved = resolved_schema_by_id(registry_, id).map_err(registry(format!(
        "resolve the references of schema {}",
        id as u32
    )))?;
    Ok(resolved
        .references
        .into_iter()
        .map(|r| (r.name, r.spec_text))
        .collect())
}
