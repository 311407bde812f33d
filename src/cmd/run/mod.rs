//! `run`: a topology file (docs/topology.md) checked, explained, run offline
//! over Arrow IPC inputs (`tail … | run … | …` with no broker), or run online
//! as a consumer group. This file turns the flags into an `ops::run::RunPlan`,
//! lends `ops::run` what only the command line has (the schema-cache loader, the
//! terminal check, the Ctrl-C listener, the metrics printer) and renders the
//! answer; the use cases themselves are `ops::run`.

use std::str::FromStr;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};

use crate::cmd::exit::CliResult;
use crate::cmd::global::{GlobalArgs, OutputMode};
use crate::cmd::interrupt::Interrupt;
use crate::cmd::output::{Ui, refuse_binary_on_tty_or};
use crate::cmd::schema_cache::{SchemaCacheArgs, decoding_cache, open_cache};
use crate::cmd::threads::ThreadsArgs;
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::runner::Metrics;
use crate::engine::columnar::runner::offline::Outcome;
use crate::engine::schema::cache::SchemaCache;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::run::StartedInfo;
use crate::ops::run::{ExplainedNode, OfflineReport, OnlineReport, RunAnswer, RunHooks, RunPlan};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The topology file (YAML, `version: 1`; see docs/topology.md).
    pub file: PathBuf,

    /// Validate the file (names, parents, codecs, expressions against the declared or input schemas) and exit; 3 when invalid.
    #[arg(long, conflicts_with_all = ["explain", "threads"])]
    pub check: bool,

    /// Print the node graph with each node's columns and exit.
    #[arg(long, conflicts_with = "threads")]
    pub explain: bool,

    /// Run offline: read an Arrow IPC stream or file (`-` = stdin) into a source, named by node or topic. Repeatable.
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,

    /// Offline: write a sink's batches to PATH, named by node or topic: `.arrows` IPC stream, `.arrow` IPC file, `.parquet` Parquet, `-` stdout (stream). Repeatable.
    #[arg(long = "sink", value_name = "NAME=PATH")]
    pub sinks: Vec<String>,

    /// Offline with `error_policy: dead-letter`: write the failed input rows (with the krabka.error.* headers) to PATH.
    #[arg(long, value_name = "PATH")]
    pub dead_letter: Option<String>,

    #[command(flatten)]
    pub threads: ThreadsArgs,

    /// Print the metrics so far on stderr at this interval (e.g. 5s).
    #[arg(long, value_parser = parse_interval, value_name = "DURATION")]
    pub metrics_interval: Option<Duration>,

    /// Online with a barrier group: start from a complete cut (an epoch or `latest`): each partition's state from the cut's epoch snapshots, the consumer group's offsets set to the cut offsets. The group must have no members.
    #[arg(long, value_name = "E|latest", value_parser = EpochSelector::from_str, conflicts_with_all = ["check", "explain", "inputs"])]
    pub restore_cut: Option<EpochSelector>,

    /// Online: load the state store's snapshots even though they belong to another consumer group or topology (or record no owner), and record this run as their owner. Without it such state is refused, nothing processed, exit 1.
    #[arg(long, conflicts_with_all = ["check", "explain", "inputs"])]
    pub adopt_state: bool,

    #[command(flatten)]
    pub schema_cache: SchemaCacheArgs,
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = crate::engine::units::parse_duration(text)?;
    if d.is_zero() {
        return Err("the metrics interval must be positive".into());
    }
    Ok(d)
}

pub fn run(global: &GlobalArgs, args: RunArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    let plan = RunPlan {
        file: args.file.clone(),
        check: args.check,
        explain: args.explain,
        inputs: args.inputs.clone(),
        sinks: args.sinks.clone(),
        dead_letter: args.dead_letter.clone(),
        threads: args.threads.threads,
        metrics_interval: args.metrics_interval,
        restore_cut: args.restore_cut,
        adopt_state: args.adopt_state,
        command_config: global.connection.command_config.clone(),
        schema_cache: args.schema_cache.schema_cache.clone(),
        timeout: global.connection.timeout,
    };
    let mut hooks = CliHooks {
        global,
        ui: &ui,
        file: args.file.display().to_string(),
        schema_cache: args.schema_cache.schema_cache.clone(),
        interrupt: None,
    };
    match crate::ops::run::run(&plan, &mut hooks)? {
        RunAnswer::Explained(nodes) => explain(&ui, &nodes),
        RunAnswer::Checked { file, nodes } => ui.report(
            json!({"file": file, "valid": true, "nodes": nodes}),
            |out| writeln!(out, "{file}: valid ({nodes} nodes)"),
        ),
        RunAnswer::Offline(report) => offline_report(global, &ui, &report),
        RunAnswer::Online(report) => online_report(global, &ui, report),
    }
}

/// What `ops::run` asks of the command line.
struct CliHooks<'a> {
    global: &'a GlobalArgs,
    ui: &'a Ui,
    file: String,
    schema_cache: Option<PathBuf>,
    /// The Ctrl-C listener of an online run, from the moment it is subscribed.
    interrupt: Option<Interrupt>,
}

