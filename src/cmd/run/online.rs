//! `run FILE -b …`: the topology as a consumer-group runner. Wires the rdkafka
//! consumer and producer (transactional under `guarantee: exactly-once`), the
//! state directory, the registry-backed codecs and, with a `barrier_group`, the
//! cut reader over `__barrier_state` into the engine's `GroupRunner`; starts
//! from a cut with `--restore-cut`; applies the rebalances the consumer queued
//! between rounds, and stops on Ctrl-C after the round in flight: its records
//! are sent, flushed and committed, every owned partition's state is saved, and
//! the exit code is 130.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{invalid, metrics_json, metrics_reporter, restore_cut};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::{GlobalArgs, OutputMode};
use crate::cmd::interrupt::Interrupt;
use crate::cmd::output::Ui;
use crate::cmd::schema_cache::open_cache;
use crate::engine::columnar::runner::group::{GroupRunner, RunnerError};
use crate::engine::columnar::topology::spec::{self, Guarantee, NodeOp, StateLayout, TopologySpec};
use crate::engine::columnarschema::topology_codecs::{self, OnlineCodecs};
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::engine::schema::cache::SchemaCache;
use crate::io::kafka::runner_consumer::{RebalanceEvent, RunnerConsumer, RunnerConsumerOptions};
use crate::io::kafka::runner_cuts::BrokerCuts;
use crate::io::kafka::runner_producer::RunnerProducer;
use crate::io::kafka::transactions;
use crate::io::runner_state::FileStateStore;

use super::RunArgs;

/// Records handed to the topology per round, at most.
const MAX_POLL_RECORDS: usize = 1000;
/// How long one round waits for records.
const POLL_TIMEOUT: Duration = Duration::from_millis(200);
/// Pause after a retriable failure (a writer schema being fetched, a commit during a rebalance).
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// The schema cache the codecs read writer schemas from: the registry's and/or the
/// `--schema-cache` file's, when either is given.
fn schema_cache(global: &GlobalArgs, args: &RunArgs) -> CliResult<Option<SchemaCache>> {
    let registry = global.registry.settings()?;
    let file = args.schema_cache.schema_cache.as_deref();
    if registry.is_none() && file.is_none() {
        return Ok(None);
    }
    open_cache(registry.as_ref(), file).map(Some)
}

/// Refuses sink codecs that cannot encode, naming the line of the codec.
fn check_sink_codecs(spec: &TopologySpec) -> Result<(), spec::SpecError> {
    for node in &spec.nodes {
        if let NodeOp::Sink {
            codec: Some(codec), ..
        } = &node.op
        {
            topology_codecs::encodable(&codec.value.value)
                .map_err(|m| spec::SpecError::at(codec.value.pos, m))?;
            if let Some(key) = &codec.key
                && key.value != "raw"
            {
                return Err(spec::SpecError::at(
                    key.pos,
                    "a sink writes the `__key` column as the record key: only `key: raw` is supported",
                ));
            }
        }
    }
    Ok(())
}

fn state_store(spec: &TopologySpec, group: &str) -> CliResult<FileStateStore> {
    let settings = &spec.settings;
    let Some(dir) = settings.state_dir.as_deref() else {
        return Ok(FileStateStore::memory());
    };
    let dir = Path::new(dir);
    match settings.state_layout {
        StateLayout::JavaGo => FileStateStore::java_go(dir),
        StateLayout::Rust => {
            FileStateStore::rust(dir, settings.barrier_group.as_deref().unwrap_or(group))
        }
    }
    .map_err(CliError::failure)
}

fn runner_failure(e: RunnerError) -> CliError {
    CliError::failure(e.message)
}

