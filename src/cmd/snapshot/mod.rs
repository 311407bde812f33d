//! `snapshot`: list, dump, restore, verify and prune state snapshot files, and
//! restore an application to a barrier cut (state files and consumer offsets).
//!
//! Each subcommand module turns its flags into the plan of its use case in
//! `ops::snapshot`, calls it and renders the report (table or JSON, exit code);
//! this file holds the clap parsers they share. Their renderers live in
//! `cmd::render::snapshot` (the demo prints the same reports).

mod copy;
mod dump;
mod list;
mod prune;
mod restore;
mod restore_cut;
mod topic_view;
mod verify;

pub use copy::CopyArgs;
pub use dump::DumpArgs;
pub use list::ListArgs;
pub use prune::PruneArgs;
pub use restore::RestoreArgs;
pub use restore_cut::RestoreCutArgs;
pub use verify::VerifyArgs;

use clap::{Args, Subcommand};

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::engine::columnar::snapshot::naming::SnapshotLayout;
use crate::engine::columnar::snapshot::plan::parse_epoch;

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    pub command: SnapshotCommand,
}

#[derive(Debug, Subcommand)]
pub enum SnapshotCommand {
    /// List a directory's snapshot files (or a state topic's snapshots): owner, epoch, size, entries, whether each decodes.
    List(ListArgs),
    /// Print one snapshot's entries with their payloads decoded where the format is known.
    Dump(DumpArgs),
    /// Write a snapshot from a lossless dump, or copy one epoch's files to another epoch or to live state.
    Restore(RestoreArgs),
    /// Decode every snapshot file of a directory (or snapshot of a state topic); exit 3 when any is bad.
    Verify(VerifyArgs),
    /// Delete old barrier-epoch files, keeping the newest per partition (live state is never pruned).
    Prune(PruneArgs),
    /// Put an application back to a barrier cut: state snapshots become live state and the
    /// consumer group's offsets are set to the cut (a dry run unless --yes).
    RestoreCut(RestoreCutArgs),
    /// Copy state between a snapshot directory and a state topic, byte for byte, both ways.
    Copy(CopyArgs),
}

impl SnapshotCommand {
    /// The name used in error lines, e.g. `snapshot restore`.
    pub fn name(&self) -> &'static str {
        match self {
            SnapshotCommand::List(_) => "snapshot list",
            SnapshotCommand::Dump(_) => "snapshot dump",
            SnapshotCommand::Restore(_) => "snapshot restore",
            SnapshotCommand::Verify(_) => "snapshot verify",
            SnapshotCommand::Prune(_) => "snapshot prune",
            SnapshotCommand::RestoreCut(_) => "snapshot restore-cut",
            SnapshotCommand::Copy(_) => "snapshot copy",
        }
    }

    /// Why `--dry-run` cannot be honoured, when it cannot. `restore`, `prune` and
    /// `restore-cut` honour it (they report what they would change); the rest only read.
    pub fn dry_run_refusal(&self) -> Option<String> {
        match self {
            SnapshotCommand::Dump(a) => a.out.as_ref().map(|out| {
                format!(
                    "--out {} writes a file; drop --out to print the dump, or drop --dry-run",
                    out.display()
                )
            }),
            _ => None,
        }
    }
}

pub fn run(global: &GlobalArgs, args: SnapshotArgs) -> CliResult<()> {
    match args.command {
        SnapshotCommand::List(a) => list::run(global, a),
        SnapshotCommand::Dump(a) => dump::run(global, a),
        SnapshotCommand::Restore(a) => restore::run(global, a),
        SnapshotCommand::Verify(a) => verify::run(global, a),
        SnapshotCommand::Prune(a) => prune::run(global, a),
        SnapshotCommand::RestoreCut(a) => restore_cut::run(global, a),
        SnapshotCommand::Copy(a) => copy::run(global, a),
    }
}

/// clap parser for `--epoch E|live`.
pub(crate) fn epoch_or_live(text: &str) -> Result<i64, String> {
    parse_epoch(text, true)
}

/// clap parser for an epoch number.
pub(crate) fn epoch_number(text: &str) -> Result<i64, String> {
    parse_epoch(text, false)
}

/// clap parser for `--layout java-go|rust`.
pub(crate) fn layout_arg(text: &str) -> Result<SnapshotLayout, String> {
    text.parse()
        .map_err(|e: crate::engine::columnar::snapshot::naming::NamingError| e.to_string())
}
