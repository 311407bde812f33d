//! Local compatibility checks (behaviour §2), no registry involved: is a candidate
//! schema compatible with a previous one at BACKWARD (the candidate reads data written
//! with the previous), FORWARD (the previous reads the candidate's data) or FULL (both)?
//! Every incompatibility is listed, each prefixed `BACKWARD: ` or `FORWARD: `.

mod avro;
mod json;
mod protobuf;

use std::fmt;
use std::str::FromStr;

use crate::engine::schema::error::SchemaResult;
use crate::engine::schema::registry::SchemaType;

/// The direction(s) to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Backward,
    Forward,
    Full,
}

impl Level {
    /// The local level for a registry compatibility level (`*_TRANSITIVE` checks one
    /// previous version here; `NONE` has none).
    pub fn from_registry(level: &str) -> Option<Level> {
        match level.to_ascii_uppercase().as_str() {
            "BACKWARD" | "BACKWARD_TRANSITIVE" => Some(Level::Backward),
            "FORWARD" | "FORWARD_TRANSITIVE" => Some(Level::Forward),
            "FULL" | "FULL_TRANSITIVE" => Some(Level::Full),
            _ => None,
        }
    }
}

impl FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "backward" => Ok(Level::Backward),
            "forward" => Ok(Level::Forward),
            "full" => Ok(Level::Full),
            other => Err(format!(
                "unknown compatibility level {other}; use backward, forward or full"
            )),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Backward => "BACKWARD",
            Level::Forward => "FORWARD",
            Level::Full => "FULL",
        })
    }
}

/// `{Compatible, Incompatibilities[]}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompatibilityResult {
    pub incompatibilities: Vec<String>,
}

impl CompatibilityResult {
    pub fn compatible(&self) -> bool {
        self.incompatibilities.is_empty()
    }
}

/// One schema text with the references it imports (name → text).
#[derive(Debug, Clone, Copy)]
pub struct SchemaText<'a> {
    pub schema_type: SchemaType,
    pub text: &'a str,
    pub references: &'a [(String, String)],
}

/// Checks `candidate` against `previous` at `level`.
pub fn check(
    previous: SchemaText<'_>,
    candidate: SchemaText<'_>,
    level: Level,
) -> SchemaResult<CompatibilityResult> {
    let mut out = Vec::new();
    let directions: &[(&str, bool)] = match level {
        Level::Backward => &[("BACKWARD", true)],
        Level::Forward => &[("FORWARD", false)],
        Level::Full => &[("BACKWARD", true), ("FORWARD", false)],
    };
    for (dir, backward) in directions {
        // Backward: reader = candidate, writer = previous; forward: the reverse.
        let found = match candidate.schema_type {
            SchemaType::Avro => avro::check(previous, candidate, *backward)?,
            SchemaType::Json => json::check(previous, candidate, *backward)?,
            SchemaType::Protobuf => protobuf::check(previous, candidate, *backward)?,
        };
        out.extend(found.into_iter().map(|m| format!("{dir}: {m}")));
    }
    Ok(CompatibilityResult {
        incompatibilities: out,
    })
}

/// Joins a dot path.
fn join(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
}
