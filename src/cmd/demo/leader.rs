//! The demo's leader-election step: two members of one role on the embedded
//! cluster, the holder crashes (stops renewing), the standby takes over once
//! the lease ends. Real InitProducerId tokens from the transaction coordinator.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::engine::coordination::{
    AcquireOptions, Clock, DEFAULT_PARTITIONS, Election, LeaseSettings, SystemClock,
};
use crate::io::kafka::coordination::security::WireSecurity;
use crate::io::kafka::coordination::{KafkaTransport, KafkaTransportOptions};
use crate::io::kafka::mock_cluster::EmbeddedCluster;

pub const ROLE: &str = "demo-controller";
const LEASE_MS: i64 = 2_000;
const RENEW_MS: i64 = 500;
const STAGGER_MS: i64 = 1_000;
const POLL_MS: i64 = 200;

fn member(cluster: &EmbeddedCluster) -> CliResult<Election<KafkaTransport>> {
    let settings = LeaseSettings {
        lease_ms: LEASE_MS,
        renew_ms: RENEW_MS,
        stagger_ms: STAGGER_MS,
        poll_ms: POLL_MS,
        ..LeaseSettings::default()
    };
    let config = settings
        .validate()
        .map_err(|e| CliError::failure(e.to_string()))?;
    let transport = KafkaTransport::new(&KafkaTransportOptions {
        bootstrap: cluster.bootstrap().to_string(),
        client_id: "krabka-streams demo".into(),
        request_timeout: Duration::from_secs(5),
        transaction_timeout: Duration::from_millis(LEASE_MS as u64),
        security: WireSecurity::plaintext(),
    })
    .map_err(|e| CliError::failure(e.to_string()))?;
    Ok(Election::new(
        Arc::new(transport),
        Arc::new(SystemClock),
        config,
    ))
}

fn seconds(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

/// Runs the failover and returns (human text, JSON result).
pub fn failover(cluster: &EmbeddedCluster) -> CliResult<(String, Value)> {
    let fail = |e: crate::engine::coordination::LeaderError| CliError::failure(e.to_string());
    cluster
        .create_topic(
            crate::engine::coordination::COORDINATION_TOPIC,
            DEFAULT_PARTITIONS,
        )
        .map_err(|e| CliError::failure(e.to_string()))?;
    let (one, two) = (member(cluster)?, member(cluster)?);
    let start = Instant::now();
    let first = one
        .acquire(ROLE, "node-1", &AcquireOptions::default())
        .map_err(fail)?;
    let partition = one.partition_of(ROLE).map_err(fail)?;
    let options = AcquireOptions {
        deadline: Some(SystemClock.now_ms() + 20_000),
        ..AcquireOptions::default()
    };
    let standby = thread::spawn(move || {
        two.acquire(ROLE, "node-2", &options)
            .map(|l| (l, Instant::now(), two))
    });
    // node-1 renews a few times, then crashes: no more renewals, no resignation.
    for _ in 0..3 {
        thread::sleep(Duration::from_millis(RENEW_MS as u64));
        first.renew().map_err(fail)?;
    }
    let crashed = Instant::now();
    let (second, took_over, two) = standby
        .join()
        .map_err(|_| CliError::failure("the standby thread panicked"))?
        .map_err(fail)?;
    let state = two.read_state(ROLE).map_err(fail)?;
    second.resign().map_err(fail)?;
    let failover = took_over - crashed;
    let bound = Duration::from_millis((LEASE_MS + STAGGER_MS + POLL_MS) as u64);
    let roster: Vec<String> = state.roster().iter().map(|e| e.member.clone()).collect();
    let text = format!(
        "role `{ROLE}` on {partition}; lease 2s, renew 500ms, stagger 1s, poll 200ms\n\
         node-1 holds with token {t1} (InitProducerId for transactional.id={ROLE})\n\
         node-2 registers and waits its turn (roster: {roster})\n\
         node-1 crashes at +{crash} (stops renewing); its lease runs out {lease} later\n\
         node-2 holds with token {t2} at +{over}: failover {failover} after the crash (bound: lease + stagger + poll = {bound})\n\
         note: the embedded cluster (librdkafka mock) hands out a random producer id on every\n\
         InitProducerId instead of bumping the epoch, and never fences, so token order means nothing\n\
         here; a real broker bumps the epoch of the role's producer id (1:0 -> 1:1) and rejects\n\
         node-1's next write (tested against Tansu).",
        t1 = first.token(),
        t2 = second.token(),
        roster = roster.join(", "),
        crash = seconds(crashed - start),
        lease = seconds(Duration::from_millis(LEASE_MS as u64)),
        over = seconds(took_over - start),
        failover = seconds(failover),
        bound = seconds(bound),
    );
    let data = json!({
        "role": ROLE,
        "first": {"member": "node-1", "token": first.token().to_string()},
        "second": {"member": "node-2", "token": second.token().to_string()},
        "failover_ms": failover.as_millis() as u64,
        "bound_ms": bound.as_millis() as u64,
        "within_bound": failover <= bound,
    });
    Ok((text, data))
}
