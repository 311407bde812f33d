//! Demo step: a sink written with the user's own schema files. A topology keeps
//! the orders above 100 and writes them as `value: protobuf:order.proto:demo.LargeOrder`,
//! where `order.proto` imports `common/country.proto` (an enum the message uses):
//! run online, the import registers first under its import path, the file
//! under `<topic>-value` with it as a reference, and `tail --value-format
//! protobuf` reads the values back through the registry.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::engine::schema::registry::Registry;
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::topology_file;

/// The sink topic.
pub const SINK_TOPIC: &str = "large-orders-proto";
/// The import `order.proto` names, relative to its own directory.
const IMPORT: &str = "common/country.proto";

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

/// Writes the files into `dir`, runs the topology online until it committed
/// `records` orders and tails the sink topic; returns the step's text and data.
pub fn run(
    cluster: &EmbeddedCluster,
    registry: Arc<dyn Registry>,
    registry_url: &str,
    dir: &Path,
    records: usize,
) -> CliResult<(String, Value)> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CliError::failure(format!("{}: {e}", parent.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| CliError::failure(format!("{}: {e}", path.display())))
    };
    write("schema-files.yaml", TOPOLOGY)?;
    write("order.proto", ORDER_PROTO)?;
    write(IMPORT, COUNTRY_PROTO)?;
    cluster
        .create_topic(SINK_TOPIC, 1)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut spec = topology_file::parse(TOPOLOGY).map_err(|e| CliError::failure(e.to_string()))?;
    topology_file::load_schema_files(&mut spec, dir)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let written = super::online::run_until_committed(cluster, &spec, registry.clone(), records)?;
    let subject = format!("{SINK_TOPIC}-value");
    let root = registry
        .latest(&subject)
        .map_err(|e| CliError::failure(format!("{subject}: {e}")))?;
    let import = registry
        .latest(IMPORT)
        .map_err(|e| CliError::failure(format!("{IMPORT}: {e}")))?;
    let references: Vec<String> = root
        .spec
        .references
        .iter()
        .map(|r| format!("{} -> {} v{}", r.name, r.subject, r.version))
        .collect();
    let file = dir.join("large-orders-proto.parquet");
    let (rows, preview) = super::tail_step::demo_to_parquet(
        cluster.bootstrap(),
        registry_url,
        None,
        SINK_TOPIC,
        "protobuf",
        &file,
        5,
    )?;
    let text = format!(
        "krabka-streams run schema-files.yaml -b … --registry {registry_url}\n\
         sink `value: protobuf:order.proto:demo.LargeOrder`; order.proto imports {IMPORT}:\n\
         {IMPORT} registered first (id {}), then {subject} (id {}) with references [{}]\n\
         {written} orders above 100 written; read back with\n\
         krabka-streams tail {SINK_TOPIC} -e --value-format protobuf --registry {registry_url} --out {}\n\
         {rows} rows; first rows:\n{preview}",
        import.id,
        root.id,
        references.join(", "),
        file.display()
    );
    let data = json!({
        "topic": SINK_TOPIC,
        "subject": subject,
        "id": root.id,
        "references": root.spec.references.iter().map(|r| json!({"name": r.name, "subject": r.subject, "version": r.version})).collect::<Vec<_>>(),
        "written": written,
        "rows": rows,
    });
    Ok((text, data))
}
