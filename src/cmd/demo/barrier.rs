//! The demo's barrier step: a barrier group over `orders` with complete and partial cuts in
//! `__barrier_state` (encoded with the engine codecs, in the group's partition
//! `abs(murmur2(group)) % partitions`), a consumer group committed at the latest cut and a
//! Java/Go snapshot directory for it — then the same listing and verification
//! `barrier list` and `barrier verify` print.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use crate::cmd::exit::{CliError, CliResult};
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic, GroupDefinition,
    InjectionStart, InjectionTarget, TopicPartition, group_partition,
};
use crate::engine::columnar::snapshot::container;
use crate::engine::columnar::snapshot::naming::{SnapshotKey, SnapshotLayout};
use crate::io::atomic_file::write_whole;
use crate::io::kafka::barrier_state::{BarrierState, read_barrier_state};
use crate::io::kafka::groups::commit_offsets;
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::barrier::verify::{
    ConsumerGroupRequest, SnapshotDirRequest, VerifyReport, VerifyRequest, verify,
};

use super::orders::{ORDERS_PARTITIONS, ORDERS_TOPIC};

pub const BARRIER_GROUP: &str = "orders-cut";
pub const CONSUMER_GROUP: &str = "orders-app";
/// Fewer than the broker's 50, so the group → partition rule is visible.
pub const STATE_PARTITIONS: i32 = 5;
/// The epoch the consumer group and the snapshots are at.
pub const VERIFIED_EPOCH: i64 = 3;

const TIMEOUT: Duration = Duration::from_secs(10);
const TRIGGERED_AT: i64 = 1_732_870_900_000;

/// What the step published.
pub struct Published {
    pub state_partition: u32,
    pub records: usize,
}

/// Writes the group definition, cuts 1 (complete), 2 (partial), 3 (complete, at the end of
/// `orders`) and an unfinished injection 4.
pub fn publish_cuts(cluster: &EmbeddedCluster) -> CliResult<Published> {
    cluster
        .create_topic(BARRIER_STATE_TOPIC, STATE_PARTITIONS)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let ends = end_offsets(cluster.bootstrap())?;
    let half: Vec<(i32, i64)> = ends.iter().map(|(p, e)| (*p, e / 2)).collect();
    let full: Vec<(i32, i64)> = ends.iter().map(|(p, e)| (*p, *e)).collect();
    let records = vec![
        (
            BarrierStateKey::group(BARRIER_GROUP),
            Some(encoded(
                GroupDefinition {
                    topics: vec![ORDERS_TOPIC.into()],
                    interval_ms: 60_000,
                    retained_cuts: 32,
                    last_epoch: 4,
                }
                .encode(),
            )?),
        ),
        cut_record(1, &half, &[])?,
        cut_record(2, &half[..2], &[ORDERS_PARTITIONS - 1])?,
        cut_record(VERIFIED_EPOCH, &full, &[])?,
        (
            BarrierStateKey::injection(BARRIER_GROUP, 4),
            Some(encoded(
                InjectionStart {
                    coordinator_epoch: 1,
                    triggered_at: TRIGGERED_AT + 4_000,
                    targets: vec![InjectionTarget {
                        topic: ORDERS_TOPIC.into(),
                        partition_count: ORDERS_PARTITIONS,
                    }],
                }
                .encode(),
            )?),
        ),
    ];
    let partitions = NonZeroU32::new(STATE_PARTITIONS as u32).unwrap_or(NonZeroU32::MIN);
    let state_partition = group_partition(BARRIER_GROUP, partitions);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("linger.ms", "0")
        .create()
        .map_err(|e| CliError::failure(format!("create producer: {e}")))?;
    for (key, value) in &records {
        let key = encoded(key.encode())?;
        let mut record = BaseRecord::<[u8], [u8]>::to(BARRIER_STATE_TOPIC)
            .partition(state_partition as i32)
            .key(&key);
        if let Some(value) = value {
            record = record.payload(value);
        }
        producer.send(record).map_err(|(e, _)| {
            CliError::failure(format!("produce to {BARRIER_STATE_TOPIC}: {e}"))
        })?;
    }
    producer
        .flush(TIMEOUT)
        .map_err(|e| CliError::unreachable(format!("flush {BARRIER_STATE_TOPIC}: {e}")))?;
    Ok(Published {
        state_partition,
        records: records.len(),
    })
}

