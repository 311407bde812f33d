//! Local compatibility checks (semantics §2), no registry involved: is a candidate
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

/// Why `reader` cannot read data written with `writer` (empty when it can).
pub fn avro_reader_problems(
    writer: &crate::engine::schema::avro::AvroSchema,
    reader: &crate::engine::schema::avro::AvroSchema,
) -> SchemaResult<Vec<String>> {
    avro::problems(writer, reader)
}

/// Joins a dot path.
fn join(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
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
    fn json_schema_lists_narrowing_new_requirements_and_closed_properties() {
        let prev = r#"{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"integer"},"c":{"type":"string"}}}"#;
        let cand = r#"{"type":"object","required":["b"],"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"number"}}}"#;
        assert_eq!(
            run(SchemaType::Json, prev, cand, Level::Backward),
            vec![
                "BACKWARD: b became required",
                "BACKWARD: a narrows type from [null, string] to [string]",
                "BACKWARD: c is no longer allowed",
            ]
        );
        let fwd = run(SchemaType::Json, prev, cand, Level::Forward);
        assert_eq!(
            fwd,
            vec!["FORWARD: b narrows type from [number] to [integer]"]
        );
        assert_eq!(run(SchemaType::Json, prev, cand, Level::Full).len(), 4);
        assert!(run(SchemaType::Json, prev, prev, Level::Full).is_empty());
    }

    #[test]
    fn protobuf_lists_missing_messages_wire_changes_and_required_fields() {
        let prev = "syntax = \"proto2\"; package p; message A { optional int32 x = 1; optional string y = 2; } message B { optional int32 z = 1; }";
        let cand = "syntax = \"proto2\"; package p; message A { optional fixed32 x = 1; repeated string y = 2; required int64 w = 3; }";
        assert_eq!(
            run(SchemaType::Protobuf, prev, cand, Level::Backward),
            vec![
                "BACKWARD: p.A field 1 changed wire type or cardinality",
                "BACKWARD: p.A field 2 changed wire type or cardinality",
                "BACKWARD: p.A.w is required but absent from the writer",
                "BACKWARD: message p.B is absent from the reader",
            ]
        );
        assert!(run(SchemaType::Protobuf, prev, prev, Level::Full).is_empty());
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