pub fn run_online(
    global: &GlobalArgs,
    ui: &Ui,
    args: &RunArgs,
    spec: &TopologySpec,
    file: &str,
) -> CliResult<()> {
    let kafka = global.connection.kafka_settings("run")?;
    let settings = &spec.settings;
    let Some(group) = settings.consumer_group.clone() else {
        return Err(CliError::usage(format!(
            "{file}: an online run needs `consumer_group` in the topology settings"
        )));
    };
    check_sink_codecs(spec).map_err(|e| invalid(args, file, e))?;
    let cache = schema_cache(global, args)?;
    let codecs = OnlineCodecs {
        schemas: cache.clone().map(|c| Arc::new(c) as Arc<dyn WriterSchemas>),
    };
    let built = spec::build(spec, &codecs, &HashMap::new()).map_err(|e| invalid(args, file, e))?;
    let topics: Vec<String> = {
        let mut t: Vec<String> = built
            .topology
            .sources()
            .into_iter()
            .flat_map(|(_, topics)| topics)
            .collect();
        t.dedup();
        t
    };
    let mut store = state_store(spec, &group)?;
    let timeout = global.connection.timeout;
    let restored = match args.restore_cut {
        Some(selector) => Some(restore_cut::prepare(
            &kafka,
            timeout,
            settings.barrier_group.as_deref(),
            &group,
            selector,
            &mut store,
        )?),
        None => None,
    };
    let exactly_once = settings.guarantee == Guarantee::ExactlyOnce;
    let mut consumer_kafka = kafka.clone();
    if exactly_once && kafka.get("isolation.level").is_none() {
        // Only records of committed transactions (up to the LSO) are processed.
        consumer_kafka.set("isolation.level", "read_committed");
    }
    let consumer = RunnerConsumer::subscribe(
        &consumer_kafka,
        &RunnerConsumerOptions {
            group: group.clone(),
            topics: topics.clone(),
            max_records: MAX_POLL_RECORDS,
            timeout,
        },
    )
    .map_err(runner_failure)?;
    let producer = if exactly_once {
        let id = transactions::transactional_id(&kafka, &group);
        RunnerProducer::transactional(&kafka, timeout, &id)
    } else {
        RunnerProducer::new(&kafka, timeout)
    }
    .map_err(runner_failure)?;
    let interrupt = Interrupt::install()?;
    let mut runner = GroupRunner::new(
        built.topology,
        consumer,
        producer,
        store,
        built.settings.error_policy.clone(),
    );
    runner.poll_timeout = POLL_TIMEOUT;
    runner.guarantee = settings.guarantee;
    if let Some(barrier_group) = settings.barrier_group.as_deref() {
        let cuts = BrokerCuts::new(kafka.clone(), timeout);
        runner = runner
            .with_barrier(barrier_group, Box::new(cuts))
            .map_err(runner_failure)?;
    }
    if let Some(restored) = &restored {
        runner
            .adopt_cut(&restored.cut, &restored.states)
            .map_err(runner_failure)?;
    }

    let quiet = global.output.quiet > 0;
    let mut progress = args
        .metrics_interval
        .map(|every| (every, Instant::now() + every, metrics_reporter(ui, quiet)));
    if !quiet && !ui.is_json() {
        eprintln!(
            "Running {file} as group {group} on {} (Ctrl-C to stop)",
            topics.join(", ")
        );
        if let Some(restored) = &restored {
            let offsets: Vec<String> = restored
                .cut
                .cut
                .offsets()
                .map(|(tp, o)| format!("{tp}@{o}"))
                .collect();
            eprintln!(
                "Started from cut {} of barrier group {}: {} partition(s) restored, offsets {}",
                restored.cut.epoch,
                restored.cut.group,
                restored.states.len(),
                offsets.join(", ")
            );
        }
    }
    let failure = loop {
        if interrupt.is_set() {
            break None;
        }
        match runner.run_once() {
            Ok(_) => {}
            Err(e) if e.retriable => {
                tracing::warn!("round retried: {}", e.message);
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(e) => break Some(e),
        }
        for warning in runner.take_warnings() {
            tracing::warn!("{warning}");
        }
        for event in runner.consumer.take_rebalances() {
            match event {
                RebalanceEvent::Assigned(tps) => runner.on_assigned(&tps),
                RebalanceEvent::Revoked(tps) => runner.on_revoked(&tps),
                RebalanceEvent::Lost(tps) => runner.on_lost(&tps),
            }
        }
        if let Some((every, next, report)) = progress.as_mut()
            && Instant::now() >= *next
        {
            report(&runner.metrics);
            *next = Instant::now() + *every;
        }
    };
    // The failed round was rolled back, so the state of every owned partition
    // matches its committed offsets and can be saved either way.
    runner.close();
    runner.consumer.close();
    let metrics = runner.metrics;
    let outcome = if failure.is_some() {
        "failed"
    } else {
        "interrupted"
    };
    if !quiet && global.output.output == OutputMode::Human {
        eprintln!("Processed a total of {} records", metrics.input_records);
        eprintln!("{metrics}");
    }
    if ui.is_json() {
        ui.report(
            json!({"outcome": outcome, "group": group, "metrics": metrics_json(&metrics)}),
            |_| Ok(()),
        )?;
    }
    match failure {
        Some(e) => Err(runner_failure(e)),
        None => Err(CliError::cancelled()),
    }
}
