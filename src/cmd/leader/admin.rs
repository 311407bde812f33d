//! `leader resign` and `leader deregister`: the operator's writes. Both print
//! the plan, ask unless --yes, and change nothing on --dry-run.
//!
//! Resigning someone else cannot be a plain lease tombstone: the holder would
//! simply write its next renewal. So `resign` does what a new holder would:
//! it mints a newer epoch for the role (fencing the holder, whose next
//! renewal is rejected and whose `leader run` stops its command) and clears
//! the lease under that epoch, so the next member in line challenges at once.

use std::sync::Arc;

use clap::Args;
use serde_json::json;

use super::{
    TimingArgs, TopicArgs, inspect_timeout, leader_error, missing_topic, transport, transport_error,
};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::engine::coordination::{
    CoordinationKey, Coordinator, Election, LeaseWriter, SystemClock, check_member, check_role,
};

#[derive(Debug, Args)]
pub struct MemberArgs {
    /// The role.
    #[arg(long, value_name = "ROLE")]
    pub role: String,
    /// The member (for `resign`: the member expected to hold the role).
    #[arg(long, value_name = "MEMBER")]
    pub member: String,
    #[command(flatten)]
    pub topic: TopicArgs,
}

fn open(global: &GlobalArgs, args: &MemberArgs) -> CliResult<Election<super::KafkaTransport>> {
    check_role(&args.role).map_err(|e| CliError::usage(e.to_string()))?;
    check_member(&args.member).map_err(|e| CliError::usage(e.to_string()))?;
    let topic = args.topic.topic.as_str();
    let timing = TimingArgs {
        lease: std::time::Duration::from_secs(30),
        renew: std::time::Duration::from_secs(10),
        stagger: std::time::Duration::from_secs(5),
        poll: std::time::Duration::from_secs(1),
    };
    let transport = Arc::new(transport(global, inspect_timeout(global), timing.lease)?);
    let partitions = transport
        .partition_count(topic)
        .map_err(transport_error)?
        .ok_or_else(|| CliError::failure(missing_topic(topic)))?;
    let config = timing.config(topic, partitions)?;
    Ok(Election::new(transport, Arc::new(SystemClock), config))
}

pub fn resign(global: &GlobalArgs, args: MemberArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let election = open(global, &args)?;
    let (role, member) = (args.role.as_str(), args.member.as_str());
    let state = election.read_state(role).map_err(leader_error)?;
    let lease = match state.lease() {
        Some(l) if l.member() == member => l.clone(),
        other => {
            return Err(CliError::failure(format!(
                "member {member} does not hold role {role} (the lease names {})",
                other.map_or("nobody".to_string(), |l| l.member().to_string())
            )));
        }
    };
    let plan = format!(
        "resign member {member} from role {role}: mint a newer epoch (fencing token {}) and clear the lease; the next member in line takes over",
        lease.token()
    );
    if ui.dry_run {
        return ui.report(
            json!({"role": role, "member": member, "token": lease.token().to_string(), "plan": plan}),
            |out| writeln!(out, "{plan}"),
        );
    }
    eprintln!("{plan}");
    ui.confirm("Proceed?")?;
    let transport = election.transport();
    let partition = election.partition_of(role).map_err(leader_error)?;
    let newer = transport.acquire_epoch(role).map_err(|e| {
        leader_error(crate::engine::coordination::LeaderError::Mint {
            role: role.to_string(),
            cause: e,
        })
    })?;
    let key = CoordinationKey::lease(role)
        .map_err(|e| CliError::usage(e.to_string()))?
        .encode();
    transport
        .write_lease(&partition, newer, &key, None)
        .map_err(|e| {
            leader_error(crate::engine::coordination::LeaderError::ClearLease {
                role: role.to_string(),
                cause: e,
            })
        })?;
    ui.report(
        json!({"role": role, "member": member, "fenced_token": lease.token().to_string(), "epoch": newer.to_string()}),
        |out| {
            writeln!(
                out,
                "role {role}: member {member} (token {}) is fenced by epoch {newer}; the lease is cleared",
                lease.token()
            )
        },
    )
}

pub fn deregister(global: &GlobalArgs, args: MemberArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let election = open(global, &args)?;
    let (role, member) = (args.role.as_str(), args.member.as_str());
    let state = election.read_state(role).map_err(leader_error)?;
    let Some(entry) = state.registration(member) else {
        return Err(CliError::failure(format!(
            "member {member} is not registered for role {role}"
        )));
    };
    let holds = state.holder() == Some(member);
    let mut plan = format!(
        "deregister member {member} from role {role} (registered at offset {}): it leaves the roster",
        entry.offset
    );
    if holds {
        plan.push_str(&format!(
            "; it still holds the lease (use `leader resign --role {role} --member {member}` to end that)"
        ));
    }
    let data =
        json!({"role": role, "member": member, "offset": entry.offset, "holds_lease": holds});
    if ui.dry_run {
        return ui.report(data, |out| writeln!(out, "{plan}"));
    }
    eprintln!("{plan}");
    ui.confirm("Proceed?")?;
    election.deregister(role, member).map_err(leader_error)?;
    ui.report(data, |out| {
        writeln!(out, "role {role}: member {member} deregistered")
    })
}
