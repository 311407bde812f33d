//! A small Kafka client for the coordination requests, over [`BrokerConnection`]s:
//! broker discovery through Metadata, partition leaders and transaction
//! coordinators (cached, dropped on retriable errors), and one method per
//! request. Every operation is bounded by the request timeout and retried
//! with a short backoff on retriable answers (coordinator not available or
//! moved, concurrent transactions, leader changes) and on lost connections.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::PartitionData;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, ApiKey, BrokerId, CreateTopicsRequest, DescribeTransactionsRequest,
    EndTxnRequest, FetchRequest, FindCoordinatorRequest, InitProducerIdRequest, MetadataRequest,
    MetadataResponse, ProduceRequest, ProducerId, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;

use crate::engine::topic_partition::TopicPartition;

use super::error::{
    TOPIC_ALREADY_EXISTS, TRANSACTIONAL_ID_NOT_FOUND, UNKNOWN_TOPIC_OR_PARTITION, WireError,
};
use super::security::WireSecurity;
use super::wire::{BrokerConnection, Call};

/// Transaction coordinator key type in FindCoordinator.
const KEY_TYPE_TRANSACTION: i8 = 1;
/// read_committed.
const READ_COMMITTED: i8 = 1;
const FETCH_MAX_WAIT_MS: i32 = 100;
const FETCH_MAX_BYTES: i32 = 8 << 20;

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

fn txn_id(s: &str) -> TransactionalId {
    TransactionalId(sb(s))
}

fn topic_name(s: &str) -> TopicName {
    TopicName(sb(s))
}

/// One fetched partition, as the broker answered.
pub struct Fetched {
    pub error_code: i16,
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    pub log_start_offset: i64,
    /// (producer id, first offset) of aborted transactions in the range.
    pub aborted: Vec<(i64, i64)>,
    pub records: Option<Bytes>,
}

/// The broker's view of a transactional id (DescribeTransactions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescribedTransaction {
    NotFound,
    Found {
        producer_id: i64,
        producer_epoch: i16,
        state: String,
    },
}

struct Inner {
    bootstrap: Vec<String>,
    client_id: String,
    security: WireSecurity,
    brokers: HashMap<i32, String>,
    conns: HashMap<String, BrokerConnection>,
    leaders: HashMap<TopicPartition, String>,
    coordinators: HashMap<String, String>,
}

/// A shared, thread-safe client; requests are serialised.
pub struct WireClient {
    request_timeout: Duration,
    inner: Mutex<Inner>,
}