impl RunHooks for CliHooks<'_> {
    fn check_schema_cache(&mut self) -> CliResult<()> {
        open_cache(None, self.schema_cache.as_deref()).map(drop)
    }

    fn claim_stdout(&mut self) -> CliResult<()> {
        refuse_binary_on_tty_or("an Arrow IPC stream", "name a file: --sink NAME=FILE")
    }

    fn progress(&mut self, metrics: &Metrics) {
        print_metrics(self.ui, self.global.output.quiet > 0, metrics);
    }

    fn connect(&mut self) -> CliResult<(KafkaSettings, Option<SchemaCache>)> {
        let kafka = self.global.connection.kafka_settings("run")?;
        let cache = decoding_cache(self.global, self.schema_cache.as_deref())?;
        Ok((kafka, cache))
    }

    fn online_started(&mut self, started: &StartedInfo<'_>) -> CliResult<()> {
        self.interrupt = Some(Interrupt::install()?);
        if self.global.output.quiet > 0 || self.ui.is_json() {
            return Ok(());
        }
        eprintln!(
            "Running {} as group {} on {} (Ctrl-C to stop)",
            self.file,
            started.group,
            started.topics.join(", ")
        );
        if let Some(restored) = started.restored {
            let offsets: Vec<String> = restored
                .cut
                .cut
                .offsets()
                .map(|(tp, o)| format!("{tp}@{o}"))
                .collect();
            eprintln!(
                "Started from cut {} of barrier group {}: {} partition(s) restored, offsets {}",
                restored.cut.epoch,
                restored.cut.group,
                restored.states.len(),
                offsets.join(", ")
            );
        }
        Ok(())
    }

    fn stop_requested(&self) -> bool {
        self.interrupt.as_ref().is_some_and(Interrupt::is_set)
    }
}

fn explain(ui: &Ui, nodes: &[ExplainedNode]) -> CliResult<()> {
    let data: Vec<Value> = nodes
        .iter()
        .map(|n| {
            json!({
                "name": n.name,
                "kind": n.kind,
                "parents": n.parents,
                "detail": n.detail,
                "columns": n.columns.as_ref().map(|cs| cs.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>()),
            })
        })
        .collect();
    ui.report(json!({"nodes": data}), |out| {
        for n in nodes {
            let from = if n.parents.is_empty() {
                String::new()
            } else {
                format!(" <- {}", n.parents.join(", "))
            };
            writeln!(out, "{} [{}]{from}", n.name, n.kind)?;
            if !n.detail.is_empty() {
                writeln!(out, "    {}", n.detail)?;
            }
            if let Some(cs) = &n.columns {
                let text: Vec<String> = cs.iter().map(|(n, t)| format!("{n} {t}")).collect();
                writeln!(out, "    columns: {}", text.join(", "))?;
            }
        }
        Ok(())
    })
}

fn metrics_json(m: &Metrics) -> Value {
    json!({
        "batches": m.batches,
        "input_records": m.input_records,
        "output_records": m.output_records,
        "failures": m.failures,
        "dead_letter_records": m.dead_letter_records,
        "processing_nanos": m.processing_nanos,
    })
}

/// Prints the metrics so far on stderr: one JSON line in json mode, else a text line unless quiet.
fn print_metrics(ui: &Ui, quiet: bool, m: &Metrics) {
    if ui.is_json() {
        eprintln!("{}", json!({"metrics": metrics_json(m)}));
    } else if !quiet {
        eprintln!("metrics: {m}");
    }
}

/// The totals on stderr (human mode, unless quiet).
fn print_totals(global: &GlobalArgs, metrics: &Metrics) {
    if global.output.quiet == 0 && global.output.output == OutputMode::Human {
        eprintln!("Processed a total of {} records", metrics.input_records);
        eprintln!("{metrics}");
    }
}

fn offline_report(global: &GlobalArgs, ui: &Ui, report: &OfflineReport) -> CliResult<()> {
    let data = json!({
        "outcome": match report.outcome { Outcome::Completed => "completed", Outcome::OutputClosed => "output closed" },
        "metrics": metrics_json(&report.metrics),
    });
    print_totals(global, &report.metrics);
    if ui.is_json() {
        if report.to_stdout {
            eprintln!("{}", json!({"data": data}));
            return Ok(());
        }
        return ui.report(data, |_| Ok(()));
    }
    Ok(())
}

/// An online run always ends in an error: the failure, or cancelled (130).
fn online_report(global: &GlobalArgs, ui: &Ui, report: OnlineReport) -> CliResult<()> {
    let outcome = match report.outcome {
        crate::ops::run::OnlineOutcome::Failed(_) => "failed",
        crate::ops::run::OnlineOutcome::Interrupted => "interrupted",
    };
    print_totals(global, &report.metrics);
    if ui.is_json() {
        ui.report(
            json!({"outcome": outcome, "group": report.group, "metrics": metrics_json(&report.metrics)}),
            |_| Ok(()),
        )?;
    }
    Err(report.into_error())
}
