//! Local schema files and the prewarm manifest (used by `schema prewarm` and
//! `schema check`): reading, validating and turning them
//! into the text a serde would register. Bad files are usage errors naming the file.
//!
//! Manifest (JSON; a top-level array, or an object with a `subjects` array):
//!
//! ```json
//! {"subjects": [
//!   {"subject": "orders-value", "schema_file": "orders.avsc"},
//!   {"topic": "payments", "role": "key", "kind": "protobuf", "schema_file": "pay.proto",
//!    "message_type": "demo.PaymentKey",
//!    "references": [{"name": "common.proto", "subject": "common", "version": 1}]}
//! ]}
//! ```
//!
//! Each entry names `subject`, or `topic` plus `role` (`key` or `value`, default
//! `value`) for TopicNameStrategy. `kind` is `avro`, `protobuf` or `json` (default: by
//! extension, `.proto` → protobuf, else avro). `schema_file` is relative to the
//! manifest's folder.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::engine::schema::avro::{self, AvroSchema};
use crate::engine::schema::json_schema::JsonSchema;
use crate::engine::schema::protobuf::ProtoSchema;
use crate::engine::schema::registry::{
    Registry, SchemaReference, SchemaSpec, SchemaType, subject_for,
};
use crate::ops::schema::connect::registry_error;
use crate::ops::{Error, Result};

/// A schema kind on the command line (its clap side, `--kind`, is in `cmd::schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Avro,
    Protobuf,
    Json,
}

impl From<Kind> for SchemaType {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Avro => SchemaType::Avro,
            Kind::Protobuf => SchemaType::Protobuf,
            Kind::Json => SchemaType::Json,
        }
    }
}

/// The kind a file's extension suggests: `.proto` is Protobuf, anything else Avro.
pub fn kind_for(path: &Path) -> Kind {
    match path.extension().and_then(|e| e.to_str()) {
        Some("proto") => Kind::Protobuf,
        _ => Kind::Avro,
    }
}

/// One subject to prewarm.
#[derive(Debug, Clone)]
pub struct SubjectSource {
    pub subject: String,
    pub kind: Kind,
    pub file: PathBuf,
    pub message_type: Option<String>,
    pub references: Vec<SchemaReference>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestEntry {
    subject: Option<String>,
    topic: Option<String>,
    role: Option<String>,
    kind: Option<Kind>,
    schema_file: PathBuf,
    message_type: Option<String>,
    #[serde(default)]
    references: Vec<ManifestReference>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestReference {
    name: String,
    subject: String,
    version: i32,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Manifest {
    List(Vec<ManifestEntry>),
    Object { subjects: Vec<ManifestEntry> },
}

/// Reads a manifest; errors name the file and the entry.
pub fn read_manifest(path: &Path) -> Result<Vec<SubjectSource>> {
    let text = crate::io::bounded_read::read_to_string(path, crate::io::bounded_read::SCHEMA)
        .map_err(|e| Error::usage(format!("cannot read manifest {}: {e}", path.display())))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
        Error::usage(format!(
            "manifest {} is not a valid prewarm manifest (JSON: an array of entries or {{\"subjects\": [...]}} with subject or topic+role, schema_file, kind, message_type, references): {e}",
            path.display()
        ))
    })?;
    let entries = match manifest {
        Manifest::List(l) | Manifest::Object { subjects: l } => l,
    };
    let base = path.parent().unwrap_or(Path::new("."));
    entries
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let bad = |m: String| {
                Error::usage(format!("manifest {} entry {}: {m}", path.display(), i + 1))
            };
            let subject = match (e.subject, e.topic) {
                (Some(s), None) => s,
                (None, Some(t)) => {
                    let is_key = match e.role.as_deref() {
                        None | Some("value") => false,
                        Some("key") => true,
                        Some(other) => {
                            return Err(bad(format!("role {other:?} is not key or value")));
                        }
                    };
                    subject_for(&t, is_key)
                }
                _ => {
                    return Err(bad(
                        "give either subject or topic (with role key or value)".into()
                    ));
                }
            };
            let file = base.join(&e.schema_file);
            Ok(SubjectSource {
                subject,
                kind: e.kind.unwrap_or_else(|| kind_for(&file)),
                file,
                message_type: e.message_type,
                references: e
                    .references
                    .into_iter()
                    .map(|r| SchemaReference {
                        name: r.name,
                        subject: r.subject,
                        version: r.version,
                    })
                    .collect(),
            })
        })
        .collect()
}

