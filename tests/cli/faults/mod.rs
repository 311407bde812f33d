//! Fault injection with real processes (issue 8): a Tansu broker frozen, killed, or killed
//! with `kill -9` and restarted over its persistent store under `tail`, `run` and
//! `barrier verify`, a registry that fails, `kill -9` during `snapshot restore`,
//! a full disk, and the security surface (TLS, SASL, secrets, file permissions).
//! Every test is bounded in time; RELIABILITY.md lists what each one proves.

mod broker_outage;
mod broker_restart;
mod disk_full;
mod permissions;
mod registry_faults;
mod restore_kill;
mod run_outage;
mod sasl_refusal;
mod security;
mod security_sasl;
mod security_sasl_ssl;

use std::time::Duration;

use rdkafka::config::ClientConfig;
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;

const TIMEOUT: Duration = Duration::from_secs(30);

pub use crate::support::admin::create_topic;

/// Produces `v<i>` for i in `range` to partition 0, one record per batch (Tansu's high
/// watermark is only right then, docs/testing.md §b).
pub fn produce(bootstrap: &str, topic: &str, range: std::ops::Range<u32>) {
    let producer = CheckedProducer::new(
        ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("linger.ms", "0")
            .set("batch.num.messages", "1"),
    );
    for i in range {
        let value = format!("v{i}");
        producer.send(
            BaseRecord::<[u8], [u8]>::to(topic)
                .partition(0)
                .key(b"k".as_slice())
                .payload(value.as_bytes()),
        );
        producer.flush();
    }
}

/// The `__offset` of every NDJSON line.
/// `leader run --role ROLE --member m1 --topic TOPIC --create-topic -- COMMAND…`, the
/// election the security tests run through each transport.
pub fn leader_run_args<'a>(role: &'a str, topic: &'a str, command: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "leader",
        "run",
        "--role",
        role,
        "--member",
        "m1",
        "--topic",
        topic,
        "--create-topic",
        "--",
    ];
    args.extend_from_slice(command);
    args
}

pub fn ndjson_offsets(text: &str) -> Vec<i64> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).expect("an NDJSON line");
            row["__offset"].as_i64().expect("an __offset column")
        })
        .collect()
}
