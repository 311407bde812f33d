//! `barrier verify`: one cut against committed offsets, snapshot files and/or an Arrow input.
//! Exit 0 only when the cut is complete and every requested check holds; 3 with a
//! per-partition report of each difference otherwise. Arguments and rendering; the checks
//! are `ops::barrier::verify`.

use std::str::FromStr;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::engine::columnar::barrier::selection::{CutSelection, EpochSelector};
use crate::engine::columnar::barrier::verify::{InputPartitionCheck, OffsetRanges};
use crate::engine::columnar::snapshot::naming::SnapshotLayout;
use crate::engine::time::rfc3339_millis;
use crate::ops::barrier::verify::{
    CommittedReport, ConsumerGroupRequest, InputCheckReport, InputRequest, LayoutSource,
    SnapshotDirRequest, SnapshotReport, VerifyReport, VerifyRequest, verify,
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

fn failed_checks(report: &VerifyReport) -> Vec<String> {
    let mut failed = Vec::new();
    if let Some(c) = report.consumer_group.as_ref().filter(|c| !c.ok()) {
        failed.push(format!("consumer group {} differs", c.group));
    }
    if let Some(s) = report.snapshots.as_ref().filter(|s| !s.ok()) {
        failed.push(format!("snapshots in {} differ", s.dir.display()));
    }
    if let Some(i) = report.input.as_ref().filter(|i| !i.report.ok()) {
        failed.push(format!("input {} differs", i.source));
    }
    failed
}

/// The human report.
pub fn write_report(out: &mut dyn Write, report: &VerifyReport) -> std::io::Result<()> {
    let cut = match &report.selection {
        CutSelection::Complete(cut) => cut,
        other => {
            return writeln!(out, "NOT VERIFIED: {}", other.problem().unwrap_or_default());
        }
    };
    writeln!(
        out,
        "cut: barrier group {} epoch {} (complete, completed {}, {} partitions)",
        cut.group,
        cut.epoch,
        rfc3339_millis(cut.cut.completed_at),
        cut.cut.offsets().count()
    )?;
    if let Some(c) = &report.consumer_group {
        write_committed(out, c)?;
    }
    if let Some(s) = &report.snapshots {
        write_snapshots(out, s)?;
    }
    if let Some(i) = &report.input {
        write_input(out, i)?;
    }
    if report.verified() {
        writeln!(out, "VERIFIED")
    } else {
        writeln!(out, "NOT VERIFIED: {}", failed_checks(report).join(", "))
    }
}

fn write_committed(out: &mut dyn Write, c: &CommittedReport) -> std::io::Result<()> {
    let good = c.checks.iter().filter(|x| x.verdict.ok()).count();
    let rule = if c.at_least {
        "at or past the cut"
    } else {
        "at the cut"
    };
    writeln!(
        out,
        "committed offsets of consumer group {}: {good} of {} partitions {rule}",
        c.group,
        c.checks.len()
    )?;
    for x in c.checks.iter().filter(|x| !x.verdict.ok()) {
        let committed = x
            .committed
            .map_or_else(|| "nothing".to_owned(), |o| o.to_string());
        writeln!(
            out,
            "  {}: committed {committed}, cut offset {}: {}",
            x.partition,
            x.cut_offset,
            x.verdict.describe()
        )?;
    }
    Ok(())
}

fn layout_text(s: &SnapshotReport) -> String {
    let how = match s.layout_source {
        LayoutSource::Given => "given",
        LayoutSource::Detected => "detected",
        LayoutSource::Assumed => "assumed: no snapshot files in the directory",
    };
    format!("{}, {how}", s.layout)
}

fn write_snapshots(out: &mut dyn Write, s: &SnapshotReport) -> std::io::Result<()> {
    let good = s.checks.iter().filter(|c| c.ok()).count();
    writeln!(
        out,
        "snapshots in {} ({}) for epoch {}: {good} of {} logical partitions have a decodable snapshot",
        s.dir.display(),
        layout_text(s),
        s.epoch,
        s.checks.len()
    )?;
    for c in s.checks.iter().filter(|c| !c.ok()) {
        if c.files.is_empty() {
            writeln!(out, "  partition {}: missing {}", c.partition, c.expected)?;
        }
        for f in &c.files {
            if let Err(e) = &f.outcome {
                writeln!(out, "  partition {}: {}: {e}", c.partition, f.name)?;
            }
        }
    }
    Ok(())
}

fn write_input(out: &mut dyn Write, i: &InputCheckReport) -> std::io::Result<()> {
    let r = &i.report;
    let good = r.partitions.iter().filter(|p| p.ok()).count();
    writeln!(
        out,
        "input {} (topic {}, {} rows): {good} of {} partitions hold exactly the records before the cut",
        i.source,
        r.topic,
        i.rows,
        r.partitions.len()
    )?;
    for p in r.partitions.iter().filter(|p| !p.ok()) {
        writeln!(
            out,
            "  {}/{} (cut offset {}): {}",
            r.topic,
            p.partition,
            p.cut_offset,
            differences(p).join("; ")
        )?;
    }
    for (partition, rows) in &r.other_partitions {
        writeln!(
            out,
            "  {}/{partition}: {rows} rows of a partition the cut does not name",
            r.topic
        )?;
    }
    Ok(())
}

fn differences(p: &InputPartitionCheck) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |what: &str, ranges: &OffsetRanges| {
        if !ranges.is_empty() {
            out.push(format!("{what} {ranges} ({} records)", ranges.count()));
        }
    };
    add("missing", &p.missing);
    add("past the cut", &p.past_cut);
    add("duplicated", &p.duplicates);
    add("not in the topic", &p.not_in_topic);
    out
}

