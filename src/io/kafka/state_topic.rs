//! The Kafka state store (docs/topology.md "State in Kafka"): partition
//! snapshots as records of a compacted topic, so a partition's state follows
//! it to whichever member the group gives it to. The record shapes, chunking
//! and the checks on restore are `engine::columnar::snapshot::state_record`;
//! this module creates or checks the topic, reads one of its partitions from
//! the start to the high watermark, and produces (acknowledged) records.
//!
//! Logical partition `p` lives in state-topic partition `p % partitions`. A
//! save waits for every acknowledgement, so at-least-once saves it after the
//! outputs' flush and before the commit: the state is never older than the
//! committed offsets.
//!
//! Live state is saved as a full snapshot, then as deltas against the
//! container saved before (docs/formats.md §8.7) while they stay small: the
//! store keeps the last container it saved per owned partition to diff
//! against, and writes a full again when a delta would exceed a quarter of the
//! state, when the deltas since the full add up to the state's size, after
//! [`MAX_DELTAS`] deltas, after it loaded the partition and after any failed
//! round. A full's records are followed by tombstones of the deltas it replaced.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_protocol::records::RecordBatchDecoder;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::consumer::Consumer;
use rdkafka::error::KafkaError;
use rdkafka::message::{DeliveryResult, Header as KafkaHeader, Headers, Message, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::runner::group::{
    LIVE_EPOCH, RunnerError, StateOut, StateStore, TopicPartition,
};
use crate::engine::columnar::snapshot::decided::{self, Logged};
use crate::engine::columnar::snapshot::epoch_retention::EpochRetention;
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::columnar::snapshot::state_record::{
    self, Chunks, DeltaInfo, Found, InputOffsets, ReadRecord, StateRecord,
};
use crate::engine::columnar::snapshot::{container, delta};
use crate::engine::columnar::topology::spec::DEFAULT_EPOCHS_KEPT;
use crate::io::kafka::coordination::client::WireClient;
use crate::io::kafka::coordination::security::WireSecurity;
use crate::io::kafka::groups::committed_offsets;
use crate::io::kafka::reader_context::{ReaderConsumer, ReaderContext};
use crate::io::kafka::settings::KafkaSettings;

/// Room left in a record for its key, headers and batch framing.
const RECORD_OVERHEAD: usize = 16 * 1024;
/// A topic's `max.message.bytes` when the broker does not say.
const DEFAULT_MAX_MESSAGE_BYTES: usize = 1_048_588;

/// Deltas after one full snapshot before the next full (a handoff reads the
/// full and at most this many deltas).
pub const MAX_DELTAS: u64 = 64;
/// A delta larger than the state divided by this is not written: a full is.
const DELTA_FRACTION: usize = 4;

/// The last container saved for a live key, which the next delta is taken against.
struct Base {
    container: Vec<u8>,
    /// The full snapshot the deltas follow.
    version: u64,
    /// Deltas written since it.
    seq: u64,
    /// Their bytes.
    delta_bytes: usize,
}

/// Delivery failures of the store's producer, kept for the next flush.
#[derive(Default)]
pub struct Deliveries {
    failure: Mutex<Option<String>>,
}

impl ClientContext for Deliveries {}

impl ProducerContext for Deliveries {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((e, _)) = result {
            let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            failure.get_or_insert_with(|| e.to_string());
        }
    }
}

/// The producer of state records, acknowledged one by one (see [`produce_records`]).
pub type StateProducer = BaseProducer<Deliveries>;

/// A producer for `topic`'s state records: outside any transaction (at-least-once
/// saves, rebalance saves, `snapshot copy`), taking records up to the topic's limit.
pub fn state_producer(
    settings: &KafkaSettings,
    topic: &StateTopic,
) -> Result<StateProducer, String> {
    let mut config = settings.client_config();
    config.remove("transactional.id");
    // Large snapshots go in chunks sized to the topic; the producer must take them.
    config.set(
        "message.max.bytes",
        (topic.max_message_bytes + RECORD_OVERHEAD).to_string(),
    );
    config
        .create_with_context(Deliveries::default())
        .map_err(|e| format!("create the state topic producer: {e}"))
}

/// The chunk version a new writer starts from: versions only need to differ
/// from earlier writers' of the same key.
pub fn first_version() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The largest chunk value for `topic` (its `max.message.bytes` less room for
/// key, headers and framing).
pub fn max_chunk(topic: &StateTopic) -> usize {
    topic
        .max_message_bytes
        .saturating_sub(RECORD_OVERHEAD)
        .max(1024)
}

/// The state topic as it was found or created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateTopic {
    pub name: String,
    pub partitions: i32,
    pub max_message_bytes: usize,
    pub created: bool,
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(future))
        .map_err(|e| format!("cannot start an async runtime: {e}"))
}

/// Partition count of `topic`, or `None` when it does not exist.
fn partition_count(
    consumer: &ReaderConsumer,
    topic: &str,
    timeout: Duration,
) -> Result<Option<i32>, String> {
    let metadata = consumer
        .fetch_metadata(Some(topic), timeout)
        .map_err(|e| format!("read the metadata of {topic}: {e}"))?;
    Ok(metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty())
        .map(|t| t.partitions().len() as i32))
}

fn reader(settings: &KafkaSettings) -> Result<ReaderConsumer, String> {
    let mut config = settings.client_config();
    config
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        // Snapshots of aborted transactions are hidden where the broker can.
        .set("isolation.level", "read_committed")
        .set("group.id", "krabka-streams-state-reader-unused");
    config
        .create_with_context(ReaderContext)
        .map_err(|e| format!("create Kafka consumer: {e}"))
}

