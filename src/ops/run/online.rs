//! `run FILE -b …`: the topology as a consumer-group runner. Wires the rdkafka
//! consumer and producer (transactional under `guarantee: exactly-once`, the
//! consumer then `read_committed`), the state store (a directory, memory or a
//! compacted Kafka topic, with its identity claim), the registry-backed codecs
//! (sink schemas registered and source schemas prefetched before the first
//! round) and, with a `barrier_group`, the cut reader over `__barrier_state`
//! into the engine's `GroupRunner`; starts from a cut with `--restore-cut`;
//! applies the rebalances the consumer queued between rounds, and stops when
//! asked (Ctrl-C) after the round in flight: its records are sent, flushed and
//! committed and every owned partition's state is saved.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::plan::{RunHooks, RunPlan, StartedInfo, invalid};
use super::restore_cut;
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::runner::group::{
    Fence, GroupRunner, RunnerError, StateStore, TopicPartition,
};
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::columnar::topology::spec::{self, Guarantee, NodeOp, TopologySpec};
use crate::engine::columnarschema::topology_codecs::{self, OnlineCodecs};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::prewarm::{PrewarmMode, prewarm};
use crate::engine::schema::registry::subject_for;
use crate::io::kafka::auth_failure;
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::runner_consumer::{RebalanceEvent, RunnerConsumer, RunnerConsumerOptions};
use crate::io::kafka::runner_cuts::BrokerCuts;
use crate::io::kafka::runner_producer::RunnerProducer;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::transactions;
use crate::ops::state_store::{self, StoreRequest};
use crate::ops::{Error, Result};

/// Records handed to the topology per round, at most. An exactly-once or barrier round
/// ends with a producer flush and a commit (or a transaction commit), two broker round
/// trips: with 1000 the runner spent most of its time waiting on them (about 8 000
/// records/s on the mock). At-least-once rounds are pipelined and wait for neither.
const MAX_POLL_RECORDS: usize = 10_000;
/// How long one round waits for records.
const POLL_TIMEOUT: Duration = Duration::from_millis(200);
/// Pause after a retriable failure (a writer schema being fetched, a commit during a rebalance).
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// Refuses sink codecs that cannot encode, naming the line of the codec.
pub(super) fn check_sink_codecs(spec: &TopologySpec) -> std::result::Result<(), spec::SpecError> {
    for node in &spec.nodes {
        if let NodeOp::Sink {
            codec: Some(codec), ..
        } = &node.op
        {
            topology_codecs::encodable(&codec.value.value)
                .map_err(|m| spec::SpecError::at(codec.value.pos, m))?;
            if let Some(key) = &codec.key
                && codec.key_column.is_none()
                && key.value != "raw"
            {
                return Err(spec::SpecError::at(
                    key.pos,
                    "a sink key is `raw` (the `__key` column) or `{column: NAME, codec: string|raw|json|avro|json-schema|protobuf}`",
                ));
            }
        }
    }
    Ok(())
}

/// Registers the writer schemas the registry-framed sinks interned while the
/// topology was built (their input schemas were declared), before any record is
/// polled: a registry that refuses one stops the run here, not mid-stream.
fn register_sink_schemas(cache: Option<&SchemaCache>) -> std::result::Result<(), StartError> {
    let Some(cache) = cache else {
        return Ok(());
    };
    if cache.interned().is_empty() || cache.registry().is_none() {
        return Ok(());
    }
    let report =
        prewarm(cache, PrewarmMode::AutoRegister).map_err(|e| StartError::Failed(e.to_string()))?;
    if let Some((subject, e)) = report.failures.iter().next() {
        let message = format!("cannot register the sink schema of {subject}: {e}");
        return Err(if e.is_unreachable() {
            StartError::Cli(Error::unreachable(message))
        } else {
            StartError::Failed(message)
        });
    }
    Ok(())
}

/// Asks the registry, while the group join runs, for the latest writer schema of
/// each registry-framed source topic (`<topic>-value`, `<topic>-key`), so the
/// first batch does not wait for a fetch. Nothing waits on these requests.
fn prefetch_source_schemas(spec: &TopologySpec, cache: Option<&SchemaCache>) {
    let Some(cache) = cache else {
        return;
    };
    for node in &spec.nodes {
        let NodeOp::Source { topics, codec, .. } = &node.op else {
            continue;
        };
        let key = codec
            .key
            .as_ref()
            .is_some_and(|k| topology_codecs::needs_registry(&k.value));
        for topic in topics {
            if topology_codecs::needs_registry(&codec.value.value) {
                cache.prefetch_latest(&subject_for(&topic.value, false));
            }
            if key {
                cache.prefetch_latest(&subject_for(&topic.value, true));
            }
        }
    }
}

/// The runner over the real adapters.
pub type OnlineRunner = GroupRunner<RunnerConsumer, RunnerProducer, Box<dyn StateStore>>;

