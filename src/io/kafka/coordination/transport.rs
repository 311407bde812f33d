//! [`KafkaTransport`]: the engine's four transport traits over the Kafka wire
//! client. Minted producers are kept (token → producer) until the transport
//! is dropped; a lease write is AddPartitionsToTxn, one transactional batch
//! to the pinned partition, EndTxn(commit), and EndTxn(abort) after a produce
//! error. Error codes 47 and 90 anywhere in that sequence are "fenced".

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::engine::coordination::{
    Clock, Coordinator, FencingToken, LeaseWriter, Registrar, StateReader, StateRecord,
    SystemClock, TopicPartition, TransportError,
};

use super::client::{DescribedTransaction, WireClient};
use super::error::{
    DUPLICATE_SEQUENCE_NUMBER, OFFSET_OUT_OF_RANGE, OUT_OF_ORDER_SEQUENCE_NUMBER, WireError,
};
use super::records::{Writer, decode_range, encode_one};
use super::security::WireSecurity;

/// How to reach the cluster and bound each call.
#[derive(Debug, Clone)]
pub struct KafkaTransportOptions {
    /// Comma-separated `host:port` list.
    pub bootstrap: String,
    pub client_id: String,
    /// Bound of one operation, retries included.
    pub request_timeout: Duration,
    /// `transaction.timeout.ms` of minted producers: the lease duration.
    pub transaction_timeout: Duration,
    /// TLS and SASL of every connection.
    pub security: WireSecurity,
}

/// A minted producer: its role and the next sequence per partition.
struct RoleProducer {
    role: String,
    sequences: HashMap<TopicPartition, i32>,
    /// Partitions where a produce got no answer: the sequence may be one behind.
    uncertain: HashSet<TopicPartition>,
}

/// The Kafka transport of the election.
pub struct KafkaTransport {
    client: WireClient,
    transaction_timeout_ms: i32,
    minted: Mutex<HashMap<FencingToken, RoleProducer>>,
}

impl KafkaTransport {
    pub fn new(options: &KafkaTransportOptions) -> Result<Self, TransportError> {
        let client = WireClient::new(
            &options.bootstrap,
            &options.client_id,
            options.request_timeout,
            options.security.clone(),
        )
        .map_err(|e| TransportError::failed(format!("create Kafka client: {e}")))?;
        Ok(KafkaTransport {
            client,
            transaction_timeout_ms: i32::try_from(options.transaction_timeout.as_millis())
                .unwrap_or(i32::MAX)
                .max(1),
            minted: Mutex::new(HashMap::new()),
        })
    }

    pub fn client(&self) -> &WireClient {
        &self.client
    }

    /// Partition count of `topic`, `None` when it does not exist.
    pub fn partition_count(&self, topic: &str) -> Result<Option<i32>, TransportError> {
        self.client.partition_count(topic).map_err(|e| {
            e.into_transport()
                .context(format!("read the metadata of {topic}"))
        })
    }

    /// Creates the compacted coordination topic; `Ok(false)` when it already existed.
    pub fn create_state_topic(&self, topic: &str, partitions: i32) -> Result<bool, TransportError> {
        let fail = |e: WireError| e.into_transport().context(format!("create topic {topic}"));
        let brokers = self.client.broker_count().map_err(fail)?;
        // Replication 3 with min.insync.replicas 2 on a real cluster, 1 on a dev broker.
        let replication: i16 = if brokers >= 3 { 3 } else { 1 };
        let mut configs = vec![("cleanup.policy", "compact")];
        if replication >= 3 {
            configs.push(("min.insync.replicas", "2"));
        }
        self.client
            .create_topic(topic, partitions, replication, &configs)
            .map_err(fail)
    }

