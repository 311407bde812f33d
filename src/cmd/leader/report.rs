//! `leader status`, `leader list` and `leader watch`: read and fold the
//! coordination topic, evaluate every member now, and check the lease token
//! against the broker's epoch where DescribeTransactions exists (D25: else the
//! token is reported `unverified`). A missing topic means no registrations (D20).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use clap::Args;
use serde_json::{Value, json};

use super::run::stop_on_signals;
use super::{TimingArgs, TopicArgs, inspect_timeout, leader_error, transport, transport_error};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, finish_stdout, table};
use crate::engine::coordination::{
    Action, Clock, CoordinationKey, DEFAULT_PARTITIONS, Election, FencingToken, LeadershipStatus,
    LeaseConfig, StateRecord, Succession, SystemClock, TopicPartition, check_role, role_partition,
};
use crate::engine::time::rfc3339_millis;
use crate::engine::units::parse_duration;
use crate::io::kafka::coordination::KafkaTransport;

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The role to show.
    #[arg(long, value_name = "ROLE")]
    pub role: String,
    /// Exit 0 only if TOKEN (producer_id:epoch) is the broker's current epoch of
    /// the role: 3 when it is not, 4 when the broker cannot tell (no DescribeTransactions).
    #[arg(long = "expect-token", value_name = "TOKEN")]
    pub expect_token: Option<String>,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub topic: TopicArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub topic: TopicArgs,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The role to watch.
    #[arg(long, value_name = "ROLE")]
    pub role: String,
    /// Exit after this many changes (the state at start counts as the first).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Give up after this long (exit 0); runs until Ctrl-C without it.
    #[arg(long = "for", value_parser = parse_duration, value_name = "DURATION")]
    pub duration: Option<std::time::Duration>,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub topic: TopicArgs,
}

/// What the broker says about the role's epoch.
enum EpochCheck {
    /// No DescribeTransactions on this broker (D25).
    Unverified,
    Checked(LeadershipStatus),
}

impl EpochCheck {
    fn json(&self, lease_token: Option<FencingToken>) -> Value {
        match self {
            EpochCheck::Unverified => json!({"verified": false}),
            EpochCheck::Checked(s) => json!({
                "verified": true,
                "token": (!s.token.is_no_epoch()).then(|| s.token.to_string()),
                "held": s.held,
                "authoritative": lease_token.map(|t| s.is_authoritative(t)),
            }),
        }
    }

    fn human(&self, lease_token: Option<FencingToken>) -> String {
        match (self, lease_token) {
            (EpochCheck::Unverified, _) => "unverified: the broker does not answer DescribeTransactions; the token is the latest lease record's".into(),
            (EpochCheck::Checked(s), Some(t)) if s.is_authoritative(t) => {
                format!("authoritative ({s})")
            }
            (EpochCheck::Checked(s), Some(_)) => format!("NOT authoritative: {s}"),
            (EpochCheck::Checked(s), None) => s.to_string(),
        }
    }
}

/// One role, folded and evaluated at `now`.
struct RoleView<'a> {
    state: &'a Succession,
    partition: Option<TopicPartition>,
    config: &'a LeaseConfig,
    now: i64,
    epoch: EpochCheck,
}

