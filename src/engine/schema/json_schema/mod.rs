//! JSON Schema, validated by our own implementation: the registered text is the text
//! exactly as given; the draft comes from `$schema` (4, 6, 7, 2019-09, 2020-12; default
//! 2020-12); the schema is checked against its draft when parsed; validation is optional
//! on both sides and reports the first leaf cause (`JSON Schema validation failed: …`).
//! Bodies are compact JSON without HTML escaping (D3); readers accept any JSON.
//!
//! [`check`] refuses what is not a schema of its draft, [`compile`] turns a schema and its
//! references into an index of nodes, [`validate`] evaluates a value over that index.

mod check;
mod compile;
mod draft;
mod format;
mod pattern;
mod uri;
mod validate;
mod value;

use serde_json::Value;

use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::framing;
use crate::engine::schema::registry::{SchemaSpec, SchemaType};

pub use draft::{Draft, draft_of};

/// A parsed JSON Schema and its compiled index.
#[derive(Debug)]
pub struct JsonSchema {
    pub schema: Value,
    compiled: compile::Compiled,
}

/// The URI a registry reference is served at: an absolute URI as is, anything else
/// relative to the default base `json-schema:///`.
fn reference_uri(name: &str) -> String {
    if name.contains("://") || name.starts_with("urn:") {
        name.to_string()
    } else {
        format!("{}{}", uri::DEFAULT_BASE, name.trim_start_matches('/'))
    }
}

/// The vocabularies a custom meta-schema declares, when `$schema` names one of the
/// references and its `$vocabulary` says: (validation applies, `format` asserts). The
/// drafts' own meta-schemas: validation applies, `format` annotates.
fn vocabularies(schema: &Value, references: &[(String, String)]) -> (bool, bool) {
    let standard = (true, false);
    let Some(meta) = schema.get("$schema").and_then(Value::as_str) else {
        return standard;
    };
    let meta = meta.trim_end_matches('#');
    let Some((_, text)) = references
        .iter()
        .find(|(name, _)| reference_uri(name) == meta)
    else {
        return standard;
    };
    let Ok(meta_schema) = serde_json::from_str::<Value>(text) else {
        return standard;
    };
    match meta_schema.get("$vocabulary").and_then(Value::as_object) {
        Some(declared) => (
            declared.keys().any(|v| v.ends_with("/vocab/validation")),
            declared
                .keys()
                .any(|v| v.ends_with("/vocab/format-assertion")),
        ),
        None => standard,
    }
}

impl JsonSchema {
    /// `invalid JSON Schema: …` for text that is not JSON or not a valid schema.
    pub fn parse(text: &str) -> SchemaResult<Self> {
        Self::parse_with_references(text, &[])
    }

    /// Parses with schema references available to `$ref`: each reference's text is
    /// served at its name (an absolute URI as is, anything else relative to the default
    /// base `json-schema:///`). Nothing is ever fetched over the network; a `$ref` that
    /// names neither a reference, nor a part of the schema, nor a draft's meta-schema is
    /// an error here rather than at validation.
    pub fn parse_with_references(
        text: &str,
        references: &[(String, String)],
    ) -> SchemaResult<Self> {
        let invalid =
            |e: &dyn std::fmt::Display| SchemaError::invalid(format!("invalid JSON Schema: {e}"));
        let schema: Value = serde_json::from_str(text).map_err(|e| invalid(&e))?;
        if !(schema.is_object() || schema.is_boolean()) {
            return Err(SchemaError::invalid("invalid JSON Schema"));
        }
        let draft = draft_of(&schema);
        check::check(&schema, draft).map_err(|e| invalid(&e))?;
        let mut documents = vec![compile::Document {
            name: None,
            value: schema.clone(),
            base: uri::DEFAULT_BASE.to_string(),
            draft,
        }];
        for (name, ref_text) in references {
            let refused = |e: &dyn std::fmt::Display| {
                SchemaError::invalid(format!("invalid JSON Schema reference {name}: {e}"))
            };
            let value: Value = serde_json::from_str(ref_text).map_err(|e| refused(&e))?;
            // A reference without `$schema` is read in the draft of the schema using it.
            let ref_draft = value
                .get("$schema")
                .and_then(Value::as_str)
                .and_then(Draft::from_uri)
                .unwrap_or(draft);
            documents.push(compile::Document {
                name: Some(name.clone()),
                value,
                base: reference_uri(name),
                draft: ref_draft,
            });
        }
        let compiled =
            compile::compile(&documents, vocabularies(&schema, references)).map_err(|e| match e
                .reference
            {
                Some(name) => SchemaError::invalid(format!(
                    "invalid JSON Schema reference {name}: {}",
                    e.message
                )),
                None => invalid(&e.message),
            })?;
        Ok(JsonSchema { schema, compiled })
    }

    /// `JSON Schema validation failed: <first leaf cause> at <json pointer>`.
    pub fn validate(&self, value: &Value) -> SchemaResult<()> {
        match validate::validate(&self.compiled, value) {
            Ok(()) => Ok(()),
            Err(failure) => {
                let place = if failure.path.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", failure.path)
                };
                Err(SchemaError::invalid(format!(
                    "JSON Schema validation failed: {}{place}",
                    failure.message
                )))
            }
        }
    }
}

/// A JSON Schema serde over the schema cache.
#[derive(Debug)]
pub struct JsonSchemaSerde {
    cache: SchemaCache,
    subject: String,
    schema: JsonSchema,
    validate: bool,
}

impl JsonSchemaSerde {
    pub fn new(
        cache: &SchemaCache,
        subject: &str,
        text: &str,
        validate: bool,
    ) -> SchemaResult<Self> {
        let schema = JsonSchema::parse(text)?;
        cache.intern(
            subject,
            SchemaSpec {
                schema: text.to_string(),
                schema_type: SchemaType::Json,
                ..Default::default()
            },
        );
        Ok(JsonSchemaSerde {
            cache: cache.clone(),
            subject: subject.to_string(),
            schema,
            validate,
        })
    }

    pub fn serialize(&self, value: Option<&Value>) -> SchemaResult<Option<Vec<u8>>> {
        let Some(value) = value else {
            return Ok(None);
        };
        let id = self.cache.require_subject_id(&self.subject)?;
        if self.validate {
            self.schema
                .validate(value)
                .map_err(|e| SchemaError::Serialize(e.to_string()))?;
        }
        let body = serde_json::to_vec(value).map_err(|e| SchemaError::Serialize(e.to_string()))?;
        Ok(Some(framing::encode(id as u32, &body)))
    }

    pub fn deserialize(&self, data: Option<&[u8]>) -> SchemaResult<Option<Value>> {
        let Some(data) = data else {
            return Ok(None);
        };
        let frame = framing::decode(data)?;
        self.cache.writer_schema(frame.schema_id)?;
        let value = decode_body(frame.body)?;
        if self.validate {
            self.schema
                .validate(&value)
                .map_err(|e| SchemaError::Deserialize(e.to_string()))?;
        }
        Ok(Some(value))
    }
}

/// A JSON body as a value.
pub fn decode_body(body: &[u8]) -> SchemaResult<Value> {
    serde_json::from_slice(body).map_err(|e| SchemaError::Deserialize(e.to_string()))
}

#[cfg(test)]
mod suite;
#[cfg(test)]
mod tests;
