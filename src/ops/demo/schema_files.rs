//! Demo step: a sink written with the user's own schema files. A topology keeps
//! the orders above 100 and writes them as `value: protobuf:order.proto:demo.LargeOrder`,
//! where `order.proto` imports `common/country.proto` (an enum the message uses):
//! run online, the import registers first under its import path, the file
//! under `<topic>-value` with it as a reference, and `tail --value-format
//! protobuf` reads the values back through the registry.

use crate::engine::schema::registry::RegisteredSchema;
use crate::io::atomic_file::write_whole;
use crate::io::topology_file;
use crate::ops::demo::tail::{TailJob, Tailed, to_parquet};
use crate::ops::demo::{Env, failed, online};
use crate::ops::{Error, Result};

/// The sink topic.
pub const SINK_TOPIC: &str = "large-orders-proto";
/// The import `order.proto` names, relative to its own directory.
pub const IMPORT: &str = "common/country.proto";

const COUNTRY_PROTO: &str = r#"syntax = "proto3";
package common;

enum Country { COUNTRY_UNSPECIFIED = 0; NL = 1; BE = 2; DE = 3; }
"#;

const ORDER_PROTO: &str = r#"syntax = "proto3";
package demo;
import "common/country.proto";
import "google/protobuf/timestamp.proto";

message LargeOrder {
  string order_id = 1;
  string user = 2;
  common.Country country = 3;
  int64 amount = 4;
  google.protobuf.Timestamp ts = 5;
}
"#;

const TOPOLOGY: &str = r#"version: 1
settings:
  consumer_group: demo-schema-files
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns: {order_id: utf8, user: utf8, country: utf8, amount: int64, ts: timestamp}
  - filter: large
    parent: orders
    where: amount > 100
  - sink: out
    parent: large
    topic: large-orders-proto
    value: protobuf:order.proto:demo.LargeOrder
"#;

/// What the step registered, wrote and read back.
pub struct SchemaFilesRun {
    /// The root file's subject (`<topic>-value`) and its latest version.
    pub subject: String,
    pub root: RegisteredSchema,
    /// The import's latest version, under its import path.
    pub import: RegisteredSchema,
    /// Records the sink wrote.
    pub written: u64,
    /// The sink topic tailed back.
    pub tailed: Tailed,
}

/// Writes the files into the demo's directory, runs the topology online until it
/// committed `records` orders and tails the sink topic.
pub(crate) fn run(env: &Env<'_>, records: usize) -> Result<SchemaFilesRun> {
    let write = |name: &str, text: &str| -> Result<()> {
        let path = env.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::failure(format!("{}: {e}", parent.display())))?;
        }
        write_whole(&path, text.as_bytes())
            .map_err(|e| Error::failure(format!("{}: {e}", path.display())))
    };
    write("schema-files.yaml", TOPOLOGY)?;
    write("order.proto", ORDER_PROTO)?;
    write(IMPORT, COUNTRY_PROTO)?;
    env.cluster.create_topic(SINK_TOPIC, 1).map_err(failed)?;
    let mut spec = topology_file::parse(TOPOLOGY).map_err(failed)?;
    topology_file::load_schema_files(&mut spec, env.dir).map_err(failed)?;
    let written = online::run_until_committed(env, &spec, records)?;
    let subject = format!("{SINK_TOPIC}-value");
    let root = env
        .registry
        .latest(&subject)
        .map_err(|e| Error::failure(format!("{subject}: {e}")))?;
    let import = env
        .registry
        .latest(IMPORT)
        .map_err(|e| Error::failure(format!("{IMPORT}: {e}")))?;
    let tailed = to_parquet(
        env,
        TailJob {
            value_format: "protobuf",
            ..TailJob::avro(SINK_TOPIC, env.dir.join("large-orders-proto.parquet"), 5)
        },
    )?;
    Ok(SchemaFilesRun {
        subject,
        root,
        import,
        written,
        tailed,
    })
}
