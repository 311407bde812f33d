//! `leader status`, `leader list` and `leader watch`: read and fold the coordination
//! topic, evaluate every member now, and check the lease token against the broker's
//! epoch where DescribeTransactions exists (D25: else the token is reported
//! `unverified`). A missing topic means no registrations (D20). The answers are typed;
//! rendering them is the command's job.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::coordination::{
    Action, Clock, CoordinationKey, DEFAULT_PARTITIONS, Election, FencingToken, LeadershipStatus,
    LeaseConfig, RosterEntry, StateRecord, StopSignal, Succession, SystemClock, TopicPartition,
    check_role, role_partition,
};
use crate::io::kafka::coordination::KafkaTransport;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::leader::{Timing, leader_error, transport, transport_error};
use crate::ops::{Error, Result};

/// Where and how to read: the coordination topic, the lease timing members use (it
/// decides each member's decision now) and the bound of one broker request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPlan {
    pub topic: String,
    pub timing: Timing,
    pub request_timeout: Duration,
}

/// What the broker says about the role's epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EpochCheck {
    /// No DescribeTransactions on this broker (D25).
    Unverified,
    Checked(LeadershipStatus),
}

/// One role, folded and evaluated at `now`.
#[derive(Debug, Clone)]
pub struct RoleReport {
    pub state: Succession,
    /// `None` when the topic does not exist.
    pub partition: Option<TopicPartition>,
    pub config: LeaseConfig,
    pub now: i64,
    pub epoch: EpochCheck,
}

impl RoleReport {
    /// Roster members ordered by rank, then registration offset.
    pub fn ranked(&self) -> Vec<(i64, &RosterEntry)> {
        let mut out: Vec<_> = self
            .state
            .roster()
            .iter()
            .map(|e| (self.state.rank_of(&e.member).unwrap_or(0), e))
            .collect();
        out.sort_by_key(|(rank, e)| (*rank, e.offset));
        out
    }

    /// What `member` would do now, and until when it waits.
    pub fn decision(&self, member: &str) -> (Action, Option<i64>) {
        match self.state.evaluate(&self.config, member, self.now) {
            Action::Wait(until) => (Action::Wait(until), Some(until)),
            a => (a, None),
        }
    }
}

/// `leader status`: one role, and the verdict on an expected token.
#[derive(Debug, Clone)]
pub struct Status {
    pub report: RoleReport,
    /// `Err` (check failed, or unreachable when the broker cannot tell) when an expected
    /// token is not the broker's epoch; reported after the role is printed.
    pub verdict: Result<()>,
}

/// The election on `topic`, with the real partition count or, for a missing
/// topic, the default (only used to describe the epoch).
fn open(
    settings: &KafkaSettings,
    plan: &ReadPlan,
) -> Result<(Arc<KafkaTransport>, Election<KafkaTransport>, bool)> {
    let topic = plan.topic.as_str();
    plan.timing.config(topic, DEFAULT_PARTITIONS)?;
    let transport = Arc::new(transport(
        settings,
        plan.request_timeout,
        plan.timing.lease,
    )?);
    let count = transport.partition_count(topic).map_err(transport_error)?;
    let config = plan
        .timing
        .config(topic, count.unwrap_or(DEFAULT_PARTITIONS))?;
    let election = Election::new(transport.clone(), Arc::new(SystemClock), config);
    Ok((transport, election, count.is_some()))
}

/// Describe when the broker can, else unverified.
fn check_epoch(
    transport: &KafkaTransport,
    election: &Election<KafkaTransport>,
    role: &str,
) -> Result<EpochCheck> {
    if !transport.supports_describe().map_err(transport_error)? {
        return Ok(EpochCheck::Unverified);
    }
    Ok(EpochCheck::Checked(
        election.describe(role).map_err(leader_error)?,
    ))
}

/// The role's state and epoch; with `expect`, whether that token is the broker's epoch.
pub fn status(
    settings: &KafkaSettings,
    plan: &ReadPlan,
    role: &str,
    expect: Option<&str>,
) -> Result<Status> {
    check_role(role).map_err(|e| Error::usage(e.to_string()))?;
    let expect = expect
        .map(|t| {
            t.parse::<FencingToken>()
                .map_err(|e| Error::usage(e.to_string()))
        })
        .transpose()?;
    let (transport, election, exists) = open(settings, plan)?;
    let (state, partition) = if exists {
        let state = election.read_state(role).map_err(leader_error)?;
        (
            state,
            Some(election.partition_of(role).map_err(leader_error)?),
        )
    } else {
        (
            Succession::fold(role, &[]).map_err(|e| Error::failure(e.to_string()))?,
            None,
        )
    };
    let epoch = check_epoch(&transport, &election, role)?;
    let verdict = match (&expect, &epoch) {
        (None, _) => Ok(()),
        (Some(t), EpochCheck::Unverified) => Err(Error::unreachable(format!(
            "cannot verify token {t} of role {role}: the broker does not answer DescribeTransactions (unverified)"
        ))),
        (Some(t), EpochCheck::Checked(s)) if s.is_authoritative(*t) => Ok(()),
        (Some(t), EpochCheck::Checked(s)) => Err(Error::check_failed(format!(
            "token {t} is not the authoritative epoch ({s})"
        ))),
    };
    Ok(Status {
        report: RoleReport {
            state,
            partition,
            config: election.config().clone(),
            now: SystemClock.now_ms(),
            epoch,
        },
        verdict,
    })
}

