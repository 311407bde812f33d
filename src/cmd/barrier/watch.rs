//! `barrier watch`: prints each new cut of a group as it is published (arguments and
//! printing; following the topic is `ops::barrier::watch`).

use std::io::Write;
use std::time::Duration;

use clap::Args;

use crate::cmd::exit::{CliError, CliResult, is_broken_pipe};
use crate::cmd::global::GlobalArgs;
use crate::cmd::interrupt::Interrupt;
use crate::cmd::output::Ui;
use crate::cmd::render::barrier::{cut_full_json, cut_line};
use crate::ops::barrier::watch::{Emitted, WatchPlan, watch};

#[derive(Debug, Args)]
#[command(
    after_help = "Cuts already in __barrier_state when the watch starts are not printed; \
each cut published afterwards is printed as one line (with --output json: one JSON object per line, \
the cut with all its offsets, not wrapped in {\"data\": …}).

Exit codes: 0 after --count cuts, 130 on Ctrl-C, 1 a record of __barrier_state does not decode, \
4 broker unreachable."
)]
pub struct WatchArgs {
    /// Barrier group.
    #[arg(long, value_name = "GROUP")]
    pub group: String,

    /// Exit 0 after this many new cuts.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    /// Also print partial cuts.
    #[arg(long)]
    pub all: bool,

    /// Pause between reads of __barrier_state (e.g. 500ms, 2s).
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = crate::engine::units::parse_duration)]
    pub poll_interval: Duration,
}

pub fn run(global: &GlobalArgs, command: &str, args: WatchArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings(command)?;
    let ui = Ui::new(&global.output);
    let interrupt = Interrupt::install()?;
    let plan = WatchPlan {
        group: args.group,
        count: args.count,
        include_partial: args.all,
        poll_interval: args.poll_interval,
        timeout: global.connection.timeout,
    };
    watch(&settings, &plan, &|| interrupt.is_set(), |cut| {
        let line = if ui.is_json() {
            cut_full_json(cut).to_string()
        } else {
            cut_line(cut)
        };
        let mut out = std::io::stdout().lock();
        match writeln!(out, "{line}").and_then(|_| out.flush()) {
            Ok(()) => Ok(Emitted::Printed),
            Err(e) if is_broken_pipe(&e) => Ok(Emitted::ReaderGone),
            Err(e) => Err(CliError::failure(format!("cannot write to stdout: {e}"))),
        }
    })
}