/// A runner subscribed to the topology's source topics, with its group name and topics.
pub struct Started {
    pub runner: OnlineRunner,
    pub group: String,
    pub topics: Vec<String>,
    /// The cut the run started from (`--restore-cut`).
    pub restored: Option<restore_cut::RestoredCut>,
}

/// Builds the topology with registry-backed codecs and subscribes its group.
/// Errors in the file are reported like `--check`'s (with `check` set, exit 3).
pub fn start(
    kafka: &KafkaSettings,
    spec: &TopologySpec,
    schemas: Option<SchemaCache>,
    timeout: Duration,
    restore_cut: Option<EpochSelector>,
    adopt_state: bool,
) -> std::result::Result<Started, StartError> {
    let settings = &spec.settings;
    let Some(group) = settings.consumer_group.clone() else {
        return Err(StartError::Usage(
            "an online run needs `consumer_group` in the topology settings".into(),
        ));
    };
    check_sink_codecs(spec).map_err(StartError::Spec)?;
    let codecs = OnlineCodecs {
        schemas: schemas.clone(),
    };
    let built = spec::build(spec, &codecs, &HashMap::new()).map_err(StartError::Spec)?;
    register_sink_schemas(schemas.as_ref())?;
    let mut topics: Vec<String> = Vec::new();
    for (_, source_topics) in built.topology.sources() {
        for t in source_topics {
            if !topics.contains(&t) {
                topics.push(t);
            }
        }
    }
    let identity = StateIdentity::of(spec, &group);
    let opened = state_store::open(&StoreRequest {
        kafka,
        settings,
        identity: &identity,
        source_topics: &topics,
        adopt: adopt_state,
        timeout,
    })
    .map_err(StartError::Cli)?;
    for warning in &opened.warnings {
        tracing::warn!("{warning}");
    }
    for notice in &opened.notices {
        tracing::info!("{notice}");
    }
    let mut store = opened.store;
    let restored = match restore_cut {
        Some(selector) => Some(
            restore_cut::prepare(
                kafka,
                timeout,
                settings.barrier_group.as_deref(),
                &group,
                selector,
                store.as_mut(),
            )
            .map_err(StartError::Cli)?,
        ),
        None => None,
    };
    let exactly_once = settings.guarantee == Guarantee::ExactlyOnce;
    let mut consumer_kafka = kafka.clone();
    if exactly_once && kafka.get("isolation.level").is_none() {
        // Only records of committed transactions (up to the LSO) are processed.
        consumer_kafka.set("isolation.level", "read_committed");
    }
    prefetch_source_schemas(spec, schemas.as_ref());
    // The consumer goes first: its metadata wait ends at once on a refused SASL login
    // (io::kafka::auth_failure), so the producers, built from the same settings, never
    // wait out a flush or init_transactions on credentials the broker refused.
    let consumer = RunnerConsumer::subscribe(
        &consumer_kafka,
        &RunnerConsumerOptions {
            group: group.clone(),
            topics: topics.clone(),
            max_records: MAX_POLL_RECORDS,
            timeout,
        },
    )
    .map_err(StartError::Kafka)?;
    let producer = if exactly_once {
        let id = transactions::transactional_id(kafka, &group);
        RunnerProducer::transactional(kafka, timeout, &id)
    } else {
        RunnerProducer::new(kafka, timeout)
    }
    .map_err(|e| StartError::Failed(e.message))?;
    let mut runner = GroupRunner::new(
        built.topology,
        consumer,
        producer,
        store,
        built.settings.error_policy.clone(),
    );
    runner.poll_timeout = POLL_TIMEOUT;
    runner.guarantee = settings.guarantee;
    // With a store that outlives the process, state is saved in step with the
    // committed offsets, so a kill -9 never restarts from older state.
    runner.save_each_round = opened.save_each_round;
    if let Some(barrier_group) = settings.barrier_group.as_deref() {
        let cuts = BrokerCuts::new(kafka.clone(), timeout);
        runner = runner
            .with_barrier(barrier_group, Box::new(cuts))
            .map_err(|e| StartError::Failed(e.message))?;
    }
    if let Some(restored) = &restored {
        runner
            .adopt_cut(&restored.cut, &restored.states)
            .map_err(|e| StartError::Failed(e.message))?;
    }
    Ok(Started {
        runner,
        group,
        topics,
        restored,
    })
}

/// Why a runner could not start.
#[derive(Debug)]
pub enum StartError {
    Usage(String),
    /// The topology file is wrong at a position.
    Spec(spec::SpecError),
    /// The cluster is unreachable or refused (exit 4 or 1).
    Kafka(KafkaIoError),
    Failed(String),
    /// Already a command error (e.g. `--restore-cut` found no such cut).
    Cli(Error),
}

