//! `barrier`: read-only views of `__barrier_state` (list, show, watch), verification of a cut
//! against consumer offsets, snapshot files and Arrow inputs, and offline decoding of raw
//! records. Arguments and rendering only: each subcommand builds a plan, calls one function
//! of `ops::barrier` and renders its answer with `cmd::render::barrier` /
//! `cmd::render::barrier_verify` (shared with the demo).
//!
//! The barrier control plane (define, trigger) belongs to `krabka-barrier`; nothing here
//! writes to the broker.

mod decode;
mod list;
mod show;
mod verify;
mod watch;

use clap::{Args, Subcommand};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;

pub use list::ListArgs;
pub use show::ShowArgs;
pub use verify::VerifyArgs;
pub use watch::WatchArgs;

#[derive(Debug, Args)]
#[command(
    after_help = "Cuts are read from __barrier_state (every partition, to the end offsets captured at start). \
Defining and triggering barrier groups is krabka-barrier's job; these commands only read."
)]
pub struct BarrierArgs {
    #[command(subcommand)]
    pub command: BarrierCommand,
}

#[derive(Debug, Subcommand)]
pub enum BarrierCommand {
    /// List barrier groups and their cuts (complete cuts only unless --all).
    List(list::ListArgs),
    /// Show one cut in full: every topic, partition and offset.
    Show(show::ShowArgs),
    /// Print each new cut of a group as it is published, until Ctrl-C or --count.
    Watch(watch::WatchArgs),
    /// Check a cut against committed offsets, snapshot files and/or an Arrow input.
    Verify(verify::VerifyArgs),
    /// Decode raw __barrier_state or barrier marker bytes offline.
    Decode(decode::DecodeArgs),
}

impl BarrierArgs {
    /// The name used in error lines.
    pub fn name(&self) -> &'static str {
        match self.command {
            BarrierCommand::List(_) => "barrier list",
            BarrierCommand::Show(_) => "barrier show",
            BarrierCommand::Watch(_) => "barrier watch",
            BarrierCommand::Verify(_) => "barrier verify",
            BarrierCommand::Decode(_) => "barrier decode",
        }
    }

    /// Why `--dry-run` cannot be honoured, when it cannot: the rest only read.
    pub fn dry_run_refusal(&self) -> Option<String> {
        match &self.command {
            BarrierCommand::List(a) if a.out != "-" => Some(format!(
                "--out {} writes a file; print the rows with --out - or drop --dry-run",
                a.out
            )),
            _ => None,
        }
    }
}

pub fn run(global: &GlobalArgs, args: BarrierArgs) -> CliResult<()> {
    let name = args.name();
    match args.command {
        BarrierCommand::List(a) => list::run(global, name, a),
        BarrierCommand::Show(a) => show::run(global, name, a),
        BarrierCommand::Watch(a) => watch::run(global, name, a),
        BarrierCommand::Verify(a) => verify::run(global, name, a),
        BarrierCommand::Decode(a) => decode::run(global, a),
    }
}
