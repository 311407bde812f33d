//! `leader resign` and `leader deregister`: the operator's writes. Both print
//! the plan, ask unless --yes, and change nothing on --dry-run; what is read and
//! written is `ops::leader::admin`.

use clap::Args;
use serde_json::json;

use super::{TopicArgs, inspect_timeout};
use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::ops::leader::admin::{
    DeregisterPlanned, MemberPlan, Proceed, ResignPlanned, deregister as ops_deregister,
    resign as ops_resign,
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

fn member_plan(global: &GlobalArgs, args: MemberArgs) -> MemberPlan {
    MemberPlan {
        role: args.role,
        member: args.member,
        topic: args.topic.topic,
        request_timeout: inspect_timeout(global),
    }
}

/// Prints the plan and asks, unless `--dry-run` (then nothing is written).
fn decide(ui: &Ui, plan: &str) -> CliResult<Proceed> {
    if ui.dry_run {
        return Ok(Proceed::DryRun);
    }
    eprintln!("{plan}");
    ui.confirm("Proceed?")?;
    Ok(Proceed::Write)
}

fn resign_text(p: &ResignPlanned) -> String {
    format!(
        "resign member {} from role {}: mint a newer epoch (fencing token {}) and clear the lease; the next member in line takes over",
        p.member, p.role, p.token
    )
}

pub fn resign(global: &GlobalArgs, args: MemberArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings("leader")?;
    let ui = Ui::new(&global.output);
    let plan = member_plan(global, args);
    let (planned, newer) = ops_resign(&settings, &plan, |p| decide(&ui, &resign_text(p)))?;
    let (role, member, token) = (&planned.role, &planned.member, planned.token);
    let Some(newer) = newer else {
        let text = resign_text(&planned);
        return ui.report(
            json!({"role": role, "member": member, "token": token.to_string(), "plan": text}),
            |out| writeln!(out, "{text}"),
        );
    };
    ui.report(
        json!({"role": role, "member": member, "fenced_token": token.to_string(), "epoch": newer.to_string()}),
        |out| {
            writeln!(
                out,
                "role {role}: member {member} (token {token}) is fenced by epoch {newer}; the lease is cleared"
            )
        },
    )
}

fn deregister_text(p: &DeregisterPlanned) -> String {
    let (role, member) = (&p.role, &p.member);
    let mut plan = format!(
        "deregister member {member} from role {role} (registered at offset {}): it leaves the roster",
        p.offset
    );
    if p.holds_lease {
        plan.push_str(&format!(
            "; it still holds the lease (use `leader resign --role {role} --member {member}` to end that)"
        ));
    }
    plan
}

pub fn deregister(global: &GlobalArgs, args: MemberArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings("leader")?;
    let ui = Ui::new(&global.output);
    let plan = member_plan(global, args);
    let planned = ops_deregister(&settings, &plan, |p| decide(&ui, &deregister_text(p)))?;
    let (role, member) = (&planned.role, &planned.member);
    let data = json!({"role": role, "member": member, "offset": planned.offset, "holds_lease": planned.holds_lease});
    if ui.dry_run {
        let text = deregister_text(&planned);
        return ui.report(data, |out| writeln!(out, "{text}"));
    }
    ui.report(data, |out| {
        writeln!(out, "role {role}: member {member} deregistered")
    })
}