impl WireClient {
    /// A client for the comma-separated `bootstrap` list. Connects lazily.
    pub fn new(
        bootstrap: &str,
        client_id: &str,
        request_timeout: Duration,
        security: WireSecurity,
    ) -> Result<Self, WireError> {
        let bootstrap: Vec<String> = bootstrap
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if bootstrap.is_empty() {
            return Err(WireError::protocol(
                "a Kafka transport needs at least one broker",
            ));
        }
        Ok(WireClient {
            request_timeout,
            inner: Mutex::new(Inner {
                bootstrap,
                client_id: client_id.to_string(),
                security,
                brokers: HashMap::new(),
                conns: HashMap::new(),
                leaders: HashMap::new(),
                coordinators: HashMap::new(),
            }),
        })
    }

    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Runs `attempt` until it succeeds, fails for good, or the request timeout passes.
    fn with<T>(
        &self,
        mut attempt: impl FnMut(&mut Inner, Duration) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        let deadline = Instant::now() + self.request_timeout;
        let mut backoff = Duration::from_millis(25);
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let result = attempt(&mut inner, left.max(Duration::from_millis(1)));
            match result {
                Err(e) if e.is_retriable() => {
                    inner.leaders.clear();
                    inner.coordinators.clear();
                    if Instant::now() + backoff >= deadline {
                        return Err(e);
                    }
                    drop(inner);
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_millis(400));
                    inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
                }
                other => return other,
            }
        }
    }

    /// Partition count of `topic`, or `None` when it does not exist (never auto-created).
    pub fn partition_count(&self, topic: &str) -> Result<Option<i32>, WireError> {
        self.with(|inner, left| {
            let md = inner.metadata(Some(topic), left)?;
            let Some(t) = md
                .topics
                .iter()
                .find(|t| t.name.as_deref().map(|n| &**n) == Some(topic))
            else {
                return Ok(None);
            };
            match t.error_code {
                0 => {}
                UNKNOWN_TOPIC_OR_PARTITION => return Ok(None),
                code => {
                    return Err(WireError::broker(
                        format!("Metadata for {topic}"),
                        code,
                        None,
                    ));
                }
            }
            if t.partitions.is_empty() {
                return Ok(None);
            }
            Ok(Some(t.partitions.len() as i32))
        })
    }

    /// Whether the cluster answers DescribeTransactions.
    pub fn supports_describe_transactions(&self) -> Result<bool, WireError> {
        self.with(|inner, left| {
            let address = inner.any_address(left)?;
            Ok(inner
                .conn(&address, left)?
                .supports(ApiKey::DescribeTransactions))
        })
    }

    /// InitProducerId for `transactional_id`: the minted (producer id, epoch).
    pub fn init_producer_id(
        &self,
        transactional_id: &str,
        transaction_timeout_ms: i32,
    ) -> Result<(i64, i16), WireError> {
        let request = InitProducerIdRequest::default()
            .with_transactional_id(Some(txn_id(transactional_id)))
            .with_transaction_timeout_ms(transaction_timeout_ms)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        self.with(|inner, left| {
            let coordinator = inner.coordinator(transactional_id, left)?;
            let (response, _) = inner.send(&coordinator, &request, 4, left)?;
            if response.error_code != 0 {
                return Err(WireError::broker(
                    "InitProducerId",
                    response.error_code,
                    None,
                ));
            }
            Ok((response.producer_id.0, response.producer_epoch))
        })
    }

    /// Adds one partition to the open transaction of the producer.
    pub fn add_partition_to_txn(
        &self,
        transactional_id: &str,
        producer: (i64, i16),
        topic: &str,
        partition: i32,
    ) -> Result<(), WireError> {
        let request = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(txn_id(transactional_id))
            .with_v3_and_below_producer_id(ProducerId(producer.0))
            .with_v3_and_below_producer_epoch(producer.1)
            .with_v3_and_below_topics(vec![
                AddPartitionsToTxnTopic::default()
                    .with_name(topic_name(topic))
                    .with_partitions(vec![partition]),
            ]);
        self.with(|inner, left| {
            let coordinator = inner.coordinator(transactional_id, left)?;
            let (response, _) = inner.send(&coordinator, &request, 3, left)?;
            if response.error_code != 0 {
                return Err(WireError::broker(
                    "AddPartitionsToTxn",
                    response.error_code,
                    None,
                ));
            }
            let code = response
                .results_by_topic_v3_and_below
                .iter()
                .flat_map(|t| t.results_by_partition.iter())
                .map(|p| p.partition_error_code)
                .find(|c| *c != 0);
            match code {
                Some(code) => Err(WireError::broker("AddPartitionsToTxn", code, None)),
                None => Ok(()),
            }
        })
    }

    /// Produces one encoded record batch to the partition leader with acks=all;
    /// returns the base offset.
    pub fn produce(
        &self,
        topic: &str,
        partition: i32,
        transactional_id: Option<&str>,
        batch: Bytes,
    ) -> Result<i64, WireError> {
        let timeout_ms = i32::try_from(self.request_timeout.as_millis()).unwrap_or(i32::MAX);
        let request = ProduceRequest::default()
            .with_transactional_id(transactional_id.map(txn_id))
            .with_acks(-1)
            .with_timeout_ms(timeout_ms)
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(topic_name(topic))
                    .with_partition_data(vec![
                        PartitionProduceData::default()
                            .with_index(partition)
                            .with_records(Some(batch)),
                    ]),
            ]);
        self.with(|inner, left| {
            let leader = inner.leader(topic, partition, left)?;
            let (response, _) = inner.send(&leader, &request, 9, left)?;
            let p = response
                .responses
                .iter()
                .flat_map(|t| t.partition_responses.iter())
                .find(|p| p.index == partition)
                .ok_or_else(|| {
                    WireError::protocol(format!(
                        "Produce to {topic}-{partition}: no partition in the answer"
                    ))
                })?;
            if p.error_code != 0 {
                let message = p.error_message.as_ref().map(|m| m.to_string());
                return Err(WireError::broker(
                    format!("Produce to {topic}-{partition}"),
                    p.error_code,
                    message,
                ));
            }
            Ok(p.base_offset)
        })
    }

    /// Commits (or aborts) the producer's open transaction.
    pub fn end_txn(
        &self,
        transactional_id: &str,
        producer: (i64, i16),
        commit: bool,
    ) -> Result<(), WireError> {
        let request = EndTxnRequest::default()
            .with_transactional_id(txn_id(transactional_id))
            .with_producer_id(ProducerId(producer.0))
            .with_producer_epoch(producer.1)
            .with_committed(commit);
        self.with(|inner, left| {
            let coordinator = inner.coordinator(transactional_id, left)?;
            let (response, _) = inner.send(&coordinator, &request, 3, left)?;
            match response.error_code {
                0 => Ok(()),
                code => Err(WireError::broker("EndTxn", code, None)),
            }
        })
    }

    /// One read_committed fetch of `topic-partition` from `offset`.
    pub fn fetch(&self, topic: &str, partition: i32, offset: i64) -> Result<Fetched, WireError> {
        let request = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(FETCH_MAX_WAIT_MS)
            .with_min_bytes(0)
            .with_max_bytes(FETCH_MAX_BYTES)
            .with_isolation_level(READ_COMMITTED)
            .with_session_id(0)
            .with_session_epoch(-1)
            .with_topics(vec![
                FetchTopic::default()
                    .with_topic(topic_name(topic))
                    .with_partitions(vec![
                        FetchPartition::default()
                            .with_partition(partition)
                            .with_current_leader_epoch(-1)
                            .with_fetch_offset(offset)
                            .with_last_fetched_epoch(-1)
                            .with_log_start_offset(-1)
                            .with_partition_max_bytes(FETCH_MAX_BYTES),
                    ]),
            ]);
        self.with(|inner, left| {
            let leader = inner.leader(topic, partition, left)?;
            let (response, _) = inner.send(&leader, &request, 12, left)?;
            if response.error_code != 0 {
                return Err(WireError::broker(
                    format!("Fetch from {topic}-{partition}"),
                    response.error_code,
                    None,
                ));
            }
            let p: &PartitionData = response
                .responses
                .iter()
                .flat_map(|t| t.partitions.iter())
                .find(|p| p.partition_index == partition)
                .ok_or_else(|| {
                    WireError::protocol(format!(
                        "Fetch from {topic}-{partition}: no partition in the answer"
                    ))
                })?;
            if p.error_code != 0 && WireError::broker("", p.error_code, None).is_retriable() {
                return Err(WireError::broker(
                    format!("Fetch from {topic}-{partition}"),
                    p.error_code,
                    None,
                ));
            }
            Ok(Fetched {
                error_code: p.error_code,
                high_watermark: p.high_watermark,
                last_stable_offset: p.last_stable_offset,
                log_start_offset: p.log_start_offset,
                aborted: p
                    .aborted_transactions
                    .iter()
                    .flatten()
                    .map(|a| (a.producer_id.0, a.first_offset))
                    .collect(),
                records: p.records.clone(),
            })
        })
    }

    /// DescribeTransactions for one id, at its transaction coordinator.
    pub fn describe_transaction(
        &self,
        transactional_id: &str,
    ) -> Result<DescribedTransaction, WireError> {
        let request = DescribeTransactionsRequest::default()
            .with_transactional_ids(vec![txn_id(transactional_id)]);
        self.with(|inner, left| {
            let coordinator = inner.coordinator(transactional_id, left)?;
            let (response, _) = inner.send(&coordinator, &request, 0, left)?;
            let states = &response.transaction_states;
            if states.len() != 1 {
                return Err(WireError::protocol(format!(
                    "describe epoch for {transactional_id} returned {} states",
                    states.len()
                )));
            }
            let state = &states[0];
            match state.error_code {
                0 => Ok(DescribedTransaction::Found {
                    producer_id: state.producer_id.0,
                    producer_epoch: state.producer_epoch,
                    state: state.transaction_state.to_string(),
                }),
                TRANSACTIONAL_ID_NOT_FOUND => Ok(DescribedTransaction::NotFound),
                code => Err(WireError::broker("DescribeTransactions", code, None)),
            }
        })
    }

    /// Creates a topic; an existing one is reported as `Ok(false)`.
    pub fn create_topic(
        &self,
        topic: &str,
        partitions: i32,
        replication: i16,
        configs: &[(&str, &str)],
    ) -> Result<bool, WireError> {
        let timeout_ms = i32::try_from(self.request_timeout.as_millis()).unwrap_or(i32::MAX);
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(timeout_ms)
            .with_topics(vec![
                CreatableTopic::default()
                    .with_name(topic_name(topic))
                    .with_num_partitions(partitions)
                    .with_replication_factor(replication)
                    .with_configs(
                        configs
                            .iter()
                            .map(|(k, v)| {
                                CreatableTopicConfig::default()
                                    .with_name(sb(k))
                                    .with_value(Some(sb(v)))
                            })
                            .collect(),
                    ),
            ]);
        self.with(|inner, left| {
            let address = inner.any_address(left)?;
            let (response, _) = inner.send(&address, &request, 5, left)?;
            let t = response
                .topics
                .first()
                .ok_or_else(|| WireError::protocol("CreateTopics: no topic in the answer"))?;
            match t.error_code {
                0 => Ok(true),
                TOPIC_ALREADY_EXISTS => Ok(false),
                code => Err(WireError::broker(
                    format!("CreateTopics for {topic}"),
                    code,
                    t.error_message.as_ref().map(|m| m.to_string()),
                )),
            }
        })
    }

    /// Number of brokers in the cluster (for the replication factor of a new topic).
    pub fn broker_count(&self) -> Result<usize, WireError> {
        self.with(|inner, left| Ok(inner.metadata(None, left)?.brokers.len()))
    }
}