impl RoleView<'_> {
    /// Roster members ordered by rank, then registration offset.
    fn ranked(&self) -> Vec<(i64, &crate::engine::coordination::RosterEntry)> {
        let mut out: Vec<_> = self
            .state
            .roster()
            .iter()
            .map(|e| (self.state.rank_of(&e.member).unwrap_or(0), e))
            .collect();
        out.sort_by_key(|(rank, e)| (*rank, e.offset));
        out
    }

    fn decision(&self, member: &str) -> (Action, Option<i64>) {
        match self.state.evaluate(self.config, member, self.now) {
            Action::Wait(until) => (Action::Wait(until), Some(until)),
            a => (a, None),
        }
    }

    fn json(&self) -> Value {
        let lease = self.state.lease();
        json!({
            "role": self.state.role(),
            "topic": self.config.topic(),
            "partition": self.partition.as_ref().map(|p| p.partition),
            "now": self.now,
            "holder": lease.map(|l| json!({
                "member": l.member(),
                "token": l.token().to_string(),
                "granted_at": l.granted_at(),
                "deadline": l.deadline(),
                "live": l.term().is_live(self.now),
                "remaining_ms": l.term().remaining_ms(self.now),
            })),
            "roster": self.ranked().iter().map(|(rank, e)| {
                let (action, until) = self.decision(&e.member);
                json!({
                    "rank": rank,
                    "member": e.member,
                    "offset": e.offset,
                    "registered_at": e.registered_at,
                    "decision": action.to_string(),
                    "until": until,
                })
            }).collect::<Vec<_>>(),
            "epoch": self.epoch.json(lease.map(|l| l.token())),
        })
    }

    fn human(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let role = self.state.role();
        match &self.partition {
            Some(p) => writeln!(out, "role {role} ({p})")?,
            None => writeln!(
                out,
                "role {role} (topic {} does not exist: no registrations)",
                self.config.topic()
            )?,
        }
        let lease = self.state.lease();
        match lease {
            Some(l) => {
                let term = l.term();
                let liveness = if term.is_live(self.now) {
                    format!("live, {} left", seconds(term.remaining_ms(self.now)))
                } else {
                    "expired".to_string()
                };
                writeln!(
                    out,
                    "holder: {} with token {}, granted {}, deadline {} ({liveness})",
                    l.member(),
                    l.token(),
                    rfc3339_millis(l.granted_at()),
                    rfc3339_millis(l.deadline())
                )?;
            }
            None => writeln!(out, "holder: none (no lease)")?,
        }
        writeln!(
            out,
            "epoch:  {}",
            self.epoch.human(lease.map(|l| l.token()))
        )?;
        if self.state.roster().is_empty() {
            return writeln!(out, "roster: empty");
        }
        let mut t = table(&["rank", "member", "registered", "offset", "decision now"]);
        for (rank, e) in self.ranked() {
            let (action, until) = self.decision(&e.member);
            let decision = match until {
                Some(u) => format!(
                    "{action} until {} (in {})",
                    rfc3339_millis(u),
                    seconds(u - self.now)
                ),
                None => action.to_string(),
            };
            t.add_row(vec![
                rank.to_string(),
                e.member.clone(),
                rfc3339_millis(e.registered_at),
                e.offset.to_string(),
                decision,
            ]);
        }
        writeln!(out, "{t}")
    }
}

/// Describe when the broker can, else unverified.
fn check_epoch(
    transport: &KafkaTransport,
    election: &Election<KafkaTransport>,
    role: &str,
) -> CliResult<EpochCheck> {
    if !transport.supports_describe().map_err(transport_error)? {
        return Ok(EpochCheck::Unverified);
    }
    Ok(EpochCheck::Checked(
        election.describe(role).map_err(leader_error)?,
    ))
}

/// The election on `topic`, with the real partition count or, for a missing
/// topic, the default (only used to describe the epoch).
fn open(
    global: &GlobalArgs,
    timing: &TimingArgs,
    topic: &str,
) -> CliResult<(Arc<KafkaTransport>, Election<KafkaTransport>, bool)> {
    timing.config(topic, DEFAULT_PARTITIONS)?;
    let transport = Arc::new(transport(global, inspect_timeout(global), timing.lease)?);
    let count = transport.partition_count(topic).map_err(transport_error)?;
    let config = timing.config(topic, count.unwrap_or(DEFAULT_PARTITIONS))?;
    let election = Election::new(transport.clone(), Arc::new(SystemClock), config);
    Ok((transport, election, count.is_some()))
}

