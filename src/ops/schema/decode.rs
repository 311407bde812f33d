//! `schema decode`: one Confluent frame (`docs/formats.md` §2) from a hex argument, a file
//! or stdin → magic, id, message-index path and the body as JSON, read with the writer
//! schema fetched by id from the registry (references resolved).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::schema::avro::{self, AvroSchema};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::framing::{self, FRAME_HEADER_LEN};
use crate::engine::schema::json_schema;
use crate::engine::schema::protobuf::{self, ProtoSchema};
use crate::engine::schema::registry::{Registry, SchemaType};
use crate::ops::schema::connect::schema_error;
use crate::ops::{Error, Result};

/// Where the frame comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Hex text given on the command line.
    Hex(String),
    /// A file of raw bytes, or of hex with `hex`.
    File { path: PathBuf, hex: bool },
    /// Stdin, raw or hex.
    Stdin { hex: bool },
}

/// What to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodePlan {
    pub input: Input,
    /// The value is Protobuf-framed (message indexes after the id); refused when the
    /// writer schema is not Protobuf.
    pub protobuf: bool,
    /// How long to wait for the writer schema.
    pub timeout: Duration,
}

/// A decoded frame.
#[derive(Debug, Clone)]
pub struct DecodedFrame {
    pub schema_id: i32,
    pub schema_type: SchemaType,
    /// Protobuf only.
    pub message_indexes: Option<Vec<i32>>,
    /// Protobuf only: the message's full name.
    pub message_type: Option<String>,
    pub value: serde_json::Value,
}

fn unhex(text: &str, origin: &str) -> Result<Vec<u8>> {
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let cleaned = cleaned.strip_prefix("0x").unwrap_or(&cleaned);
    hex::decode(cleaned).map_err(|e| Error::usage(format!("{origin} is not hex: {e}")))
}

/// The frame's bytes, bounded by the record size cap; unreadable input or bad hex is a
/// usage error naming it.
fn read_input(input: &Input) -> Result<Vec<u8>> {
    match input {
        Input::Hex(h) => unhex(h, "the HEX argument"),
        Input::File { path, hex } => {
            let raw = crate::io::bounded_read::read(path, crate::io::bounded_read::RECORD)
                .map_err(|e| {
                    Error::usage(format!(
                        "schema decode: cannot read {}: {e}",
                        path.display()
                    ))
                })?;
            if *hex {
                unhex(&String::from_utf8_lossy(&raw), &path.display().to_string())
            } else {
                Ok(raw)
            }
        }
        Input::Stdin { hex } => {
            let raw = crate::io::bounded_read::read_stream(
                std::io::stdin(),
                crate::io::bounded_read::RECORD,
            )
            .map_err(|e| Error::usage(format!("schema decode: cannot read stdin: {e}")))?;
            if *hex {
                unhex(&String::from_utf8_lossy(&raw), "stdin")
            } else {
                Ok(raw)
            }
        }
    }
}

/// Reads the frame, checks its header, then connects with `registry` (only for a
/// well-formed frame), fetches the writer schema and decodes the body.
pub fn decode<R: Registry + 'static>(
    plan: &DecodePlan,
    registry: impl FnOnce() -> Result<Arc<R>>,
) -> Result<DecodedFrame> {
    let data = read_input(&plan.input)?;
    let frame_error = |e: framing::FramingError| {
        Error::failure(format!(
            "{e}: the bytes are not a Confluent-framed value (magic 00, 4-byte schema id, body); pass the record value, not the key or a raw body"
        ))
    };
    let header = framing::decode(&data).map_err(frame_error)?;
    let id = header.schema_id;
    let cache = SchemaCache::new(registry()?);
    let writer = cache
        .writer_schema_wait(id, plan.timeout)
        .map_err(|e| schema_error(&e, &format!("fetch writer schema {}", id as u32)))?;
    let is_protobuf = plan.protobuf || writer.schema_type == SchemaType::Protobuf;
    if plan.protobuf && writer.schema_type != SchemaType::Protobuf {
        return Err(Error::failure(format!(
            "schema {} is {}, not PROTOBUF; drop --protobuf",
            id as u32, writer.schema_type
        )));
    }
    let what = format!("decode the body with writer schema {}", id as u32);
    let (message_indexes, message_type, value) = if is_protobuf {
        let frame = framing::decode_protobuf(&data).map_err(frame_error)?;
        let indexes = frame.message_indexes.clone().unwrap_or_default();
        let schema = ProtoSchema::from_writer(&writer).map_err(|e| schema_error(&e, &what))?;
        let msg = schema
            .message_at(&indexes)
            .map_err(|e| schema_error(&e, &what))?;
        let value = protobuf::decode_body(&msg, frame.body).map_err(|e| schema_error(&e, &what))?;
        (Some(indexes), Some(msg.full_name().to_string()), value)
    } else {
        let body = &data[FRAME_HEADER_LEN..];
        let value = match writer.schema_type {
            SchemaType::Avro => {
                AvroSchema::from_writer(&writer).and_then(|w| avro::decode_body(&w, id, None, body))
            }
            _ => json_schema::decode_body(body),
        }
        .map_err(|e| schema_error(&e, &what))?;
        (None, None, value)
    };
    Ok(DecodedFrame {
        schema_id: id,
        schema_type: writer.schema_type,
        message_indexes,
        message_type,
        value,
    })
}
