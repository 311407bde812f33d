//! `demo`: a walkthrough of every subcommand that exists, on an embedded cluster
//! and an embedded registry, with no setup. Each capability adds its step here; the
//! steps print with the subcommands' own renderers, from `cmd::render`.

mod barrier;
mod leader;
mod online;
mod orders;
mod replay;
mod schema_files;
mod schemas;
mod snapshots;
mod tail_step;
mod topology;

use clap::Args;
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, table};
use crate::cmd::render::barrier::{CUT_HEADERS, cut_row, cut_summary_json};
use crate::cmd::render::barrier_verify::{
    report_json as verify_report_json, write_report as write_verify_report,
};
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

/// The walkthrough. Long because it is the script itself: one step after the other, in
/// the order the user reads them.
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

    let registry = std::sync::Arc::new(
        HttpRegistry::new(HttpRegistryOptions::new(registry_url.clone()))
            .map_err(|e| CliError::failure(e.to_string()))?,
    );
    let dir = tempfile::tempdir()
        .map_err(|e| CliError::failure(format!("cannot create a temp directory: {e}")))?;
    let schema_cache = dir.path().join("schema-cache.json");
    let (text, data) =
        schemas::prewarm_and_inspect(registry.clone(), &registry_url, &schema_cache)?;
    w.step("schema prewarm and inspect the orders subjects", text, data);
    let (subject, id) = orders::register(registry.as_ref())?;
    w.step(
        "register the Avro schema",
        format!("subject {subject} -> schema id {id} (already registered by prewarm: same id)"),
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

    let back = orders::read_back(&bootstrap, registry.as_ref(), data.len())?;
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

    let (replay_text, replay_data) = replay::run(
        &cluster,
        registry.clone(),
        &registry_url,
        orders::ORDERS_TOPIC,
        orders::ORDERS_PARTITIONS,
        dir.path(),
    )?;
    w.step(
        "replay a capture into a topic with produce, and tail it back",
        replay_text,
        replay_data,
    );

    barrier_steps(&mut w, &cluster, &bootstrap)?;
    let (leader_text, leader_data) = leader::failover(&cluster)?;
    w.step(
        "leader election: two members, the holder crashes, the standby takes over",
        leader_text,
        leader_data,
    );
    snapshots::steps(&mut w, &data)?;
    let totals = topology::run(&back)?;
    let mut t = table(&["partition", "user", "total", "n"]);
    for (partition, user, total, n) in &totals {
        t.add_row(vec![
            partition.to_string(),
            user.clone(),
            total.to_string(),
            n.to_string(),
        ]);
    }
    w.step(
        "run a topology offline (examples/topologies/large-orders-by-user.yaml)",
        format!(
            "orders with amount > 100, summed per user, state per partition:\n{t}\n(the same as `tail orders --format arrow --out - | krabka-streams run large-orders-by-user.yaml --input orders=- --sink large-orders-by-user=-`)"
        ),
        json!({"totals": totals.iter().map(|(p, u, total, n)| json!({"partition": p, "user": u, "total": total, "n": n})).collect::<Vec<_>>()}),
    );
    let online_totals = online::run(&cluster, registry.clone(), data.len())?;
    let offline_totals: std::collections::BTreeMap<String, (i64, i64)> = totals
        .iter()
        .map(|(_, user, total, n)| (user.clone(), (*total, *n)))
        .collect();
    if online_totals != offline_totals {
        return Err(CliError::failure(format!(
            "the online run's totals {online_totals:?} differ from the offline run's {offline_totals:?}"
        )));
    }
    let mut t = table(&["user", "total", "n"]);
    for (user, (total, n)) in &online_totals {
        t.add_row(vec![user.clone(), total.to_string(), n.to_string()]);
    }
    w.step(
        "run the same topology online (consumer group, at-least-once)",
        format!(
            "krabka-streams run large-orders-by-user.yaml -b {bootstrap} --registry {registry_url}\nconsumer group `large-orders-by-user` over `{}`, the sink as `value: avro` (schema derived from its columns, registered under `{}-value`): Avro totals on `{}` (last row per user, decoded with the registered schema), equal to the offline totals:\n{t}",
            orders::ORDERS_TOPIC,
            online::SINK_TOPIC,
            online::SINK_TOPIC
        ),
        json!({"totals": online_totals.iter().map(|(u, (total, n))| json!({"user": u, "total": total, "n": n})).collect::<Vec<_>>()}),
    );
    // The sink topic read back by tail, which resolves the sink's registered schema by id.
    let totals_file = dir.path().join("totals.parquet");
    let (rows, preview) = tail_step::demo_to_parquet(
        &bootstrap,
        &registry_url,
        None,
        online::SINK_TOPIC,
        "avro",
        &totals_file,
        10,
    )?;
    w.step(
        "tail the registry-framed sink topic",
        format!(
            "krabka-streams tail {} -e --key-format string --value-format avro --registry {registry_url} --out {}\n{rows} rows; first rows:\n{preview}",
            online::SINK_TOPIC,
            totals_file.display()
        ),
        json!({"topic": online::SINK_TOPIC, "rows": rows}),
    );
    let (text, data) = schema_files::run(
        &cluster,
        registry.clone(),
        &registry_url,
        dir.path(),
        data.len(),
    )?;
    w.step(
        "a sink written with your own schema files (protobuf:FILE.proto with an import)",
        text,
        data,
    );
    let parquet = dir.path().join("orders.parquet");
    let (rows, preview) = tail_step::demo_to_parquet(
        &bootstrap,
        &registry_url,
        Some(&schema_cache),
        orders::ORDERS_TOPIC,
        "avro",
        &parquet,
        6,
    )?;
    let size = std::fs::metadata(&parquet).map(|m| m.len()).unwrap_or(0);
    w.step(
        "tail the topic to Parquet",
        format!(
            "krabka-streams tail {} -e --key-format string --value-format avro --schema-cache {} --out {}\n{rows} rows, {size} bytes (zstd); first rows:\n{preview}",
            orders::ORDERS_TOPIC,
            schema_cache.display(),
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
        let stop = crate::cmd::interrupt::StopSignal::listen();
        eprintln!("embedded cluster at {bootstrap}, registry at {registry_url}; Ctrl-C stops them");
        stop.wait()?;
    }
    drop(registry_server);
    drop(cluster);
    Ok(())
}

/// Publishes cuts, lists them as `barrier list --all --group orders-cut` would, then verifies
/// the latest as `barrier verify` would.
fn barrier_steps(w: &mut Walkthrough, cluster: &EmbeddedCluster, bootstrap: &str) -> CliResult<()> {
    let published = barrier::publish_cuts(cluster)?;
    let state = barrier::list(bootstrap)?;
    let cuts = state.log.cuts(barrier::BARRIER_GROUP);
    let mut t = table(&CUT_HEADERS);
    for c in &cuts {
        t.add_row(cut_row(c));
    }
    w.step(
        "publish barrier cuts and list them (barrier list --all)",
        format!(
            "{} records for group {} in __barrier_state partition {} of {} (abs(murmur2(group)) % partitions)\n{t}\n`barrier list` without --all hides the partial cut 2",
            published.records,
            barrier::BARRIER_GROUP,
            published.state_partition,
            barrier::STATE_PARTITIONS
        ),
        json!({"state_partition": published.state_partition, "cuts": cuts.iter().map(cut_summary_json).collect::<Vec<_>>()}),
    );

    let snapshot_dir = tempfile::tempdir()
        .map_err(|e| CliError::failure(format!("cannot create a snapshot directory: {e}")))?;
    barrier::prepare_verification(bootstrap, &state, snapshot_dir.path())?;
    let report = barrier::verify_cut(bootstrap, snapshot_dir.path())?;
    let mut text = Vec::new();
    write_verify_report(&mut text, &report)?;
    w.step(
        "verify cut 3 (barrier verify --consumer-group orders-app --snapshot-dir DIR)",
        format!(
            "consumer group {} committed at the cut; snapshots saved in {}\n{}",
            barrier::CONSUMER_GROUP,
            snapshot_dir.path().display(),
            String::from_utf8_lossy(&text).trim_end()
        ),
        verify_report_json(&report),
    );
    if report.verified() {
        Ok(())
    } else {
        Err(CliError::failure("the demo cut did not verify"))
    }
}