pub fn status(global: &GlobalArgs, args: StatusArgs) -> CliResult<()> {
    check_role(&args.role).map_err(|e| CliError::usage(e.to_string()))?;
    let expect = args
        .expect_token
        .as_deref()
        .map(|t| {
            t.parse::<FencingToken>()
                .map_err(|e| CliError::usage(e.to_string()))
        })
        .transpose()?;
    let ui = Ui::new(&global.output);
    let (transport, election, exists) = open(global, &args.timing, &args.topic.topic)?;
    let (state, partition) = if exists {
        let state = election.read_state(&args.role).map_err(leader_error)?;
        (
            state,
            Some(election.partition_of(&args.role).map_err(leader_error)?),
        )
    } else {
        (
            Succession::fold(&args.role, &[]).map_err(|e| CliError::failure(e.to_string()))?,
            None,
        )
    };
    let epoch = check_epoch(&transport, &election, &args.role)?;
    let verdict = match (&expect, &epoch) {
        (None, _) => Ok(()),
        (Some(t), EpochCheck::Unverified) => Err(CliError::unreachable(format!(
            "cannot verify token {t} of role {}: the broker does not answer DescribeTransactions (unverified)",
            args.role
        ))),
        (Some(t), EpochCheck::Checked(s)) if s.is_authoritative(*t) => Ok(()),
        (Some(t), EpochCheck::Checked(s)) => Err(CliError::check_failed(format!(
            "token {t} is not the authoritative epoch ({s})"
        ))),
    };
    let view = RoleView {
        state: &state,
        partition,
        config: election.config(),
        now: SystemClock.now_ms(),
        epoch,
    };
    ui.report(view.json(), |out| view.human(out))?;
    verdict
}