/// Finds `name`, or creates it compacted with `partitions` partitions; an
/// existing topic that is not compacted is refused (deletion by retention would
/// drop state that is still live).
pub fn ensure_state_topic(
    settings: &KafkaSettings,
    name: &str,
    partitions: i32,
    timeout: Duration,
) -> Result<StateTopic, String> {
    let consumer = reader(settings)?;
    let mut created = false;
    let admin: AdminClient<DefaultClientContext> = settings
        .client_config()
        .create()
        .map_err(|e| format!("create Kafka admin client: {e}"))?;
    let options = AdminOptions::new().request_timeout(Some(timeout));
    let found = match partition_count(&consumer, name, timeout)? {
        Some(n) => n,
        None => {
            let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(-1))
                .set("cleanup.policy", "compact");
            let results = block_on(admin.create_topics(&[topic], &options))?
                .map_err(|e| format!("create the state topic {name}: {e}"))?;
            for result in results {
                if let Err((_, code)) = result
                    && code != rdkafka::types::RDKafkaErrorCode::TopicAlreadyExists
                {
                    return Err(format!("create the state topic {name}: {code}"));
                }
            }
            created = true;
            let deadline = Instant::now() + timeout;
            loop {
                if let Some(n) = partition_count(&consumer, name, timeout)? {
                    break n;
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "the state topic {name} was created but does not appear in the metadata"
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    describe(&admin, &options, name, found, created)
}

/// `name` as it is, or `None` when it does not exist (nothing is created); one
/// that is not compacted is refused as by [`ensure_state_topic`].
pub fn find_state_topic(
    settings: &KafkaSettings,
    name: &str,
    timeout: Duration,
) -> Result<Option<StateTopic>, String> {
    let consumer = reader(settings)?;
    let Some(found) = partition_count(&consumer, name, timeout)? else {
        return Ok(None);
    };
    let admin: AdminClient<DefaultClientContext> = settings
        .client_config()
        .create()
        .map_err(|e| format!("create Kafka admin client: {e}"))?;
    let options = AdminOptions::new().request_timeout(Some(timeout));
    describe(&admin, &options, name, found, false).map(Some)
}

/// Reads the topic's configuration: compacted or refused, and its record limit.
fn describe(
    admin: &AdminClient<DefaultClientContext>,
    options: &AdminOptions,
    name: &str,
    found: i32,
    created: bool,
) -> Result<StateTopic, String> {
    let configs = block_on(admin.describe_configs(&[ResourceSpecifier::Topic(name)], options))?
        .map_err(|e| format!("read the configuration of the state topic {name}: {e}"))?;
    let mut policy = None;
    let mut max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES;
    for resource in configs {
        let resource = resource
            .map_err(|e| format!("read the configuration of the state topic {name}: {e}"))?;
        if let Some(entry) = resource.get("cleanup.policy") {
            policy = entry.value.clone();
        }
        if let Some(bytes) = resource
            .get("max.message.bytes")
            .and_then(|e| e.value.as_deref())
            .and_then(|v| v.parse().ok())
        {
            max_message_bytes = bytes;
        }
    }
    let compacted = policy
        .as_deref()
        .is_some_and(|p| p.split(',').any(|p| p.trim() == "compact"));
    if !compacted {
        return Err(format!(
            "the state topic {name} exists with cleanup.policy={}: a state topic must be compacted (cleanup.policy=compact), or its retention deletes live state; change it (kafka-configs --alter --add-config cleanup.policy=compact) or name another topic in state_topic",
            policy.as_deref().unwrap_or("(not reported)")
        ));
    }
    Ok(StateTopic {
        name: name.to_owned(),
        partitions: found,
        max_message_bytes,
        created,
    })
}

/// The partition count of the largest source topic (what a new state topic
/// gets). A missing source topic is an error here, before a state topic is
/// created for a run that cannot start.
pub fn source_partitions(
    settings: &KafkaSettings,
    topics: &[String],
    timeout: Duration,
) -> Result<i32, String> {
    let consumer = reader(settings)?;
    let mut most = 1;
    for topic in topics {
        match partition_count(&consumer, topic, timeout)? {
            Some(n) => most = most.max(n),
            None => return Err(format!("source topic {topic} does not exist")),
        }
    }
    Ok(most)
}

/// Partition snapshots in a compacted Kafka topic.
pub struct KafkaStateStore {
    settings: KafkaSettings,
    topic: StateTopic,
    group: String,
    identity: StateIdentity,
    source_topics: Vec<String>,
    adopt: bool,
    timeout: Duration,
    producer: BaseProducer<Deliveries>,
    /// The input offsets the live state of each topic-partition reflects.
    offsets: InputOffsets,
    /// The chunks of the snapshot last read or written per key (tombstoned when replaced).
    chunks: BTreeMap<String, Chunks>,
    /// Per live key, the container last saved: deltas are taken against it.
    bases: BTreeMap<String, Base>,
    /// Per key, the delta records written or found since its last full
    /// (tombstoned after the next full).
    deltas: BTreeMap<String, Vec<String>>,
    version: u64,
    /// Snapshots go in the runner's transaction, and a restore takes the newest
    /// snapshot not ahead of the committed offsets.
    exactly_once: bool,
    /// The barrier epochs kept per partition; older ones get tombstones.
    retention: EpochRetention,
}

impl KafkaStateStore {
    pub fn new(
        settings: &KafkaSettings,
        topic: StateTopic,
        identity: StateIdentity,
        source_topics: Vec<String>,
        adopt: bool,
        timeout: Duration,
    ) -> Result<Self, String> {
        let producer = state_producer(settings, &topic)?;
        let version = first_version();
        Ok(KafkaStateStore {
            settings: settings.clone(),
            group: identity.consumer_group.clone(),
            topic,
            identity,
            source_topics,
            adopt,
            timeout,
            producer,
            offsets: InputOffsets::new(),
            chunks: BTreeMap::new(),
            bases: BTreeMap::new(),
            deltas: BTreeMap::new(),
            version,
            exactly_once: false,
            retention: EpochRetention::new(DEFAULT_EPOCHS_KEPT),
        })
    }

    /// Keeps the newest `keep` barrier epochs of each partition (`state_epochs_kept`).
    pub fn keep_epochs(mut self, keep: usize) -> Self {
        self.retention = EpochRetention::new(keep);
        self
    }

    /// Exactly-once: snapshots are sent in the runner's transaction.
    pub fn exactly_once(mut self) -> Self {
        self.exactly_once = true;
        self
    }

    /// The records that save `state` under (partition, epoch): a delta when
    /// the live key has a base and the delta is small, else the full snapshot
    /// followed by the tombstones of the chunks and deltas it replaces. The
    /// bookkeeping moves on as if they were written; a failure says
    /// [`StateStore::forget_unconfirmed`] or drops the key's base.
    fn records(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Vec<StateRecord> {
        let key = state_record::snapshot_key(partition, epoch);
        let offsets: InputOffsets = self
            .offsets
            .iter()
            .filter(|(tp, _)| tp.partition == partition)
            .map(|(tp, o)| (tp.clone(), *o))
            .collect();
        let encoded = container::encode(state);
        let encoded = match self.delta(&key, encoded, &offsets) {
            Ok(record) => return vec![record],
            Err(encoded) => encoded,
        };
        self.version += 1;
        let mut records = state_record::snapshot_records(
            partition,
            epoch,
            &encoded,
            &self.identity,
            &offsets,
            max_chunk(&self.topic),
            self.version,
        );
        let chunked = records.last().is_some_and(|r| {
            r.headers
                .iter()
                .any(|h| h.key == state_record::CHUNKS_HEADER)
        });
        let count = records.len() - 1;
        if let Some(old) = self.chunks.remove(&key) {
            records.extend(state_record::chunk_tombstones(&key, &old));
        }
        if let Some(old) = self.deltas.remove(&key) {
            records.extend(state_record::tombstones(old));
        }
        if chunked {
            self.chunks.insert(
                key.clone(),
                Chunks {
                    version: self.version,
                    count,
                    total: 0,
                },
            );
        }
        if epoch >= 0 {
            let written = chunked.then_some(Chunks {
                version: self.version,
                count,
                total: 0,
            });
            records.extend(self.retire_epochs(partition, epoch, written));
        }
        if epoch < 0 {
            self.bases.insert(
                key,
                Base {
                    container: encoded,
                    version: self.version,
                    seq: 0,
                    delta_bytes: 0,
                },
            );
        }
        records
    }

    /// Tombstones of the barrier epochs beyond `state_epochs_kept`
    /// (`engine::columnar::snapshot::epoch_retention`), after the new epoch's
    /// records, so in its transaction under exactly-once. The partition's epochs
    /// are read from the topic once; a failed read postpones the tombstones to
    /// the next epoch (said at warn level), it never fails a save.
    fn retire_epochs(
        &mut self,
        partition: i32,
        epoch: i64,
        written: Option<Chunks>,
    ) -> Vec<StateRecord> {
        if !self.retention.knows(partition) {
            let prefix = EpochRetention::prefix(partition);
            match self.read_matching(self.state_partition(partition), |k| k.starts_with(&prefix)) {
                Ok(records) => self.retention.seed(partition, &records),
                Err(e) => {
                    tracing::warn!(
                        "state topic {}: old barrier epochs of partition {partition} not pruned this time: {e}",
                        self.topic.name
                    );
                    return Vec::new();
                }
            }
        }
        let tombstones = self.retention.saved(partition, epoch, written);
        for t in &tombstones {
            self.chunks.remove(&t.key);
        }
        tombstones
    }

    /// The delta record from the key's base to `encoded` when there is a base
    /// and the delta stays within the limits; else `encoded` back, for a full.
    fn delta(
        &mut self,
        key: &str,
        encoded: Vec<u8>,
        offsets: &InputOffsets,
    ) -> Result<StateRecord, Vec<u8>> {
        let Some(base) = self.bases.get_mut(key).filter(|b| b.seq < MAX_DELTAS) else {
            return Err(encoded);
        };
        // A handoff reads the full and its deltas: together at most twice the state.
        let limit = (encoded.len() / DELTA_FRACTION)
            .min(max_chunk(&self.topic))
            .min(encoded.len().saturating_sub(base.delta_bytes));
        let Some(patch) = delta::diff(&base.container, &encoded, limit) else {
            return Err(encoded);
        };
        base.seq += 1;
        base.delta_bytes += patch.len();
        let info = DeltaInfo {
            version: base.version,
            seq: base.seq,
            length: encoded.len(),
            checksum: delta::checksum(&encoded),
        };
        base.container = encoded;
        let record = state_record::delta_record(key, patch, info, &self.identity, offsets);
        self.deltas
            .entry(key.to_owned())
            .or_default()
            .push(record.key.clone());
        Ok(record)
    }

    fn state_partition(&self, partition: i32) -> i32 {
        partition % self.topic.partitions.max(1)
    }

    /// The records of one state-topic partition under `key` or its chunk and
    /// delta keys, log start to high watermark (other logical partitions'
    /// records are skipped as they are read, so only this key's history is held).
    fn read_partition(&self, partition: i32, key: &str) -> Result<Vec<ReadRecord>, String> {
        let chunk_prefix = format!("{key}.chunk-");
        let delta_prefix = format!("{key}.delta-");
        self.read_matching(partition, |k| {
            k == key || k.starts_with(&chunk_prefix) || k.starts_with(&delta_prefix)
        })
    }

    /// The records of one state-topic partition whose key `wanted` accepts, log
    /// start to high watermark.
    fn read_matching(
        &self,
        partition: i32,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Vec<ReadRecord>, String> {
        let read = if self.exactly_once {
            read_decided_records
        } else {
            read_records
        };
        read(
            &self.settings,
            &self.topic.name,
            partition,
            self.timeout,
            wanted,
        )
    }

    /// Produces `records` to the partition and waits for every acknowledgement.
    fn produce(&self, partition: i32, records: &[StateRecord]) -> Result<(), String> {
        produce_records(
            &self.producer,
            &self.topic.name,
            partition,
            records,
            self.timeout,
        )
    }

    fn committed(&self, partition: i32) -> Result<InputOffsets, String> {
        let tps: Vec<TopicPartition> = self
            .source_topics
            .iter()
            .map(|t| TopicPartition::new(t.clone(), partition))
            .collect();
        let found = committed_offsets(&self.settings, &self.group, &tps, self.timeout)
            .map_err(|e| e.message)?;
        Ok(found
            .into_iter()
            .filter_map(|(tp, o)| o.map(|o| (tp, o)))
            .collect())
    }

    fn load_container(&mut self, partition: i32, epoch: i64) -> Result<Option<Vec<u8>>, String> {
        let key = state_record::snapshot_key(partition, epoch);
        let records = self.read_partition(self.state_partition(partition), &key)?;
        let committed = if epoch < 0 {
            self.committed(partition)?
        } else {
            InputOffsets::new()
        };
        // The next save of this key is a full: this member has no base yet,
        // and the one it may hold from an earlier ownership is stale. It does
        // not continue the chain it restores: the previous owner may still
        // write one of its keys late, and a late record replaces this one's
        // (docs/topology.md "State in Kafka", Cost).
        self.bases.remove(&key);
        self.deltas
            .insert(key.clone(), state_record::live_delta_keys(&records, &key));
        if epoch < 0 {
            // What an earlier ownership reflected is not what this load restores.
            self.offsets.retain(|tp, _| tp.partition != partition);
        }
        // Under exactly-once only committed transactions' records were read
        // (`read_decided_records`), so the newest snapshot is the one to take,
        // even ahead of the group's committed offsets: Tansu applies a
        // committed transaction's offsets late, and telling an aborted
        // snapshot from a committed one by the offsets took the older state
        // and made the runner process that transaction's records again. The
        // runner starts such a partition at the snapshot's offsets
        // (`StateStore::restored_offsets`).
        let found = state_record::latest_chain_where(&records, partition, epoch, |_| true)?;
        let found = found.map(|(found, chain)| {
            for why in chain.skipped {
                tracing::warn!(
                    "state topic {}: partition {partition} restored from the state before {why}",
                    self.topic.name
                );
            }
            found
        });
        let Some(found) = found else {
            if epoch >= 0 {
                return Err(format!(
                    "snapshot epoch {epoch} of partition {partition} is not in the state topic {}",
                    self.topic.name
                ));
            }
            if let Some((
                TopicPartition {
                    topic,
                    partition: p,
                },
                offset,
            )) = committed.iter().next()
                && !self.adopt
            {
                return Err(format!(
                    "the state topic {} holds no state for partition {partition}, but group {} committed {topic}-{p} up to {offset}: starting from nothing would miss those records (pass --adopt-state to start it empty)",
                    self.topic.name, self.group
                ));
            }
            return Ok(None);
        };
        // --adopt-state takes the snapshot as it is: another owner's, or one that
        // records no offsets (a `snapshot copy` of a directory).
        if !self.adopt
            && let Some(why) = state_record::refusal(&found, &key, &self.identity, &committed)
        {
            return Err(format!(
                "{}: {why} (pass --adopt-state to take it as it is)",
                self.topic.name
            ));
        }
        if epoch < 0 {
            for (tp, offset) in &found.offsets {
                if tp.partition == partition {
                    self.offsets.insert(tp.clone(), *offset);
                }
            }
        }
        if let Some(chunks) = found.chunks {
            self.chunks.insert(key, chunks);
        }
        Ok(Some(found.container))
    }
}

impl StateStore for KafkaStateStore {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        let fail = |m: String| RunnerError::new(format!("load partition {partition} state: {m}"));
        match self.load_container(partition, epoch).map_err(fail)? {
            None => Ok(BTreeMap::new()),
            Some(bytes) => container::read(&bytes)
                .map(container::ReadSnapshot::into_map)
                .map_err(|e| fail(e.to_string())),
        }
    }

    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        let fail = |m: String| RunnerError::new(format!("save partition {partition} state: {m}"));
        let records = self.records(partition, epoch, state);
        // Tombstones come last, so the new snapshot is acknowledged before the
        // chunks and deltas it replaced go (one partition: the broker keeps the order).
        let produced = self.produce(self.state_partition(partition), &records);
        if produced.is_err() {
            // Whether the record landed is unknown: the next save is a full.
            self.bases
                .remove(&state_record::snapshot_key(partition, epoch));
        }
        produced.map_err(fail)
    }

    /// Every partition's records are produced, then one flush waits for all
    /// of their acknowledgements: a round's saves cost one round trip, not one
    /// per partition. Each state-topic partition still gets its records in order.
    fn save_many(
        &mut self,
        epoch: i64,
        states: &[(i32, BTreeMap<String, Vec<u8>>)],
    ) -> Result<(), RunnerError> {
        let mut batches = Vec::with_capacity(states.len());
        for (partition, state) in states {
            batches.push((*partition, self.records(*partition, epoch, state)));
        }
        let mut produced = Ok(());
        for (partition, records) in &batches {
            produced = send_records(
                &self.producer,
                &self.topic.name,
                self.state_partition(*partition),
                records,
                self.timeout,
            );
            if produced.is_err() {
                break;
            }
        }
        let produced = produced.and_then(|()| {
            let partitions: Vec<i32> = batches
                .iter()
                .map(|(p, _)| self.state_partition(*p))
                .collect();
            flush_records(&self.producer, &self.topic.name, &partitions, self.timeout)
        });
        if produced.is_err() {
            // Whether any record landed is unknown: each partition's next save is a full.
            for (partition, _) in &batches {
                self.bases
                    .remove(&state_record::snapshot_key(*partition, epoch));
            }
        }
        produced.map_err(|m| {
            let names: Vec<String> = batches.iter().map(|(p, _)| p.to_string()).collect();
            RunnerError::new(format!("save partition {} state: {m}", names.join(", ")))
        })
    }

    /// The barrier epochs whose latest record under `partition-<p>-epoch-<e>`
    /// is a snapshot (not a tombstone), ascending.
    fn epochs(&mut self, partition: i32) -> Result<Option<Vec<i64>>, RunnerError> {
        let prefix = format!("{}-epoch-", state_record::snapshot_key(partition, -1));
        let records = self
            .read_matching(self.state_partition(partition), |k| {
                k.strip_prefix(&prefix)
                    .is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()))
            })
            .map_err(|m| RunnerError::new(format!("list partition {partition} epochs: {m}")))?;
        Ok(Some(state_record::live_epochs(&records, partition)))
    }

    fn transactional_records(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<Option<Vec<StateOut>>, RunnerError> {
        if !self.exactly_once {
            return Ok(None);
        }
        let target = self.state_partition(partition);
        Ok(Some(
            self.records(partition, epoch, state)
                .into_iter()
                .map(|r| {
                    (
                        self.topic.name.clone(),
                        target,
                        OutRecord {
                            key: Some(r.key.into_bytes()),
                            value: r.value,
                            timestamp: 0,
                            headers: r.headers,
                        },
                    )
                })
                .collect(),
        ))
    }

    fn forget_unconfirmed(&mut self) {
        self.bases.clear();
    }

    fn restored_offsets(&mut self, partition: i32) -> BTreeMap<TopicPartition, i64> {
        self.offsets
            .iter()
            .filter(|(tp, _)| tp.partition == partition)
            .map(|(tp, o)| (tp.clone(), *o))
            .collect()
    }

    fn saves_in_transaction(&self) -> bool {
        self.exactly_once
    }

    fn release(&mut self, partition: i32) {
        self.bases
            .remove(&state_record::snapshot_key(partition, LIVE_EPOCH));
    }

    fn reflect(&mut self, offsets: &BTreeMap<TopicPartition, i64>) {
        for (tp, offset) in offsets {
            let entry = self.offsets.entry(tp.clone()).or_insert(*offset);
            *entry = (*entry).max(*offset);
        }
    }
}

/// The records of one state-topic partition whose key `wanted` accepts, log
/// start to high watermark, within `timeout` (every read is bounded).
pub fn read_records(
    settings: &KafkaSettings,
    name: &str,
    partition: i32,
    timeout: Duration,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<ReadRecord>, String> {
    let consumer = reader(settings)?;
    let (low, high) = consumer
        .fetch_watermarks(name, partition, timeout)
        .map_err(|e| format!("read the watermarks of {name}-{partition}: {e}"))?;
    let mut records = Vec::new();
    if high <= low {
        return Ok(records);
    }
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(name, partition, Offset::Offset(low))
        .map_err(|e| e.to_string())?;
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    loop {
        if Instant::now() > deadline {
            return Err(format!(
                "reading {name}-{partition} up to offset {high} took longer than {:?}",
                timeout
            ));
        }
        match consumer.poll(Duration::from_millis(200)) {
            None => continue,
            Some(Err(KafkaError::PartitionEOF(_))) => break,
            Some(Err(e)) => return Err(format!("read {name}-{partition}: {e}")),
            Some(Ok(m)) => {
                let offset = m.offset();
                let Some(found) = m
                    .key()
                    .and_then(|k| std::str::from_utf8(k).ok())
                    .filter(|k| wanted(k))
                else {
                    if offset + 1 >= high {
                        break;
                    }
                    continue;
                };
                let headers = m
                    .headers()
                    .map(|hs| {
                        hs.iter()
                            .map(|h| Header {
                                key: h.key.to_owned(),
                                value: h.value.map(<[u8]>::to_vec),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                records.push(ReadRecord {
                    offset,
                    key: found.to_owned(),
                    value: m.payload().map(<[u8]>::to_vec),
                    headers,
                });
                if offset + 1 >= high {
                    break;
                }
            }
        }
    }
    Ok(records)
}

/// [`read_records`] for an exactly-once store: only records of committed
/// transactions (and those written outside any), decided by the control
/// markers in the log (`engine::columnar::snapshot::decided`), not by the
/// broker's read_committed filter, which Tansu does not apply. Read up to the
/// last stable offset, as a read_committed consumer would.
pub fn read_decided_records(
    settings: &KafkaSettings,
    name: &str,
    partition: i32,
    timeout: Duration,
    wanted: impl Fn(&str) -> bool,
) -> Result<Vec<ReadRecord>, String> {
    let (low, high) = reader(settings)?
        .fetch_watermarks(name, partition, timeout)
        .map_err(|e| format!("read the watermarks of {name}-{partition}: {e}"))?;
    if high <= low {
        return Ok(Vec::new());
    }
    let security = WireSecurity::from_settings(|k| settings.get(k)).map_err(|e| e.0)?;
    let client = WireClient::new(
        settings.get("bootstrap.servers").unwrap_or_default(),
        "krabka-streams-state-reader",
        timeout,
        security,
    )
    .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    let mut logged = Vec::new();
    let mut next = low;
    loop {
        if Instant::now() > deadline {
            return Err(format!(
                "reading {name}-{partition} up to offset {high} took longer than {timeout:?}"
            ));
        }
        let fetched = client
            .fetch(name, partition, next)
            .map_err(|e| format!("read {name}-{partition}: {e}"))?;
        if fetched.error_code != 0 {
            return Err(format!(
                "read {name}-{partition} at offset {next}: {}",
                crate::io::kafka::coordination::error::code_name(fetched.error_code)
            ));
        }
        let stable = if fetched.last_stable_offset >= 0 {
            fetched.last_stable_offset
        } else {
            fetched.high_watermark
        };
        let before = next;
        if let Some(bytes) = fetched.records.filter(|b| !b.is_empty()) {
            next = next.max(decode_logged(&bytes, next, &wanted, &mut logged)?);
        }
        if next >= stable || next == before {
            break;
        }
    }
    Ok(decided::committed_records(logged))
}

/// Decodes the complete record batches of a fetched range (a partial batch at
/// the end is fetched again), keeping markers and the data records `wanted`
/// takes at or after `from`; returns the offset after the last complete batch.
fn decode_logged(
    bytes: &bytes::Bytes,
    from: i64,
    wanted: &impl Fn(&str) -> bool,
    logged: &mut Vec<Logged>,
) -> Result<i64, String> {
    let mut next = from;
    let mut pos = 0usize;
    while bytes.len() - pos >= 12 {
        let length = i32::from_be_bytes(bytes[pos + 8..pos + 12].try_into().expect("4 bytes"));
        let Some(end) = usize::try_from(length)
            .ok()
            .and_then(|l| (pos + 12).checked_add(l))
        else {
            return Err(format!("a record batch has length {length}"));
        };
        if end > bytes.len() {
            break;
        }
        let mut batch = bytes.slice(pos..end);
        pos = end;
        let set = RecordBatchDecoder::decode(&mut batch)
            .map_err(|e| format!("decode a record batch: {e}"))?;
        for r in set.records {
            next = next.max(r.offset + 1);
            if r.offset < from {
                continue;
            }
            if r.control {
                // Control key: version (i16), then type (i16): 0 ABORT, 1 COMMIT.
                let kind = r
                    .key
                    .as_deref()
                    .filter(|k| k.len() >= 4)
                    .map(|k| i16::from_be_bytes([k[2], k[3]]));
                logged.push(Logged::Marker {
                    offset: r.offset,
                    producer_id: r.producer_id,
                    commit: kind == Some(1),
                });
                continue;
            }
            let Some(key) = r
                .key
                .as_deref()
                .and_then(|k| std::str::from_utf8(k).ok())
                .filter(|k| wanted(k))
            else {
                continue;
            };
            logged.push(Logged::Data {
                producer_id: r.producer_id,
                transactional: r.transactional,
                record: ReadRecord {
                    offset: r.offset,
                    key: key.to_owned(),
                    value: r.value.map(|v| v.to_vec()),
                    headers: r
                        .headers
                        .iter()
                        .map(|(k, v)| Header {
                            key: k.to_string(),
                            value: v.as_ref().map(|v| v.to_vec()),
                        })
                        .collect(),
                },
            });
        }
    }
    Ok(next)
}

/// Produces `records` to the partition and waits for every acknowledgement.
pub fn produce_records(
    producer: &StateProducer,
    name: &str,
    partition: i32,
    records: &[StateRecord],
    timeout: Duration,
) -> Result<(), String> {
    send_records(producer, name, partition, records, timeout)?;
    flush_records(producer, name, &[partition], timeout)
}

/// Hands `records` to the producer for the partition, without waiting.
fn send_records(
    producer: &StateProducer,
    name: &str,
    partition: i32,
    records: &[StateRecord],
    timeout: Duration,
) -> Result<(), String> {
    for record in records {
        let mut headers = OwnedHeaders::new_with_capacity(record.headers.len());
        for h in &record.headers {
            headers = headers.insert(KafkaHeader {
                key: &h.key,
                value: h.value.as_deref(),
            });
        }
        let mut base: BaseRecord<'_, str, [u8]> = BaseRecord::to(name)
            .partition(partition)
            .key(record.key.as_str())
            .headers(headers);
        if let Some(value) = record.value.as_deref() {
            base = base.payload(value);
        }
        let deadline = Instant::now() + timeout;
        loop {
            match producer.send(base) {
                Ok(()) => break,
                Err((
                    KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull),
                    back,
                )) if Instant::now() < deadline => {
                    producer.poll(Duration::from_millis(50));
                    base = back;
                }
                Err((e, _)) => {
                    return Err(format!("produce {} to {name}-{partition}: {e}", record.key));
                }
            }
        }
    }
    Ok(())
}

/// Waits for every record sent to be acknowledged; a failed delivery since the
/// last flush is an error naming the partitions written.
fn flush_records(
    producer: &StateProducer,
    name: &str,
    partitions: &[i32],
    timeout: Duration,
) -> Result<(), String> {
    producer
        .flush(timeout)
        .map_err(|e| format!("flush the state records to {name}: {e}"))?;
    let failure = producer
        .context()
        .failure
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    let written: Vec<String> = partitions.iter().map(|p| format!("{name}-{p}")).collect();
    match failure {
        Some(e) => Err(format!(
            "write the state records to {}: {e}",
            written.join(", ")
        )),
        None => Ok(()),
    }
}

/// One key's latest snapshot in a state topic read whole, or why it cannot be
/// assembled (a manifest whose chunk is missing: the topic is damaged).
#[derive(Debug, Clone)]
pub struct TopicSnapshot {
    pub state_partition: i32,
    pub key: String,
    pub found: Result<Found, String>,
}

/// Every live key of every partition of `topic` (a key whose last record is a
/// tombstone is gone), in partition and key order.
pub fn read_state_topic(
    settings: &KafkaSettings,
    topic: &StateTopic,
    timeout: Duration,
) -> Result<Vec<TopicSnapshot>, String> {
    let mut out = Vec::new();
    for partition in 0..topic.partitions {
        let records = read_records(settings, &topic.name, partition, timeout, |_| true)?;
        for (key, found) in state_record::latest_by_key(&records) {
            out.push(TopicSnapshot {
                state_partition: partition,
                key,
                found,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store whose producer is never used: `records` only builds what a save sends.
    fn store(max_message_bytes: usize) -> KafkaStateStore {
        let mut settings = KafkaSettings::new();
        settings.set("bootstrap.servers", "127.0.0.1:1");
        let topic = StateTopic {
            name: "g-state".into(),
            partitions: 1,
            max_message_bytes,
            created: false,
        };
        let identity = StateIdentity {
            consumer_group: "g".into(),
            nodes: vec!["group_by per-user keys=[user] aggregates=[sum(amount) AS total]".into()],
        };
        KafkaStateStore::new(
            &settings,
            topic,
            identity,
            vec!["orders".into()],
            false,
            Duration::from_secs(1),
        )
        .unwrap()
    }

    /// One entry of `n` fixed-width groups, `changed` of them with a new value.
    fn state(n: usize, changed: &[usize], round: u8) -> BTreeMap<String, Vec<u8>> {
        let mut bytes = Vec::with_capacity(n * 24);
        for g in 0..n {
            bytes.extend_from_slice(format!("user-{g:08}").as_bytes());
            let value = if changed.contains(&g) { round } else { 0 };
            bytes.extend_from_slice(&[value; 11]);
        }
        BTreeMap::from([("per-user".to_owned(), bytes)])
    }

    fn kinds(records: &[StateRecord]) -> Vec<String> {
        records
            .iter()
            .map(|r| match &r.value {
                None => format!("tombstone {}", r.key),
                Some(_) => r.key.split('-').take(2).collect::<Vec<_>>().join("-"),
            })
            .collect()
    }

    /// Replays what the store wrote, as a reader of the topic would.
    fn read_back(log: &[StateRecord]) -> Vec<u8> {
        let read: Vec<ReadRecord> = log
            .iter()
            .enumerate()
            .map(|(i, r)| ReadRecord {
                offset: i as i64,
                key: r.key.clone(),
                value: r.value.clone(),
                headers: r.headers.clone(),
            })
            .collect();
        state_record::latest(&read, 0, -1)
            .unwrap()
            .unwrap()
            .container
    }

    #[test]
    fn a_round_touching_few_groups_writes_a_small_delta_and_the_reader_gets_the_whole_state() {
        let mut s = store(1 << 20);
        let mut log = s.records(0, -1, &state(10_000, &[], 0));
        let full: usize = log
            .iter()
            .filter_map(|r| r.value.as_ref())
            .map(Vec::len)
            .sum();
        assert_eq!(kinds(&log), ["partition-0"]);
        for round in 1..=5u8 {
            let touched: Vec<usize> = (0..100).map(|i| i * 97 + round as usize).collect();
            let records = s.records(0, -1, &state(10_000, &touched, round));
            assert_eq!(records.len(), 1);
            assert!(
                records[0].key.ends_with(&format!("-{round}")),
                "{}",
                records[0].key
            );
            let size = records[0].value.as_ref().unwrap().len();
            assert!(size * 20 < full, "round {round}: {size} of {full}");
            log.extend(records);
            assert_eq!(
                read_back(&log),
                container::encode(&state(10_000, &touched, round))
            );
        }
        // A round that changes most of the state: a full, then the deltas' tombstones.
        let all: Vec<usize> = (0..10_000).collect();
        let records = s.records(0, -1, &state(10_000, &all, 9));
        assert_eq!(kinds(&records)[0], "partition-0");
        let tombstones: Vec<&str> = records[1..]
            .iter()
            .filter(|r| r.value.is_none())
            .map(|r| r.key.as_str())
            .collect();
        assert_eq!(tombstones.len(), 5, "{tombstones:?}");
        assert!(tombstones.iter().all(|k| k.contains(".delta-")));
        log.extend(records);
        assert_eq!(read_back(&log), container::encode(&state(10_000, &all, 9)));
    }

    /// Why the first save after a handoff is a full, not the next delta of the
    /// chain the new owner restored (docs/topology.md "State in Kafka", Cost):
    /// continuing would make two writers share the chain's keys. The previous
    /// owner may still write one of them late (a member paused past its
    /// session, or, under exactly-once on Tansu, an aborted transaction the
    /// reader still sees); the latest record of a key wins, as compaction keeps
    /// it, so its delta replaces the new owner's and the new owner's later
    /// deltas no longer apply: the state read back is the old owner's. A full
    /// under a version of the new owner's own leaves the old chain behind.
    #[test]
    fn a_chain_continued_by_the_next_owner_is_cut_by_a_late_write_of_the_previous_one() {
        let key = state_record::snapshot_key(0, -1);
        let mut old = store(1 << 20);
        let mut log = old.records(0, -1, &state(5_000, &[], 0));
        log.extend(old.records(0, -1, &state(5_000, &[1], 1)));
        let restored = read_back(&log);
        let taken_over = old.bases.get(&key).map(|b| (b.version, b.seq)).unwrap();

        // Continuing: the new owner's base is the restored container, under the old chain.
        let mut next = store(1 << 20);
        next.bases.insert(
            key.clone(),
            Base {
                container: restored.clone(),
                version: taken_over.0,
                seq: taken_over.1,
                delta_bytes: 0,
            },
        );
        let mut continued = log.clone();
        continued.extend(next.records(0, -1, &state(5_000, &[1, 2], 2)));
        let late = old.records(0, -1, &state(5_000, &[1, 7], 2));
        assert_eq!(
            late[0].key,
            continued.last().unwrap().key,
            "one key, two writers"
        );
        continued.extend(late);
        continued.extend(next.records(0, -1, &state(5_000, &[1, 2, 3], 3)));
        assert_eq!(
            read_back(&continued),
            container::encode(&state(5_000, &[1, 7], 2)),
            "the old owner's late delta is what a reader takes"
        );

        // A full of its own: the old owner's late delta belongs to a chain no longer read.
        let mut next = store(1 << 20);
        next.version = old.version + 1_000;
        let mut fresh = log.clone();
        fresh.extend(next.records(0, -1, &state(5_000, &[1, 2], 2)));
        fresh.extend(old.records(0, -1, &state(5_000, &[1, 7], 3)));
        fresh.extend(next.records(0, -1, &state(5_000, &[1, 2, 3], 3)));
        assert_eq!(
            read_back(&fresh),
            container::encode(&state(5_000, &[1, 2, 3], 3))
        );
    }

    /// `rows` rows of a join side: key `k-<i % 50>`, id, `__timestamp` near `ts`.
    fn join_batch(rows: usize, ts: i64, id: i64) -> arrow_array::RecordBatch {
        use std::sync::Arc;
        let keys: arrow_array::ArrayRef = Arc::new(arrow_array::StringArray::from_iter_values(
            (0..rows).map(|i| format!("k-{}", (id as usize + i) % 50)),
        ));
        let ids: arrow_array::ArrayRef = Arc::new(arrow_array::Int64Array::from_iter_values(
            id..id + rows as i64,
        ));
        let times: arrow_array::ArrayRef = Arc::new(arrow_array::Int64Array::from_iter_values(
            (0..rows as i64).map(|i| ts + i),
        ));
        let schema = arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("k", arrow_schema::DataType::Utf8, false),
            arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
            arrow_schema::Field::new("__timestamp", arrow_schema::DataType::Int64, false),
        ]);
        arrow_array::RecordBatch::try_new(Arc::new(schema), vec![keys, ids, times]).unwrap()
    }

    /// Issue 19 said a join's saves were all fulls (no dirty tracking): the
    /// deltas are taken over the whole container's bytes, so a join round that
    /// appends a batch (and evicts its oldest one) is a small delta too, also
    /// after the state was restored into a fresh instance by the next owner.
    #[test]
    fn a_join_round_is_a_small_delta_as_a_group_by_round_is() {
        use crate::engine::columnar::ops::join::JoinSpec;
        let spec = JoinSpec::new("k", "k", 60_000_000_000, None, None).unwrap();
        let mut join = spec.instantiate();
        let mut s = store(1 << 20);
        let entry = |bytes: Vec<u8>| BTreeMap::from([("pairs".to_owned(), bytes)]);
        // Forty rounds of history, a minute of window: the state keeps every batch.
        for round in 0..40i64 {
            let at = round * 1_000;
            join.process_sides(
                &[join_batch(50, at, round * 100)],
                &[join_batch(50, at, round * 100 + 50)],
            )
            .unwrap();
        }
        let full = s.records(0, -1, &entry(join.snapshot().unwrap()));
        assert_eq!(kinds(&full), ["partition-0"]);
        let full_size = full[0].value.as_ref().unwrap().len();
        let mut log = full;
        let mut rounds = 40i64;
        let mut step = |join: &mut crate::engine::columnar::ops::join::JoinProcessor,
                        s: &mut KafkaStateStore,
                        log: &mut Vec<StateRecord>,
                        at: i64| {
            let id = rounds * 100;
            rounds += 1;
            join.process_sides(&[join_batch(50, at, id)], &[join_batch(50, at, id + 50)])
                .unwrap();
            let state = entry(join.snapshot().unwrap());
            let records = s.records(0, -1, &state);
            assert_eq!(records.len(), 1, "{:?}", kinds(&records));
            assert!(records[0].key.contains(".delta-"), "{:?}", kinds(&records));
            let size = records[0].value.as_ref().unwrap().len();
            assert!(
                size * 10 < full_size,
                "a delta of {size} bytes against a full of {full_size}"
            );
            log.extend(records);
            assert_eq!(read_back(log), container::encode(&state));
        };
        // Rounds inside the window append a batch per side.
        for round in 0..5 {
            step(&mut join, &mut s, &mut log, 40_000 + round * 1_000);
        }
        // Rounds past the window also evict the oldest batches at the front.
        for round in 0..5 {
            step(&mut join, &mut s, &mut log, 62_000 + round * 1_000);
        }
        // The next owner restores the bytes into a fresh instance: snapshotting
        // it again gives the same bytes, so nothing forces a rewrite.
        let restored_bytes = join.snapshot().unwrap();
        let mut next = spec.instantiate();
        next.restore(&restored_bytes).unwrap();
        assert_eq!(next.snapshot().unwrap(), restored_bytes);
    }

    #[test]
    fn a_failed_round_a_release_or_many_deltas_make_the_next_save_a_full() {
        let mut s = store(1 << 20);
        let is_full = |r: &[StateRecord]| r[0].key == "partition-0";
        assert!(is_full(&s.records(0, -1, &state(5_000, &[], 0))));
        assert!(!is_full(&s.records(0, -1, &state(5_000, &[3], 1))));
        s.forget_unconfirmed();
        assert!(is_full(&s.records(0, -1, &state(5_000, &[3], 2))));
        s.release(0);
        assert!(is_full(&s.records(0, -1, &state(5_000, &[3], 3))));
        for round in 0..MAX_DELTAS {
            let r = s.records(0, -1, &state(5_000, &[round as usize], round as u8));
            assert!(!is_full(&r), "delta {round}");
        }
        assert!(is_full(&s.records(0, -1, &state(5_000, &[1], 200))));
        // Barrier epochs are always whole: each is its own key, written once.
        assert!(s.records(0, 4, &state(5_000, &[], 0))[0].key == "partition-0-epoch-4");
        assert!(s.records(0, 4, &state(5_000, &[1], 1))[0].key == "partition-0-epoch-4");
        // A delta never exceeds one record: a topic of small records takes fulls in chunks.
        let mut small = store(17 * 1024);
        small.records(0, -1, &state(10_000, &[], 0));
        let touched: Vec<usize> = (0..1_000).map(|i| i * 10).collect();
        let r = small.records(0, -1, &state(10_000, &touched, 1));
        assert!(
            r.iter().any(|r| r.key.contains(".chunk-")),
            "{:?}",
            kinds(&r)
        );
    }
}
