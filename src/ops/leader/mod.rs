//! `leader` use cases: hold a role and supervise a command while holding it ([`run`]),
//! inspect roles ([`report`]: status, list, watch) and the operator's writes ([`admin`]:
//! resign, deregister). Elections are fenced by the producer epoch
//! (`docs/formats.md` §9, `docs/semantics.md` §9); the election itself is
//! `engine::coordination`, the wire `io::kafka::coordination`.

pub mod admin;
pub mod report;
pub mod run;

use std::time::Duration;

use crate::engine::coordination::{
    DEFAULT_PARTITIONS, LeaderError, LeaseConfig, LeaseSettings, TransportError, TransportErrorKind,
};
use crate::io::kafka::coordination::security::WireSecurity;
use crate::io::kafka::coordination::{KafkaTransport, KafkaTransportOptions};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, Result};

/// Lease timing; members of one role should agree on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub lease: Duration,
    pub renew: Duration,
    pub stagger: Duration,
    pub poll: Duration,
}

impl Timing {
    /// The defaults of the command line (`--lease 30s --renew 10s --stagger 5s --poll 1s`).
    pub const DEFAULT: Timing = Timing {
        lease: Duration::from_secs(30),
        renew: Duration::from_secs(10),
        stagger: Duration::from_secs(5),
        poll: Duration::from_secs(1),
    };

    /// The validated lease configuration for `topic` with `partitions`; invalid timing is
    /// a usage error.
    pub fn config(&self, topic: &str, partitions: i32) -> Result<LeaseConfig> {
        LeaseSettings {
            lease_ms: ms(self.lease),
            renew_ms: ms(self.renew),
            stagger_ms: ms(self.stagger),
            poll_ms: ms(self.poll),
            topic: topic.to_string(),
            partitions,
        }
        .validate()
        .map_err(|e| Error::usage(e.to_string()))
    }
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The transport for the broker of `settings`, secured by its TLS/SASL settings;
/// `request_timeout` bounds every operation, retries included.
fn transport(
    settings: &KafkaSettings,
    request_timeout: Duration,
    transaction_timeout: Duration,
) -> Result<KafkaTransport> {
    let security = WireSecurity::from_settings(|key| settings.get(key))
        .map_err(|e| Error::usage(e.to_string()))?;
    let options = KafkaTransportOptions {
        bootstrap: settings
            .get("bootstrap.servers")
            .unwrap_or_default()
            .to_string(),
        client_id: settings
            .get("client.id")
            .unwrap_or("krabka-streams leader")
            .to_string(),
        request_timeout,
        transaction_timeout,
        security,
    };
    KafkaTransport::new(&options).map_err(transport_error)
}

/// A transport error: unreachable, else a failure.
fn transport_error(e: TransportError) -> Error {
    match e.kind {
        TransportErrorKind::Unreachable => Error::unreachable(e.to_string()),
        _ => Error::failure(e.to_string()),
    }
}

/// An election error: unreachable, identity errors are usage, else a failure.
fn leader_error(e: LeaderError) -> Error {
    match &e {
        LeaderError::Identity(_) => Error::usage(e.to_string()),
        _ if e.is_unreachable() => Error::unreachable(e.to_string()),
        _ => Error::failure(e.to_string()),
    }
}

/// The message for a missing coordination topic.
fn missing_topic(topic: &str) -> String {
    format!(
        "topic {topic} does not exist; pass --create-topic to create it ({DEFAULT_PARTITIONS} partitions, compacted)"
    )
}
