//! `leader resign` and `leader deregister`: the operator's writes. Each reads the role,
//! describes what it would do, lets the caller decide (print and stop on `--dry-run`,
//! ask unless `--yes`) and only then writes.
//!
//! Resigning someone else cannot be a plain lease tombstone: the holder would
//! simply write its next renewal. So `resign` does what a new holder would:
//! it mints a newer epoch for the role (fencing the holder, whose next
//! renewal is rejected and whose `leader run` stops its command) and clears
//! the lease under that epoch, so the next member in line challenges at once.

use std::sync::Arc;
use std::time::Duration;

use crate::engine::coordination::{
    CoordinationKey, Coordinator, Election, FencingToken, LeaderError, LeaseWriter, SystemClock,
    check_member, check_role,
};
use crate::io::kafka::coordination::KafkaTransport;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::leader::{Timing, leader_error, missing_topic, transport, transport_error};
use crate::ops::{Error, Result};

/// The member an operator's write is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberPlan {
    pub role: String,
    pub member: String,
    pub topic: String,
    /// The bound of one broker request.
    pub request_timeout: Duration,
}

/// What the caller decided once it saw the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proceed {
    Write,
    /// `--dry-run`: change nothing.
    DryRun,
}

/// The lease a resignation would fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResignPlanned {
    pub role: String,
    pub member: String,
    /// The holder's token, fenced by the newer epoch.
    pub token: FencingToken,
}

/// The registration a deregistration would remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeregisterPlanned {
    pub role: String,
    pub member: String,
    /// Offset of the registration record.
    pub offset: i64,
    /// The member still holds the lease (deregistering does not end that).
    pub holds_lease: bool,
}

/// The election on an existing topic; a missing topic is a failure (nothing to change).
fn open(settings: &KafkaSettings, plan: &MemberPlan) -> Result<Election<KafkaTransport>> {
    check_role(&plan.role).map_err(|e| Error::usage(e.to_string()))?;
    check_member(&plan.member).map_err(|e| Error::usage(e.to_string()))?;
    let topic = plan.topic.as_str();
    let timing = Timing::DEFAULT;
    let transport = Arc::new(transport(settings, plan.request_timeout, timing.lease)?);
    let partitions = transport
        .partition_count(topic)
        .map_err(transport_error)?
        .ok_or_else(|| Error::failure(missing_topic(topic)))?;
    let config = timing.config(topic, partitions)?;
    Ok(Election::new(transport, Arc::new(SystemClock), config))
}

/// Fences the holder `plan.member` of `plan.role`: mints a newer epoch and clears the lease
/// under it. A member that does not hold the role is a failure. Returns the plan and, when
/// written, the newer epoch.
pub fn resign(
    settings: &KafkaSettings,
    plan: &MemberPlan,
    decide: impl FnOnce(&ResignPlanned) -> Result<Proceed>,
) -> Result<(ResignPlanned, Option<FencingToken>)> {
    let election = open(settings, plan)?;
    let (role, member) = (plan.role.as_str(), plan.member.as_str());
    let state = election.read_state(role).map_err(leader_error)?;
    let lease = match state.lease() {
        Some(l) if l.member() == member => l.clone(),
        other => {
            return Err(Error::failure(format!(
                "member {member} does not hold role {role} (the lease names {})",
                other.map_or("nobody".to_string(), |l| l.member().to_string())
            )));
        }
    };
    let planned = ResignPlanned {
        role: role.to_string(),
        member: member.to_string(),
        token: lease.token(),
    };
    if decide(&planned)? == Proceed::DryRun {
        return Ok((planned, None));
    }
    let transport = election.transport();
    let partition = election.partition_of(role).map_err(leader_error)?;
    let newer = transport.acquire_epoch(role).map_err(|e| {
        leader_error(LeaderError::Mint {
            role: role.to_string(),
            cause: e,
        })
    })?;
    let key = CoordinationKey::lease(role)
        .map_err(|e| Error::usage(e.to_string()))?
        .encode();
    transport
        .write_lease(&partition, newer, &key, None)
        .map_err(|e| {
            leader_error(LeaderError::ClearLease {
                role: role.to_string(),
                cause: e,
            })
        })?;
    Ok((planned, Some(newer)))
}

/// Removes `plan.member`'s registration from the roster of `plan.role` (a registration
/// tombstone); a member that is not registered is a failure.
pub fn deregister(
    settings: &KafkaSettings,
    plan: &MemberPlan,
    decide: impl FnOnce(&DeregisterPlanned) -> Result<Proceed>,
) -> Result<DeregisterPlanned> {
    let election = open(settings, plan)?;
    let (role, member) = (plan.role.as_str(), plan.member.as_str());
    let state = election.read_state(role).map_err(leader_error)?;
    let Some(entry) = state.registration(member) else {
        return Err(Error::failure(format!(
            "member {member} is not registered for role {role}"
        )));
    };
    let planned = DeregisterPlanned {
        role: role.to_string(),
        member: member.to_string(),
        offset: entry.offset,
        holds_lease: state.holder() == Some(member),
    };
    if decide(&planned)? == Proceed::Write {
        election.deregister(role, member).map_err(leader_error)?;
    }
    Ok(planned)
}
