//! Per-topic key and value formats: `--value-format [TOPIC=]FORMAT`, where FORMAT is
//! `raw`, `string`, `json` (inferred columns), `json:SCHEMA.json` (columns from a
//! JSON Schema file), `json-sr` (registry-framed JSON Schema: columns from the writer
//! schema), `protobuf` (registry-framed: the message at each frame's message-index
//! path, columns from the first message met), `avro` (registry-framed, reader
//! schema = first writer schema),
//! `avro:READER.avsc` (fixed reader schema), `arrow` (IPC blobs, values only), or
//! `gzip+FORMAT`. A format without a topic is the default for every topic.
//!
//! This is how record keys and values are decoded, not what tail writes: the output
//! format is `io::batch_sink::DataFormat` (with `cmd::tail`'s table preview beside it).

use std::path::PathBuf;
use std::sync::Arc;

use crate::engine::columnar::codec::ValueDecoder;
use crate::engine::columnar::codec::blob::BlobDecoder;
use crate::engine::columnar::codec::gzip::{DEFAULT_MAX_UNCOMPRESSED_BYTES, GzipDecoder};
use crate::engine::columnar::codec::json::{JsonDecoder, JsonRowSchema};
use crate::engine::columnar::codec::raw::{RawDecoder, StringDecoder};
use crate::engine::columnarschema::avro::codec::AvroValueDecoder;
use crate::engine::columnarschema::json_schema::RegistryJsonDecoder;
use crate::engine::columnarschema::protobuf::ProtobufValueDecoder;
use crate::engine::columnarschema::writer_schemas::{WriterSchema, WriterSchemas};
use crate::engine::schema::registry::SchemaType;
use crate::ops::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    Raw,
    String,
    Json(Option<PathBuf>),
    Avro(Option<PathBuf>),
    /// Registry-framed JSON Schema values.
    JsonRegistry,
    /// Registry-framed Protobuf values.
    Protobuf,
    Arrow,
    Gzip(Box<Format>),
}

impl Format {
    pub fn parse(text: &str) -> Result<Format, String> {
        if let Some(inner) = text.strip_prefix("gzip+") {
            return Ok(Format::Gzip(Box::new(Format::parse(inner)?)));
        }
        Ok(match text {
            "raw" | "bytes" => Format::Raw,
            "string" | "text" => Format::String,
            "json" => Format::Json(None),
            "avro" => Format::Avro(None),
            "json-sr" => Format::JsonRegistry,
            "protobuf" | "proto" => Format::Protobuf,
            "arrow" => Format::Arrow,
            t if t.starts_with("json:") => Format::Json(Some(PathBuf::from(&t[5..]))),
            t if t.starts_with("avro:") => Format::Avro(Some(PathBuf::from(&t[5..]))),
            other => {
                return Err(format!(
                    "unknown format {other:?}: expected raw, string, json, json:SCHEMA.json, json-sr, protobuf, avro, avro:READER.avsc, arrow or gzip+FORMAT"
                ));
            }
        })
    }

    fn needs_registry(&self) -> bool {
        match self {
            Format::Avro(_) | Format::JsonRegistry | Format::Protobuf => true,
            Format::Gzip(inner) => inner.needs_registry(),
            _ => false,
        }
    }

    /// The name of a registry format, for messages.
    fn registry_name(&self) -> &'static str {
        match self {
            Format::JsonRegistry => "json-sr",
            Format::Protobuf => "protobuf",
            Format::Gzip(inner) => inner.registry_name(),
            _ => "avro",
        }
    }

    /// The columns come from the data (a writer schema, inferred JSON, an IPC blob's
    /// schema), not from the command line: unknown until the first record.
    pub fn columns_from_data(&self) -> bool {
        match self {
            Format::Raw | Format::String | Format::Json(Some(_)) | Format::Avro(Some(_)) => false,
            Format::Json(None)
            | Format::Avro(None)
            | Format::JsonRegistry
            | Format::Protobuf
            | Format::Arrow => true,
            Format::Gzip(inner) => inner.columns_from_data(),
        }
    }

    /// Raw bytes: `raw` or `gzip+raw` (one Binary `value` column).
    pub fn is_raw(&self) -> bool {
        match self {
            Format::Raw => true,
            Format::Gzip(inner) => inner.is_raw(),
            _ => false,
        }
    }

    fn is_arrow(&self) -> bool {
        match self {
            Format::Arrow => true,
            Format::Gzip(inner) => inner.is_arrow(),
            _ => false,
        }
    }
}

/// `[TOPIC=]FORMAT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatSpec {
    pub topic: Option<String>,
    pub format: Format,
}