fn encoded<E: std::fmt::Display>(bytes: Result<Vec<u8>, E>) -> CliResult<Vec<u8>> {
    bytes.map_err(|e| CliError::failure(format!("cannot encode a demo barrier record: {e}")))
}

fn cut_record(
    epoch: i64,
    offsets: &[(i32, i64)],
    missing: &[i32],
) -> CliResult<(BarrierStateKey, Option<Vec<u8>>)> {
    let cut = Cut {
        triggered_at: TRIGGERED_AT + epoch * 1_000,
        completed_at: TRIGGERED_AT + epoch * 1_000 + 35,
        status: if missing.is_empty() {
            CutStatus::Complete
        } else {
            CutStatus::Partial
        },
        topics: vec![CutTopic {
            topic: ORDERS_TOPIC.into(),
            partitions: offsets
                .iter()
                .map(|(partition, offset)| CutOffset {
                    partition: *partition,
                    offset: *offset,
                })
                .collect(),
        }],
        missing: missing
            .iter()
            .map(|p| TopicPartition::new(ORDERS_TOPIC, *p))
            .collect(),
    };
    Ok((
        BarrierStateKey::cut(BARRIER_GROUP, epoch),
        Some(encoded(cut.encode())?),
    ))
}

fn end_offsets(bootstrap: &str) -> CliResult<BTreeMap<i32, i64>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .map_err(|e| CliError::failure(format!("create consumer: {e}")))?;
    (0..ORDERS_PARTITIONS)
        .map(|p| {
            consumer
                .fetch_watermarks(ORDERS_TOPIC, p, TIMEOUT)
                .map(|(_, high)| (p, high))
                .map_err(|e| {
                    CliError::unreachable(format!("read end offsets of {ORDERS_TOPIC}: {e}"))
                })
        })
        .collect()
}

fn settings(bootstrap: &str) -> KafkaSettings {
    let mut s = KafkaSettings::new();
    s.set("bootstrap.servers", bootstrap);
    s
}

/// `barrier list`'s read: the whole topic folded.
pub fn list(bootstrap: &str) -> CliResult<BarrierState> {
    read_barrier_state(&settings(bootstrap), TIMEOUT).map_err(|e| CliError::failure(e.to_string()))
}

/// Commits the verified cut's offsets for the consumer group (as a runner that stopped at the
/// cut would have) and saves a Java/Go snapshot of every logical partition at its epoch.
pub fn prepare_verification(
    bootstrap: &str,
    state: &BarrierState,
    snapshot_dir: &Path,
) -> CliResult<()> {
    let cut = state
        .log
        .complete_cut_at(BARRIER_GROUP, VERIFIED_EPOCH)
        .ok_or_else(|| CliError::failure("the demo cut was not read back"))?;
    let offsets: BTreeMap<TopicPartition, i64> = cut.cut.offsets().collect();
    commit_offsets(&settings(bootstrap), CONSUMER_GROUP, &offsets, TIMEOUT)
        .map_err(CliError::from)?;
    for (tp, _) in cut.cut.offsets() {
        let key = SnapshotKey::JavaGo {
            partition: tp.partition,
            epoch: VERIFIED_EPOCH,
        };
        let name = key
            .file_name()
            .map_err(|e| CliError::failure(e.to_string()))?;
        let state = container::encode(&BTreeMap::from([(
            "count-by-country".to_owned(),
            (tp.partition as u64 + 1).to_be_bytes().to_vec(),
        )]));
        write_whole(&snapshot_dir.join(&name), &state)
            .map_err(|e| CliError::failure(format!("cannot save {name}: {e}")))?;
    }
    Ok(())
}

/// `barrier verify --group orders-cut --epoch 3 --consumer-group orders-app --snapshot-dir DIR`.
pub fn verify_cut(bootstrap: &str, snapshot_dir: &Path) -> CliResult<VerifyReport> {
    let request = VerifyRequest {
        group: BARRIER_GROUP.into(),
        epoch: EpochSelector::Exact(VERIFIED_EPOCH),
        consumer_group: Some(ConsumerGroupRequest {
            group: CONSUMER_GROUP.into(),
            at_least: false,
        }),
        snapshots: Some(SnapshotDirRequest {
            dir: snapshot_dir.to_path_buf(),
            layout: Some(SnapshotLayout::JavaGo),
            task_prefix: None,
            snapshot_group: None,
        }),
        input: None,
    };
    verify(&settings(bootstrap), TIMEOUT, &request)
}
