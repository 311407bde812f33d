//! `demo`: a walkthrough of every subcommand on an embedded cluster and an embedded
//! registry, with no setup. [`walkthrough`] runs the steps in the order the user reads
//! them and answers each one's typed result in a [`Walkthrough`]; `cmd::demo` renders
//! them with the subcommands' own renderers (`cmd::render`). A capability adds its step
//! here, in a file of its own:
//!
//! * [`orders`]: the data set: Avro orders registered, produced and read back;
//! * [`schemas`]: `schema prewarm --write-cache` and `schema inspect get --arrow`;
//! * [`replay`]: a capture replayed with `produce` and tailed back;
//! * [`barrier`]: cuts published, `barrier list --all`, `barrier verify`;
//! * [`leader`]: a leader election whose holder crashes;
//! * [`snapshots`]: `snapshot list`, `dump` and `restore` over GroupBy snapshots;
//! * [`topology`] and [`online`]: the example topology offline, then online;
//! * [`schema_files`]: a sink written with the user's own `.proto` files;
//! * [`tail`]: a topic read to its end into Parquet, with a preview.
//!
//! Kafka is reached through the adapters of `io::kafka` only (the runner's producer, the
//! topic reader, the coordination transport), each built from [`KafkaSettings`].

pub mod barrier;
pub mod leader;
pub mod online;
pub mod orders;
pub mod replay;
pub mod schema_files;
pub mod schemas;
pub mod snapshots;
pub mod tail;
pub mod topology;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::schema::registry::Registry;
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use crate::io::registry_server::{RegistryServer, RegistryServerOptions};
use crate::ops::tail::TailHost;
use crate::ops::{Error, Result};

/// What the walkthrough needs from its caller.
pub struct DemoPlan<'a> {
    /// Hosts the demo's tails: signals raise their flag, a spinner may show progress.
    pub tail_host: &'a dyn TailHost,
}

/// The embedded cluster and registry with the demo's temp directory; dropping this
/// stops them and removes the files (`--keep-running` holds it until Ctrl-C).
pub struct Services {
    // Dropped in this order: the registry, the cluster, then the files.
    registry: RegistryServer,
    cluster: EmbeddedCluster,
    dir: tempfile::TempDir,
}

impl Services {
    fn start() -> Result<Self> {
        let cluster = EmbeddedCluster::start(None)
            .map_err(|e| Error::failure(format!("cannot start the embedded cluster: {e}")))?;
        let registry = RegistryServer::start(RegistryServerOptions::default())
            .map_err(|e| Error::failure(format!("cannot start the embedded registry: {e}")))?;
        let dir = tempfile::tempdir()
            .map_err(|e| Error::failure(format!("cannot create a temp directory: {e}")))?;
        Ok(Services {
            registry,
            cluster,
            dir,
        })
    }

    /// The cluster's `host:port`.
    pub fn bootstrap(&self) -> &str {
        self.cluster.bootstrap()
    }

    /// The registry's base URL.
    pub fn registry_url(&self) -> String {
        self.registry.url()
    }
}

/// What every step works with.
pub(crate) struct Env<'a> {
    pub cluster: &'a EmbeddedCluster,
    pub registry: Arc<dyn Registry>,
    pub registry_url: String,
    /// The temp directory the demo's files go to.
    pub dir: &'a Path,
    pub tail_host: &'a dyn TailHost,
}

impl Env<'_> {
    /// Client settings for the embedded cluster.
    pub fn kafka(&self) -> KafkaSettings {
        kafka_settings(self.cluster.bootstrap())
    }
}

/// Settings that reach `bootstrap` with librdkafka's defaults.
fn kafka_settings(bootstrap: &str) -> KafkaSettings {
    let mut s = KafkaSettings::new();
    s.set("bootstrap.servers", bootstrap);
    s
}

/// An error of a step that has no kind of its own: the run failed.
fn failed(e: impl std::fmt::Display) -> Error {
    Error::failure(e.to_string())
}

