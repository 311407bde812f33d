//! The Kafka transport against the embedded librdkafka mock cluster: minting,
//! transactional lease writes, plain registrations, committed reads, and the
//! fencing paths the mock can only show through injected errors.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::coordination::{
    AcquireOptions, Coordinator, Election, LeaseSettings, LeaseWriter, ManualClock, Registrar,
    StateReader, SystemClock, TopicPartition, TransportErrorKind,
};
use crate::io::kafka::mock_cluster::EmbeddedCluster;

use super::security::WireSecurity;
use super::{KafkaTransport, KafkaTransportOptions};

const TOPIC: &str = "__coordination_state";

fn cluster() -> EmbeddedCluster {
    let cluster = EmbeddedCluster::start(None).expect("mock cluster");
    cluster.create_topic(TOPIC, 16).expect("topic");
    cluster
}

fn transport(cluster: &EmbeddedCluster) -> KafkaTransport {
    KafkaTransport::new(&KafkaTransportOptions {
        bootstrap: cluster.bootstrap().to_string(),
        client_id: "krabka-streams test".into(),
        request_timeout: Duration::from_secs(5),
        transaction_timeout: Duration::from_secs(30),
        security: WireSecurity::plaintext(),
    })
    .expect("transport")
}

#[test]
fn a_minted_token_writes_a_lease_that_a_committed_read_returns() {
    let cluster = cluster();
    let t = transport(&cluster);
    let tp = TopicPartition::new(TOPIC, 3);
    assert!(!t.supports_describe().unwrap());
    assert_eq!(t.partition_count(TOPIC).unwrap(), Some(16));
    assert_eq!(t.partition_count("no-such-topic").unwrap(), None);
    t.append(&tp, b"reg", Some(b"r1")).unwrap();
    let token = t.acquire_epoch("role-x").unwrap();
    t.write_lease(&tp, token, b"lease", Some(b"l1")).unwrap();
    t.write_lease(&tp, token, b"lease", None).unwrap();
    let records = t.read_partition(&tp).unwrap();
    let seen: Vec<_> = records
        .iter()
        .map(|r| (r.key.clone(), r.value.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (b"reg".to_vec(), Some(b"r1".to_vec())),
            (b"lease".to_vec(), Some(b"l1".to_vec())),
            (b"lease".to_vec(), None),
        ]
    );
    assert!(records.windows(2).all(|w| w[0].offset < w[1].offset));
}

#[test]
fn an_election_on_the_mock_acquires_with_the_real_producer_id() {
    let cluster = cluster();
    let t = Arc::new(transport(&cluster));
    let config = LeaseSettings::default().validate().unwrap();
    let election = Election::new(t.clone(), Arc::new(SystemClock), config);
    let leadership = election
        .acquire("controller", "node-1", &AcquireOptions::default())
        .unwrap();
    let state = election.read_state("controller").unwrap();
    assert_eq!(state.holder(), Some("node-1"));
    assert_eq!(state.lease().unwrap().token(), leadership.token());
    leadership.renew().unwrap();
    leadership.resign().unwrap();
    assert_eq!(election.read_state("controller").unwrap().lease(), None);
    let _ = ManualClock::new(0);
}

#[test]
fn an_unminted_token_is_refused() {
    let cluster = cluster();
    let t = transport(&cluster);
    let token = crate::engine::coordination::FencingToken::new(99, 1).unwrap();
    let err = t
        .write_lease(&TopicPartition::new(TOPIC, 0), token, b"k", None)
        .unwrap_err();
    assert_eq!(err.to_string(), "Kafka transport did not mint token 99:1");
    assert_eq!(err.kind, TransportErrorKind::Failed);
}

mod injected {
    //! Fencing and retry paths the mock only shows through injected errors.

    use rdkafka::bindings::rd_kafka_resp_err_t as Err;

    use super::*;
    use kafka_protocol::messages::ApiKey;

    const FENCED: Err = Err::RD_KAFKA_RESP_ERR_PRODUCER_FENCED;
    const OLD_EPOCH: Err = Err::RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
    const CONCURRENT: Err = Err::RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS;
    const NO_COORDINATOR: Err = Err::RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE;

