//! Demo step: the example topology `large-orders-by-user.yaml` run online, as
//! `run large-orders-by-user.yaml -b … --registry …` would: a consumer group
//! over the Avro orders of the embedded cluster, the example's JSON sink turned
//! into a registry-framed `avro` sink (its schema derived from the sink's columns
//! and registered under `large-orders-by-user-value`), the totals read back with
//! the registered writer schema and compared with the offline step's totals.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::engine::columnar::topology::spec::{NodeOp, StateStoreKind, TopologySpec};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::topic_partition::TopicPartition;
use crate::io::topology_file;
use crate::ops::demo::orders::{decode_framed, read_from_start};
use crate::ops::demo::topology::EXAMPLE;
use crate::ops::demo::{Env, failed};
use crate::ops::run::online::{self, StartError};
use crate::ops::{Error, Result};

/// The example's sink topic.
pub const SINK_TOPIC: &str = "large-orders-by-user";
/// How long the runner may take to join the group and process every order.
const DEADLINE: Duration = Duration::from_secs(30);
/// How long reading the sink back may take.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the example until it has read `records` orders; returns the last total and
/// count per user.
pub(crate) fn run(env: &Env<'_>, records: usize) -> Result<BTreeMap<String, (i64, i64)>> {
    env.cluster.create_topic(SINK_TOPIC, 1).map_err(failed)?;
    let mut spec = topology_file::parse(EXAMPLE).map_err(failed)?;
    for node in &mut spec.nodes {
        if let NodeOp::Sink {
            codec: Some(codec), ..
        } = &mut node.op
        {
            codec.value.value = "avro".into();
        }
    }
    let written = run_until_committed(env, &spec, records)?;
    read_totals(env, written as usize)
}

/// Runs `spec` online as a consumer group of the embedded cluster until it has
/// committed `records` orders (the orders topic starts empty, so committed offsets
/// count the records done); returns the records its sinks wrote.
pub(crate) fn run_until_committed(
    env: &Env<'_>,
    spec: &TopologySpec,
    records: usize,
) -> Result<u64> {
    // One member in this process, on a cluster that cannot create topics: the
    // state stays in memory unless the topology names a store.
    let mut spec = spec.clone();
    spec.settings
        .state_store
        .get_or_insert(StateStoreKind::Memory);
    let started = online::start(
        &env.kafka(),
        &spec,
        Some(SchemaCache::new(env.registry.clone())),
        Duration::from_secs(10),
        None,
        false,
    )
    .map_err(|e| match e {
        StartError::Usage(m) | StartError::Failed(m) => Error::failure(m),
        StartError::Spec(e) => failed(e),
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
                result = Err(Error::failure(e.message));
                break;
            }
        }
    }
    online::stop(&mut runner);
    result?;
    if !done(&committed) {
        return Err(Error::failure(format!(
            "the online runner committed {} of {records} orders before the deadline",
            committed.values().sum::<i64>()
        )));
    }
    Ok(runner.metrics.output_records)
}

/// Reads the sink topic; the last row per user is that user's total.
fn read_totals(env: &Env<'_>, expected: usize) -> Result<BTreeMap<String, (i64, i64)>> {
    let records = read_from_start(&env.kafka(), SINK_TOPIC, expected, READ_TIMEOUT)?;
    if records.len() < expected {
        return Err(Error::failure(format!(
            "read {} of {expected} records of {SINK_TOPIC} before the deadline",
            records.len()
        )));
    }
    let mut totals = BTreeMap::new();
    for record in records {
        let (_, value) = decode_framed(
            env.registry.as_ref(),
            record.value.as_deref().unwrap_or_default(),
        )
        .map_err(|e| Error::failure(format!("{SINK_TOPIC} offset {}: {e}", record.offset)))?;
        let user = value["user"].as_str().unwrap_or_default().to_owned();
        let total = value["total"].as_i64().unwrap_or_default();
        let n = value["n"].as_i64().unwrap_or_default();
        totals.insert(user, (total, n));
    }
    Ok(totals)
}
