//! `schema decode`: one Confluent frame from a hex argument, a file or stdin → magic,
//! id, message-index path and the body as JSON, read with the writer schema fetched by
//! id from the registry (references resolved).

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::schema::connect::{ConnectOptions, connect, schema_error};
use crate::engine::schema::avro::{self, AvroSchema};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::framing::{self, FRAME_HEADER_LEN};
use crate::engine::schema::json_schema;
use crate::engine::schema::protobuf::{self, ProtoSchema};
use crate::engine::schema::registry::SchemaType;

#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The frame as hex (spaces allowed); omit to read --file or stdin.
    #[arg(value_name = "HEX", conflicts_with = "file")]
    pub hex: Option<String>,
    /// Read the raw frame bytes from this file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Treat the input as hex text (for --file or stdin).
    #[arg(long = "hex-input")]
    pub hex_input: bool,
    /// Expect a Protobuf frame (message-index path after the id) even before the
    /// writer schema says so.
    #[arg(long)]
    pub protobuf: bool,
}

fn unhex(text: &str, origin: &str) -> CliResult<Vec<u8>> {
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let cleaned = cleaned.strip_prefix("0x").unwrap_or(&cleaned);
    hex::decode(cleaned).map_err(|e| CliError::usage(format!("{origin} is not hex: {e}")))
}

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: DecodeArgs) -> CliResult<()> {
    let data = match (&args.hex, &args.file) {
        (Some(h), _) => unhex(h, "the HEX argument")?,
        (None, Some(path)) => {
            let raw = crate::io::bounded_read::read(path, crate::io::bounded_read::RECORD)
                .map_err(|e| {
                    CliError::usage(format!(
                        "schema decode: cannot read {}: {e}",
                        path.display()
                    ))
                })?;
            if args.hex_input {
                unhex(&String::from_utf8_lossy(&raw), &path.display().to_string())?
            } else {
                raw
            }
        }
        (None, None) => {
            let raw = crate::io::bounded_read::read_stream(
                std::io::stdin(),
                crate::io::bounded_read::RECORD,
            )
            .map_err(|e| CliError::usage(format!("schema decode: cannot read stdin: {e}")))?;
            if args.hex_input {
                unhex(&String::from_utf8_lossy(&raw), "stdin")?
            } else {
                raw
            }
        }
    };
    let frame_error = |e: framing::FramingError| {
        CliError::failure(format!(
            "{e}: the bytes are not a Confluent-framed value (magic 00, 4-byte schema id, body); pass the record value, not the key or a raw body"
        ))
    };
    let header = framing::decode(&data).map_err(frame_error)?;
    let id = header.schema_id;
    let connected = connect(global, conn)?;
    let cache = SchemaCache::new(connected.registry.clone());
    let writer = cache
        .writer_schema_wait(id, global.connection.timeout)
        .map_err(|e| schema_error(&e, &format!("fetch writer schema {}", id as u32)))?;
    let is_protobuf = args.protobuf || writer.schema_type == SchemaType::Protobuf;
    if args.protobuf && writer.schema_type != SchemaType::Protobuf {
        return Err(CliError::failure(format!(
            "schema {} is {}, not PROTOBUF; drop --protobuf",
            id as u32, writer.schema_type
        )));
    }
    let what = format!("decode the body with writer schema {}", id as u32);
    let (indexes, message_type, value) = if is_protobuf {
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
    let ui = Ui::new(&global.output);
    let data_json = json!({
        "magic": "0x00",
        "schema_id": id as u32,
        "schema_type": writer.schema_type.to_string(),
        "message_indexes": indexes,
        "message_type": message_type,
        "value": value,
    });
    ui.report(data_json, |out| {
        writeln!(out, "magic:       0x00")?;
        writeln!(out, "schema id:   {}", id as u32)?;
        writeln!(out, "schema type: {}", writer.schema_type)?;
        if let Some(ix) = &indexes {
            writeln!(out, "index path:  {ix:?}")?;
        }
        if let Some(m) = &message_type {
            writeln!(out, "message:     {m}")?;
        }
        writeln!(
            out,
            "value:\n{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        )
    })
}