    fn minted(
        cluster: &EmbeddedCluster,
    ) -> (KafkaTransport, crate::engine::coordination::FencingToken) {
        let t = transport(cluster);
        let token = t.acquire_epoch("role-x").unwrap();
        (t, token)
    }

    fn write(
        t: &KafkaTransport,
        token: crate::engine::coordination::FencingToken,
    ) -> Result<(), crate::engine::coordination::TransportError> {
        t.write_lease(&TopicPartition::new(TOPIC, 2), token, b"lease", Some(b"v"))
    }

    #[test]
    fn producer_fenced_on_add_partitions_to_txn_is_a_typed_fence() {
        let cluster = cluster();
        let (t, token) = minted(&cluster);
        cluster.push_request_errors(ApiKey::AddPartitionsToTxn as i16, &[FENCED]);
        let err = write(&t, token).unwrap_err();
        assert_eq!(err.kind, TransportErrorKind::Fenced, "{err}");
        assert!(err.to_string().contains("PRODUCER_FENCED (90)"), "{err}");
    }

    #[test]
    fn invalid_producer_epoch_on_produce_is_a_typed_fence_and_nothing_is_committed() {
        let cluster = cluster();
        let (t, token) = minted(&cluster);
        cluster.push_request_errors(ApiKey::Produce as i16, &[OLD_EPOCH]);
        let err = write(&t, token).unwrap_err();
        assert_eq!(err.kind, TransportErrorKind::Fenced, "{err}");
        assert!(
            err.to_string().contains("INVALID_PRODUCER_EPOCH (47)"),
            "{err}"
        );
        assert!(
            t.read_partition(&TopicPartition::new(TOPIC, 2))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn producer_fenced_on_end_txn_is_a_typed_fence() {
        let cluster = cluster();
        let (t, token) = minted(&cluster);
        cluster.push_request_errors(ApiKey::EndTxn as i16, &[FENCED]);
        let err = write(&t, token).unwrap_err();
        assert_eq!(err.kind, TransportErrorKind::Fenced, "{err}");
    }

    #[test]
    fn concurrent_transactions_and_a_missing_coordinator_are_retried() {
        let cluster = cluster();
        cluster.push_request_errors(ApiKey::InitProducerId as i16, &[NO_COORDINATOR, CONCURRENT]);
        let (t, token) = minted(&cluster);
        cluster.push_request_errors(ApiKey::AddPartitionsToTxn as i16, &[CONCURRENT, CONCURRENT]);
        cluster.push_request_errors(ApiKey::EndTxn as i16, &[CONCURRENT]);
        write(&t, token).unwrap();
        let values: Vec<_> = t
            .read_partition(&TopicPartition::new(TOPIC, 2))
            .unwrap()
            .into_iter()
            .map(|r| r.value)
            .collect();
        assert_eq!(values, vec![Some(b"v".to_vec())]);
    }

    #[test]
    fn a_fenced_renewal_ends_the_leadership_and_a_lost_race_is_retried() {
        let cluster = cluster();
        let t = Arc::new(transport(&cluster));
        let config = LeaseSettings {
            lease_ms: 3_000,
            renew_ms: 200,
            stagger_ms: 1_000,
            poll_ms: 100,
            ..LeaseSettings::default()
        }
        .validate()
        .unwrap();
        let election = Election::new(t.clone(), Arc::new(SystemClock), config);
        // The first challenge loses the race at its lease write; the loop tries again.
        cluster.push_request_errors(ApiKey::AddPartitionsToTxn as i16, &[FENCED]);
        let leadership = election
            .acquire("controller", "node-1", &AcquireOptions::default())
            .unwrap();
        cluster.push_request_errors(ApiKey::Produce as i16, &[OLD_EPOCH]);
        let end = leadership.spawn_renewals().join().unwrap();
        assert_eq!(
            end.to_string(),
            "role controller: fenced: another member holds the role"
        );
    }
}
