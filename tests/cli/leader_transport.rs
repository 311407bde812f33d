//! The coordination transport against the real broker: InitProducerId bumps
//! the epoch of `transactional.id = <role>`, the superseded producer's next
//! lease write is fenced (typed), committed reads see the winner's lease.

use std::time::Duration;

use krabka_streams::engine::coordination::{
    Coordinator, LeaseWriter, Registrar, StateReader, TopicPartition, TransportErrorKind,
};
use krabka_streams::io::kafka::coordination::security::WireSecurity;
use krabka_streams::io::kafka::coordination::{KafkaTransport, KafkaTransportOptions};

use crate::support::tansu::Tansu;
use crate::support::unique_name;

fn transport(broker: &Tansu) -> KafkaTransport {
    KafkaTransport::new(&KafkaTransportOptions {
        bootstrap: broker.bootstrap(),
        client_id: "krabka-streams test".into(),
        request_timeout: Duration::from_secs(10),
        transaction_timeout: Duration::from_secs(30),
        security: WireSecurity::plaintext(),
    })
    .expect("transport")
}

#[test]
fn a_newer_init_producer_id_bumps_the_epoch_and_fences_the_older_writer() {
    let broker = Tansu::start();
    let topic = unique_name("coord");
    let role = unique_name("role");
    let a = transport(&broker);
    let b = transport(&broker);
    assert!(a.create_state_topic(&topic, 4).unwrap());
    assert!(
        !a.create_state_topic(&topic, 4).unwrap(),
        "exists the second time"
    );
    assert_eq!(a.partition_count(&topic).unwrap(), Some(4));
    assert!(
        !a.supports_describe().unwrap(),
        "Tansu lacks DescribeTransactions"
    );
    let tp = TopicPartition::new(&topic, 1);

    a.append(&tp, b"reg-a", Some(b"a")).unwrap();
    let first = a.acquire_epoch(&role).unwrap();
    a.write_lease(&tp, first, b"lease", Some(b"from-a"))
        .unwrap();
    a.write_lease(&tp, first, b"lease", Some(b"from-a-again"))
        .unwrap();

    let second = b.acquire_epoch(&role).unwrap();
    assert!(second.supersedes(first), "{second} after {first}");
    assert_eq!(
        second.producer_id(),
        first.producer_id(),
        "same id, bumped epoch"
    );

    let err = a
        .write_lease(&tp, first, b"lease", Some(b"zombie"))
        .unwrap_err();
    assert_eq!(err.kind, TransportErrorKind::Fenced, "{err}");
    assert!(
        err.to_string()
            .starts_with("fenced: another member holds the role"),
        "{err}"
    );

    b.write_lease(&tp, second, b"lease", Some(b"from-b"))
        .unwrap();
    let values: Vec<_> = b
        .read_partition(&tp)
        .unwrap()
        .into_iter()
        .map(|r| String::from_utf8(r.value.unwrap_or_default()).unwrap())
        .collect();
    assert_eq!(values, ["a", "from-a", "from-a-again", "from-b"]);
}

/// DescribeTransactions against a real Kafka cluster: Tansu and the librdkafka mock
/// lack it, so this runs only when `KRABKA_INTEGRATION_BOOTSTRAP` names a broker.
#[test]
fn describe_transactions_reports_the_minted_epoch_on_a_real_kafka() {
    let Ok(bootstrap) = std::env::var("KRABKA_INTEGRATION_BOOTSTRAP") else {
        eprintln!(
            "skipped: set KRABKA_INTEGRATION_BOOTSTRAP to a Kafka cluster with DescribeTransactions"
        );
        return;
    };
    let t = KafkaTransport::new(&KafkaTransportOptions {
        bootstrap,
        client_id: "krabka-streams test".into(),
        request_timeout: Duration::from_secs(30),
        transaction_timeout: Duration::from_secs(30),
        security: WireSecurity::plaintext(),
    })
    .expect("transport");
    assert!(t.supports_describe().unwrap());
    let role = unique_name("role");
    assert_eq!(t.describe_epoch(&role).unwrap(), None, "never taken");
    let token = t.acquire_epoch(&role).unwrap();
    assert_eq!(t.describe_epoch(&role).unwrap(), Some(token));
}