/// The JSON report.
pub fn report_json(report: &VerifyReport) -> Value {
    let ranges = |r: &OffsetRanges| -> Value {
        r.ranges()
            .iter()
            .map(|(a, b)| json!([a, b]))
            .collect::<Vec<_>>()
            .into()
    };
    let mut checks = Vec::new();
    if let Some(c) = &report.consumer_group {
        checks.push(json!({
            "check": "consumer-group",
            "consumer_group": c.group,
            "at_least": c.at_least,
            "ok": c.ok(),
            "partitions": c.checks.iter().map(|x| json!({
                "topic": x.partition.topic,
                "partition": x.partition.partition,
                "cut_offset": x.cut_offset,
                "committed": x.committed,
                "verdict": x.verdict.describe(),
                "ok": x.verdict.ok(),
            })).collect::<Vec<_>>(),
        }));
    }
    if let Some(s) = &report.snapshots {
        checks.push(json!({
            "check": "snapshots",
            "dir": s.dir.display().to_string(),
            "layout": s.layout.as_str(),
            "layout_source": match s.layout_source {
                LayoutSource::Given => "given",
                LayoutSource::Detected => "detected",
                LayoutSource::Assumed => "assumed",
            },
            "epoch": s.epoch,
            "ok": s.ok(),
            "partitions": s.checks.iter().map(|c| json!({
                "partition": c.partition,
                "expected": c.expected,
                "ok": c.ok(),
                "files": c.files.iter().map(|f| match &f.outcome {
                    Ok(summary) => json!({
                        "name": f.name,
                        "ok": true,
                        "generation": summary.generation.label(),
                        "entries": summary.entries,
                        "bytes": summary.bytes,
                    }),
                    Err(e) => json!({"name": f.name, "ok": false, "error": e}),
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }));
    }
    if let Some(i) = &report.input {
        let r = &i.report;
        checks.push(json!({
            "check": "input",
            "source": i.source,
            "topic": r.topic,
            "rows": i.rows,
            "ok": r.ok(),
            "partitions": r.partitions.iter().map(|p| json!({
                "partition": p.partition,
                "cut_offset": p.cut_offset,
                "log_start": p.log_start,
                "expected": p.expected,
                "matched": p.matched,
                "missing": ranges(&p.missing),
                "past_cut": ranges(&p.past_cut),
                "duplicates": ranges(&p.duplicates),
                "not_in_topic": ranges(&p.not_in_topic),
                "before_log_start": p.before_log_start,
                "ok": p.ok(),
            })).collect::<Vec<_>>(),
            "other_partitions": r.other_partitions.iter().map(|(p, rows)| json!({"partition": p, "rows": rows})).collect::<Vec<_>>(),
        }));
    }
    json!({
        "group": report.group,
        "epoch": report.selection.cut().map(|c| c.epoch),
        "selector": report.selector.to_string(),
        "verified": report.verified(),
        "problem": report.selection.problem(),
        "cut": report.selection.cut().map(super::render::cut_summary_json),
        "checks": checks,
    })
}
