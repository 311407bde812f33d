//! `snapshot copy`: state moved between the two stores (docs/topology.md
//! "Copying state between stores"), byte for byte, so a team moving from a
//! shared directory to the state topic, or taking a local copy of the topic,
//! loses nothing:
//!
//! * directory -> topic: every Java/Go snapshot file becomes the record(s) of
//!   its key (`partition-<p>[-epoch-<e>]`), the container bytes unchanged
//!   (chunked when larger than the topic's records), under the directory's
//!   identity manifest (required: records without an owner would be refused by
//!   every run);
//! * topic -> directory: every key's latest complete snapshot becomes the file
//!   `<key>.snapshot` holding exactly its container, and the identity its
//!   records name becomes the directory's manifest, so a run on the directory
//!   needs no `--adopt-state`.
//!
//! Everything is read and checked before the first write (each container
//! decodes, no target is a link, the source has one identity); replacing
//! anything needs a confirmation (`--yes`), and a dry run writes nothing. The
//! input offsets a topic record carries cannot be kept by a file, so a copy
//! into the topic records none: the first run on it checks the committed offsets
//! and asks for `--adopt-state` when the group has any.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::columnar::snapshot::container;
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::columnar::snapshot::naming::SnapshotFileName;
use crate::engine::columnar::snapshot::state_record::{self, Found, InputOffsets, parse_key};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::state_topic::{
    StateTopic, ensure_state_topic, find_state_topic, first_version, max_chunk, produce_records,
    read_state_topic, state_producer,
};
use crate::io::snapshot_dir::{DirError, EntryKind, IDENTITY_FILE, SnapshotDir};
use crate::ops::snapshot::live_group;
use crate::ops::{Error, Result};

/// Which way state is copied.
#[derive(Debug, Clone)]
pub enum Direction {
    /// `partitions`: of a state topic created by the copy (default: the highest
    /// logical partition + 1).
    DirToTopic {
        dir: PathBuf,
        topic: String,
        partitions: Option<i32>,
    },
    TopicToDir {
        topic: String,
        dir: PathBuf,
    },
}

/// What to copy, and how to ask before replacing.
pub struct CopyPlan<'a> {
    pub kafka: &'a KafkaSettings,
    pub direction: Direction,
    pub timeout: Duration,
    pub dry_run: bool,
    /// Copy into the state of a group with live members anyway (`--allow-live-members`).
    pub allow_live_members: bool,
    /// Asked once, before anything is replaced; an error stops the copy unchanged.
    pub confirm: &'a dyn Fn(&str) -> Result<()>,
}

/// One snapshot copied (or, in a dry run, to be copied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyItem {
    /// `partition-<p>[-epoch-<e>]`.
    pub key: String,
    pub bytes: usize,
    pub replaces: bool,
    pub written: bool,
}

#[derive(Debug, Clone)]
pub struct CopyReport {
    pub from: String,
    pub to: String,
    pub identity: Option<StateIdentity>,
    pub items: Vec<CopyItem>,
    /// Topic -> directory: whether the identity manifest is (or would be) written.
    pub manifest: bool,
    /// Directory -> topic: the topic did not exist and is (or would be) created.
    pub creates_topic: bool,
    pub dry_run: bool,
}

fn dir_error(e: DirError) -> Error {
    Error::failure(e.to_string())
}

pub fn copy(plan: &CopyPlan<'_>) -> Result<CopyReport> {
    match &plan.direction {
        Direction::DirToTopic {
            dir,
            topic,
            partitions,
        } => dir_to_topic(plan, dir, topic, *partitions),
        Direction::TopicToDir { topic, dir } => topic_to_dir(plan, topic, dir),
    }
}

/// A container as it will be written, checked to decode.
struct Source {
    key: String,
    partition: i32,
    epoch: i64,
    bytes: Vec<u8>,
}

fn read_dir_sources(dir: &SnapshotDir) -> Result<(Vec<Source>, StateIdentity)> {
    let listing = dir.list().map_err(dir_error)?;
    let path = |name: &str| dir.path().join(name).display().to_string();
    let identity = match dir.read_identity(IDENTITY_FILE).map_err(dir_error)? {
        Some(identity) => identity,
        None => {
            return Err(Error::failure(format!(
                "{} has no identity manifest {IDENTITY_FILE}, so whose state its files are is unknown and every run would refuse them in the topic; record it first by running the topology once on the directory (state_store: dir, --adopt-state)",
                dir.path().display()
            )));
        }
    };
    let mut sources = Vec::new();
    for file in &listing.files {
        let SnapshotFileName::JavaGo { partition, epoch } = file.name else {
            return Err(Error::failure(format!(
                "{} is a Rust-layout file: the state topic holds Java/Go keys (partition-<p>[-epoch-<e>]) only; nothing was copied",
                path(&file.file_name)
            )));
        };
        if file.kind != EntryKind::File {
            return Err(Error::failure(format!(
                "{} is a {}; nothing was copied",
                path(&file.file_name),
                file.kind.label()
            )));
        }
        let bytes = dir
            .read(&file.file_name)
            .map_err(dir_error)?
            .ok_or_else(|| {
                Error::failure(format!(
                    "{} disappeared while being read",
                    path(&file.file_name)
                ))
            })?;
        container::read(&bytes).map_err(|e| {
            Error::failure(format!(
                "{}: {e}; nothing was copied",
                path(&file.file_name)
            ))
        })?;
        sources.push(Source {
            key: state_record::snapshot_key(partition, epoch),
            partition,
            epoch,
            bytes,
        });
    }
    if sources.is_empty() {
        return Err(Error::failure(format!(
            "{} holds no snapshot file: nothing to copy",
            dir.path().display()
        )));
    }
    Ok((sources, identity))
}

