//! `schema decode`: one Confluent frame from a hex argument, a file or stdin → magic,
//! id, message-index path and the body as JSON, read with the writer schema fetched by
//! id from the registry (references resolved). Arguments and rendering; the decoding is
//! `ops::schema::decode`.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::schema::connect::{ConnectOptions, connect};
use crate::ops::schema::decode::{DecodePlan, Input, decode};

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

pub fn run(global: &GlobalArgs, conn: &ConnectOptions<'_>, args: DecodeArgs) -> CliResult<()> {
    let input = match (args.hex, args.file) {
        (Some(h), _) => Input::Hex(h),
        (None, Some(path)) => Input::File {
            path,
            hex: args.hex_input,
        },
        (None, None) => Input::Stdin {
            hex: args.hex_input,
        },
    };
    let plan = DecodePlan {
        input,
        protobuf: args.protobuf,
        timeout: global.connection.timeout,
    };
    let frame = decode(&plan, || Ok(connect(global, conn)?.registry))?;
    let (id, indexes, message_type, value) = (
        frame.schema_id,
        frame.message_indexes,
        frame.message_type,
        frame.value,
    );
    let schema_type = frame.schema_type;
    let ui = Ui::new(&global.output);
    let data_json = json!({
        "magic": "0x00",
        "schema_id": id as u32,
        "schema_type": schema_type.to_string(),
        "message_indexes": indexes,
        "message_type": message_type,
        "value": value,
    });
    ui.report(data_json, |out| {
        writeln!(out, "magic:       0x00")?;
        writeln!(out, "schema id:   {}", id as u32)?;
        writeln!(out, "schema type: {}", schema_type)?;
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
