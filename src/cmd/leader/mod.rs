//! `leader`: run or inspect leader elections fenced by the producer epoch
//! (formats §9, semantics §9). One leader per role; the leadership epoch is
//! the producer epoch the transaction coordinator mints for
//! `transactional.id = <role>`; the lease only decides when a standby
//! challenges.
//!
//! Arguments and rendering only: each subcommand builds a plan and calls one function
//! of `ops::leader` (`run`, `report`, `admin`), which owns the transport, the lease
//! configuration and the election.

mod admin;
mod report;
mod run;

use std::time::Duration;

use clap::{Args, Subcommand};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::engine::coordination::COORDINATION_TOPIC;
use crate::engine::units::parse_duration;
use crate::ops::leader::Timing;

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

impl TimingArgs {
    pub fn timing(&self) -> Timing {
        Timing {
            lease: self.lease,
            renew: self.renew,
            stagger: self.stagger,
            poll: self.poll,
        }
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

/// The request bound of the inspecting subcommands.
fn inspect_timeout(global: &GlobalArgs) -> Duration {
    Duration::from_millis(global.connection.request_timeout_ms).min(global.connection.timeout)
}
