//! The state-topic side of `snapshot restore|restore-cut|prune --state-topic
//! NAME` (docs/topology.md "State in Kafka"): the topic read whole as a run
//! restores it (each key's latest complete snapshot, `read_state_topic`), the
//! owner checks a write must pass, and the writes themselves.
//!
//! A write to the topic is a full snapshot of its key (one record, or chunks
//! then the manifest, as a run writes it), followed by tombstones of the chunks
//! of the snapshot it replaced; a removal is a tombstone of the key, then of
//! its chunks. Every record of one key goes to its state-topic partition, which
//! keeps their order, so a reader never sees a half-written snapshot.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::columnar::snapshot::state_record::{
    self, Found, InputOffsets, StateRecord, parse_key,
};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::state_topic::{
    StateProducer, StateTopic, find_state_topic, first_version, max_chunk, produce_records,
    read_state_topic, state_producer,
};
use crate::ops::{Error, Result};

/// A state topic as read: every live key with its state-topic partition and
/// latest complete snapshot, or why that cannot be assembled.
pub struct TopicState {
    pub topic: StateTopic,
    pub keys: BTreeMap<String, (i32, std::result::Result<Found, String>)>,
}

impl TopicState {
    /// Where the report says the change happens.
    pub fn location(&self) -> String {
        format!("state topic {}", self.topic.name)
    }

    /// The keys as the file names the directory planners take
    /// (`partition-<p>[-epoch-<e>].snapshot`), so a missing epoch gets the same
    /// D15 message as for a directory.
    pub fn names(&self) -> BTreeSet<String> {
        self.keys
            .keys()
            .filter(|k| parse_key(k).is_some())
            .map(|k| format!("{k}.snapshot"))
            .collect()
    }

    /// The snapshot under `key`, or the error naming it when it cannot be assembled.
    pub fn found(&self, key: &str) -> Result<Option<&Found>> {
        match self.keys.get(key) {
            None => Ok(None),
            Some((_, Ok(found))) => Ok(Some(found)),
            Some((partition, Err(e))) => Err(Error::failure(format!(
                "state topic {} partition {partition}: {key}: {e}; nothing was changed",
                self.topic.name
            ))),
        }
    }
}

/// The key a directory planner's file name stands for.
pub fn key_of(file_name: &str) -> &str {
    file_name.strip_suffix(".snapshot").unwrap_or(file_name)
}

/// Reads the topic whole; a missing one is an error naming it, nothing is created.
pub fn read(kafka: &KafkaSettings, name: &str, timeout: Duration) -> Result<TopicState> {
    kafka.refuse_dead_bootstrap()?;
    let topic = find_state_topic(kafka, name, timeout)
        .map_err(Error::failure)?
        .ok_or_else(|| Error::failure(format!("the state topic {name} does not exist")))?;
    let keys = read_state_topic(kafka, &topic, timeout)
        .map_err(Error::failure)?
        .into_iter()
        .map(|s| (s.key, (s.state_partition, s.found)))
        .collect();
    Ok(TopicState { topic, keys })
}

/// The owner a snapshot record names, as a run checks it: the group and the
/// fingerprint of the stateful nodes (docs/topology.md "State identity").
fn owner(found: &Found) -> (String, String) {
    (
        found
            .group
            .clone()
            .unwrap_or_else(|| "(none recorded)".to_owned()),
        found
            .fingerprint
            .clone()
            .unwrap_or_else(|| "(none recorded)".to_owned()),
    )
}

/// Every snapshot a change reads or replaces must belong to one owner (and to
/// `group` when given): state of another group or of a changed topology is
/// never mixed in, and the refusal names both owners.
pub struct OwnerCheck<'a> {
    topic: &'a str,
    group: Option<&'a str>,
    first: Option<(String, String, String)>,
}

impl<'a> OwnerCheck<'a> {
    pub fn new(topic: &'a str, group: Option<&'a str>) -> Self {
        OwnerCheck {
            topic,
            group,
            first: None,
        }
    }

