//! `leader status`, `leader list` and `leader watch`: the arguments and the rendering of
//! what `ops::leader::report` reads (each role's roster, lease, decisions and whether the
//! token is the broker's epoch).

use std::io::Write;

use clap::Args;
use serde_json::{Value, json};

use super::run::stop_on_signals;
use super::{TimingArgs, TopicArgs, inspect_timeout};
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::{Ui, finish_stdout, table};
use crate::engine::coordination::{FencingToken, Succession};
use crate::engine::time::rfc3339_millis;
use crate::engine::units::parse_duration;
use crate::ops::leader::report::{
    EpochCheck, ReadPlan, RoleReport, WatchPlan, list as list_roles, status as role_status,
    watch as watch_role,
};

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

/// The rendering of the broker's answer about the role's epoch.
trait EpochText {
    fn json(&self, lease_token: Option<FencingToken>) -> Value;
    fn human(&self, lease_token: Option<FencingToken>) -> String;
}

impl EpochText for EpochCheck {
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

/// One role as printed.
struct RoleView<'a>(&'a RoleReport);

impl RoleView<'_> {
    fn json(&self) -> Value {
        let lease = self.0.state.lease();
        json!({
            "role": self.0.state.role(),
            "topic": self.0.config.topic(),
            "partition": self.0.partition.as_ref().map(|p| p.partition),
            "now": self.0.now,
            "holder": lease.map(|l| json!({
                "member": l.member(),
                "token": l.token().to_string(),
                "granted_at": l.granted_at(),
                "deadline": l.deadline(),
                "live": l.term().is_live(self.0.now),
                "remaining_ms": l.term().remaining_ms(self.0.now),
            })),
            "roster": self.0.ranked().iter().map(|(rank, e)| {
                let (action, until) = self.0.decision(&e.member);
                json!({
                    "rank": rank,
                    "member": e.member,
                    "offset": e.offset,
                    "registered_at": e.registered_at,
                    "decision": action.to_string(),
                    "until": until,
                })
            }).collect::<Vec<_>>(),
            "epoch": self.0.epoch.json(lease.map(|l| l.token())),
        })
    }

    fn human(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let role = self.0.state.role();
        match &self.0.partition {
            Some(p) => writeln!(out, "role {role} ({p})")?,
            None => writeln!(
                out,
                "role {role} (topic {} does not exist: no registrations)",
                self.0.config.topic()
            )?,
        }
        let lease = self.0.state.lease();
        match lease {
            Some(l) => {
                let term = l.term();
                let liveness = if term.is_live(self.0.now) {
                    format!("live, {} left", seconds(term.remaining_ms(self.0.now)))
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
            self.0.epoch.human(lease.map(|l| l.token()))
        )?;
        if self.0.state.roster().is_empty() {
            return writeln!(out, "roster: empty");
        }
        let mut t = table(&["rank", "member", "registered", "offset", "decision now"]);
        for (rank, e) in self.0.ranked() {
            let (action, until) = self.0.decision(&e.member);
            let decision = match until {
                Some(u) => format!(
                    "{action} until {} (in {})",
                    rfc3339_millis(u),
                    seconds(u - self.0.now)
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

/// What the inspecting subcommands read.
fn read_plan(global: &GlobalArgs, timing: &TimingArgs, topic: &TopicArgs) -> ReadPlan {
    ReadPlan {
        topic: topic.topic.clone(),
        timing: timing.timing(),
        request_timeout: inspect_timeout(global),
    }
}

pub fn status(global: &GlobalArgs, args: StatusArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings("leader")?;
    let ui = Ui::new(&global.output);
    let plan = read_plan(global, &args.timing, &args.topic);
    let status = role_status(&settings, &plan, &args.role, args.expect_token.as_deref())?;
    let view = RoleView(&status.report);
    ui.report(view.json(), |out| view.human(out))?;
    status.verdict
}

pub fn list(global: &GlobalArgs, args: ListArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings("leader")?;
    let ui = Ui::new(&global.output);
    let plan = read_plan(global, &args.timing, &args.topic);
    let topic = plan.topic.as_str();
    let listing = list_roles(&settings, &plan)?;
    let (exists, rendered) = (
        listing.exists,
        listing.roles.iter().map(RoleView).collect::<Vec<_>>(),
    );
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

pub fn watch(global: &GlobalArgs, args: WatchArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings("leader")?;
    let ui = Ui::new(&global.output);
    let plan = WatchPlan {
        read: read_plan(global, &args.timing, &args.topic),
        role: args.role,
        count: args.count,
        duration: args.duration,
    };
    let stop = stop_on_signals()?;
    watch_role(&settings, &plan, &stop, |now, state| {
        print_change(&ui, &plan.role, now, state)
    })
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
    use crate::engine::coordination::LeadershipStatus;

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
