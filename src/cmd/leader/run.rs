//! `leader run`: join the roster of a role, wait for the turn, hold the role
//! and supervise COMMAND while holding it (see the subcommand's help).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use super::{TimingArgs, TopicArgs, leader_error, missing_topic, transport, transport_error};
use crate::cmd::exit::{CliError, CliResult, ExitCode};
use crate::cmd::global::GlobalArgs;
use crate::engine::coordination::{
    AcquireEvent, AcquireObserver, AcquireOptions, DEFAULT_PARTITIONS, Election, LeaderError,
    Leadership, StopSignal, SystemClock, check_member, check_role,
};
use crate::engine::time::rfc3339_millis;
use crate::engine::units::parse_duration;
use crate::io::kafka::coordination::KafkaTransport;
use crate::io::process::Supervised;

pub const ENV_ROLE: &str = "KRABKA_LEADER_ROLE";
pub const ENV_MEMBER: &str = "KRABKA_LEADER_MEMBER";
pub const ENV_TOKEN: &str = "KRABKA_LEADER_TOKEN";

/// How often the supervisor looks at the command, the leadership and signals.
const SUPERVISE_TICK: Duration = Duration::from_millis(50);

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

/// Logs acquire progress, each waiting position once.
fn observer(role: String, member: String) -> AcquireObserver {
    let last_wait = Mutex::new(None);
    Box::new(move |event| match event {
        AcquireEvent::Registered { registered_at } => tracing::info!(
            "registered member {member} for role {role} at {}",
            rfc3339_millis(*registered_at)
        ),
        AcquireEvent::Waiting {
            rank,
            until,
            holder,
        } => {
            // Renewals move `until` every few seconds; report rank and holder changes only.
            let now = (*rank, holder.clone());
            let mut last = last_wait.lock().unwrap_or_else(|p| p.into_inner());
            if last.as_ref() != Some(&now) {
                tracing::info!(
                    "member {member} waits with rank {rank} until {} (holder: {})",
                    rfc3339_millis(*until),
                    holder.as_deref().unwrap_or("none")
                );
                *last = Some(now);
            }
        }
        AcquireEvent::Challenging { action } => {
            tracing::info!("member {member} challenges for role {role} ({action})")
        }
        AcquireEvent::LostRace { cause } => {
            tracing::warn!("member {member} lost the race for role {role}: {cause}")
        }
    })
}

/// Best-effort exit from the roster.
fn leave(election: &Election<KafkaTransport>, role: &str, member: &str) {
    if let Err(e) = election.deregister(role, member) {
        tracing::warn!("could not leave the roster: {e}");
    }
}

fn resign(leadership: &Leadership) {
    if let Err(e) = leadership.resign() {
        tracing::warn!("{e}; the lease stays until its deadline");
    }
}