/// `leader list`: every role of the topic.
#[derive(Debug, Clone)]
pub struct RoleListing {
    pub exists: bool,
    pub roles: Vec<RoleReport>,
}

/// Every record of every partition, grouped by role.
fn read_roles(
    transport: &KafkaTransport,
    topic: &str,
    partitions: i32,
) -> Result<BTreeMap<String, (i32, Vec<StateRecord>)>> {
    let mut roles: BTreeMap<String, (i32, Vec<StateRecord>)> = BTreeMap::new();
    for p in 0..partitions {
        let tp = TopicPartition::new(topic, p);
        let records = crate::engine::coordination::StateReader::read_partition(transport, &tp)
            .map_err(transport_error)?;
        for r in records {
            let key = CoordinationKey::decode(&r.key).map_err(|e| {
                Error::failure(format!(
                    "decode the key at offset {} of {tp}: {e}",
                    r.offset
                ))
            })?;
            roles
                .entry(key.role().to_string())
                .or_insert_with(|| (p, Vec::new()))
                .1
                .push(r);
        }
    }
    Ok(roles)
}

/// Every role found in the topic, folded and evaluated at one `now`.
pub fn list(settings: &KafkaSettings, plan: &ReadPlan) -> Result<RoleListing> {
    let topic = plan.topic.as_str();
    let (transport, election, exists) = open(settings, plan)?;
    let roles = if exists {
        read_roles(&transport, topic, election.config().partitions())?
    } else {
        BTreeMap::new()
    };
    let describe = exists && transport.supports_describe().map_err(transport_error)?;
    let now = SystemClock.now_ms();
    let mut reports = Vec::new();
    for (role, (p, records)) in &roles {
        let state = Succession::fold(role, records)
            .map_err(|e| Error::failure(format!("read the state of role {role}: {e}")))?;
        let epoch = if describe {
            EpochCheck::Checked(election.describe(role).map_err(leader_error)?)
        } else {
            EpochCheck::Unverified
        };
        if role_partition(role, election.config().partitions()).ok() != Some(*p) {
            tracing::warn!("role {role} has records in {topic}-{p}, not in its pinned partition");
        }
        reports.push(RoleReport {
            state,
            partition: Some(TopicPartition::new(topic, *p)),
            config: election.config().clone(),
            now,
            epoch,
        });
    }
    Ok(RoleListing {
        exists,
        roles: reports,
    })
}

/// What `watch` follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchPlan {
    pub read: ReadPlan,
    pub role: String,
    /// Stop after this many changes (the state at start counts as the first).
    pub count: Option<u64>,
    /// Stop (successfully) after this long.
    pub duration: Option<Duration>,
}

/// What `watch` reports a change of.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Observed {
    holder: Option<String>,
    token: Option<FencingToken>,
    live: bool,
}

/// Reads the role every poll interval and passes each change of holder, token or
/// liveness to `emit` with the time it was seen, until `count` changes, `duration`, or
/// `stop` ([`crate::ops::ErrorKind::Cancelled`]). A topic created meanwhile is picked up.
pub fn watch(
    settings: &KafkaSettings,
    plan: &WatchPlan,
    stop: &StopSignal,
    mut emit: impl FnMut(i64, &Succession) -> Result<()>,
) -> Result<()> {
    check_role(&plan.role).map_err(|e| Error::usage(e.to_string()))?;
    let topic = plan.read.topic.as_str();
    let (transport, mut election, mut exists) = open(settings, &plan.read)?;
    let started = SystemClock.now_ms();
    let until = plan
        .duration
        .map(|d| started.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    let poll = election.config().poll_ms();
    let mut last: Option<Observed> = None;
    let mut seen = 0u64;
    loop {
        if !exists && let Some(n) = transport.partition_count(topic).map_err(transport_error)? {
            let config = plan.read.timing.config(topic, n)?;
            election = Election::new(transport.clone(), Arc::new(SystemClock), config);
            exists = true;
        }
        let state = if exists {
            election.read_state(&plan.role).map_err(leader_error)?
        } else {
            Succession::fold(&plan.role, &[]).map_err(|e| Error::failure(e.to_string()))?
        };
        let now = SystemClock.now_ms();
        let lease = state.lease();
        let observed = Observed {
            holder: lease.map(|l| l.member().to_string()),
            token: lease.map(|l| l.token()),
            live: lease.is_some_and(|l| l.term().is_live(now)),
        };
        if last.as_ref() != Some(&observed) {
            emit(now, &state)?;
            last = Some(observed);
            seen += 1;
            if plan.count.is_some_and(|n| seen >= n) {
                return Ok(());
            }
        }
        if until.is_some_and(|u| now >= u) {
            return Ok(());
        }
        if !SystemClock.sleep(poll, stop) {
            return Err(Error::cancelled());
        }
    }
}
