//! `schema check`: a local schema file against registered versions of a subject, by the
//! subject's compatibility level or a given one (`*_TRANSITIVE` against every version,
//! `NONE` as no check). Incompatibility is an answer, not an error: the caller reports
//! every one and exits 3.

use std::path::PathBuf;

use crate::engine::schema::compatibility::Mode;
use std::sync::Arc;

use crate::engine::schema::compatibility::registered::{
    Against, AgainstError, Outcome, check_against,
};
use crate::engine::schema::registry::{Registry, SchemaType};
use crate::io::schema_file;
use crate::ops::schema::connect::registry_error;
use crate::ops::{Error, Result};

/// What to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckPlan {
    /// `SUBJECT[:VERSION|latest]` as given (quoted in errors).
    pub against: String,
    pub file: PathBuf,
    /// The level to check by; the subject's (or the registry's) when `None`.
    pub mode: Option<Mode>,
    /// The schema kind the file must be; the registered version's when `None`.
    pub kind: Option<SchemaType>,
}

/// What the check found.
#[derive(Debug, Clone)]
pub struct Checked {
    pub subject: String,
    pub outcome: Outcome,
}

/// `SUBJECT`, `SUBJECT:latest` or `SUBJECT:N`: the subject, and whether a version is
/// pinned (`Some(None)` = latest).
fn parse_against(against: &str) -> Result<(String, Option<Option<i32>>)> {
    match against.rsplit_once(':') {
        Some((s, "latest")) => Ok((s.to_string(), Some(None))),
        Some((s, v)) => {
            let n = v.parse::<i32>().ok().filter(|v| *v > 0).ok_or_else(|| {
                Error::usage(format!(
                    "--against {against}: version {v:?} is not a positive integer or latest"
                ))
            })?;
            Ok((s.to_string(), Some(Some(n))))
        }
        None => Ok((against.to_string(), None)),
    }
}

/// Parses `against` and reads the file (usage errors naming them), then connects with
/// `registry` (called only once both are good) and checks the file against the registered
/// versions the level names.
pub fn check<R: Registry + 'static>(
    plan: &CheckPlan,
    registry: impl FnOnce() -> Result<Arc<R>>,
) -> Result<Checked> {
    let (subject, pinned) = parse_against(&plan.against)?;
    let candidate = schema_file::read(&plan.file)?;
    let registry = registry()?;
    let against = Against {
        subject: &subject,
        version: pinned.flatten(),
        pinned: pinned.is_some(),
        mode: plan.mode,
        candidate: &candidate,
        kind: plan.kind,
    };
    let outcome = check_against(registry.as_ref(), &against).map_err(|e| match e {        AgainstError::Registry { what, error } => registry_error(&error, &what),
        AgainstError::Level(m) => Error::failure(format!("{subject}: {m}")),
        AgainstError::Kind { registered, given } => Error::usage(format!(
            "{} is {registered} but --type says {given}; a schema can only be checked against one of its own kind",
            plan.against
        )),
        AgainstError::Candidate(e) => Error::usage(format!("{}: {e}", plan.file.display())),
        AgainstError::Registered { version, error } => {
            Error::failure(format!("{subject}:{version}: {error}"))
        }
    })?;
    Ok(Checked { subject, outcome })
}
