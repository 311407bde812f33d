//! `leader run`: the arguments, and the signals turned into the stop signal; joining
//! the roster, holding the role and supervising COMMAND is `ops::leader::run`.

use std::time::Duration;

use clap::Args;

use super::{TimingArgs, TopicArgs};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::engine::coordination::StopSignal;
use crate::engine::units::parse_duration;
use crate::ops::leader::run::RunPlan;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The role to hold (also the transactional.id whose producer epoch fences it).
    #[arg(long, value_name = "ROLE")]
    pub role: String,
    /// This member's id, unique among the role's members.
    #[arg(long, value_name = "MEMBER")]
    pub member: String,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Time COMMAND gets between SIGTERM and SIGKILL when it must stop.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub grace: Duration,
    /// Take part without a command: hold the role when the turn comes, until
    /// Ctrl-C or a fence (a warm standby that keeps the succession moving).
    #[arg(long)]
    pub standby: bool,
    /// Create the coordination topic if it does not exist (16 partitions, compacted).
    #[arg(long)]
    pub create_topic: bool,
    #[command(flatten)]
    pub topic: TopicArgs,
    /// The command to run while holding the role (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Raised on SIGINT or SIGTERM: the leader stops its command itself, so it
/// cooperates with the process-wide listener (`cmd::interrupt`), which raises a
/// flag this thread turns into the stop signal. Registered before returning, so no
/// signal is lost or taken for a cancellation.
pub(super) fn stop_on_signals() -> CliResult<StopSignal> {
    let stop = StopSignal::new();
    let raise = stop.clone();
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    std::mem::forget(crate::cmd::interrupt::cooperate(flag.clone()));
    std::thread::Builder::new()
        .name("leader-signals".into())
        .spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            raise.raise();
        })
        .map_err(|e| CliError::failure(format!("cannot start the signal thread: {e}")))?;
    Ok(stop)
}

pub fn run(global: &GlobalArgs, args: RunArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings("leader")?;
    let plan = RunPlan {
        role: args.role,
        member: args.member,
        timing: args.timing.timing(),
        grace: args.grace,
        standby: args.standby,
        create_topic: args.create_topic,
        topic: args.topic.topic,
        command: args.command,
        request_timeout: Duration::from_millis(global.connection.request_timeout_ms),
        stop: stop_on_signals()?,
    };
    crate::ops::leader::run::run(&settings, &plan)
}
