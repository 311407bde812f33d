//! `demo`: a walkthrough of every subcommand that exists, on an embedded cluster
//! and an embedded registry, with no setup. The steps are `ops::demo`'s; this module
//! turns the arguments into its plan, calls [`ops::demo::walkthrough`] once and renders
//! the typed results ([`render`]) with the subcommands' own renderers, from
//! `cmd::render`.

mod render;

use std::io::IsTerminal;

use clap::Args;
use serde_json::json;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::tail_host::ConsoleHost;
use crate::ops;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the embedded cluster and registry running after the walkthrough until Ctrl-C.
    #[arg(long)]
    pub keep_running: bool,
}

/// Runs the walkthrough and prints its steps: `== title` and the text of each, or
/// one JSON document `{"steps": [{"step": title, "result": …}, …]}`.
pub fn run(global: &GlobalArgs, args: DemoArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let host = ConsoleHost {
        progress: std::io::stderr().is_terminal(),
    };
    let walkthrough = ops::demo::walkthrough(ops::demo::DemoPlan { tail_host: &host })?;
    let steps = render::steps(&walkthrough)?;
    ui.report(
        json!({"steps": steps.iter().map(render::Step::json).collect::<Vec<_>>()}),
        |out| {
            for s in &steps {
                writeln!(out, "== {}\n{}\n", s.title, s.text)?;
            }
            writeln!(
                out,
                "demo complete: every step above ran against the embedded cluster and registry"
            )
        },
    )?;
    if args.keep_running {
        let stop = crate::cmd::interrupt::StopSignal::listen();
        eprintln!(
            "embedded cluster at {}, registry at {}; Ctrl-C stops them",
            walkthrough.bootstrap, walkthrough.registry_url
        );
        stop.wait()?;
    }
    drop(walkthrough);
    Ok(())
}
