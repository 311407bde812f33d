//! JSON Schema with the `jsonschema` crate: the registered text is the text exactly as
//! given; the draft comes from `$schema` (4, 6, 7, 2019-09, 2020-12; default 2020-12);
//! validation is optional on both sides and reports the first leaf cause
//! (`JSON Schema validation failed: …`). Bodies are compact JSON without HTML
//! escaping (D3); readers accept any JSON.

use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::framing;
use crate::engine::schema::registry::{SchemaSpec, SchemaType};

/// The draft a schema declares through `$schema`; 2020-12 when absent or unknown.
pub fn draft_of(schema: &Value) -> Draft {
    let uri = schema.get("$schema").and_then(Value::as_str).unwrap_or("");
    let uri = uri.trim_end_matches('#');
    if uri.contains("draft-04") {
        Draft::Draft4
    } else if uri.contains("draft-06") {
        Draft::Draft6
    } else if uri.contains("draft-07") {
        Draft::Draft7
    } else if uri.contains("2019-09") {
        Draft::Draft201909
    } else {
        Draft::Draft202012
    }
}

/// A parsed JSON Schema and its compiled validator.
#[derive(Debug)]
pub struct JsonSchema {
    pub schema: Value,
    validator: Validator,
}

impl JsonSchema {
    /// `invalid JSON Schema: …` for text that is not JSON or not a valid schema.
    pub fn parse(text: &str) -> SchemaResult<Self> {
        Self::parse_with_references(text, &[])
    }

    /// Parses with schema references available to `$ref`: each reference's text is
    /// served at its name (an absolute URI as is, anything else relative to the default
    /// base `json-schema:///`). Nothing is ever fetched over the network.
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
        let mut builder = jsonschema::Registry::new();
        for (name, ref_text) in references {
            let value: Value = serde_json::from_str(ref_text).map_err(|e| {
                SchemaError::invalid(format!("invalid JSON Schema reference {name}: {e}"))
            })?;
            let uri = if name.contains("://") || name.starts_with("urn:") {
                name.clone()
            } else {
                format!("json-schema:///{}", name.trim_start_matches('/'))
            };
            builder = builder.add(uri, value).map_err(|e| {
                SchemaError::invalid(format!("invalid JSON Schema reference {name}: {e}"))
            })?;
        }
        let registry = builder.prepare().map_err(|e| invalid(&e))?;
        let validator = jsonschema::options()
            .with_draft(draft_of(&schema))
            .with_registry(&registry)
            .build(&schema)
            .map_err(|e| invalid(&e))?;
        Ok(JsonSchema { schema, validator })
    }

    /// `JSON Schema validation failed: <first leaf cause>`.
    pub fn validate(&self, value: &Value) -> SchemaResult<()> {
        match self.validator.iter_errors(value).next() {
            None => Ok(()),
            Some(e) => {
                let at = e.instance_path().to_string();
                let place = if at.is_empty() {
                    String::new()
                } else {
                    format!(" at {at}")
                };
                Err(SchemaError::invalid(format!(
                    "JSON Schema validation failed: {e}{place}"
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_draft_comes_from_dollar_schema_and_defaults_to_2020_12() {
        assert_eq!(draft_of(&json!({})), Draft::Draft202012);
        assert_eq!(
            draft_of(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
            Draft::Draft7
        );
        assert_eq!(
            draft_of(&json!({"$schema": "http://json-schema.org/draft-04/schema#"})),
            Draft::Draft4
        );
    }

    #[test]
    fn validation_failures_name_the_first_cause() {
        let s = JsonSchema::parse(
            r#"{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}"#,
        )
        .unwrap();
        s.validate(&json!({"id": "a"})).unwrap();
        let e = s.validate(&json!({"id": 5})).unwrap_err().to_string();
        assert!(e.starts_with("JSON Schema validation failed: "), "{e}");
        assert!(e.contains("/id"), "{e}");
    }

    #[test]
    fn references_resolve_by_name_without_network_access() {
        let common =
            r#"{"type":"object","required":["iso"],"properties":{"iso":{"type":"string"}}}"#;
        let s = JsonSchema::parse_with_references(
            r#"{"type":"object","properties":{"country":{"$ref":"common.json"}}}"#,
            &[("common.json".into(), common.into())],
        )
        .unwrap();
        s.validate(&json!({"country": {"iso": "NL"}})).unwrap();
        assert!(s.validate(&json!({"country": {}})).is_err());
    }

    #[test]
    fn invalid_schemas_are_refused() {
        assert!(
            JsonSchema::parse("{")
                .unwrap_err()
                .to_string()
                .starts_with("invalid JSON Schema: ")
        );
        assert!(JsonSchema::parse(r#"{"type": 5}"#).is_err());
        assert_eq!(
            JsonSchema::parse("5").unwrap_err().to_string(),
            "invalid JSON Schema"
        );
    }
}

#[cfg(test)]
mod hostile_tests {
    use super::*;

    fn nested_properties(depth: usize) -> String {
        let mut text = String::from(r#"{"type":"integer"}"#);
        for _ in 0..depth {
            text = format!(r#"{{"type":"object","properties":{{"a":{text}}}}}"#);
        }
        text
    }

    #[test]
    fn a_schema_nested_past_the_json_depth_limit_is_a_clear_error() {
        let err = JsonSchema::parse(&nested_properties(5_000))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("invalid JSON Schema"), "{err}");
        assert!(err.contains("recursion limit"), "{err}");
    }

    #[test]
    fn the_deepest_schema_json_allows_compiles_and_validates_on_a_small_stack() {
        // 60 levels of properties are 120 JSON levels, under serde_json's 128.
        let schema = JsonSchema::parse(&nested_properties(60)).unwrap();
        let mut value = serde_json::json!(1);
        for _ in 0..60 {
            value = serde_json::json!({ "a": value });
        }
        schema.validate(&value).unwrap();
    }

    #[test]
    fn a_deeply_nested_value_is_a_decode_error() {
        let body = "[".repeat(100_000) + &"]".repeat(100_000);
        let err = decode_body(body.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("recursion limit"), "{err}");
    }
}