/// Per key already in the topic: its state-topic partition and latest snapshot.
type Existing = BTreeMap<String, (i32, std::result::Result<Found, String>)>;

/// The latest snapshot per key already in the topic (what a copy replaces).
fn existing(plan: &CopyPlan<'_>, topic: &StateTopic) -> Result<Existing> {
    Ok(read_state_topic(plan.kafka, topic, plan.timeout)
        .map_err(Error::failure)?
        .into_iter()
        .map(|s| (s.key, (s.state_partition, s.found)))
        .collect())
}

fn confirm_replacing(plan: &CopyPlan<'_>, items: &[CopyItem], to: &str) -> Result<()> {
    let replacing: Vec<&str> = items
        .iter()
        .filter(|i| i.replaces)
        .map(|i| i.key.as_str())
        .collect();
    if replacing.is_empty() {
        return Ok(());
    }
    (plan.confirm)(&format!(
        "replace {} existing snapshot(s) in {to} ({})?",
        replacing.len(),
        replacing.join(", ")
    ))
}

/// Refuses, as a restore does (`ops::snapshot::live_group`), to change the state
/// of a consumer group that is running: the owners of the copied state and of the
/// state it replaces. A dry run asks too, so that it says what the copy would do.
fn refuse_running(
    plan: &CopyPlan<'_>,
    owners: &[Option<&StateIdentity>],
    location: &str,
) -> Result<()> {
    if plan.allow_live_members {
        return Ok(());
    }
    let groups: std::collections::BTreeSet<String> = owners
        .iter()
        .flatten()
        .map(|identity| identity.consumer_group.clone())
        .collect();
    live_group::refuse_running(&groups, location, &|| Ok(plan.kafka.clone()), plan.timeout)
}

fn dir_to_topic(
    plan: &CopyPlan<'_>,
    dir: &std::path::Path,
    name: &str,
    partitions: Option<i32>,
) -> Result<CopyReport> {
    let dir = SnapshotDir::open(dir).map_err(dir_error)?;
    let (sources, identity) = read_dir_sources(&dir)?;
    plan.kafka.refuse_dead_bootstrap()?;
    let found = find_state_topic(plan.kafka, name, plan.timeout).map_err(Error::failure)?;
    let before = match &found {
        Some(topic) => existing(plan, topic)?,
        None => BTreeMap::new(),
    };
    let mut report = CopyReport {
        from: dir.path().display().to_string(),
        to: format!("state topic {name}"),
        identity: Some(identity.clone()),
        items: sources
            .iter()
            .map(|s| CopyItem {
                key: s.key.clone(),
                bytes: s.bytes.len(),
                replaces: before.contains_key(&s.key),
                written: false,
            })
            .collect(),
        manifest: false,
        creates_topic: found.is_none(),
        dry_run: plan.dry_run,
    };
    let replaced: Vec<StateIdentity> = before
        .values()
        .filter_map(|(_, found)| found.as_ref().ok().and_then(Found::identity))
        .collect();
    let mut owners = vec![Some(&identity)];
    owners.extend(replaced.iter().map(Some));
    refuse_running(plan, &owners, &report.to)?;
    if plan.dry_run {
        return Ok(report);
    }
    confirm_replacing(plan, &report.items, &report.to)?;
    let topic = match found {
        Some(topic) => topic,
        None => {
            let most = sources.iter().map(|s| s.partition).max().unwrap_or(0);
            let count = partitions.unwrap_or(most.saturating_add(1)).max(1);
            ensure_state_topic(plan.kafka, name, count, plan.timeout).map_err(Error::failure)?
        }
    };
    let producer = state_producer(plan.kafka, &topic).map_err(Error::failure)?;
    let mut version = first_version();
    for (i, source) in sources.iter().enumerate() {
        version += 1;
        let target = source.partition % topic.partitions.max(1);
        let mut records = state_record::snapshot_records(
            source.partition,
            source.epoch,
            &source.bytes,
            &identity,
            &InputOffsets::new(),
            max_chunk(&topic),
            version,
        );
        // The chunks of a replaced snapshot go only after the new one is written.
        if let Some((_, Ok(old))) = before.get(&source.key)
            && let Some(chunks) = &old.chunks
        {
            records.extend(state_record::chunk_tombstones(&source.key, chunks));
        }
        produce_records(&producer, &topic.name, target, &records, plan.timeout).map_err(|e| {
            let done: Vec<&str> = sources[..i].iter().map(|s| s.key.as_str()).collect();
            Error::failure(format!(
                "{e}; written before the failure: [{}]",
                done.join(", ")
            ))
        })?;
        report.items[i].written = true;
    }
    Ok(report)
}

