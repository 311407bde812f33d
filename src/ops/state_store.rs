//! Which store an online run keeps its partitions' state in, from the topology's
//! `settings` (docs/topology.md "State stores"):
//!
//! * `kafka` (the default): the compacted state topic, so state follows its
//!   partition to any member; with a `state_dir` the directory is also written,
//!   as the Java/Go-compatible local copy of what the topic holds;
//! * `dir`: files in `state_dir` only, with a warning at start that state stays
//!   on this machine;
//! * `memory`: nothing kept across processes, with a warning.
//!
//! A stateless topology gets the memory store whatever is chosen: there is
//! nothing to keep, so no topic is created and no directory is claimed. Every
//! store that outlives the process is tied to the run's identity before anything
//! is loaded (`io::runner_state::FileStateStore::claim` for a directory; per
//! record for the topic).

use std::path::Path;
use std::time::Duration;

use crate::engine::columnar::runner::group::StateStore;
use crate::engine::columnar::runner::mirror::Mirrored;
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::columnar::topology::spec::{Guarantee, Settings, StateLayout, StateStoreKind};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::state_topic::{KafkaStateStore, ensure_state_topic, source_partitions};
use crate::io::runner_state::{Claim, FileStateStore};
use crate::ops::{Error, Result};

/// What the store is built from.
pub struct StoreRequest<'a> {
    pub kafka: &'a KafkaSettings,
    pub settings: &'a Settings,
    pub identity: &'a StateIdentity,
    /// The topology's source topics (the state topic gets the largest partition count).
    pub source_topics: &'a [String],
    /// `--adopt-state`.
    pub adopt: bool,
    pub timeout: Duration,
}

/// The store, and what the run must know about it.
pub struct OpenedStore {
    pub store: Box<dyn StateStore>,
    /// Save every partition a round touched before its commit (a kill -9 then
    /// never restarts from state older than the committed offsets).
    pub save_each_round: bool,
    /// To say once at start (warn level).
    pub warnings: Vec<String>,
    /// To say once at start (info level).
    pub notices: Vec<String>,
}

/// The default state topic of a consumer group.
pub fn default_state_topic(group: &str) -> String {
    format!("{group}-state")
}

/// Why the state of a stateful group run may not survive a partition moving,
/// said once at start: the store in use keeps it on this machine (or nowhere).
fn locality_warning(settings: &Settings) -> Option<String> {
    match (settings.state_store(), settings.state_dir.as_deref()) {
        (StateStoreKind::Dir, Some(dir)) => Some(format!(
            "state_store dir: partition state is kept in {dir} on this machine only; a partition that moves to a member on another machine starts there from that machine's state_dir (or from nothing), so its totals will be wrong unless every member shares this directory"
        )),
        (StateStoreKind::Memory, _) => Some(
            "state_store memory: partition state lives in this process only; a partition that moves to another member, or a restart, starts it from nothing".to_owned(),
        ),
        _ => None,
    }
}

/// The `state_dir` store (Java/Go or Rust layout), created when missing.
fn dir_store(settings: &Settings, dir: &str, group: &str) -> Result<FileStateStore> {
    let dir = Path::new(dir);
    match settings.state_layout {
        StateLayout::JavaGo => FileStateStore::java_go(dir),
        StateLayout::Rust => {
            FileStateStore::rust(dir, settings.barrier_group.as_deref().unwrap_or(group))
        }
    }
    .map_err(Error::failure)
}

/// Ties a directory to the run's identity before anything is loaded; what an
/// adoption took over is said as a warning.
fn claim(store: &FileStateStore, request: &StoreRequest<'_>) -> Result<Option<String>> {
    Ok(
        match store
            .claim(request.identity, request.adopt)
            .map_err(Error::failure)?
        {
            Claim::Adopted(Some(previous)) => {
                Some(format!("--adopt-state: took over the state of {previous}"))
            }
            Claim::Adopted(None) => {
                Some("--adopt-state: took over snapshots of unrecorded identity".to_owned())
            }
            Claim::NotNeeded | Claim::Fresh | Claim::Matched => None,
        },
    )
}

/// Finds or creates the state topic and opens the Kafka store over it.
fn kafka_store(request: &StoreRequest<'_>, notices: &mut Vec<String>) -> Result<KafkaStateStore> {
    let settings = request.settings;
    let group = &request.identity.consumer_group;
    // A dead broker is exit 4 here, as it would be at the consumer.
    request.kafka.refuse_dead_bootstrap()?;
    let name = settings
        .state_topic
        .clone()
        .unwrap_or_else(|| default_state_topic(group));
    let partitions = source_partitions(request.kafka, request.source_topics, request.timeout)
        .map_err(Error::failure)?;
    let topic = ensure_state_topic(request.kafka, &name, partitions, request.timeout)
        .map_err(Error::failure)?;
    if topic.created {
        notices.push(format!(
            "created the state topic {name} ({} partitions, cleanup.policy=compact)",
            topic.partitions
        ));
    }
    // Identity is checked per snapshot record, when a partition is loaded.
    let store = KafkaStateStore::new(
        request.kafka,
        topic,
        request.identity.clone(),
        request.source_topics.to_vec(),
        request.adopt,
        request.timeout,
    )
    .map_err(Error::failure)?
    .keep_epochs(settings.epochs_kept());
    Ok(if settings.guarantee == Guarantee::ExactlyOnce {
        store.exactly_once()
    } else {
        store
    })
}

/// Builds the store `settings` choose for a run as `identity`.
pub fn open(request: &StoreRequest<'_>) -> Result<OpenedStore> {
    let settings = request.settings;
    let group = request.identity.consumer_group.as_str();
    let mut opened = OpenedStore {
        store: Box::new(FileStateStore::memory()),
        save_each_round: false,
        warnings: Vec::new(),
        notices: Vec::new(),
    };
    if !request.identity.is_stateful() {
        return Ok(opened);
    }
    opened.warnings.extend(locality_warning(settings));
    let copy = match settings.state_copy_dir() {
        Some(dir) => {
            let store = dir_store(settings, dir, group)?;
            opened.warnings.extend(claim(&store, request)?);
            Some(store)
        }
        None => None,
    };
    match (settings.state_store(), copy) {
        (StateStoreKind::Kafka, copy) => {
            let kafka = kafka_store(request, &mut opened.notices)?;
            opened.store = match copy {
                Some(copy) => Box::new(Mirrored::new(kafka, copy)),
                None => Box::new(kafka),
            };
            opened.save_each_round = true;
        }
        (StateStoreKind::Dir, Some(copy)) => {
            // The Rust layout keeps no live state to save.
            opened.save_each_round = settings.state_layout == StateLayout::JavaGo;
            opened.store = Box::new(copy);
        }
        // `dir` without a state_dir is refused when the file is read.
        (StateStoreKind::Dir | StateStoreKind::Memory, _) => {}
    }
    Ok(opened)
}