    /// Whether DescribeTransactions can be asked (Tansu and the librdkafka mock cannot).
    pub fn supports_describe(&self) -> Result<bool, TransportError> {
        self.client
            .supports_describe_transactions()
            .map_err(|e| e.into_transport().context("read the broker's API versions"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<FencingToken, RoleProducer>> {
        self.minted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One transactional produce; retries once when a lost answer left the sequence behind.
    fn produce_in_txn(
        &self,
        token: FencingToken,
        role: &str,
        partition: &TopicPartition,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), WireError> {
        for attempt in 0..2 {
            let (sequence, uncertain) = {
                let minted = self.lock();
                let producer = minted.get(&token).expect("checked by the caller");
                (
                    producer.sequences.get(partition).copied().unwrap_or(0),
                    producer.uncertain.contains(partition),
                )
            };
            let batch = encode_one(
                Writer::Transactional {
                    producer_id: token.producer_id(),
                    producer_epoch: token.producer_epoch(),
                    sequence,
                },
                key,
                value,
                SystemClock.now_ms(),
            )
            .map_err(WireError::protocol)?;
            let result =
                self.client
                    .produce(&partition.topic, partition.partition, Some(role), batch);
            let mut minted = self.lock();
            let producer = minted.get_mut(&token).expect("checked by the caller");
            match result {
                Ok(_) => {
                    producer
                        .sequences
                        .insert(partition.clone(), sequence.wrapping_add(1));
                    producer.uncertain.remove(partition);
                    return Ok(());
                }
                Err(e)
                    if attempt == 0
                        && uncertain
                        && matches!(
                            e.code(),
                            Some(OUT_OF_ORDER_SEQUENCE_NUMBER) | Some(DUPLICATE_SEQUENCE_NUMBER)
                        ) =>
                {
                    producer
                        .sequences
                        .insert(partition.clone(), sequence.wrapping_add(1));
                    producer.uncertain.remove(partition);
                }
                Err(e) => {
                    if matches!(e, WireError::Io(_)) {
                        producer.uncertain.insert(partition.clone());
                    }
                    return Err(e);
                }
            }
        }
        Err(WireError::protocol(
            "the producer sequence could not be resynchronised",
        ))
    }
}

impl Coordinator for KafkaTransport {
    fn acquire_epoch(&self, role: &str) -> Result<FencingToken, TransportError> {
        let (id, epoch) = self
            .client
            .init_producer_id(role, self.transaction_timeout_ms)
            .map_err(|e| {
                e.into_transport()
                    .context(format!("acquire epoch for {role}"))
            })?;
        let token = FencingToken::new(id, epoch)
            .map_err(|e| TransportError::failed(format!("acquire epoch for {role}: {e}")))?;
        self.lock().insert(
            token,
            RoleProducer {
                role: role.to_string(),
                sequences: HashMap::new(),
                uncertain: HashSet::new(),
            },
        );
        Ok(token)
    }

    fn describe_epoch(&self, role: &str) -> Result<Option<FencingToken>, TransportError> {
        let described = self.client.describe_transaction(role).map_err(|e| {
            e.into_transport()
                .context(format!("describe epoch for {role}"))
        })?;
        match described {
            DescribedTransaction::NotFound => Ok(None),
            DescribedTransaction::Found {
                producer_id,
                producer_epoch,
                ..
            } => Ok(FencingToken::new(producer_id, producer_epoch).ok()),
        }
    }
}

impl StateReader for KafkaTransport {
    fn read_partition(
        &self,
        partition: &TopicPartition,
    ) -> Result<Vec<StateRecord>, TransportError> {
        let fail = |e: WireError| e.into_transport().context(format!("read {partition}"));
        let deadline = Instant::now() + self.client.request_timeout();
        let mut offset = 0i64;
        let mut records = Vec::new();
        loop {
            let fetched = self
                .client
                .fetch(&partition.topic, partition.partition, offset)
                .map_err(fail)?;
            match fetched.error_code {
                0 => {}
                OFFSET_OUT_OF_RANGE if fetched.log_start_offset > offset => {
                    offset = fetched.log_start_offset;
                    continue;
                }
                code => {
                    return Err(fail(WireError::broker(
                        format!("Fetch from {partition}"),
                        code,
                        None,
                    )));
                }
            }
            let stable = if fetched.last_stable_offset >= 0 {
                fetched.last_stable_offset
            } else {
                fetched.high_watermark
            };
            let before = offset;
            if let Some(bytes) = &fetched.records {
                let decoded = decode_range(bytes, offset, &fetched.aborted)
                    .map_err(|e| TransportError::failed(format!("read {partition}: {e}")))?;
                records.extend(decoded.records);
                offset = decoded.next_offset;
            }
            if offset >= stable {
                return Ok(records);
            }
            if offset == before && Instant::now() >= deadline {
                return Err(TransportError::unreachable(format!(
                    "read {partition}: no progress at offset {offset} below the last stable offset {stable}"
                )));
            }
        }
    }
}

impl Registrar for KafkaTransport {
    fn append(
        &self,
        partition: &TopicPartition,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), TransportError> {
        let fail = |e: WireError| e.into_transport().context(format!("produce {partition}"));
        let batch = encode_one(Writer::Plain, key, value, SystemClock.now_ms())
            .map_err(|e| TransportError::failed(format!("produce {partition}: {e}")))?;
        self.client
            .produce(&partition.topic, partition.partition, None, batch)
            .map(|_| ())
            .map_err(fail)
    }
}

impl LeaseWriter for KafkaTransport {
    fn write_lease(
        &self,
        partition: &TopicPartition,
        token: FencingToken,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), TransportError> {
        let fail = |e: WireError| e.into_transport().context(format!("produce {partition}"));
        let role = match self.lock().get(&token) {
            Some(p) => p.role.clone(),
            None => {
                return Err(TransportError::failed(format!(
                    "Kafka transport did not mint token {token}"
                )));
            }
        };
        let producer = (token.producer_id(), token.producer_epoch());
        self.client
            .add_partition_to_txn(&role, producer, &partition.topic, partition.partition)
            .map_err(fail)?;
        if let Err(e) = self.produce_in_txn(token, &role, partition, key, value) {
            // Best effort: a fenced or unreachable producer cannot abort either,
            // and the coordinator aborts on the transaction timeout anyway.
            let _ = self.client.end_txn(&role, producer, false);
            return Err(fail(e));
        }
        self.client.end_txn(&role, producer, true).map_err(fail)
    }
}
