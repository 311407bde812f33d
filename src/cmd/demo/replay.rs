//! The demo's `produce` step: the orders topic captured to Parquet (as `tail orders
//! -e --value-format avro --out orders.parquet` writes it), replayed into a second
//! topic with `produce` (Avro through the registry, each row to its own partition)
//! and tailed back: the same rows.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::registry::Registry;
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::produce::{Hooks, InputFormat, OnError, PartitionChoice, ProducePlan, produce};

pub const REPLAY_TOPIC: &str = "orders-replay";

/// Captures `source`, replays the capture into [`REPLAY_TOPIC`], tails it back.
pub fn run(
    cluster: &EmbeddedCluster,
    registry: Arc<dyn Registry>,
    registry_url: &str,
    source: &str,
    partitions: i32,
    dir: &Path,
) -> CliResult<(String, Value)> {
    let bootstrap = cluster.bootstrap().to_string();
    cluster
        .create_topic(REPLAY_TOPIC, partitions)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let capture = dir.join("orders-capture.parquet");
    let (captured, _) = super::tail_step::demo_to_parquet(
        &bootstrap,
        registry_url,
        None,
        source,
        "avro",
        &capture,
        0,
    )?;
    let mut kafka = KafkaSettings::new();
    kafka.set("bootstrap.servers", bootstrap.clone());
    let plan = ProducePlan {
        topic: REPLAY_TOPIC.to_owned(),
        input: capture.to_string_lossy().into_owned(),
        format: InputFormat::Parquet,
        value_format: "avro".to_owned(),
        value_schema: None,
        key_column: None,
        // The capture holds the key decoded as text, next to the __key bytes sent.
        drop_columns: vec!["key".to_owned()],
        key_format: None,
        key_separator: None,
        line_key: None,
        headers: Vec::new(),
        binary: Default::default(),
        partition: PartitionChoice::Keep,
        transactional_id: None,
        on_error: OnError::Fail,
        dry_run: false,
        kafka: Some(kafka),
        timeout: Duration::from_secs(30),
        schemas: Some(SchemaCache::new(registry)),
        batch_rows: 10_000,
    };
    let summary = produce(
        &plan,
        &mut Hooks {
            cancelled: Arc::new(AtomicBool::new(false)),
            catch_signals: None,
            progress: &mut |_, _| {},
            refused: &mut |_, _| {},
        },
    )?;
    let back_file = dir.join("orders-replay.parquet");
    let (back, preview) = super::tail_step::demo_to_parquet(
        &bootstrap,
        registry_url,
        None,
        REPLAY_TOPIC,
        "avro",
        &back_file,
        5,
    )?;
    if back != captured || summary.records != captured {
        return Err(CliError::failure(format!(
            "replayed {} of {captured} captured rows and read {back} back",
            summary.records
        )));
    }
    let per_partition = summary
        .partitions
        .iter()
        .map(|(p, n)| format!("{p}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "krabka-streams tail {source} -e --value-format avro --out {capture}\nkrabka-streams produce {REPLAY_TOPIC} --input {capture} --value-format avro --partition keep --drop-columns key --registry {registry_url}\n{} records ({} bytes) replayed [{per_partition}], keys, timestamps and headers as captured, the schema derived from the columns under `{REPLAY_TOPIC}-value`; tailed back, first rows:\n{preview}",
        summary.records,
        summary.bytes,
        capture = capture.display(),
    );
    Ok((
        text,
        json!({"captured": captured, "replayed": summary.records, "read_back": back, "topic": REPLAY_TOPIC}),
    ))
}