impl Inner {
    /// A connection to `address`, made on first use.
    fn conn(
        &mut self,
        address: &str,
        timeout: Duration,
    ) -> Result<&mut BrokerConnection, WireError> {
        if !self.conns.contains_key(address) {
            let conn =
                BrokerConnection::connect(address, &self.client_id, timeout, &self.security)?;
            self.conns.insert(address.to_string(), conn);
        }
        Ok(self.conns.get_mut(address).expect("inserted above"))
    }

    /// Sends to `address`; a lost connection is dropped so the next try reconnects.
    fn send<R: Call>(
        &mut self,
        address: &str,
        request: &R,
        cap: i16,
        timeout: Duration,
    ) -> Result<(R::Response, i16), WireError> {
        let result = self
            .conn(address, timeout)
            .and_then(|c| c.send(request, cap, timeout));
        if matches!(result, Err(WireError::Io(_)) | Err(WireError::Protocol(_))) {
            self.conns.remove(address);
        }
        result
    }

    /// A reachable broker: an open connection, else the first bootstrap server that answers.
    fn any_address(&mut self, timeout: Duration) -> Result<String, WireError> {
        if let Some(address) = self.conns.keys().next() {
            return Ok(address.clone());
        }
        let mut candidates = self.bootstrap.clone();
        candidates.extend(self.brokers.values().cloned());
        let mut last = None;
        for address in candidates {
            match self.conn(&address, timeout) {
                Ok(_) => return Ok(address),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| WireError::io("no broker to connect to")))
    }