/// One round, then the rebalances it queued; returns the offsets committed
/// (none when the round is retried). `Err` only for a failure that ends the run.
pub fn round(
    runner: &mut OnlineRunner,
) -> std::result::Result<BTreeMap<TopicPartition, i64>, RunnerError> {
    let committed = match runner.run_once() {
        Ok(offsets) => offsets,
        Err(e) if e.retriable => {
            tracing::info!("round retried: {}", e.message);
            std::thread::sleep(RETRY_PAUSE);
            BTreeMap::new()
        }
        Err(e) => return Err(e),
    };
    for notice in runner.take_notices() {
        tracing::info!("{notice}");
    }
    for warning in runner.take_warnings() {
        tracing::warn!("{warning}");
    }
    for event in runner.consumer.take_rebalances() {
        let named = |tps: &[TopicPartition]| {
            tps.iter()
                .map(
                    |TopicPartition {
                         topic: t,
                         partition: p,
                     }| format!("{t}/{p}"),
                )
                .collect::<Vec<_>>()
                .join(", ")
        };
        match event {
            RebalanceEvent::Assigned(tps) => {
                tracing::info!("assigned: {}", named(&tps));
                runner.on_assigned(&tps)
            }
            RebalanceEvent::Revoked(tps) => {
                tracing::info!("revoked: {}", named(&tps));
                runner.on_revoked(&tps)
            }
            RebalanceEvent::Lost(tps) => {
                tracing::info!("lost: {}", named(&tps));
                runner.on_lost(&tps)
            }
        }
    }
    Ok(committed)
}

/// Saves every owned partition's state and leaves the group.
pub fn stop(runner: &mut OnlineRunner) {
    // A failed round was rolled back, so the state of every owned partition
    // matches its committed offsets and can be saved either way.
    runner.close();
    for warning in runner.take_warnings() {
        tracing::warn!("{warning}");
    }
    runner.consumer.close();
}

/// How an online run ended: it runs until asked to stop or until a failure.
#[derive(Debug)]
pub enum OnlineOutcome {
    Interrupted,
    Failed(Error),
}

/// The end of an online run: how, the group and the metrics at the end.
#[derive(Debug)]
pub struct OnlineReport {
    pub outcome: OnlineOutcome,
    pub group: String,
    pub metrics: crate::engine::columnar::runner::Metrics,
}

impl OnlineReport {
    /// The error the run ends with: the failure, or cancelled (exit 130) after a stop request.
    pub fn into_error(self) -> Error {
        match self.outcome {
            OnlineOutcome::Failed(e) => e,
            OnlineOutcome::Interrupted => Error::cancelled(),
        }
    }
}

/// How often a member fenced by its group (or left with a transaction it
/// could not end) may rejoin within [`REJOIN_WINDOW`] before the run stops.
const MAX_REJOINS: usize = 5;
/// The window the rejoins are counted in. A member fenced by a producer
/// twice within it stops: another member shares its `transactional.id`, and
/// each rejoin would only fence that one in turn.
const REJOIN_WINDOW: Duration = Duration::from_secs(300);

/// When the member was fenced and rejoined, within [`REJOIN_WINDOW`].
#[derive(Debug, Default)]
pub struct Rejoins {
    at: std::collections::VecDeque<Instant>,
    by_producer: Option<Instant>,
}

impl Rejoins {
    /// Whether a member fenced at `now` may rejoin (the rejoin is counted),
    /// or why it must stop.
    pub fn allow(&mut self, fence: Fence, now: Instant) -> std::result::Result<(), String> {
        let recent = |t: &Instant| now.duration_since(*t) <= REJOIN_WINDOW;
        while self.at.front().is_some_and(|t| !recent(t)) {
            self.at.pop_front();
        }
        let window = REJOIN_WINDOW.as_secs();
        if fence == Fence::Producer {
            if self.by_producer.as_ref().is_some_and(recent) {
                return Err(format!(
                    "fenced by a producer of its transactional.id again within {window}s of rejoining: another runner uses the same transactional.id (give each member its own -X transactional.id=…)"
                ));
            }
            self.by_producer = Some(now);
        }
        if self.at.len() >= MAX_REJOINS {
            return Err(format!(
                "fenced {MAX_REJOINS} times within {window}s, rejoining each time"
            ));
        }
        self.at.push_back(now);
        Ok(())
    }
}

/// Leaves the group without saving anything and drops the runner: after a
/// fence its in-memory state is that of an aborted transaction, and the
/// partitions may already be another member's, so neither its state nor its
/// offsets may be written (`stop` would save both).
fn abandon(mut runner: OnlineRunner) {
    runner.consumer.close();
    // The revokes the close queued are not served: serving them saves state.
    drop(runner.consumer.take_rebalances());
}

