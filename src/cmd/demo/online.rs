//! Demo step: the example topology `large-orders-by-user.yaml` run online, as
//! `run large-orders-by-user.yaml -b … --registry …` would: a consumer group
//! over the Avro orders of the embedded cluster, the example's JSON sink turned
//! into a registry-framed `avro` sink (its schema derived from the sink's columns
//! and registered under `large-orders-by-user-value`), the totals read back with
//! the registered writer schema and compared with the offline step's totals.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Message, Offset, TopicPartitionList};
use serde_json::Value;

use super::topology::EXAMPLE;
use crate::cmd::exit::{CliError, CliResult};
use crate::engine::columnar::topology::spec::{NodeOp, StateStoreKind, TopologySpec};
use crate::engine::schema::avro::{AvroSchema, decode_body};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::framing;
use crate::engine::schema::registry::Registry;
use crate::engine::topic_partition::TopicPartition;
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::topology_file;
use crate::ops::run::online::{self, StartError};

/// A registry-framed Avro total, decoded with its writer schema from the registry.
fn decode(registry: &dyn Registry, payload: &[u8]) -> Result<Value, String> {
    let frame = framing::decode(payload).map_err(|e| e.to_string())?;
    let writer = registry
        .schema_by_id(frame.schema_id)
        .map_err(|e| format!("writer schema {}: {e}", frame.schema_id))?;
    let schema = AvroSchema::parse(&writer.spec.schema).map_err(|e| e.to_string())?;
    decode_body(&schema, frame.schema_id, None, frame.body).map_err(|e| e.to_string())
}

/// The example's sink topic.
pub const SINK_TOPIC: &str = "large-orders-by-user";
/// How long the runner may take to join the group and process every order.
const DEADLINE: Duration = Duration::from_secs(30);

/// Runs the example until it has read `records` orders; returns the last total per user.
pub fn run(
    cluster: &EmbeddedCluster,
    registry: Arc<dyn Registry>,
    records: usize,
) -> CliResult<BTreeMap<String, (i64, i64)>> {
    cluster
        .create_topic(SINK_TOPIC, 1)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut spec = topology_file::parse(EXAMPLE).map_err(|e| CliError::failure(e.to_string()))?;
    for node in &mut spec.nodes {
        if let NodeOp::Sink {
            codec: Some(codec), ..
        } = &mut node.op
        {
            codec.value.value = "avro".into();
        }
    }
    let written = run_until_committed(cluster, &spec, registry.clone(), records)?;
    read_totals(cluster.bootstrap(), registry.as_ref(), written as usize)
}

/// Runs `spec` online as a consumer group of the embedded cluster until it has
/// committed `records` orders (the orders topic starts empty, so committed offsets
/// count the records done); returns the records its sinks wrote.
pub fn run_until_committed(
    cluster: &EmbeddedCluster,
    spec: &TopologySpec,
    registry: Arc<dyn Registry>,
    records: usize,
) -> CliResult<u64> {
    let mut kafka = KafkaSettings::new();
    kafka.set("bootstrap.servers", cluster.bootstrap());
    // One member in this process, on a cluster that cannot create topics: the
    // state stays in memory unless the topology names a store.
    let mut spec = spec.clone();
    spec.settings
        .state_store
        .get_or_insert(StateStoreKind::Memory);
    let started = online::start(
        &kafka,
        &spec,
        Some(SchemaCache::new(registry)),
        Duration::from_secs(10),
        None,
        false,
    )
    .map_err(|e| match e {
        StartError::Usage(m) | StartError::Failed(m) => CliError::failure(m),
        StartError::Spec(e) => CliError::failure(e.to_string()),
        StartError::Kafka(e) => e.into(),
        StartError::Cli(e) => e,
    })?;
    let mut runner = started.runner;
    let deadline = Instant::now() + DEADLINE;
    let mut committed: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    let done = |c: &BTreeMap<TopicPartition, i64>| c.values().sum::<i64>() >= records as i64;
    let mut result = Ok(());
    while !done(&committed) && Instant::now() < deadline {
        match online::round(&mut runner) {
            Ok(offsets) => committed.extend(offsets),
            Err(e) => {
                result = Err(CliError::failure(e.message));
                break;
            }
        }
    }
    online::stop(&mut runner);
    result?;
    if !done(&committed) {
        return Err(CliError::failure(format!(
            "the online runner committed {} of {records} orders before the deadline",
            committed.values().sum::<i64>()
        )));
    }
    Ok(runner.metrics.output_records)
}

/// Reads the sink topic; the last row per user is that user's total.
fn read_totals(
    bootstrap: &str,
    registry: &dyn Registry,
    expected: usize,
) -> CliResult<BTreeMap<String, (i64, i64)>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "krabka-demo-online-reader")
        .set("enable.auto.commit", "false")
        .create()
        .map_err(|e| CliError::failure(format!("create Kafka consumer: {e}")))?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(SINK_TOPIC, 0, Offset::Beginning)
        .map_err(|e| CliError::failure(e.to_string()))?;
    consumer
        .assign(&tpl)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut totals = BTreeMap::new();
    let mut read = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while read < expected && Instant::now() < deadline {
        let Some(msg) = consumer.poll(Duration::from_millis(200)) else {
            continue;
        };
        let msg = msg.map_err(|e| CliError::failure(format!("consume {SINK_TOPIC}: {e}")))?;
        read += 1;
        let value = decode(registry, msg.payload().unwrap_or_default())
            .map_err(|e| CliError::failure(format!("{SINK_TOPIC} offset {}: {e}", msg.offset())))?;
        let user = value["user"].as_str().unwrap_or_default().to_owned();
        let total = value["total"].as_i64().unwrap_or_default();
        let n = value["n"].as_i64().unwrap_or_default();
        totals.insert(user, (total, n));
    }
    if read < expected {
        return Err(CliError::failure(format!(
            "read {read} of {expected} records of {SINK_TOPIC} before the deadline"
        )));
    }
    Ok(totals)
}