/// Every step's result, in the order the walkthrough runs them.
pub struct Walkthrough {
    pub bootstrap: String,
    pub registry_url: String,
    pub schemas: schemas::Prewarmed,
    pub registered: orders::Registered,
    /// The orders produced (the data set).
    pub produced: usize,
    pub read_back: Vec<orders::ReadBack>,
    pub replay: replay::Replayed,
    pub barrier: barrier::BarrierSteps,
    pub leader: leader::Failover,
    pub snapshots: snapshots::SnapshotSteps,
    /// The example topology run offline over the read-back orders.
    pub offline: Vec<topology::UserTotal>,
    /// The same topology run online: the last total and count per user.
    pub online: BTreeMap<String, (i64, i64)>,
    /// The online run's sink topic read back by `tail`.
    pub sink_tail: tail::Tailed,
    pub schema_files: schema_files::SchemaFilesRun,
    /// The orders tailed to Parquet with the prewarmed schema cache.
    pub parquet: tail::Tailed,
    /// The schema cache file `schema prewarm --write-cache` wrote.
    pub schema_cache: PathBuf,
    /// Still running: dropping the walkthrough stops them.
    pub services: Services,
}

/// Runs every step against a fresh embedded cluster and registry. The first step that
/// fails ends the walkthrough with its error; the online run's totals must equal the
/// offline run's.
pub fn walkthrough(plan: DemoPlan<'_>) -> Result<Walkthrough> {
    let services = Services::start()?;
    let bootstrap = services.bootstrap().to_string();
    let registry_url = services.registry_url();
    services
        .cluster
        .create_topic(orders::ORDERS_TOPIC, orders::ORDERS_PARTITIONS)
        .map_err(failed)?;
    let registry: Arc<dyn Registry> = Arc::new(
        HttpRegistry::new(HttpRegistryOptions::new(registry_url.clone())).map_err(failed)?,
    );
    let env = Env {
        cluster: &services.cluster,
        registry: registry.clone(),
        registry_url: registry_url.clone(),
        dir: services.dir.path(),
        tail_host: plan.tail_host,
    };
    let schema_cache = env.dir.join("schema-cache.json");
    let schemas = schemas::prewarm_and_inspect(&env, &schema_cache)?;
    let registered = orders::register(registry.as_ref())?;
    let data = orders::orders(orders::BASE_TS);
    orders::produce(&env.kafka(), registered.id, &data)?;
    let read_back = orders::read_back(&env.kafka(), registry.as_ref(), data.len())?;
    let replay = replay::run(&env, orders::ORDERS_TOPIC, orders::ORDERS_PARTITIONS)?;
    let barrier = barrier::steps(&env)?;
    let leader = leader::failover(env.cluster)?;
    let snapshots = snapshots::steps(&data)?;
    let offline = topology::run(&read_back)?;
    let online = online::run(&env, data.len())?;
    let offline_totals: BTreeMap<String, (i64, i64)> = offline
        .iter()
        .map(|t| (t.user.clone(), (t.total, t.n)))
        .collect();
    if online != offline_totals {
        return Err(Error::failure(format!(
            "the online run's totals {online:?} differ from the offline run's {offline_totals:?}"
        )));
    }
    let sink_tail = tail::to_parquet(
        &env,
        tail::TailJob::avro(online::SINK_TOPIC, env.dir.join("totals.parquet"), 10),
    )?;
    let schema_files = schema_files::run(&env, data.len())?;
    let parquet = tail::to_parquet(
        &env,
        tail::TailJob {
            schema_cache: Some(&schema_cache),
            ..tail::TailJob::avro(orders::ORDERS_TOPIC, env.dir.join("orders.parquet"), 6)
        },
    )?;
    Ok(Walkthrough {
        bootstrap,
        registry_url,
        schemas,
        registered,
        produced: data.len(),
        read_back,
        replay,
        barrier,
        leader,
        snapshots,
        offline,
        online,
        sink_tail,
        schema_files,
        parquet,
        schema_cache,
        services,
    })
}