    fn metadata(
        &mut self,
        topic: Option<&str>,
        timeout: Duration,
    ) -> Result<MetadataResponse, WireError> {
        let request = MetadataRequest::default()
            .with_topics(Some(
                topic
                    .map(|t| vec![MetadataRequestTopic::default().with_name(Some(topic_name(t)))])
                    .unwrap_or_default(),
            ))
            .with_allow_auto_topic_creation(false);
        let address = self.any_address(timeout)?;
        let (response, _) = self.send(&address, &request, 9, timeout)?;
        for b in &response.brokers {
            self.brokers
                .insert(b.node_id.0, format!("{}:{}", b.host, b.port));
        }
        Ok(response)
    }

    fn leader(
        &mut self,
        topic: &str,
        partition: i32,
        timeout: Duration,
    ) -> Result<String, WireError> {
        let key = TopicPartition::new(topic, partition);
        if let Some(address) = self.leaders.get(&key) {
            return Ok(address.clone());
        }
        let md = self.metadata(Some(topic), timeout)?;
        let what = format!("find the leader of {topic}-{partition}");
        let t = md
            .topics
            .iter()
            .find(|t| t.name.as_deref().map(|n| &**n) == Some(topic))
            .ok_or_else(|| WireError::broker(&what, UNKNOWN_TOPIC_OR_PARTITION, None))?;
        if t.error_code != 0 {
            return Err(WireError::broker(&what, t.error_code, None));
        }
        let p = t
            .partitions
            .iter()
            .find(|p| p.partition_index == partition)
            .ok_or_else(|| WireError::broker(&what, UNKNOWN_TOPIC_OR_PARTITION, None))?;
        if p.error_code != 0 {
            return Err(WireError::broker(&what, p.error_code, None));
        }
        let address = self
            .brokers
            .get(&p.leader_id.0)
            .cloned()
            .ok_or_else(|| WireError::broker(&what, 5, None))?;
        self.leaders.insert(key, address.clone());
        Ok(address)
    }

