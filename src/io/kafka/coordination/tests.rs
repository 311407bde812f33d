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