/// Every record of every partition, grouped by role.
fn read_roles(
    transport: &KafkaTransport,
    topic: &str,
    partitions: i32,
) -> CliResult<BTreeMap<String, (i32, Vec<StateRecord>)>> {
    let mut roles: BTreeMap<String, (i32, Vec<StateRecord>)> = BTreeMap::new();
    for p in 0..partitions {
        let tp = TopicPartition::new(topic, p);
        let records = crate::engine::coordination::StateReader::read_partition(transport, &tp)
            .map_err(transport_error)?;
        for r in records {
            let key = CoordinationKey::decode(&r.key).map_err(|e| {
                CliError::failure(format!(
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

pub fn list(global: &GlobalArgs, args: ListArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let topic = args.topic.topic.as_str();
    let (transport, election, exists) = open(global, &args.timing, topic)?;
    let roles = if exists {
        read_roles(&transport, topic, election.config().partitions())?
    } else {
        BTreeMap::new()
    };
    let describe = exists && transport.supports_describe().map_err(transport_error)?;
    let now = SystemClock.now_ms();
    let mut states = Vec::new();
    let mut meta = Vec::new();
    for (role, (p, records)) in &roles {
        let state = Succession::fold(role, records)
            .map_err(|e| CliError::failure(format!("read the state of role {role}: {e}")))?;
        let epoch = if describe {
            EpochCheck::Checked(election.describe(role).map_err(leader_error)?)
        } else {
            EpochCheck::Unverified
        };
        if role_partition(role, election.config().partitions()).ok() != Some(*p) {
            tracing::warn!("role {role} has records in {topic}-{p}, not in its pinned partition");
        }
        states.push(state);
        meta.push((TopicPartition::new(topic, *p), epoch));
    }
    let rendered: Vec<RoleView> = states
        .iter()
        .zip(meta)
        .map(|(state, (partition, epoch))| RoleView {
            state,
            partition: Some(partition),
            config: election.config(),
            now,
            epoch,
        })
        .collect();
    let data = json!({
        "topic": topic,
        "exists": exists,
        "roles": rendered.iter().map(RoleView::json).collect::<Vec<_>>(),
    });
    ui.report(data, |out| {
        if !exists {
            return writeln!(out, "topic {topic} does not exist: no registrations");
        }
        if rendered.is_empty() {
            return writeln!(out, "no roles in {topic}");
        }
        for (i, view) in rendered.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            view.human(out)?;
        }
        Ok(())
    })
}

/// What `watch` reports a change of.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Observed {
    holder: Option<String>,
    token: Option<FencingToken>,
    live: bool,
}

pub fn watch(global: &GlobalArgs, args: WatchArgs) -> CliResult<()> {
    check_role(&args.role).map_err(|e| CliError::usage(e.to_string()))?;
    let ui = Ui::new(&global.output);
    let topic = args.topic.topic.as_str();
    let (transport, mut election, mut exists) = open(global, &args.timing, topic)?;
    let stop = stop_on_signals()?;
    let started = SystemClock.now_ms();
    let until = args
        .duration
        .map(|d| started.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)));
    let poll = election.config().poll_ms();
    let mut last: Option<Observed> = None;
    let mut seen = 0u64;
    loop {
        if !exists && let Some(n) = transport.partition_count(topic).map_err(transport_error)? {
            let config = args.timing.config(topic, n)?;
            election = Election::new(transport.clone(), Arc::new(SystemClock), config);
            exists = true;
        }
        let state = if exists {
            election.read_state(&args.role).map_err(leader_error)?
        } else {
            Succession::fold(&args.role, &[]).map_err(|e| CliError::failure(e.to_string()))?
        };
        let now = SystemClock.now_ms();
        let lease = state.lease();
        let observed = Observed {
            holder: lease.map(|l| l.member().to_string()),
            token: lease.map(|l| l.token()),
            live: lease.is_some_and(|l| l.term().is_live(now)),
        };
        if last.as_ref() != Some(&observed) {
            print_change(&ui, &args.role, now, &state)?;
            last = Some(observed);
            seen += 1;
            if args.count.is_some_and(|n| seen >= n) {
                return Ok(());
            }
        }
        if until.is_some_and(|u| now >= u) {
            return Ok(());
        }
        if !SystemClock.sleep(poll, &stop) {
            return Err(CliError::cancelled());
        }
    }
}

fn print_change(ui: &Ui, role: &str, now: i64, state: &Succession) -> CliResult<()> {
    let lease = state.lease();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = if ui.is_json() {
        let event = json!({
            "time": now,
            "role": role,
            "holder": lease.map(|l| l.member()),
            "token": lease.map(|l| l.token().to_string()),
            "granted_at": lease.map(|l| l.granted_at()),
            "deadline": lease.map(|l| l.deadline()),
            "live": lease.is_some_and(|l| l.term().is_live(now)),
        });
        writeln!(out, "{event}")
    } else {
        let text = match lease {
            None => format!("role {role}: no holder"),
            Some(l) if l.term().is_live(now) => format!(
                "role {role}: {} holds with token {} until {}",
                l.member(),
                l.token(),
                rfc3339_millis(l.deadline())
            ),
            Some(l) => format!(
                "role {role}: the lease of {} (token {}) expired at {}",
                l.member(),
                l.token(),
                rfc3339_millis(l.deadline())
            ),
        };
        writeln!(out, "{} {text}", rfc3339_millis(now))
    };
    finish_stdout(result.and_then(|_| out.flush()))
}

/// A millisecond extent as seconds with one decimal: `21.3s`.
fn seconds(ms: i64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(id: i64, epoch: i16) -> FencingToken {
        FencingToken::new(id, epoch).unwrap()
    }

    #[test]
    fn the_lease_token_is_authoritative_only_when_the_broker_holds_it() {
        let status = LeadershipStatus {
            role: "r".into(),
            token: token(5, 3),
            held: true,
        };
        let checked = EpochCheck::Checked(status);
        assert_eq!(
            checked.human(Some(token(5, 3))),
            "authoritative (role r: epoch 5:3)"
        );
        assert_eq!(checked.json(Some(token(5, 3)))["authoritative"], true);
        assert_eq!(
            checked.human(Some(token(5, 2))),
            "NOT authoritative: role r: epoch 5:3"
        );
        assert_eq!(checked.json(Some(token(5, 2)))["authoritative"], false);
        let never = EpochCheck::Checked(LeadershipStatus::never_taken("r"));
        assert_eq!(never.json(None)["token"], Value::Null);
        assert_eq!(never.human(None), "role r: no epoch");
        assert!(EpochCheck::Unverified.human(None).starts_with("unverified"));
        assert_eq!(EpochCheck::Unverified.json(None)["verified"], false);
    }
}
