//! `snapshot list|verify|dump --state-topic NAME`: what a state topic holds,
//! read whole from each partition's log start to its high watermark, key by
//! key as a run would restore it (docs/topology.md "State in Kafka"): the
//! latest complete snapshot of each `partition-<p>[-epoch-<e>]`, its owner and
//! input offsets from the headers, and whether its container decodes. Nothing
//! is written; a missing topic is an error naming it.

use std::time::Duration;

use crate::engine::columnar::snapshot::container::{self, ReadSnapshot};
use crate::engine::columnar::snapshot::state_record::{self, InputOffsets, parse_key};
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::state_topic::{StateTopic, find_state_topic, read_state_topic};
use crate::ops::{Error, Result};

/// One key of the topic and what its latest snapshot is.
pub struct TopicEntry {
    pub state_partition: i32,
    pub key: String,
    /// Logical partition and epoch (−1: live state).
    pub partition: i32,
    pub epoch: i64,
    /// The state-topic offset of its (manifest) record, when it could be assembled.
    pub offset: Option<i64>,
    pub bytes: Option<usize>,
    /// Chunk count of a chunked snapshot.
    pub chunks: Option<usize>,
    pub group: Option<String>,
    pub fingerprint: Option<String>,
    pub offsets: InputOffsets,
    /// The container decoded, or why it cannot be assembled or decoded.
    pub decoded: std::result::Result<ReadSnapshot, String>,
}

pub struct TopicListing {
    pub topic: StateTopic,
    pub entries: Vec<TopicEntry>,
}

fn open(kafka: &KafkaSettings, name: &str, timeout: Duration) -> Result<StateTopic> {
    kafka.refuse_dead_bootstrap()?;
    find_state_topic(kafka, name, timeout)
        .map_err(Error::failure)?
        .ok_or_else(|| Error::failure(format!("the state topic {name} does not exist")))
}

/// Every live key of the topic, in partition and key order.
pub fn list_topic(kafka: &KafkaSettings, name: &str, timeout: Duration) -> Result<TopicListing> {
    let topic = open(kafka, name, timeout)?;
    let mut entries = Vec::new();
    for snapshot in read_state_topic(kafka, &topic, timeout).map_err(Error::failure)? {
        let Some((partition, epoch)) = parse_key(&snapshot.key) else {
            continue;
        };
        let mut entry = TopicEntry {
            state_partition: snapshot.state_partition,
            key: snapshot.key,
            partition,
            epoch,
            offset: None,
            bytes: None,
            chunks: None,
            group: None,
            fingerprint: None,
            offsets: InputOffsets::new(),
            decoded: Err(String::new()),
        };
        match snapshot.found {
            Ok(found) => {
                entry.offset = Some(found.offset);
                entry.bytes = Some(found.container.len());
                entry.chunks = found.chunks.map(|c| c.count);
                entry.decoded = container::read(&found.container).map_err(|e| e.to_string());
                entry.group = found.group;
                entry.fingerprint = found.fingerprint;
                entry.offsets = found.offsets;
            }
            Err(e) => entry.decoded = Err(e),
        }
        entries.push(entry);
    }
    Ok(TopicListing { topic, entries })
}

/// The container of (partition, epoch) in the topic; a missing one names the
/// epochs the topic holds for the partition (D15).
pub fn topic_container(
    kafka: &KafkaSettings,
    name: &str,
    partition: i32,
    epoch: i64,
    timeout: Duration,
) -> Result<(String, Vec<u8>)> {
    let topic = open(kafka, name, timeout)?;
    let snapshots = read_state_topic(kafka, &topic, timeout).map_err(Error::failure)?;
    let key = state_record::snapshot_key(partition, epoch);
    let source = format!("state topic {name} key {key}");
    let mut epochs = Vec::new();
    for snapshot in snapshots {
        if snapshot.key == key {
            let found = snapshot
                .found
                .map_err(|e| Error::failure(format!("{source}: {e}")))?;
            return Ok((source, found.container));
        }
        if let Some((p, e)) = parse_key(&snapshot.key)
            && p == partition
            && e >= 0
        {
            epochs.push(e.to_string());
        }
    }
    Err(Error::failure(if epoch < 0 {
        format!(
            "the state topic {name} holds no live state for partition {partition} (a runner starts that partition from empty state)"
        )
    } else {
        format!(
            "snapshot epoch {epoch} is not retained; available epochs by partition: {{{partition}=[{}]}}",
            epochs.join(", ")
        )
    }))
}
