//! The demo's leader-election step: two members of one role on the embedded
//! cluster, the holder crashes (stops renewing), the standby takes over once
//! the lease ends. Real InitProducerId tokens from the transaction coordinator.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::engine::coordination::{
    AcquireOptions, COORDINATION_TOPIC, Clock, DEFAULT_PARTITIONS, Election, FencingToken,
    LeaderError, LeaseSettings, SystemClock,
};
use crate::engine::topic_partition::TopicPartition;
use crate::io::kafka::coordination::security::WireSecurity;
use crate::io::kafka::coordination::{KafkaTransport, KafkaTransportOptions};
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::ops::demo::failed;
use crate::ops::{Error, Result};

pub const ROLE: &str = "demo-controller";
pub const LEASE_MS: i64 = 2_000;
pub const RENEW_MS: i64 = 500;
pub const STAGGER_MS: i64 = 1_000;
pub const POLL_MS: i64 = 200;

/// How the failover went, times measured from node-1's first acquisition.
pub struct Failover {
    /// The coordination partition the role lives in.
    pub partition: TopicPartition,
    /// node-1's token, then node-2's.
    pub first: FencingToken,
    pub second: FencingToken,
    /// The members registered while node-2 held the role.
    pub roster: Vec<String>,
    /// When node-1 stopped renewing.
    pub crashed: Duration,
    /// When node-2 held the role.
    pub took_over: Duration,
    /// The bound a failover stays within: lease + stagger + poll.
    pub bound: Duration,
}

impl Failover {
    /// From the crash to node-2's takeover.
    pub fn failover(&self) -> Duration {
        self.took_over.saturating_sub(self.crashed)
    }
}

fn member(cluster: &EmbeddedCluster) -> Result<Election<KafkaTransport>> {
    let settings = LeaseSettings {
        lease_ms: LEASE_MS,
        renew_ms: RENEW_MS,
        stagger_ms: STAGGER_MS,
        poll_ms: POLL_MS,
        ..LeaseSettings::default()
    };
    let config = settings.validate().map_err(failed)?;
    let transport = KafkaTransport::new(&KafkaTransportOptions {
        bootstrap: cluster.bootstrap().to_string(),
        client_id: "krabka-streams demo".into(),
        request_timeout: Duration::from_secs(5),
        transaction_timeout: Duration::from_millis(LEASE_MS as u64),
        security: WireSecurity::plaintext(),
    })
    .map_err(failed)?;
    Ok(Election::new(
        Arc::new(transport),
        Arc::new(SystemClock),
        config,
    ))
}

/// Runs the failover.
pub fn failover(cluster: &EmbeddedCluster) -> Result<Failover> {
    let fail = |e: LeaderError| Error::failure(e.to_string());
    cluster
        .create_topic(COORDINATION_TOPIC, DEFAULT_PARTITIONS)
        .map_err(failed)?;
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
        .map_err(|_| Error::failure("the standby thread panicked"))?
        .map_err(fail)?;
    let state = two.read_state(ROLE).map_err(fail)?;
    second.resign().map_err(fail)?;
    Ok(Failover {
        partition,
        first: first.token(),
        second: second.token(),
        roster: state.roster().iter().map(|e| e.member.clone()).collect(),
        crashed: crashed - start,
        took_over: took_over - start,
        bound: Duration::from_millis((LEASE_MS + STAGGER_MS + POLL_MS) as u64),
    })
}
