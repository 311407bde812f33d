//! `leader`: run or inspect leader elections fenced by the producer epoch
//! (formats §9, semantics §9). One leader per role; the leadership epoch is
//! the producer epoch the transaction coordinator mints for
//! `transactional.id = <role>`; the lease only decides when a standby
//! challenges.
//!
//! This module holds the arguments and the wiring shared by the subcommands:
//! the Kafka transport, the lease configuration, error mapping. `run` is in
//! [`run`], the reports in [`report`], the operator writes in [`admin`].

mod admin;
mod report;
mod run;

use std::time::Duration;

use clap::{Args, Subcommand};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::engine::coordination::{
    COORDINATION_TOPIC, DEFAULT_PARTITIONS, LeaderError, LeaseConfig, LeaseSettings,
    TransportError, TransportErrorKind,
};
use crate::engine::units::parse_duration;
use crate::io::kafka::coordination::security::WireSecurity;
use crate::io::kafka::coordination::{KafkaTransport, KafkaTransportOptions};

#[derive(Debug, Args)]
pub struct LeaderArgs {
    #[command(subcommand)]
    pub command: LeaderCommand,
}

#[derive(Debug, Subcommand)]
pub enum LeaderCommand {
    /// Register, wait for the turn, hold ROLE and run COMMAND while holding it.
    ///
    /// COMMAND gets KRABKA_LEADER_ROLE, KRABKA_LEADER_MEMBER and
    /// KRABKA_LEADER_TOKEN=<producer_id>:<epoch> in its environment. When this
    /// member is fenced (another member minted a newer epoch), its lease
    /// expires after failed renewals, or a renewal's login is refused (rotated
    /// credentials), COMMAND gets SIGTERM, then SIGKILL after --grace, and
    /// `leader run` exits 1. When COMMAND exits, the lease is cleared,
    /// the member leaves the roster, and `leader run` exits with COMMAND's code
    /// (128+n when it died of signal n). Ctrl-C stops COMMAND the same way and
    /// exits 130. A restarted member queues at the tail of the roster (no failback).
    Run(run::RunArgs),
    /// Show one role: roster with ranks, lease holder, token, deadline, each
    /// member's decision now, and whether the token is the broker's epoch.
    Status(report::StatusArgs),
    /// Show every role found in the coordination topic, as `status` does.
    List(report::ListArgs),
    /// Print each change of a role's holder or token as it happens.
    Watch(report::WatchArgs),
    /// Make the holder step down: mint a newer epoch (fencing it) and clear the lease.
    Resign(admin::MemberArgs),
    /// Remove a member's registration from the roster (a registration tombstone).
    Deregister(admin::MemberArgs),
}

/// Where the election state lives.
#[derive(Debug, Clone, Args)]
pub struct TopicArgs {
    /// The coordination topic (compacted; every member must use the same one).
    #[arg(long = "topic", default_value = COORDINATION_TOPIC, value_name = "TOPIC")]
    pub topic: String,
}

/// Lease timing. Members of one role should agree on it; `status` uses it to
/// compute each member's decision.
#[derive(Debug, Clone, Args)]
pub struct TimingArgs {
    /// Lease duration (also the transaction timeout of minted producers).
    #[arg(long = "lease", default_value = "30s", value_parser = parse_duration, value_name = "DURATION")]
    pub lease: Duration,
    /// How often the holder renews its lease; shorter than --lease (3 × renew ≤ lease keeps margin).
    #[arg(long = "renew", default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub renew: Duration,
    /// Extra delay per rank before a standby challenges an expired lease.
    #[arg(long = "stagger", default_value = "5s", value_parser = parse_duration, value_name = "DURATION")]
    pub stagger: Duration,
    /// How often a waiting member reads the role's state (and retries a failed renewal).
    #[arg(long = "poll", default_value = "1s", value_parser = parse_duration, value_name = "DURATION")]
    pub poll: Duration,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl TimingArgs {
    /// The validated lease configuration for `topic` with `partitions`.
    pub fn config(&self, topic: &str, partitions: i32) -> CliResult<LeaseConfig> {
        LeaseSettings {
            lease_ms: ms(self.lease),
            renew_ms: ms(self.renew),
            stagger_ms: ms(self.stagger),
            poll_ms: ms(self.poll),
            topic: topic.to_string(),
            partitions,
        }
        .validate()
        .map_err(|e| CliError::usage(e.to_string()))
    }
}

impl LeaderArgs {
    /// Why `--dry-run` cannot be honoured, when it cannot. `resign` and `deregister`
    /// honour it; `status`, `list` and `watch` only read.
    pub fn dry_run_refusal(&self) -> Option<String> {
        match self.command {
            LeaderCommand::Run(_) => Some(
                "it registers a member, takes the lease and runs COMMAND; see the role with `leader status`"
                    .into(),
            ),
            _ => None,
        }
    }

    /// The name used in error lines.
    pub fn name(&self) -> &'static str {
        match self.command {
            LeaderCommand::Run(_) => "leader run",
            LeaderCommand::Status(_) => "leader status",
            LeaderCommand::List(_) => "leader list",
            LeaderCommand::Watch(_) => "leader watch",
            LeaderCommand::Resign(_) => "leader resign",
            LeaderCommand::Deregister(_) => "leader deregister",
        }
    }
}

pub fn run(global: &GlobalArgs, args: LeaderArgs) -> CliResult<()> {
    match args.command {
        LeaderCommand::Run(a) => run::run(global, a),
        LeaderCommand::Status(a) => report::status(global, a),
        LeaderCommand::List(a) => report::list(global, a),
        LeaderCommand::Watch(a) => report::watch(global, a),
        LeaderCommand::Resign(a) => admin::resign(global, a),
        LeaderCommand::Deregister(a) => admin::deregister(global, a),
    }
}

/// The transport for `global`'s broker, secured by the TLS/SASL settings of
/// `--command-config`/`-X`; `request_timeout` bounds every operation, retries included.
fn transport(
    global: &GlobalArgs,
    request_timeout: Duration,
    transaction_timeout: Duration,
) -> CliResult<KafkaTransport> {
    let settings = global.connection.kafka_settings("leader")?;
    let security = WireSecurity::from_settings(|key| settings.get(key))
        .map_err(|e| CliError::usage(e.to_string()))?;
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

/// The request bound of the inspecting subcommands.
fn inspect_timeout(global: &GlobalArgs) -> Duration {
    Duration::from_millis(global.connection.request_timeout_ms).min(global.connection.timeout)
}

/// A transport error as a CLI error: unreachable → 4, else 1.
fn transport_error(e: TransportError) -> CliError {
    match e.kind {
        TransportErrorKind::Unreachable => CliError::unreachable(e.to_string()),
        _ => CliError::failure(e.to_string()),
    }
}

/// An election error as a CLI error: unreachable → 4, identity errors → 2, else 1.
fn leader_error(e: LeaderError) -> CliError {
    match &e {
        LeaderError::Identity(_) => CliError::usage(e.to_string()),
        _ if e.is_unreachable() => CliError::unreachable(e.to_string()),
        _ => CliError::failure(e.to_string()),
    }
}

/// The message for a missing coordination topic.
fn missing_topic(topic: &str) -> String {
    format!(
        "topic {topic} does not exist; pass --create-topic to create it ({DEFAULT_PARTITIONS} partitions, compacted)"
    )
}