pub fn parse_spec(text: &str) -> Result<FormatSpec, String> {
    match text.split_once('=') {
        Some((topic, format)) if !topic.is_empty() => Ok(FormatSpec {
            topic: Some(topic.to_string()),
            format: Format::parse(format)?,
        }),
        _ => Ok(FormatSpec {
            topic: None,
            format: Format::parse(text)?,
        }),
    }
}

/// The format for `topic`: a topic-specific spec wins over a default; the last one given counts.
pub fn format_for(specs: &[FormatSpec], topic: &str) -> Format {
    specs
        .iter()
        .rev()
        .find(|s| s.topic.as_deref() == Some(topic))
        .or_else(|| specs.iter().rev().find(|s| s.topic.is_none()))
        .map_or(Format::Raw, |s| s.format.clone())
}

/// Checks a topic's formats against what the command line provides.
pub fn check(
    topic: &str,
    key: &Format,
    value: &Format,
    has_registry: bool,
) -> crate::ops::Result<()> {
    if key.is_arrow() {
        return Err(Error::usage(format!(
            "topic {topic}: Arrow data is a record value only, never a key"
        )));
    }
    for (part, f) in [("key", key), ("value", value)] {
        if f.needs_registry() && !has_registry {
            return Err(Error::usage(format!(
                "topic {topic}: the {part} format {} needs a schema registry or cache: pass --registry URL (or set KRABKA_SCHEMA_REGISTRY_URL) and/or --schema-cache FILE",
                f.registry_name()
            )));
        }
    }
    Ok(())
}

/// Builds a decoder; `None` for a raw key (kept in `__key` only).
pub fn decoder(
    format: &Format,
    is_key: bool,
    schemas: Option<&Arc<dyn WriterSchemas>>,
) -> crate::ops::Result<Option<Box<dyn ValueDecoder>>> {
    Ok(Some(match format {
        Format::Raw if is_key => return Ok(None),
        Format::Raw => Box::new(RawDecoder::default()),
        Format::String => Box::new(StringDecoder::default()),
        Format::Json(None) => Box::new(JsonDecoder::inferring()),
        Format::Json(Some(path)) => {
            let text = crate::io::schema_file::read(path)?;
            let schema = JsonRowSchema::from_json_schema(&text)
                .map_err(|e| Error::usage(format!("{}: {e}", path.display())))?;
            Box::new(JsonDecoder::with_schema(schema))
        }
        Format::Avro(reader) => {
            let schemas = schemas.cloned().ok_or_else(|| {
                Error::usage(
                    "the avro format needs a schema registry (--registry) or --schema-cache",
                )
            })?;
            match reader {
                None => Box::new(AvroValueDecoder::new(schemas)),
                Some(path) => {
                    let text = crate::io::schema_file::read(path)?;
                    let reader = WriterSchema {
                        id: -1,
                        schema_type: SchemaType::Avro,
                        text,
                        message_type: None,
                        references: Vec::new(),
                    };
                    Box::new(
                        AvroValueDecoder::with_reader_schema(schemas, reader)
                            .map_err(|e| Error::usage(format!("{}: {e}", path.display())))?,
                    )
                }
            }
        }
        Format::JsonRegistry => Box::new(RegistryJsonDecoder::new(schemas.cloned().ok_or_else(
            || {
                Error::usage(
                    "the json-sr format needs a schema registry (--registry) or --schema-cache",
                )
            },
        )?)),
        Format::Protobuf => Box::new(ProtobufValueDecoder::new(schemas.cloned().ok_or_else(
            || {
                Error::usage(
                    "the protobuf format needs a schema registry (--registry) or --schema-cache",
                )
            },
        )?)),
        Format::Arrow => Box::new(BlobDecoder::new()),
        Format::Gzip(inner) => {
            let inner = match decoder(inner, false, schemas)? {
                Some(d) => d,
                None => Box::new(RawDecoder::default()),
            };
            Box::new(GzipDecoder::new(inner, DEFAULT_MAX_UNCOMPRESSED_BYTES))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_specific_formats_beat_the_default() {
        let specs: Vec<FormatSpec> = ["json", "orders=gzip+avro", "clicks=string"]
            .iter()
            .map(|s| parse_spec(s).unwrap())
            .collect();
        assert_eq!(
            format_for(&specs, "orders"),
            Format::Gzip(Box::new(Format::Avro(None)))
        );
        assert_eq!(format_for(&specs, "clicks"), Format::String);
        assert_eq!(format_for(&specs, "other"), Format::Json(None));
        assert_eq!(format_for(&[], "x"), Format::Raw);
        assert!(parse_spec("xml").is_err());
        assert!(check("t", &Format::Arrow, &Format::Raw, false).is_err());
        assert!(check("t", &Format::Raw, &Format::Avro(None), false).is_err());
    }
}
