//! `barrier watch`: prints each new cut of a group as it is published.

use std::io::Write;
use std::ops::ControlFlow;
use std::time::Duration;

use clap::Args;

use crate::cmd::barrier::render::{cut_full_json, cut_line};
use crate::cmd::exit::{CliError, CliResult, is_broken_pipe};
use crate::cmd::global::GlobalArgs;
use crate::cmd::interrupt::Interrupt;
use crate::cmd::output::Ui;
use crate::engine::columnar::barrier::BARRIER_STATE_TOPIC;
use crate::io::kafka::barrier_watch::{
    WatchEnd, WatchError, WatchEvent, WatchOptions, follow_cuts,
};

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
    let options = WatchOptions {
        group: args.group.clone(),
        include_partial: args.all,
        poll_interval: args.poll_interval,
        timeout: global.connection.timeout,
    };
    let mut printed = 0u64;
    let mut write_error = None;
    let mut unknown_group = None;
    let end = follow_cuts(
        &settings,
        &options,
        &|| interrupt.is_set(),
        |event| match event {
            WatchEvent::WaitingForTopic => {
                tracing::info!("{BARRIER_STATE_TOPIC} does not exist yet; waiting for it");
                ControlFlow::Continue(())
            }
            WatchEvent::Following {
                unknown: Some(unknown),
                ..
            } => {
                unknown_group = Some(unknown);
                ControlFlow::Break(())
            }
            WatchEvent::Following {
                partitions,
                last_epoch,
                unknown: None,
            } => {
                let after = if last_epoch < 1 {
                    String::new()
                } else {
                    format!(" after epoch {last_epoch}")
                };
                tracing::info!(
                    "following {BARRIER_STATE_TOPIC} ({partitions} partitions) for new cuts of group {}{after}; Ctrl-C stops",
                    args.group
                );
                ControlFlow::Continue(())
            }
            WatchEvent::Cut(cut) => {
                let line = if ui.is_json() {
                    cut_full_json(cut).to_string()
                } else {
                    cut_line(cut)
                };
                let mut out = std::io::stdout().lock();
                if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
                    write_error = Some(e);
                    return ControlFlow::Break(());
                }
                printed += 1;
                if args.count.is_some_and(|n| printed >= n) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            }
        },
    )
    .map_err(watch_error)?;
    if let Some(unknown) = unknown_group {
        return Err(CliError::failure(unknown.to_string()));
    }
    match (end, write_error) {
        (_, Some(e)) if is_broken_pipe(&e) => Ok(()),
        (_, Some(e)) => Err(CliError::failure(format!("cannot write to stdout: {e}"))),
        (WatchEnd::Cancelled, None) => Err(CliError::cancelled()),
        (WatchEnd::Stopped, None) => Ok(()),
    }
}

fn watch_error(e: WatchError) -> CliError {
    if e.is_unreachable() {
        CliError::unreachable(e.to_string())
    } else {
        CliError::failure(e.to_string())
    }
}
