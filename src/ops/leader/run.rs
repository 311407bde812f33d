//! `leader run`: join the roster of a role, wait for the turn, hold the role and supervise
//! a command while holding it (or, as a standby, only hold it). The command is stopped
//! (SIGTERM, then SIGKILL after the grace) when this member is fenced, its lease expires,
//! or `stop` is raised; its exit code is passed through (`docs/semantics.md` §9).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::engine::coordination::{
    AcquireEvent, AcquireObserver, AcquireOptions, DEFAULT_PARTITIONS, Election, LeaderError,
    Leadership, StopSignal, SystemClock, check_member, check_role,
};
use crate::engine::time::rfc3339_millis;
use crate::io::kafka::coordination::KafkaTransport;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::process::Supervised;
use crate::ops::leader::{Timing, leader_error, missing_topic, transport, transport_error};
use crate::ops::{Error, ErrorKind, Result};

pub const ENV_ROLE: &str = "KRABKA_LEADER_ROLE";
pub const ENV_MEMBER: &str = "KRABKA_LEADER_MEMBER";
pub const ENV_TOKEN: &str = "KRABKA_LEADER_TOKEN";

/// How often the supervisor looks at the command, the leadership and signals.
const SUPERVISE_TICK: Duration = Duration::from_millis(50);

/// What `leader run` does.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub role: String,
    pub member: String,
    pub timing: Timing,
    /// Time the command gets between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Hold the role without a command.
    pub standby: bool,
    pub create_topic: bool,
    pub topic: String,
    /// The command and its arguments; empty with `standby`.
    pub command: Vec<String>,
    /// The caller's bound of one broker request (further capped by the renew interval).
    pub request_timeout: Duration,
    /// Raised on Ctrl-C / SIGTERM by the caller.
    pub stop: StopSignal,
}

/// Holds the role and supervises the command. `Ok` when the command exited 0; its non-zero
/// code is [`ErrorKind::Passthrough`]; a fence or an expired lease is a failure; `stop` is
/// [`ErrorKind::Cancelled`].
pub fn run(settings: &KafkaSettings, plan: &RunPlan) -> Result<()> {
    match (plan.command.is_empty(), plan.standby) {
        (true, false) => {
            return Err(Error::usage(
                "leader run needs a COMMAND after `--`, or --standby",
            ));
        }
        (false, true) => {
            return Err(Error::usage(
                "--standby runs no command; drop COMMAND or --standby",
            ));
        }
        _ => {}
    }
    check_role(&plan.role).map_err(|e| Error::usage(e.to_string()))?;
    check_member(&plan.member).map_err(|e| Error::usage(e.to_string()))?;
    let topic = plan.topic.as_str();
    plan.timing.config(topic, DEFAULT_PARTITIONS)?;

    // A hung request must fail within one renew interval, so a failed renewal
    // is noticed (and retried) before the lease runs out.
    let request_timeout = plan
        .request_timeout
        .min(plan.timing.renew)
        .max(Duration::from_millis(200));
    let transport = Arc::new(transport(settings, request_timeout, plan.timing.lease)?);
    let partitions = match transport.partition_count(topic).map_err(transport_error)? {
        Some(n) => n,
        None if plan.create_topic => {
            transport
                .create_state_topic(topic, DEFAULT_PARTITIONS)
                .map_err(transport_error)?;
            tracing::info!("created topic {topic} ({DEFAULT_PARTITIONS} partitions, compacted)");
            transport
                .partition_count(topic)
                .map_err(transport_error)?
                .ok_or_else(|| Error::failure(missing_topic(topic)))?
        }
        None => return Err(Error::failure(missing_topic(topic))),
    };
    let config = plan.timing.config(topic, partitions)?;
    let election = Election::new(transport, Arc::new(SystemClock), config);
    let (role, member) = (plan.role.as_str(), plan.member.as_str());

    let options = AcquireOptions {
        stop: plan.stop.clone(),
        fresh_registration: true,
        observer: Some(observer(role.to_string(), member.to_string())),
        deadline: None,
    };
    let leadership = match election.acquire(role, member, &options) {
        Ok(l) => l,
        Err(e) => {
            leave(&election, role, member);
            return Err(match e {
                LeaderError::Cancelled { .. } => Error::cancelled(),
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

    if plan.standby {
        return supervise_standby(&election, &leadership, &plan.stop);
    }
    supervise_command(&election, &leadership, plan)
}

/// Starts the command with the role, member and token in its environment and watches it,
/// the leadership and `stop` until one of them ends.
fn supervise_command(
    election: &Election<KafkaTransport>,
    leadership: &Leadership,
    plan: &RunPlan,
) -> Result<()> {
    let (role, member) = (plan.role.as_str(), plan.member.as_str());
    let env = [
        (ENV_ROLE, role.to_string()),
        (ENV_MEMBER, member.to_string()),
        (ENV_TOKEN, leadership.token().to_string()),
    ];
    let mut child = match Supervised::spawn(&plan.command, &env) {
        Ok(c) => c,
        Err(e) => {
            resign(leadership);
            leave(election, role, member);
            return Err(Error::failure(format!(
                "cannot start {}: {e}",
                plan.command[0]
            )));
        }
    };
    tracing::info!("started the command (pid {})", child.pid());
    loop {
        match child.try_exit() {
            Ok(Some(code)) => {
                tracing::info!("the command exited with code {code}; resigning role {role}");
                resign(leadership);
                leave(election, role, member);
                return if code == 0 {
                    Ok(())
                } else {
                    Err(Error::new(
                        ErrorKind::Passthrough(code),
                        format!("the command exited with code {code}"),
                    ))
                };
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("cannot query the command: {e}"),
        }
        if let Some(end) = leadership.ended() {
            tracing::warn!("{end}; stopping the command");
            let (_, killed) = child.stop(plan.grace);
            leave(election, role, member);
            let how = if killed {
                format!(
                    "SIGKILL after the {} grace",
                    crate::engine::units::format_duration(plan.grace)
                )
            } else {
                "SIGTERM".to_string()
            };
            return Err(Error::failure(format!(
                "{end}; the command was stopped ({how})"
            )));
        }
        if plan.stop.is_raised() {
            tracing::info!("stopping the command and resigning role {role}");
            child.stop(plan.grace);
            resign(leadership);
            leave(election, role, member);
            return Err(Error::cancelled());
        }
        leadership.ended_signal().wait_timeout(SUPERVISE_TICK);
    }
}

fn supervise_standby(
    election: &Election<KafkaTransport>,
    leadership: &Leadership,
    stop: &StopSignal,
) -> Result<()> {
    let (role, member) = (leadership.role(), leadership.member());
    loop {
        if let Some(end) = leadership.ended() {
            leave(election, role, member);
            return Err(Error::failure(end.to_string()));
        }
        if stop.is_raised() {
            resign(leadership);
            leave(election, role, member);
            return Err(Error::cancelled());
        }
        leadership.ended_signal().wait_timeout(SUPERVISE_TICK);
    }
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
