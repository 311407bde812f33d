//! `schema`: prewarm subjects into a cache (file), inspect what the registry holds,
//! decode framed bytes, and check compatibility locally. Each subcommand builds one
//! request from its flags, calls the engine (`engine::schema`) over the HTTP registry
//! client, and renders the answer.

mod check;
pub mod connect;
mod decode;
mod inspect;
mod prewarm;

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Subcommand, ValueEnum};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::ops::schema::source::Kind;

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// File holding a bearer token for the registry (else env KRABKA_SCHEMA_REGISTRY_TOKEN);
    /// used when no basic-auth user is set.
    #[arg(
        long = "schema-registry-token-file",
        value_name = "FILE",
        global = true
    )]
    pub token_file: Option<PathBuf>,

    /// Leave the krabka `messageType` extension out of register and lookup bodies, for
    /// strict Confluent registries.
    #[arg(long = "omit-message-type", global = true)]
    pub omit_message_type: bool,

    #[command(subcommand)]
    pub command: SchemaCommand,
}

#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Resolve subjects to schema ids (register, look up or adopt the latest), concurrently,
    /// one registry call per subject; optionally write a cache file for `tail` and `run`.
    Prewarm(prewarm::PrewarmArgs),
    /// Show what the registry holds: subjects, versions, schemas by version or id, id usage,
    /// compatibility levels.
    Inspect(inspect::InspectArgs),
    /// Decode Confluent-framed bytes (hex argument, --file, or stdin) with the writer schema
    /// fetched by id.
    Decode(decode::DecodeArgs),
    /// Check a local schema file against a registered version (exit 3 when incompatible).
    Check(check::CheckArgs),
}

impl SchemaArgs {
    /// The name used in error lines (`krabka-streams schema decode: …`).
    pub fn name(&self) -> &'static str {
        match self.command {
            SchemaCommand::Prewarm(_) => "schema prewarm",
            SchemaCommand::Inspect(_) => "schema inspect",
            SchemaCommand::Decode(_) => "schema decode",
            SchemaCommand::Check(_) => "schema check",
        }
    }
}

pub fn run(global: &GlobalArgs, args: SchemaArgs) -> CliResult<()> {
    let conn = connect::ConnectOptions {
        token_file: args.token_file.as_deref(),
        send_message_type: !args.omit_message_type,
        no_deadline: false,
    };
    match args.command {
        SchemaCommand::Prewarm(a) => prewarm::run(global, &conn, a),
        SchemaCommand::Inspect(a) => inspect::run(global, &conn, a),
        SchemaCommand::Decode(a) => decode::run(global, &conn, a),
        SchemaCommand::Check(a) => check::run(global, &conn, a),
    }
}

/// `--kind`: the clap side of `ops::schema::source::Kind` (ops never derive clap traits).
impl ValueEnum for Kind {
    fn value_variants<'a>() -> &'a [Self] {
        &[Kind::Avro, Kind::Protobuf, Kind::Json]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            Kind::Avro => "avro",
            Kind::Protobuf => "protobuf",
            Kind::Json => "json",
        }))
    }
}
