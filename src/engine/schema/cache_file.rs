//! The schema cache file written by `schema prewarm --write-cache` and loaded by
//! `tail` and `run` at startup, so they resolve subjects and writer ids without a
//! registry round trip. Pure data: reading and writing the bytes is the caller's.
//!
//! Format (JSON, UTF-8, one object; unknown keys are ignored, `version` must be 1):
//!
//! ```json
//! {
//!   "format": "krabka-streams-schema-cache",
//!   "version": 1,
//!   "registry": "http://localhost:8081",
//!   "subjects": {
//!     "orders-value": {"id": 1, "version": 1, "mode": "auto-register",
//!                      "schemaType": "AVRO", "schema": "<local registered text>"}
//!   },
//!   "schemas": {
//!     "1": {"schemaType": "AVRO", "schema": "<writer text>", "messageType": "demo.Order",
//!           "references": [{"name": "n", "subject": "s", "version": 1, "schema": "<text>"}]}
//!   }
//! }
//! ```
//!
//! `subjects` seeds subject → id (the schema a serialiser frames with); `schemas` seeds
//! writer schemas by id (ids are unsigned decimal keys), references dependencies first.
//! `schemaType` is `AVRO`, `PROTOBUF` or `JSON`; `messageType`, `version`, `mode`,
//! `registry` and `references` are optional.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::schema::cache::{SchemaCache, WriterSchema};
use crate::engine::schema::error::SchemaError;
use crate::engine::schema::registry::SchemaType;
use crate::engine::schema::resolve::ResolvedReference;

/// The `format` marker of a cache file.
pub const CACHE_FILE_FORMAT: &str = "krabka-streams-schema-cache";
/// The only version written and read.
pub const CACHE_FILE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheFile {
    pub format: String,
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    #[serde(default)]
    pub subjects: BTreeMap<String, SubjectEntry>,
    #[serde(default)]
    pub schemas: BTreeMap<String, SchemaEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubjectEntry {
    pub id: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(rename = "schemaType", default = "avro_name")]
    pub schema_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaEntry {
    #[serde(rename = "schemaType", default = "avro_name")]
    pub schema_type: String,
    pub schema: String,
    #[serde(
        rename = "messageType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub message_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<ReferenceEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceEntry {
    pub name: String,
    pub subject: String,
    pub version: i32,
    pub schema: String,
}

fn avro_name() -> String {
    "AVRO".to_string()
}

impl CacheFile {
    pub fn new(registry: Option<String>) -> Self {
        CacheFile {
            format: CACHE_FILE_FORMAT.to_string(),
            version: CACHE_FILE_VERSION,
            registry,
            subjects: BTreeMap::new(),
            schemas: BTreeMap::new(),
        }
    }

    /// Adds a writer schema under its id.
    pub fn add_writer(&mut self, w: &WriterSchema) {
        self.schemas.insert(
            (w.id as u32).to_string(),
            SchemaEntry {
                schema_type: w.schema_type.to_string(),
                schema: w.text.clone(),
                message_type: w.message_type.clone(),
                references: w
                    .references
                    .iter()
                    .map(|r| ReferenceEntry {
                        name: r.name.clone(),
                        subject: r.subject.clone(),
                        version: r.version,
                        schema: r.spec_text.clone(),
                    })
                    .collect(),
            },
        );
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses and checks a cache file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SchemaError> {
        let file: CacheFile = serde_json::from_str(text)
            .map_err(|e| SchemaError::invalid(format!("{origin}: not a schema cache file: {e}")))?;
        if file.format != CACHE_FILE_FORMAT {
            return Err(SchemaError::invalid(format!(
                "{origin}: format is {:?}, expected {CACHE_FILE_FORMAT:?}",
                file.format
            )));
        }
        if file.version != CACHE_FILE_VERSION {
            return Err(SchemaError::invalid(format!(
                "{origin}: unsupported schema cache version {} (this build reads {CACHE_FILE_VERSION})",
                file.version
            )));
        }
        for (id, entry) in &file.schemas {
            id.parse::<u32>().map_err(|_| {
                SchemaError::invalid(format!(
                    "{origin}: schema id {id:?} is not an unsigned 32-bit integer"
                ))
            })?;
            schema_type(&entry.schema_type, origin)?;
        }
        for entry in file.subjects.values() {
            schema_type(&entry.schema_type, origin)?;
        }
        Ok(file)
    }

    /// Seeds `cache` with every subject id and writer schema of the file.
    pub fn seed(&self, cache: &SchemaCache) -> Result<(), SchemaError> {
        for (subject, entry) in &self.subjects {
            cache.seed_subject_id(subject, entry.id as i32);
        }
        for (id, entry) in &self.schemas {
            let id = id.parse::<u32>().map_err(|_| {
                SchemaError::invalid(format!(
                    "schema id {id:?} is not an unsigned 32-bit integer"
                ))
            })? as i32;
            cache.seed_writer(WriterSchema {
                id,
                schema_type: schema_type(&entry.schema_type, "schema cache")?,
                text: entry.schema.clone(),
                message_type: entry.message_type.clone(),
                references: entry
                    .references
                    .iter()
                    .map(|r| ResolvedReference {
                        name: r.name.clone(),
                        subject: r.subject.clone(),
                        version: r.version,
                        spec_text: r.schema.clone(),
                    })
                    .collect(),
            });
        }
        Ok(())
    }
}

fn schema_type(name: &str, origin: &str) -> Result<SchemaType, SchemaError> {
    SchemaType::from_wire(Some(name)).map_err(|e| SchemaError::invalid(format!("{origin}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_cache_file_seeds_an_offline_cache_that_never_fetches() {
        let mut file = CacheFile::new(Some("http://r".into()));
        file.subjects.insert(
            "orders-value".into(),
            SubjectEntry {
                id: 7,
                version: Some(1),
                mode: Some("auto-register".into()),
                schema_type: "AVRO".into(),
                schema: Some("\"string\"".into()),
            },
        );
        file.add_writer(&WriterSchema {
            id: 7,
            schema_type: SchemaType::Protobuf,
            text: "syntax = \"proto3\";".into(),
            message_type: Some("demo.Value".into()),
            references: vec![ResolvedReference {
                name: "dep.proto".into(),
                subject: "dep".into(),
                version: 2,
                spec_text: "syntax = \"proto3\";".into(),
            }],
        });
        let back = CacheFile::parse(&file.to_json(), "cache.json").unwrap();
        assert_eq!(back, file);
        let cache = SchemaCache::offline();
        back.seed(&cache).unwrap();
        assert_eq!(cache.require_subject_id("orders-value").unwrap(), 7);
        let w = cache.writer_schema(7).unwrap();
        assert_eq!(w.message_type.as_deref(), Some("demo.Value"));
        assert_eq!(w.references[0].version, 2);
        assert!(matches!(
            cache.writer_schema(8),
            Err(SchemaError::NotCached(8))
        ));
    }

    #[test]
    fn foreign_or_newer_cache_files_are_refused_with_the_file_name() {
        let e = CacheFile::parse(r#"{"format":"x","version":1}"#, "c.json").unwrap_err();
        assert!(e.to_string().starts_with("c.json: format is \"x\""), "{e}");
        let e = CacheFile::parse(
            r#"{"format":"krabka-streams-schema-cache","version":2}"#,
            "c.json",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("unsupported schema cache version 2"),
            "{e}"
        );
        let e = CacheFile::parse("[", "c.json").unwrap_err();
        assert!(
            e.to_string().starts_with("c.json: not a schema cache file"),
            "{e}"
        );
    }
}