/// The snapshots of state topic `name`, checked to decode and to share one owner
/// identity (the directory's manifest), before anything is written.
fn topic_sources(plan: &CopyPlan<'_>, name: &str) -> Result<(Vec<Source>, Option<StateIdentity>)> {
    let topic = find_state_topic(plan.kafka, name, plan.timeout)
        .map_err(Error::failure)?
        .ok_or_else(|| Error::failure(format!("the state topic {name} does not exist")))?;
    let mut sources = Vec::new();
    let mut identities: Vec<Option<StateIdentity>> = Vec::new();
    for snapshot in read_state_topic(plan.kafka, &topic, plan.timeout).map_err(Error::failure)? {
        let found = snapshot.found.map_err(|e| {
            Error::failure(format!(
                "state topic {name} partition {}: {e}; nothing was copied",
                snapshot.state_partition
            ))
        })?;
        container::read(&found.container).map_err(|e| {
            Error::failure(format!(
                "state topic {name}: {} (offset {}): {e}; nothing was copied",
                snapshot.key, found.offset
            ))
        })?;
        let identity = found.identity();
        if !identities.contains(&identity) {
            identities.push(identity);
        }
        let Some((partition, epoch)) = parse_key(&snapshot.key) else {
            continue;
        };
        sources.push(Source {
            key: snapshot.key,
            partition,
            epoch,
            bytes: found.container,
        });
    }
    if sources.is_empty() {
        return Err(Error::failure(format!(
            "the state topic {name} holds no snapshot: nothing to copy"
        )));
    }
    match identities.as_slice() {
        [one] => Ok((sources, one.clone())),
        _ => {
            let named: Vec<String> = identities
                .iter()
                .map(|i| {
                    i.as_ref()
                        .map_or("(none recorded)".to_owned(), ToString::to_string)
                })
                .collect();
            Err(Error::failure(format!(
                "the state topic {name} holds the state of {} owners ({}): a directory has one identity; nothing was copied",
                named.len(),
                named.join("; ")
            )))
        }
    }
}

fn topic_to_dir(plan: &CopyPlan<'_>, name: &str, dir: &std::path::Path) -> Result<CopyReport> {
    plan.kafka.refuse_dead_bootstrap()?;
    let (sources, identity) = topic_sources(plan, name)?;
    let location = dir.display().to_string();
    let opened = match SnapshotDir::open(dir) {
        Ok(opened) => Some(opened),
        Err(DirError::Missing(_)) => None,
        Err(e) => return Err(dir_error(e)),
    };
    let mut items = Vec::new();
    for source in &sources {
        let file = format!("{}.snapshot", source.key);
        let kind = match &opened {
            Some(d) => d.entry_kind(&file).map_err(dir_error)?,
            None => None,
        };
        if let Some(kind @ (EntryKind::Symlink | EntryKind::Other)) = kind {
            return Err(Error::failure(format!(
                "{} is a {}; refusing to replace it, nothing was copied",
                dir.join(&file).display(),
                kind.label()
            )));
        }
        items.push(CopyItem {
            key: source.key.clone(),
            bytes: source.bytes.len(),
            replaces: kind.is_some(),
            written: false,
        });
    }
    let mut report = CopyReport {
        from: format!("state topic {name}"),
        to: location.clone(),
        identity: identity.clone(),
        items,
        manifest: identity.is_some(),
        creates_topic: false,
        dry_run: plan.dry_run,
    };
    let previous = match &opened {
        Some(d) => d.read_identity(IDENTITY_FILE).ok().flatten(),
        None => None,
    };
    refuse_running(plan, &[identity.as_ref(), previous.as_ref()], &location)?;
    if plan.dry_run {
        return Ok(report);
    }
    if let (Some(previous), Some(identity)) = (&previous, &identity)
        && previous != identity
    {
        (plan.confirm)(&format!(
            "{location} holds the state of {previous}; replace its identity manifest with {identity}?"
        ))?;
    }
    confirm_replacing(plan, &report.items, &location)?;
    let dir = match opened {
        Some(d) => d,
        None => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::failure(format!("cannot create {location}: {e}")))?;
            SnapshotDir::open(dir).map_err(dir_error)?
        }
    };
    for (i, source) in sources.iter().enumerate() {
        let file = format!("{}.snapshot", source.key);
        dir.write(&file, &source.bytes).map_err(|e| {
            let done: Vec<&str> = sources[..i].iter().map(|s| s.key.as_str()).collect();
            Error::failure(format!(
                "{e}; written before the failure: [{}]",
                done.join(", ")
            ))
        })?;
        report.items[i].written = true;
    }
    // Last: a manifest names state that is all there.
    if let Some(identity) = &identity {
        dir.write_identity(IDENTITY_FILE, identity)
            .map_err(dir_error)?;
    }
    Ok(report)
}