/// Parses `NAME=SUBJECT:VERSION`.
pub fn parse_reference(text: &str) -> std::result::Result<SchemaReference, String> {
    let (name, rest) = text
        .split_once('=')
        .ok_or_else(|| format!("reference {text:?} is not NAME=SUBJECT:VERSION"))?;
    let (subject, version) = rest
        .rsplit_once(':')
        .ok_or_else(|| format!("reference {text:?} is not NAME=SUBJECT:VERSION"))?;
    let version: i32 = version
        .parse()
        .map_err(|_| format!("reference {text:?}: version {version:?} is not an integer"))?;
    if name.is_empty() || subject.is_empty() {
        return Err(format!("reference {text:?} has an empty name or subject"));
    }
    Ok(SchemaReference {
        name: name.into(),
        subject: subject.into(),
        version,
    })
}

/// The texts of `references`, fetched from the registry (name → text, in order).
pub fn reference_texts(
    registry: Option<&dyn Registry>,
    references: &[SchemaReference],
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for r in references {
        let Some(registry) = registry else {
            return Err(Error::usage(
                "schema references need a registry to resolve them",
            ));
        };
        let found = registry.version(&r.subject, r.version).map_err(|e| {
            registry_error(
                &e,
                &format!("resolve reference {} ({}@{})", r.name, r.subject, r.version),
            )
        })?;
        out.push((r.name.clone(), found.spec.schema));
    }
    Ok(out)
}

/// Validates a local schema and returns the spec a serde registers for it:
/// Avro → the canonical text of D1; Protobuf → the text, messageType = full name
/// (default: the first message); JSON Schema → the text as given.
pub fn local_spec(
    kind: Kind,
    text: &str,
    origin: &Path,
    message_type: Option<&str>,
    references: &[SchemaReference],
    reference_texts: &[(String, String)],
) -> Result<SchemaSpec> {
    let bad = |e: crate::engine::schema::error::SchemaError| {
        Error::usage(format!("schema file {}: {e}", origin.display()))
    };
    let (schema, message_type) = match kind {
        Kind::Avro => {
            AvroSchema::parse_with_named_references(text, reference_texts).map_err(
                |e| match e {
                    crate::engine::schema::error::SchemaError::Invalid(m)
                        if !m.starts_with("invalid Avro") =>
                    {
                        bad(crate::engine::schema::error::SchemaError::invalid(format!(
                            "invalid Avro schema: {m}"
                        )))
                    }
                    other => bad(other),
                },
            )?;
            let canonical = avro::canonical::canonical_text(text).map_err(|e| {
                bad(crate::engine::schema::error::SchemaError::invalid(format!(
                    "invalid Avro schema: {e}"
                )))
            })?;
            (canonical, None)
        }
        Kind::Protobuf => {
            let parsed = ProtoSchema::parse(text, reference_texts).map_err(bad)?;
            let msg = parsed.message(message_type).map_err(bad)?;
            (text.to_string(), Some(msg.full_name().to_string()))
        }
        Kind::Json => {
            JsonSchema::parse_with_references(text, reference_texts).map_err(bad)?;
            (text.to_string(), None)
        }
    };
    Ok(SchemaSpec {
        schema,
        schema_type: kind.into(),
        message_type,
        references: references.to_vec(),
    })
}