pub fn run(global: &GlobalArgs, args: RunArgs) -> CliResult<()> {
    match (args.command.is_empty(), args.standby) {
        (true, false) => {
            return Err(CliError::usage(
                "leader run needs a COMMAND after `--`, or --standby",
            ));
        }
        (false, true) => {
            return Err(CliError::usage(
                "--standby runs no command; drop COMMAND or --standby",
            ));
        }
        _ => {}
    }
    check_role(&args.role).map_err(|e| CliError::usage(e.to_string()))?;
    check_member(&args.member).map_err(|e| CliError::usage(e.to_string()))?;
    let topic = args.topic.topic.as_str();
    args.timing.config(topic, DEFAULT_PARTITIONS)?;

    // A hung request must fail within one renew interval, so a failed renewal
    // is noticed (and retried) before the lease runs out.
    let request_timeout = Duration::from_millis(global.connection.request_timeout_ms)
        .min(args.timing.renew)
        .max(Duration::from_millis(200));
    let transport = Arc::new(transport(global, request_timeout, args.timing.lease)?);
    let partitions = match transport.partition_count(topic).map_err(transport_error)? {
        Some(n) => n,
        None if args.create_topic => {
            transport
                .create_state_topic(topic, DEFAULT_PARTITIONS)
                .map_err(transport_error)?;
            tracing::info!("created topic {topic} ({DEFAULT_PARTITIONS} partitions, compacted)");
            transport
                .partition_count(topic)
                .map_err(transport_error)?
                .ok_or_else(|| CliError::failure(missing_topic(topic)))?
        }
        None => return Err(CliError::failure(missing_topic(topic))),
    };
    let config = args.timing.config(topic, partitions)?;
    let election = Election::new(transport, Arc::new(SystemClock), config);
    let stop = stop_on_signals()?;
    let (role, member) = (args.role.as_str(), args.member.as_str());

    let options = AcquireOptions {
        stop: stop.clone(),
        fresh_registration: true,
        observer: Some(observer(role.to_string(), member.to_string())),
        deadline: None,
    };
    let leadership = match election.acquire(role, member, &options) {
        Ok(l) => l,
        Err(e) => {
            leave(&election, role, member);
            return Err(match e {
                LeaderError::Cancelled { .. } => CliError::cancelled(),
                e => leader_error(e),
            });
        }
    };
    let lease = leadership.lease();
    tracing::info!(
        "member {member} holds role {role} with token {} until {}",
        leadership.token(),
        rfc3339_millis(lease.deadline())
    );
    let _renewals = leadership.spawn_renewals();

    if args.standby {
        return supervise_standby(&election, &leadership, &stop);
    }
    let env = [
        (ENV_ROLE, role.to_string()),
        (ENV_MEMBER, member.to_string()),
        (ENV_TOKEN, leadership.token().to_string()),
    ];
    let mut child = match Supervised::spawn(&args.command, &env) {
        Ok(c) => c,
        Err(e) => {
            resign(&leadership);
            leave(&election, role, member);
            return Err(CliError::failure(format!(
                "cannot start {}: {e}",
                args.command[0]
            )));
        }
    };
    tracing::info!("started the command (pid {})", child.pid());
    loop {
        match child.try_exit() {
            Ok(Some(code)) => {
                tracing::info!("the command exited with code {code}; resigning role {role}");
                resign(&leadership);
                leave(&election, role, member);
                return if code == 0 {
                    Ok(())
                } else {
                    Err(CliError::new(
                        ExitCode::Passthrough(code),
                        format!("the command exited with code {code}"),
                    ))
                };
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("cannot query the command: {e}"),
        }
        if let Some(end) = leadership.ended() {
            tracing::warn!("{end}; stopping the command");
            let (_, killed) = child.stop(args.grace);
            leave(&election, role, member);
            let how = if killed {
                format!(
                    "SIGKILL after the {} grace",
                    crate::engine::units::format_duration(args.grace)
                )
            } else {
                "SIGTERM".to_string()
            };
            return Err(CliError::failure(format!(
                "{end}; the command was stopped ({how})"
            )));
        }
        if stop.is_raised() {
            tracing::info!("stopping the command and resigning role {role}");
            child.stop(args.grace);
            resign(&leadership);
            leave(&election, role, member);
            return Err(CliError::cancelled());
        }
        leadership.ended_signal().wait_timeout(SUPERVISE_TICK);
    }
}

fn supervise_standby(
    election: &Election<KafkaTransport>,
    leadership: &Leadership,
    stop: &StopSignal,
) -> CliResult<()> {
    let (role, member) = (leadership.role(), leadership.member());
    loop {
        if let Some(end) = leadership.ended() {
            leave(election, role, member);
            return Err(CliError::failure(end.to_string()));
        }
        if stop.is_raised() {
            resign(leadership);
            leave(election, role, member);
            return Err(CliError::cancelled());
        }
        leadership.ended_signal().wait_timeout(SUPERVISE_TICK);
    }
}
