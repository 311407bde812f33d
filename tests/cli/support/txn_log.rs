//! The transactional outcome of every record of one partition, read from the raw record
//! batches. Tansu's `read_committed` fetch does not hide aborted records (its aborted
//! transactions list is always empty), so a consumer cannot tell committed output from
//! aborted output there; the control batches in the log can. A transactional record belongs
//! to the transaction of its producer id that the next control marker of that producer id
//! (at a higher offset) ends: COMMIT or ABORT; none yet means the transaction is open.
//! Records written without a transaction count as committed.

use std::time::Duration;

use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{BrokerId, FetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::RecordBatchDecoder;
use krabka_streams::io::kafka::coordination::security::WireSecurity;
use krabka_streams::io::kafka::coordination::wire::BrokerConnection;

const TIMEOUT: Duration = Duration::from_secs(20);
/// Fetch v12: the last version that names topics (v13 uses topic ids).
const FETCH_VERSION: i16 = 12;
/// read_uncommitted: open transactions are part of the answer (Tansu's LSO would hide them).
const READ_UNCOMMITTED: i8 = 0;

/// One read_uncommitted fetch of `topic-partition` from `offset` at the single test broker:
/// (high watermark, record batches).
fn fetch(
    conn: &mut BrokerConnection,
    topic: &str,
    partition: i32,
    offset: i64,
) -> (i64, Option<bytes::Bytes>) {
    let request = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(100)
        .with_min_bytes(0)
        .with_max_bytes(8 << 20)
        .with_isolation_level(READ_UNCOMMITTED)
        .with_session_epoch(-1)
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(TopicName(StrBytes::from_string(topic.to_owned())))
                .with_partitions(vec![
                    FetchPartition::default()
                        .with_partition(partition)
                        .with_current_leader_epoch(-1)
                        .with_fetch_offset(offset)
                        .with_last_fetched_epoch(-1)
                        .with_log_start_offset(-1)
                        .with_partition_max_bytes(8 << 20),
                ]),
        ]);
    let (response, _) = conn
        .send(&request, FETCH_VERSION, TIMEOUT)
        .unwrap_or_else(|e| panic!("fetch {topic}-{partition} at {offset}: {e}"));
    assert_eq!(response.error_code, 0, "fetch {topic}-{partition}");
    let p = response
        .responses
        .iter()
        .flat_map(|t| t.partitions.iter())
        .find(|p| p.partition_index == partition)
        .expect("the partition in the fetch answer");
    assert_eq!(p.error_code, 0, "fetch {topic}-{partition} at {offset}");
    (p.high_watermark, p.records.clone())
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    Aborted,
    Open,
}

/// One data record of the partition.
#[derive(Debug, Clone)]
pub struct DataRecord {
    pub offset: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub transactional: bool,
    pub value: Vec<u8>,
}

/// One control marker (control record type 0 = ABORT, 1 = COMMIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub offset: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub commit: bool,
}

/// Everything one partition holds, in offset order.
#[derive(Debug, Default)]
pub struct TxnLog {
    pub records: Vec<DataRecord>,
    pub markers: Vec<Marker>,
}

impl TxnLog {
    /// Reads partition `partition` of `topic` from offset 0 to its high watermark, open
    /// transactions included, from the single broker at `bootstrap` (it leads every partition).
    pub fn read(bootstrap: &str, topic: &str, partition: i32) -> TxnLog {
        let mut conn = BrokerConnection::connect(
            bootstrap,
            "txn-log-test",
            TIMEOUT,
            &WireSecurity::plaintext(),
        )
        .unwrap_or_else(|e| panic!("connect to {bootstrap}: {e}"));
        let mut log = TxnLog::default();
        let mut next = 0;
        loop {
            let (high_watermark, records) = fetch(&mut conn, topic, partition, next);
            let Some(mut bytes) = records.filter(|b| !b.is_empty()) else {
                break;
            };
            let before = next;
            for set in RecordBatchDecoder::decode_all(&mut bytes).expect("record batches") {
                for r in set.records {
                    next = next.max(r.offset + 1);
                    if r.control {
                        let key = r.key.expect("a control record has a key");
                        assert!(key.len() >= 4, "control key {key:?}");
                        let kind = i16::from_be_bytes([key[2], key[3]]);
                        assert!(kind == 0 || kind == 1, "control type {kind}");
                        log.markers.push(Marker {
                            offset: r.offset,
                            producer_id: r.producer_id,
                            producer_epoch: r.producer_epoch,
                            commit: kind == 1,
                        });
                    } else {
                        log.records.push(DataRecord {
                            offset: r.offset,
                            producer_id: r.producer_id,
                            producer_epoch: r.producer_epoch,
                            transactional: r.transactional,
                            value: r.value.map(|v| v.to_vec()).unwrap_or_default(),
                        });
                    }
                }
            }
            if next >= high_watermark || next == before {
                break;
            }
        }
        log
    }

    /// The outcome of a data record's transaction.
    pub fn outcome(&self, record: &DataRecord) -> Outcome {
        if !record.transactional {
            return Outcome::Committed;
        }
        self.markers
            .iter()
            .find(|m| m.producer_id == record.producer_id && m.offset > record.offset)
            .map_or(Outcome::Open, |m| {
                if m.commit {
                    Outcome::Committed
                } else {
                    Outcome::Aborted
                }
            })
    }

    /// The data records with this outcome, in offset order.
    pub fn with_outcome(&self, outcome: Outcome) -> Vec<&DataRecord> {
        self.records
            .iter()
            .filter(|r| self.outcome(r) == outcome)
            .collect()
    }

    /// The values of the data records with this outcome, in offset order.
    pub fn values(&self, outcome: Outcome) -> Vec<Vec<u8>> {
        self.with_outcome(outcome)
            .into_iter()
            .map(|r| r.value.clone())
            .collect()
    }
}
