//! The demo's barrier step: a barrier group over `orders` with complete and partial cuts in
//! `__barrier_state` (encoded with the engine codecs, in the group's partition
//! `abs(murmur2(group)) % partitions`), a consumer group committed at the latest cut and a
//! Java/Go snapshot directory for it — then the same listing and verification
//! `barrier list` and `barrier verify` print.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierCut, BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic,
    GroupDefinition, InjectionStart, InjectionTarget, TopicPartition, group_partition,
};
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::runner::group::Producer;
use crate::engine::columnar::snapshot::container;
use crate::engine::columnar::snapshot::naming::{SnapshotKey, SnapshotLayout};
use crate::io::atomic_file::write_whole;
use crate::io::kafka::barrier_state::{BarrierState, read_barrier_state};
use crate::io::kafka::groups::commit_offsets;
use crate::io::kafka::runner_producer::RunnerProducer;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::topic_reader::TopicReader;
use crate::ops::barrier::verify::{
    ConsumerGroupRequest, SnapshotDirRequest, VerifyReport, VerifyRequest, verify,
};
use crate::ops::demo::orders::{ORDERS_PARTITIONS, ORDERS_TOPIC};
use crate::ops::demo::{Env, failed};
use crate::ops::{Error, Result};

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

/// Both barrier steps' results.
pub struct BarrierSteps {
    pub published: Published,
    /// The group's cuts as `barrier list --all` reads them.
    pub cuts: Vec<BarrierCut>,
    /// Where the snapshots `barrier verify` checked were saved (removed since).
    pub snapshot_dir: PathBuf,
    /// `barrier verify`'s report; the walkthrough fails unless it verified.
    pub report: VerifyReport,
}

/// Publishes cuts, lists them as `barrier list --all --group orders-cut` would, then
/// verifies the latest as `barrier verify` would.
pub(crate) fn steps(env: &Env<'_>) -> Result<BarrierSteps> {
    let kafka = env.kafka();
    let published = publish_cuts(env, &kafka)?;
    let state = read_barrier_state(&kafka, TIMEOUT).map_err(failed)?;
    let cuts = state.log.cuts(BARRIER_GROUP);
    let snapshot_dir = tempfile::tempdir()
        .map_err(|e| Error::failure(format!("cannot create a snapshot directory: {e}")))?;
    prepare_verification(&kafka, &state, snapshot_dir.path())?;
    let report = verify_cut(&kafka, snapshot_dir.path())?;
    if !report.verified() {
        return Err(Error::failure("the demo cut did not verify"));
    }
    Ok(BarrierSteps {
        published,
        cuts,
        snapshot_dir: snapshot_dir.path().to_path_buf(),
        report,
    })
}

/// Writes the group definition, cuts 1 (complete), 2 (partial), 3 (complete, at the end of
/// `orders`) and an unfinished injection 4.
fn publish_cuts(env: &Env<'_>, kafka: &KafkaSettings) -> Result<Published> {
    env.cluster
        .create_topic(BARRIER_STATE_TOPIC, STATE_PARTITIONS)
        .map_err(failed)?;
    let ends = TopicReader::open(kafka, ORDERS_TOPIC, TIMEOUT)?
        .ok_or_else(|| Error::failure(format!("topic {ORDERS_TOPIC} does not exist")))?
        .end_offsets()?;
    let half: Vec<(i32, i64)> = ends.iter().map(|(p, e)| (*p, e / 2)).collect();
    let full: Vec<(i32, i64)> = ends.iter().map(|(p, e)| (*p, *e)).collect();
    let records = vec![
        (
            BarrierStateKey::group(BARRIER_GROUP),
            encoded(
                GroupDefinition {
                    topics: vec![ORDERS_TOPIC.into()],
                    interval_ms: 60_000,
                    retained_cuts: 32,
                    last_epoch: 4,
                }
                .encode(),
            )?,
        ),
        cut_record(1, &half, &[])?,
        cut_record(2, &half[..2], &[ORDERS_PARTITIONS - 1])?,
        cut_record(VERIFIED_EPOCH, &full, &[])?,
        (
            BarrierStateKey::injection(BARRIER_GROUP, 4),
            encoded(
                InjectionStart {
                    coordinator_epoch: 1,
                    triggered_at: TRIGGERED_AT + 4_000,
                    targets: vec![InjectionTarget {
                        topic: ORDERS_TOPIC.into(),
                        partition_count: ORDERS_PARTITIONS,
                    }],
                }
                .encode(),
            )?,
        ),
    ];
    let partitions = NonZeroU32::new(STATE_PARTITIONS as u32).unwrap_or(NonZeroU32::MIN);
    let state_partition = group_partition(BARRIER_GROUP, partitions);
    let mut kafka = kafka.clone();
    kafka.set("linger.ms", "0");
    let mut producer = RunnerProducer::new(&kafka, TIMEOUT)?;
    for (key, value) in &records {
        let record = OutRecord {
            key: Some(encoded(key.encode())?),
            value: Some(value.clone()),
            // The producer stamps it.
            timestamp: 0,
            headers: Vec::new(),
        };
        producer.send_to(BARRIER_STATE_TOPIC, state_partition as i32, &record)?;
    }
    producer.flush()?;
    Ok(Published {
        state_partition,
        records: records.len(),
    })
}

fn encoded<E: std::fmt::Display>(bytes: std::result::Result<Vec<u8>, E>) -> Result<Vec<u8>> {
    bytes.map_err(|e| Error::failure(format!("cannot encode a demo barrier record: {e}")))
}

fn cut_record(
    epoch: i64,
    offsets: &[(i32, i64)],
    missing: &[i32],
) -> Result<(BarrierStateKey, Vec<u8>)> {
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
        encoded(cut.encode())?,
    ))
}

/// Commits the verified cut's offsets for the consumer group (as a runner that stopped at the
/// cut would have) and saves a Java/Go snapshot of every logical partition at its epoch.
fn prepare_verification(
    kafka: &KafkaSettings,
    state: &BarrierState,
    snapshot_dir: &Path,
) -> Result<()> {
    let cut = state
        .log
        .complete_cut_at(BARRIER_GROUP, VERIFIED_EPOCH)
        .ok_or_else(|| Error::failure("the demo cut was not read back"))?;
    let offsets: BTreeMap<TopicPartition, i64> = cut.cut.offsets().collect();
    commit_offsets(kafka, CONSUMER_GROUP, &offsets, TIMEOUT)?;
    for (tp, _) in cut.cut.offsets() {
        let key = SnapshotKey::JavaGo {
            partition: tp.partition,
            epoch: VERIFIED_EPOCH,
        };
        let name = key.file_name().map_err(failed)?;
        let state = container::encode(&BTreeMap::from([(
            "count-by-country".to_owned(),
            (tp.partition as u64 + 1).to_be_bytes().to_vec(),
        )]));
        write_whole(&snapshot_dir.join(&name), &state)
            .map_err(|e| Error::failure(format!("cannot save {name}: {e}")))?;
    }
    Ok(())
}

/// `barrier verify --group orders-cut --epoch 3 --consumer-group orders-app --snapshot-dir DIR`.
fn verify_cut(kafka: &KafkaSettings, snapshot_dir: &Path) -> Result<VerifyReport> {
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
    verify(kafka, TIMEOUT, &request)
}
