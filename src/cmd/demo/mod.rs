//! `demo`: a walkthrough of every subcommand that exists, on an embedded cluster
//! and an embedded registry, with no setup. Each capability adds its step here.

mod orders;

use clap::Args;
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use crate::io::registry_server::{RegistryServer, RegistryServerOptions};

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the embedded cluster and registry running after the walkthrough until Ctrl-C.
    #[arg(long)]
    pub keep_running: bool,
}

/// What the walkthrough did, step by step (the JSON report).
struct Walkthrough {
    steps: Vec<Value>,
    human: Vec<String>,
}

impl Walkthrough {
    fn step(&mut self, title: &str, text: String, data: Value) {
        self.human.push(format!("== {title}\n{text}"));
        self.steps.push(json!({"step": title, "result": data}));
    }
}

pub fn run(global: &GlobalArgs, args: DemoArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let mut w = Walkthrough {
        steps: Vec::new(),
        human: Vec::new(),
    };

    let cluster = EmbeddedCluster::start(None)
        .map_err(|e| CliError::failure(format!("cannot start the embedded cluster: {e}")))?;
    let registry_server = RegistryServer::start(RegistryServerOptions::default())
        .map_err(|e| CliError::failure(format!("cannot start the embedded registry: {e}")))?;
    let bootstrap = cluster.bootstrap().to_string();
    let registry_url = registry_server.url();
    cluster
        .create_topic(orders::ORDERS_TOPIC, orders::ORDERS_PARTITIONS)
        .map_err(|e| CliError::failure(e.to_string()))?;
    w.step(
        "embedded cluster and registry",
        format!(
            "Kafka-protocol cluster (librdkafka mock) at {bootstrap}\nschema registry at {registry_url}\ntopic `{}` with {} partitions",
            orders::ORDERS_TOPIC,
            orders::ORDERS_PARTITIONS
        ),
        json!({"bootstrap": bootstrap, "registry": registry_url}),
    );

    let registry = HttpRegistry::new(HttpRegistryOptions::new(registry_url.clone()))
        .map_err(|e| CliError::failure(e.to_string()))?;
    let (subject, id) = orders::register(&registry)?;
    w.step(
        "register the Avro schema",
        format!("subject {subject} -> schema id {id}"),
        json!({"subject": subject, "id": id}),
    );

    let data = orders::orders(1_732_870_800_000);
    orders::produce(&bootstrap, id, &data)?;
    w.step(
        "produce orders",
        format!(
            "{} Avro orders to `{}`, Confluent-framed with id {id}, keyed by user, headers trace-id and source",
            data.len(),
            orders::ORDERS_TOPIC
        ),
        json!({"records": data.len()}),
    );

    let back = orders::read_back(&bootstrap, &registry, data.len())?;
    let mut t = table(&[
        "partition",
        "offset",
        "key",
        "schema id",
        "value",
        "headers",
    ]);
    for r in &back {
        t.add_row(vec![
            r.partition.to_string(),
            r.offset.to_string(),
            r.key.clone(),
            r.schema_id.to_string(),
            r.value.to_string(),
            r.headers
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("null")))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    w.step(
        "read back and decode with the writer schema from the registry",
        t.to_string(),
        json!({"records": back.iter().map(|r| json!({"partition": r.partition, "offset": r.offset, "key": r.key, "value": r.value})).collect::<Vec<_>>()}),
    );

    let dir = tempfile::tempdir()
        .map_err(|e| CliError::failure(format!("cannot create a temp directory: {e}")))?;
    let parquet = dir.path().join("orders.parquet");
    let (rows, preview) = crate::cmd::tail::demo_to_parquet(
        &bootstrap,
        &registry_url,
        orders::ORDERS_TOPIC,
        &parquet,
        6,
    )?;
    let size = std::fs::metadata(&parquet).map(|m| m.len()).unwrap_or(0);
    w.step(
        "tail the topic to Parquet",
        format!(
            "krabka-streams tail {} -e --key-format string --value-format avro --out {}\n{rows} rows, {size} bytes (zstd); first rows:\n{preview}",
            orders::ORDERS_TOPIC,
            parquet.display()
        ),
        json!({"file": parquet.display().to_string(), "rows": rows, "bytes": size}),
    );

    ui.report(json!({"steps": w.steps}), |out| {
        for s in &w.human {
            writeln!(out, "{s}\n")?;
        }
        writeln!(
            out,
            "demo complete: every step above ran against the embedded cluster and registry"
        )
    })?;

    if args.keep_running {
        eprintln!("embedded cluster at {bootstrap}, registry at {registry_url}; Ctrl-C stops them");
        crate::cmd::dev_cluster::wait_for_stop_signal()?;
    }
    drop(registry_server);
    drop(cluster);
    Ok(())
}