    pub fn check(&mut self, key: &str, found: &Found) -> Result<()> {
        let (group, fingerprint) = owner(found);
        if let Some(expected) = self.group
            && group != expected
        {
            return Err(Error::failure(format!(
                "state topic {}: {key} (offset {}) holds the state of group {group}, fingerprint {fingerprint}; expected the state of group {expected}; nothing was changed",
                self.topic, found.offset
            )));
        }
        match &self.first {
            None => self.first = Some((key.to_owned(), group, fingerprint)),
            Some((first, g, f)) if (g, f) != (&group, &fingerprint) => {
                return Err(Error::failure(format!(
                    "state topic {}: {key} (offset {}) holds the state of group {group}, fingerprint {fingerprint}, but {first} holds the state of group {g}, fingerprint {f}: one change never mixes the state of two owners; nothing was changed",
                    self.topic, found.offset
                )));
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// One snapshot a change writes to the topic, ready before anything is written.
pub struct TopicWrite {
    pub key: String,
    pub partition: i32,
    pub epoch: i64,
    pub container: Vec<u8>,
    pub identity: StateIdentity,
    pub offsets: InputOffsets,
    /// The snapshot it replaces, whose chunks go after it.
    pub replaces: Option<Found>,
}

impl TopicWrite {
    /// The write of `found`'s container under `key`, as its owner wrote it; a
    /// snapshot whose records do not name its whole identity is refused (a run
    /// would refuse what it was copied to).
    pub fn of(
        topic: &str,
        key: &str,
        source_key: &str,
        found: &Found,
        offsets: InputOffsets,
        replaces: Option<Found>,
    ) -> Result<TopicWrite> {
        let (partition, epoch) =
            parse_key(key).ok_or_else(|| Error::failure(format!("{key} is not a snapshot key")))?;
        let identity = found.identity().ok_or_else(|| {
            Error::failure(format!(
                "state topic {topic}: {source_key} (offset {}) does not record its whole identity (group, fingerprint and node lines that match it); nothing was changed",
                found.offset
            ))
        })?;
        Ok(TopicWrite {
            key: key.to_owned(),
            partition,
            epoch,
            container: found.container.clone(),
            identity,
            offsets,
            replaces,
        })
    }
}

/// A producer for changes of `state`'s topic.
pub fn producer(kafka: &KafkaSettings, state: &TopicState) -> Result<StateProducer> {
    state_producer(kafka, &state.topic).map_err(Error::failure)
}

fn state_partition(topic: &StateTopic, partition: i32) -> i32 {
    partition % topic.partitions.max(1)
}

/// Writes every snapshot in order, each acknowledged before the next; on a
/// failure the error names what was and was not written.
pub fn execute_writes(
    kafka: &KafkaSettings,
    state: &TopicState,
    writes: &[TopicWrite],
    timeout: Duration,
) -> Result<()> {
    let producer = producer(kafka, state)?;
    let mut version = first_version();
    for (i, w) in writes.iter().enumerate() {
        version += 1;
        let mut records = state_record::snapshot_records(
            w.partition,
            w.epoch,
            &w.container,
            &w.identity,
            &w.offsets,
            max_chunk(&state.topic),
            version,
        );
        if let Some(chunks) = w.replaces.as_ref().and_then(|f| f.chunks.as_ref()) {
            records.extend(state_record::chunk_tombstones(&w.key, chunks));
        }
        let target = state_partition(&state.topic, w.partition);
        produce_records(&producer, &state.topic.name, target, &records, timeout).map_err(|e| {
            let keys = |ws: &[TopicWrite]| {
                ws.iter()
                    .map(|w| w.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            Error::failure(format!(
                "{e}; written before the failure: [{}]; not written: [{}]",
                keys(&writes[..i]),
                keys(&writes[i..])
            ))
        })?;
    }
    Ok(())
}

/// The tombstones that remove `key`'s snapshot: the key first (a reader then
/// sees none), then the chunks its manifest named.
pub fn removal_records(key: &str, found: &Found) -> Vec<StateRecord> {
    let mut records = vec![StateRecord {
        key: key.to_owned(),
        value: None,
        headers: Vec::new(),
    }];
    if let Some(chunks) = &found.chunks {
        records.extend(state_record::chunk_tombstones(key, chunks));
    }
    records
}

/// Removes each key's snapshot in order; on a failure the error names what was
/// and was not removed.
pub fn execute_removals(
    kafka: &KafkaSettings,
    state: &TopicState,
    keys: &[String],
    timeout: Duration,
) -> Result<usize> {
    let producer = producer(kafka, state)?;
    for (i, key) in keys.iter().enumerate() {
        let (Some(found), Some((partition, _))) = (state.found(key)?, state.keys.get(key)) else {
            continue;
        };
        produce_records(
            &producer,
            &state.topic.name,
            *partition,
            &removal_records(key, found),
            timeout,
        )
        .map_err(|e| {
            Error::failure(format!(
                "{e}; deleted before the failure: [{}]; not deleted: [{}]",
                keys[..i].join(", "),
                keys[i..].join(", ")
            ))
        })?;
    }
    Ok(keys.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(group: &str, nodes: &[&str], offset: i64) -> Found {
        let identity = StateIdentity {
            consumer_group: group.into(),
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
        };
        Found {
            container: vec![1, 2, 3],
            group: Some(group.into()),
            fingerprint: Some(identity.fingerprint()),
            nodes: Some(identity.nodes.clone()),
            offsets: InputOffsets::new(),
            chunks: None,
            offset,
        }
    }

    #[test]
    fn one_change_never_mixes_owners_and_the_refusal_names_both() {
        let a = found(
            "app",
            &["group_by t keys=[u] aggregates=[count(*) AS n]"],
            4,
        );
        let b = found("app", &["group_by t keys=[u] aggregates=[sum(x) AS n]"], 9);
        let mut check = OwnerCheck::new("app-state", None);
        check.check("partition-0-epoch-3", &a).unwrap();
        check.check("partition-1-epoch-3", &a).unwrap();
        let e = check.check("partition-0", &b).unwrap_err();
        assert!(
            e.message.contains(&format!(
                "partition-0 (offset 9) holds the state of group app, fingerprint {}",
                b.fingerprint.as_deref().unwrap()
            )) && e.message.contains(&format!(
                "partition-0-epoch-3 holds the state of group app, fingerprint {}",
                a.fingerprint.as_deref().unwrap()
            )),
            "{}",
            e.message
        );

        let mut check = OwnerCheck::new("app-state", Some("other"));
        let e = check.check("partition-0-epoch-3", &a).unwrap_err();
        assert!(
            e.message
                .contains("holds the state of group app, fingerprint")
                && e.message.contains("expected the state of group other"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_removal_tombstones_the_key_before_its_chunks() {
        let mut f = found("app", &["n"], 1);
        f.chunks = Some(state_record::Chunks {
            version: 7,
            count: 2,
            total: 10,
        });
        let records = removal_records("partition-2-epoch-5", &f);
        let keys: Vec<&str> = records.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys[0], "partition-2-epoch-5");
        assert_eq!(keys.len(), 3);
        assert!(records.iter().all(|r| r.value.is_none()));
        assert!(
            keys[1..]
                .iter()
                .all(|k| k.starts_with("partition-2-epoch-5.chunk-7-"))
        );
    }

    #[test]
    fn a_snapshot_without_its_whole_identity_is_not_written_on() {
        let mut f = found("app", &["n"], 3);
        f.nodes = None;
        let e = TopicWrite::of(
            "t",
            "partition-0",
            "partition-0-epoch-1",
            &f,
            InputOffsets::new(),
            None,
        )
        .err()
        .unwrap();
        assert!(
            e.message
                .contains("partition-0-epoch-1 (offset 3) does not record its whole identity"),
            "{}",
            e.message
        );
    }
}