/// Starts the runner, runs rounds until a stop request or a failure, then saves
/// the state and leaves the group. A fenced member (docs/topology.md "State in
/// Kafka") aborts its round, drops every partition's in-memory state, leaves
/// and rejoins the group with a new consumer, producer and store, and carries
/// on: its partitions' state is loaded again from the store as they are
/// assigned, consistent with the offsets the group committed.
pub(super) fn run_online(
    plan: &RunPlan,
    hooks: &mut dyn RunHooks,
    spec: &TopologySpec,
    file: &str,
) -> Result<OnlineReport> {
    let (kafka, schemas) = hooks.connect()?;
    let started = |schemas: Option<SchemaCache>, restore_cut, adopt| {
        start(&kafka, spec, schemas, plan.timeout, restore_cut, adopt).map_err(|e| match e {
            StartError::Usage(m) => Error::usage(format!("{file}: {m}")),
            StartError::Spec(e) => invalid(plan, file, e),
            StartError::Kafka(e) => e.into(),
            StartError::Failed(m) => Error::failure(m),
            StartError::Cli(e) => e,
        })
    };
    let Started {
        mut runner,
        group,
        topics,
        restored,
    } = started(schemas.clone(), plan.restore_cut, plan.adopt_state)?;
    hooks.online_started(&StartedInfo {
        group: &group,
        topics: &topics,
        restored: restored.as_ref(),
    })?;
    let mut next_progress = plan.metrics_interval.map(|every| Instant::now() + every);
    let mut rejoins = Rejoins::default();
    let failure = loop {
        if hooks.stop_requested() {
            break None;
        }
        if let Some(e) = round(&mut runner).err() {
            let Some(fence) = e.fenced else {
                // `round` retries retriable failures itself, so this one ends the run
                // with the kind `From<RunnerError>` gives it.
                break Some(Error::from(e));
            };
            if let Err(why) = rejoins.allow(fence, Instant::now()) {
                break Some(Error::failure(format!(
                    "{}; this member of group {group} was {why}",
                    e.message
                )));
            }
            tracing::warn!(
                "{}: this member drops the in-memory state of all its partitions and rejoins group {group} with a new producer, which ends whatever transaction the old one left open (its outputs, offsets and state never count unless the broker committed them)",
                e.message
            );
            let metrics = runner.metrics;
            abandon(runner);
            // Neither the cut nor an adoption is taken again: the store
            // holds this group's own state now, checked as at any start.
            runner = match started(schemas.clone(), None, false) {
                // The counts go on across the rejoin.
                Ok(s) => {
                    let mut runner = s.runner;
                    runner.metrics = metrics;
                    runner
                }
                Err(e) => {
                    return Ok(OnlineReport {
                        outcome: OnlineOutcome::Failed(e.context("rejoining after being fenced")),
                        group,
                        metrics,
                    });
                }
            };
            continue;
        }
        // Credentials rotated or a certificate expired under a running group: librdkafka
        // retries the login for ever while the rounds just find nothing to do.
        if let Some(e) = auth_failure::access_lost("run") {
            break Some(e.into());
        }
        if let (Some(every), Some(next)) = (plan.metrics_interval, next_progress.as_mut())
            && Instant::now() >= *next
        {
            hooks.progress(&runner.metrics);
            *next = Instant::now() + every;
        }
    };
    stop(&mut runner);
    Ok(OnlineReport {
        outcome: match failure {
            Some(e) => OnlineOutcome::Failed(e),
            None => OnlineOutcome::Interrupted,
        },
        group,
        metrics: runner.metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_member_rejoins_until_it_is_fenced_too_often_or_by_a_producer_twice() {
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        let mut rejoins = Rejoins::default();
        for i in 0..MAX_REJOINS {
            rejoins.allow(Fence::Group, at(i as u64)).unwrap();
        }
        let why = rejoins.allow(Fence::Unresolved, at(10)).unwrap_err();
        assert_eq!(why, "fenced 5 times within 300s, rejoining each time");
        // Once the first fences are older than the window, the member may rejoin again.
        rejoins
            .allow(Fence::Group, at(REJOIN_WINDOW.as_secs() + 1))
            .unwrap();

        // A producer taking the transactional id: once is a replacement, twice a fight.
        let mut rejoins = Rejoins::default();
        rejoins.allow(Fence::Producer, at(0)).unwrap();
        rejoins.allow(Fence::Group, at(5)).unwrap();
        let why = rejoins.allow(Fence::Producer, at(20)).unwrap_err();
        assert!(
            why.starts_with("fenced by a producer of its transactional.id again within 300s")
                && why.contains("-X transactional.id="),
            "{why}"
        );
        let mut rejoins = Rejoins::default();
        rejoins.allow(Fence::Producer, at(0)).unwrap();
        rejoins
            .allow(Fence::Producer, at(REJOIN_WINDOW.as_secs() + 1))
            .unwrap();
    }
}