    fn coordinator(
        &mut self,
        transactional_id: &str,
        timeout: Duration,
    ) -> Result<String, WireError> {
        if let Some(address) = self.coordinators.get(transactional_id) {
            return Ok(address.clone());
        }
        let address = self.any_address(timeout)?;
        let version = self
            .conn(&address, timeout)?
            .version_for::<FindCoordinatorRequest>(4)?;
        let mut request = FindCoordinatorRequest::default().with_key_type(KEY_TYPE_TRANSACTION);
        if version >= 4 {
            request = request.with_coordinator_keys(vec![sb(transactional_id)]);
        } else {
            request = request.with_key(sb(transactional_id));
        }
        let (response, version) = self.send(&address, &request, 4, timeout)?;
        let (code, host, port, message) = if version >= 4 {
            let c = response.coordinators.first().ok_or_else(|| {
                WireError::protocol("FindCoordinator: no coordinator in the answer")
            })?;
            (
                c.error_code,
                c.host.to_string(),
                c.port,
                c.error_message.as_ref().map(|m| m.to_string()),
            )
        } else {
            (
                response.error_code,
                response.host.to_string(),
                response.port,
                response.error_message.as_ref().map(|m| m.to_string()),
            )
        };
        if code != 0 {
            return Err(WireError::broker(
                format!("FindCoordinator for {transactional_id}"),
                code,
                message,
            ));
        }
        let coordinator = format!("{host}:{port}");
        self.coordinators
            .insert(transactional_id.to_string(), coordinator.clone());
        Ok(coordinator)
    }
}
