//! Local compatibility checks (docs/semantics.md §2), no registry involved: is a
//! candidate schema compatible with a previous one at BACKWARD (the candidate reads data
//! written with the previous), FORWARD (the previous reads the candidate's data) or FULL
//! (both)? Every incompatibility is listed, each prefixed `BACKWARD: ` or `FORWARD: `.
//! Avro follows the Avro resolution rules; Protobuf and JSON Schema follow the rules of
//! the Confluent registry's checkers (so `schema check` agrees with a registration), and
//! each of their entries ends with the checker's difference type in parentheses.
//! [`Mode`] is a registry level: which versions to check against, or none.

mod avro;
mod json;
#[cfg(test)]
mod json_cases;
mod json_content;
mod json_model;
mod protobuf;
#[cfg(test)]
mod protobuf_cases;
pub mod registered;

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

/// A registry compatibility level: the direction(s) and which registered versions a
/// new schema is checked against (`*_TRANSITIVE`: every one; otherwise the latest).
/// `NONE` checks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// `None` for `NONE`.
    pub level: Option<Level>,
    pub transitive: bool,
}

impl Mode {
    /// Parses a registry level (`BACKWARD`, `FORWARD_TRANSITIVE`, `NONE`, …, any case);
    /// an unknown level is an error, never a guess.
    pub fn from_registry(level: &str) -> Result<Mode, String> {
        let upper = level.trim().to_ascii_uppercase();
        let (base, transitive) = match upper.strip_suffix("_TRANSITIVE") {
            Some(base) => (base, true),
            None => (upper.as_str(), false),
        };
        let level = match base {
            "BACKWARD" => Some(Level::Backward),
            "FORWARD" => Some(Level::Forward),
            "FULL" => Some(Level::Full),
            "NONE" if !transitive => None,
            _ => {
                return Err(format!(
                    "unknown compatibility level {level:?}; the registry levels are BACKWARD, \
                     BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE and NONE"
                ));
            }
        };
        Ok(Mode { level, transitive })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.level {
            None => f.write_str("NONE"),
            Some(l) if self.transitive => write!(f, "{l}_TRANSITIVE"),
            Some(l) => write!(f, "{l}"),
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
            SchemaType::Json => on_deep_stack(|| json::check(previous, candidate, *backward))?,
            SchemaType::Protobuf => {
                on_deep_stack(|| protobuf::check(previous, candidate, *backward))?
            }
        };
        out.extend(found.into_iter().map(|m| format!("{dir}: {m}")));
    }
    Ok(CompatibilityResult {
        incompatibilities: out,
    })
}

/// The diffs recurse once per nesting level (through `$ref` and imported message types
/// too, up to their depth bounds): they run on a thread whose stack holds that depth
/// whatever thread calls them.
fn on_deep_stack<T: Send>(f: impl FnOnce() -> SchemaResult<T> + Send) -> SchemaResult<T> {
    const STACK: usize = 64 << 20;
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("compatibility".into())
            .stack_size(STACK)
            .spawn_scoped(scope, f)
            .map_err(|e| {
                crate::engine::schema::error::SchemaError::invalid(format!(
                    "cannot start the compatibility check: {e}"
                ))
            })?;
        worker.join().unwrap_or_else(|_| {
            Err(crate::engine::schema::error::SchemaError::invalid(
                "the compatibility check failed unexpectedly",
            ))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(schema_type: SchemaType, text: &str) -> SchemaText<'_> {
        SchemaText {
            schema_type,
            text,
            references: &[],
        }
    }

    fn run(t: SchemaType, previous: &str, candidate: &str, level: Level) -> Vec<String> {
        check(text(t, previous), text(t, candidate), level)
            .unwrap()
            .incompatibilities
    }

    #[test]
    fn registry_levels_parse_with_transitivity_and_none_and_unknown_ones_fail() {
        let m = |l: &str| Mode::from_registry(l).unwrap();
        assert_eq!(
            m("BACKWARD"),
            Mode {
                level: Some(Level::Backward),
                transitive: false
            }
        );
        assert_eq!(
            m("forward_transitive"),
            Mode {
                level: Some(Level::Forward),
                transitive: true
            }
        );
        assert_eq!(m("FULL_TRANSITIVE").to_string(), "FULL_TRANSITIVE");
        assert_eq!(
            m("NONE"),
            Mode {
                level: None,
                transitive: false
            }
        );
        for bad in ["", "SOMETIMES", "NONE_TRANSITIVE", "BACKWARDS"] {
            let e = Mode::from_registry(bad).unwrap_err();
            assert!(e.contains("unknown compatibility level"), "{e}");
        }
    }

    #[test]
    fn avro_lists_every_incompatible_field_and_names_the_bad_side() {
        let prev = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"s","type":{"type":"enum","name":"E","symbols":["X","Y"]}}]}"#;
        let cand = r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"s","type":{"type":"enum","name":"E","symbols":["X"]}},{"name":"n","type":"string"}]}"#;
        assert_eq!(
            run(SchemaType::Avro, prev, cand, Level::Backward),
            vec![
                "BACKWARD: a: type changed from long to int",
                "BACKWARD: s: enum symbols Y are missing from the reader (which has no default)",
                "BACKWARD: n has no default and is absent from the writer",
            ]
        );
        assert!(run(SchemaType::Avro, prev, cand, Level::Forward).is_empty());
        let e = check(
            text(SchemaType::Avro, "{"),
            text(SchemaType::Avro, prev),
            Level::Backward,
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("invalid previous Avro schema"),
            "{e}"
        );
        let e = check(
            text(SchemaType::Avro, prev),
            text(SchemaType::Avro, "{"),
            Level::Backward,
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("invalid candidate Avro schema"),
            "{e}"
        );
    }
}
