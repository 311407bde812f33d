//! Avro reader/writer compatibility: both schemas parsed, then the resolution walk of
//! `engine::schema::avro::resolution` in the direction the level asks.

use super::SchemaText;
use crate::engine::schema::avro::AvroSchema;
use crate::engine::schema::avro::resolution::problems;
use crate::engine::schema::error::{SchemaError, SchemaResult};

fn parse(text: SchemaText<'_>, which: &str) -> SchemaResult<AvroSchema> {
    AvroSchema::parse_with_named_references(text.text, text.references)
        .map_err(|e| SchemaError::invalid(format!("invalid {which} Avro schema: {e}")))
}

pub fn check(
    previous: SchemaText<'_>,
    candidate: SchemaText<'_>,
    backward: bool,
) -> SchemaResult<Vec<String>> {
    let previous_schema = parse(previous, "previous")?;
    let candidate_schema = parse(candidate, "candidate")?;
    let (w, r) = if backward {
        (&previous_schema, &candidate_schema)
    } else {
        (&candidate_schema, &previous_schema)
    };
    problems(w, r)
}
