//! `barrier verify`: one cut against committed offsets, snapshot files and/or an Arrow input.
//! Exit 0 only when the cut is complete and every requested check holds; 3 with a
//! per-partition report of each difference otherwise. Arguments and rendering; the checks
//! are `ops::barrier::verify`.

use std::str::FromStr;

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::render::barrier_verify::{failed_checks, report_json, write_report};
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::snapshot::naming::SnapshotLayout;
use crate::ops::barrier::verify::{
    ConsumerGroupRequest, InputRequest, SnapshotDirRequest, VerifyRequest, verify,
};

#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("checks").required(true).multiple(true).args(["consumer_group", "snapshot_dir", "input"])),
    after_help = "Checks (one or more):
  --consumer-group CG  CG's committed offset equals the cut offset on every partition the
                       cut names (with --at-least: is at or past it).
  --snapshot-dir DIR   a snapshot of the cut's epoch exists and decodes for every logical
                       partition (partition number across the cut's topics). The layout is
                       detected from the file names unless --layout is given:
                       java-go  partition-<p>-epoch-<e>.snapshot
                       rust     <group>-<task>-epoch-<e>.snapshot, task <task-prefix>-<p>;
                                without --task-prefix every numeric subtopology counts;
                                the group is the barrier group unless --snapshot-group.
  --input FILE|-       an Arrow IPC stream or file as `tail` writes it (reserved columns
                       __partition Int32, __offset Int64) holds, for each cut partition of
                       one topic, exactly the records the topic holds below the cut offset
                       (read from the broker, read_committed): none missing, none past the
                       cut, none twice. The topic is the cut's only topic, or --topic.

A partial cut, or an epoch that does not exist, is reported and never verified.

Exit codes: 0 verified, 3 not verified (a difference, a partial cut, or no such cut of the
group), 1 failure (no such group: __barrier_state holds no record of it; a snapshot
directory or input that cannot be read; a record of __barrier_state that does not
decode), 2 usage, 4 broker unreachable."
)]
pub struct VerifyArgs {
    /// Barrier group.
    #[arg(long, value_name = "GROUP")]
    pub group: String,

    /// Epoch of the cut, or `latest` (the highest complete cut).
    #[arg(long, value_name = "EPOCH|latest", value_parser = EpochSelector::from_str)]
    pub epoch: EpochSelector,

    /// Consumer group whose committed offsets must equal the cut offsets.
    #[arg(long = "consumer-group", value_name = "CG")]
    pub consumer_group: Option<String>,

    /// Accept committed offsets past the cut.
    #[arg(long, requires = "consumer_group")]
    pub at_least: bool,

    /// Directory of state snapshot files.
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,

    /// Snapshot file naming [default: detected from the directory].
    #[arg(long, value_enum, requires = "snapshot_dir")]
    pub layout: Option<LayoutArg>,

    /// Rust layout: the subtopology part of the task (`<task-prefix>-<partition>`).
    #[arg(long, value_name = "PREFIX", requires = "snapshot_dir")]
    pub task_prefix: Option<String>,

    /// Rust layout: the group in file names [default: the barrier group].
    #[arg(long, value_name = "NAME", requires = "snapshot_dir")]
    pub snapshot_group: Option<String>,

    /// Arrow IPC stream or file from `tail`; - reads stdin.
    #[arg(long, value_name = "FILE|-")]
    pub input: Option<String>,

    /// The topic the input holds (needed when the cut names several topics).
    #[arg(long, value_name = "TOPIC", requires = "input")]
    pub topic: Option<String>,
}

/// `--layout` values; `java` and `go` are accepted for the shared Java/Go naming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// partition-<p>-epoch-<e>.snapshot (Java 1.3+, Go).
    #[value(name = "java-go", alias = "java", alias = "go")]
    JavaGo,
    /// <group>-<task>-epoch-<e>.snapshot (krabka-streams-rs).
    Rust,
}

impl VerifyArgs {
    fn request(&self) -> CliResult<VerifyRequest> {
        if self.layout == Some(LayoutArg::JavaGo)
            && (self.task_prefix.is_some() || self.snapshot_group.is_some())
        {
            return Err(CliError::usage(
                "--task-prefix and --snapshot-group apply to the rust layout only",
            ));
        }
        if self.input.as_deref() == Some("-") && std::io::stdin().is_terminal() {
            return Err(CliError::usage(
                "--input - reads the Arrow input from stdin, which is a terminal; pipe it in or pass a file",
            ));
        }
        Ok(VerifyRequest {
            group: self.group.clone(),
            epoch: self.epoch,
            consumer_group: self.consumer_group.as_ref().map(|g| ConsumerGroupRequest {
                group: g.clone(),
                at_least: self.at_least,
            }),
            snapshots: self.snapshot_dir.as_ref().map(|dir| SnapshotDirRequest {
                dir: dir.clone(),
                layout: self.layout.map(|l| match l {
                    LayoutArg::JavaGo => SnapshotLayout::JavaGo,
                    LayoutArg::Rust => SnapshotLayout::Rust,
                }),
                task_prefix: self.task_prefix.clone(),
                snapshot_group: self.snapshot_group.clone(),
            }),
            input: self.input.as_ref().map(|input| InputRequest {
                path: (input != "-").then(|| PathBuf::from(input)),
                topic: self.topic.clone(),
            }),
        })
    }
}

pub fn run(global: &GlobalArgs, command: &str, args: VerifyArgs) -> CliResult<()> {
    let request = args.request()?;
    let settings = global.connection.kafka_settings(command)?;
    let report = verify(&settings, global.connection.timeout, &request)?;
    let ui = Ui::new(&global.output);
    ui.report(report_json(&report), |out| write_report(out, &report))?;
    if report.verified() {
        return Ok(());
    }
    Err(CliError::check_failed(match report.selection.problem() {
        Some(problem) => problem,
        None => format!(
            "barrier group {} epoch {} is not verified: {}",
            report.group,
            report
                .selection
                .cut()
                .map_or_else(|| report.selector.to_string(), |c| c.epoch.to_string()),
            failed_checks(&report).join(", ")
        ),
    }))
}
