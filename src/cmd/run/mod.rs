//! `run`: a topology file (docs/topology.md) checked, explained, run offline
//! over Arrow IPC inputs (`tail … | run … | …` with no broker), or run online
//! as a consumer group (`online`). This file maps names to nodes, opens the
//! files and renders the report.

mod allocator;
pub mod online;
mod restore_cut;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use arrow_schema::SchemaRef;
use clap::Args;
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult, ExitCode};
use crate::cmd::global::{GlobalArgs, OutputMode};
use crate::cmd::output::{Ui, refuse_binary_on_tty_or};
use crate::cmd::schema_cache::{SchemaCacheArgs, open_cache};
use crate::cmd::snapshot::restore_cut::{CutSelector, cut_selector};
use crate::engine::columnar::expr::types::type_name;
use crate::engine::columnar::metadata::PARTITION_COLUMN;
use crate::engine::columnar::parallel::default_threads;
use crate::engine::columnar::runner::Metrics;
use crate::engine::columnar::runner::offline::{
    BatchReader, BatchWriter, OfflineInput, OfflineRun, Outcome, Progress, normalized_schema,
};
use crate::engine::columnar::topology::spec::{
    self, BuiltSpec, ErrorPolicy, NodeOp, OfflineCodecs, TopologySpec,
};
use crate::engine::columnarschema::topology_codecs;
use crate::io::arrow_files::{IpcInput, IpcOutput, PrefetchedInput};
use crate::io::topology_file;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The topology file (YAML, `version: 1`; see docs/topology.md).
    pub file: PathBuf,

    /// Validate the file (names, parents, codecs, expressions against the declared or input schemas) and exit; 3 when invalid.
    #[arg(long, conflicts_with = "explain")]
    pub check: bool,

    /// Print the node graph with each node's columns and exit.
    #[arg(long)]
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

    /// Offline: threads the engine may process one batch on (group-by lookups and aggregates; default: the available cores). The output is byte-identical at every count; 1 is the one-thread path.
    #[arg(long, value_name = "N", value_parser = parse_threads, conflicts_with_all = ["check", "explain"])]
    pub threads: Option<usize>,

    /// Print the metrics so far on stderr at this interval (e.g. 5s).
    #[arg(long, value_parser = parse_interval, value_name = "DURATION")]
    pub metrics_interval: Option<Duration>,

    /// Online with a barrier group: start from a complete cut (an epoch or `latest`): each partition's state from the cut's epoch snapshots, the consumer group's offsets set to the cut offsets. The group must have no members.
    #[arg(long, value_name = "E|latest", value_parser = cut_selector, conflicts_with_all = ["check", "explain", "inputs"])]
    pub restore_cut: Option<CutSelector>,

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

fn parse_threads(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a thread count from 1 to 1024, got `{text}`"
        )),
    }
}

fn split_assignment<'a>(flag: &str, text: &'a str) -> CliResult<(&'a str, &'a str)> {
    text.split_once('=')
        .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        .ok_or_else(|| CliError::usage(format!("{flag} {text}: expected NAME=PATH")))
}

/// Finds the node a NAME means: a node of the kind, else the one of that kind reading/writing topic NAME.
fn resolve_node(spec: &TopologySpec, name: &str, sources: bool, flag: &str) -> CliResult<String> {
    let candidates: Vec<(&str, Vec<&str>)> = spec
        .nodes
        .iter()
        .filter_map(|n| match (&n.op, sources) {
            (NodeOp::Source { topics, .. }, true) => Some((
                n.name.value.as_str(),
                topics.iter().map(|t| t.value.as_str()).collect(),
            )),
            (NodeOp::Sink { topic, .. }, false) => {
                Some((n.name.value.as_str(), vec![topic.value.as_str()]))
            }
            _ => None,
        })
        .collect();
    if let Some((node, _)) = candidates.iter().find(|(node, _)| *node == name) {
        return Ok((*node).to_owned());
    }
    let by_topic: Vec<&str> = candidates
        .iter()
        .filter(|(_, topics)| topics.contains(&name))
        .map(|(node, _)| *node)
        .collect();
    match by_topic.as_slice() {
        [node] => Ok((*node).to_owned()),
        [] => Err(CliError::usage(format!(
            "{flag} {name}: no {} node or topic of that name (known: {})",
            if sources { "source" } else { "sink" },
            candidates
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        several => Err(CliError::usage(format!(
            "{flag} {name}: topic {name} belongs to several nodes ({}); name the node",
            several.join(", ")
        ))),
    }
}

fn load(args: &RunArgs) -> CliResult<TopologySpec> {
    let file = args.file.display().to_string();
    // An unreadable or non-UTF-8 file is an invalid file to --check (3, as documented).
    let text = topology_file::read(&args.file).map_err(|m| {
        let code = if args.check {
            ExitCode::CheckFailed
        } else {
            ExitCode::Failure
        };
        CliError::new(code, m)
    })?;
    let mut spec = topology_file::parse(&text).map_err(|e| invalid(args, &file, e))?;
    let dir = args.file.parent().unwrap_or(std::path::Path::new(""));
    topology_file::load_schema_files(&mut spec, dir).map_err(|e| invalid(args, &file, e))?;
    Ok(spec)
}

fn invalid(args: &RunArgs, file: &str, e: spec::SpecError) -> CliError {
    let code = if args.check {
        ExitCode::CheckFailed
    } else {
        ExitCode::Failure
    };
    CliError::new(code, format!("{file}:{e}"))
}

/// No output destroys an input or another output (`io::path_conflict`): the topology
/// file, `--command-config`, `--schema-cache` and every `--input` are read; every
/// `--sink` and `--dead-letter` is written. Checked before anything is opened.
fn check_paths(global: &GlobalArgs, args: &RunArgs) -> CliResult<()> {
    use crate::io::path_conflict::{Named, check};
    let mut named = vec![Named::input(
        format!("the topology file {}", args.file.display()),
        &args.file,
    )];
    if let Some(p) = &global.connection.command_config {
        named.push(Named::input(format!("--command-config {}", p.display()), p));
    }
    if let Some(p) = &args.schema_cache.schema_cache {
        named.push(Named::input(format!("--schema-cache {}", p.display()), p));
    }
    for (flag, values, input) in [
        ("--input", &args.inputs, true),
        ("--sink", &args.sinks, false),
    ] {
        for assignment in values {
            let (_, path) = split_assignment(flag, assignment)?;
            let label = format!("{flag} {assignment}");
            named.push(if input {
                Named::input(label, path)
            } else {
                Named::output(label, path)
            });
        }
    }
    if let Some(p) = &args.dead_letter {
        named.push(Named::output(format!("--dead-letter {p}"), p));
    }
    let stdin_inputs = args
        .inputs
        .iter()
        .filter(|a| a.split_once('=').is_some_and(|(_, p)| p == "-"))
        .count();
    if stdin_inputs > 1 {
        return Err(CliError::usage(format!(
            "--input: {stdin_inputs} inputs read stdin (`-`); only one can"
        )));
    }
    check(&named).map_err(CliError::usage)?;
    // Outputs opened with their first batch (Parquet) fail now on a missing
    // directory, as IPC outputs do, before any input is read.
    let outputs = args
        .sinks
        .iter()
        .filter_map(|a| a.split_once('=').map(|(_, p)| p))
        .chain(args.dead_letter.as_deref());
    for path in outputs.filter(|p| *p != "-") {
        crate::io::output_file::check_writable(std::path::Path::new(path))
            .map_err(|e| CliError::usage(format!("cannot create {path}: {e}")))?;
    }
    Ok(())
}

pub fn run(global: &GlobalArgs, args: RunArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    check_paths(global, &args)?;
    let spec = load(&args)?;
    // Offline runs move Arrow batches and resolve no registry codec, so the cache is
    // only loaded and checked here: a bad file fails before any input is read, and
    // the same file works unchanged once sources consume topics.
    if let Some(path) = &args.schema_cache.schema_cache {
        open_cache(None, Some(path))?;
    }
    let file = args.file.display().to_string();

    if !args.inputs.is_empty() {
        allocator::keep_freed_batch_memory();
    }
    // Inputs are opened first: their schemas take part in validation.
    let mut inputs: Vec<(String, String, IpcInput)> = Vec::new();
    let mut input_schemas: HashMap<String, SchemaRef> = HashMap::new();
    for assignment in &args.inputs {
        let (name, path) = split_assignment("--input", assignment)?;
        let source = resolve_node(&spec, name, true, "--input")?;
        if input_schemas.contains_key(&source) {
            return Err(CliError::usage(format!(
                "--input: source `{source}` is given twice"
            )));
        }
        if path == "-" && inputs.iter().any(|(_, topic, _)| topic == "-") {
            return Err(CliError::usage("--input: only one input can read stdin"));
        }
        let reader = IpcInput::open(path).map_err(CliError::failure)?;
        let schema = normalized_schema(&reader.schema())
            .map_err(|m| CliError::failure(format!("--input {assignment}: {m}")))?;
        input_schemas.insert(source.clone(), schema);
        let topic = spec
            .nodes
            .iter()
            .find(|n| n.name.value == source)
            .and_then(|n| match &n.op {
                NodeOp::Source { topics, .. } => topics.first().map(|t| t.value.clone()),
                _ => None,
            })
            .unwrap_or_default();
        inputs.push((source, topic, reader));
    }
    let built =
        spec::build(&spec, &OfflineCodecs, &input_schemas).map_err(|e| invalid(&args, &file, e))?;

    if args.explain {
        return explain(&ui, &built);
    }
    if args.check {
        // Offline runs write Arrow batches and never use a sink codec; online
        // runs check the same when they build their codecs.
        check_sinks(&spec, &built).map_err(|e| invalid(&args, &file, e))?;
        let nodes = built.topology.describe().len();
        return ui.report(
            json!({"file": file, "valid": true, "nodes": nodes}),
            |out| writeln!(out, "{file}: valid ({nodes} nodes)"),
        );
    }
    if inputs.is_empty() {
        if !args.sinks.is_empty() || args.dead_letter.is_some() {
            return Err(CliError::usage(
                "--sink and --dead-letter belong to offline runs: add --input NAME=PATH, or drop them to run online with -b",
            ));
        }
        if args.threads.is_some() {
            return Err(CliError::usage(
                "--threads belongs to offline runs: add --input NAME=PATH",
            ));
        }
        drop(built);
        return online::run_online(global, &ui, &args, &spec, &file);
    }
    // The columns nothing reads are dropped as batches arrive (dead letters
    // keep whole rows): a stream file is read without them.
    let needed = match built.settings.error_policy {
        ErrorPolicy::DeadLetter { .. } => BTreeMap::new(),
        _ => built.topology.needed_source_columns(),
    };
    let inputs = inputs
        .into_iter()
        .map(|(source, topic, mut reader)| {
            if let Some(Some(columns)) = needed.get(&source) {
                let mut columns = columns.clone();
                columns.insert(PARTITION_COLUMN.to_owned());
                reader.read_only(&columns);
            }
            OfflineInput {
                source,
                topic,
                reader: Box::new(PrefetchedInput::new(reader)),
            }
        })
        .collect();
    run_offline(global, &ui, &args, built, inputs, &spec)
}

/// What the sinks' codecs can be checked for without a broker or registry: that
/// they encode at all and, for registry-framed ones whose input schema is known,
/// that a writer schema can be derived from it.
fn check_sinks(spec: &TopologySpec, built: &BuiltSpec) -> Result<(), spec::SpecError> {
    online::check_sink_codecs(spec)?;
    for (node, schema) in spec.nodes.iter().zip(&built.schemas) {
        if let NodeOp::Sink {
            topic,
            codec: Some(codec),
            ..
        } = &node.op
        {
            topology_codecs::check_sink(codec, &topic.value, schema.as_ref())
                .map_err(|m| spec::SpecError::at(codec.value.pos, m))?;
            if let Some(key) = &codec.key {
                topology_codecs::check_sink_key(codec, &topic.value, schema.as_ref())
                    .map_err(|m| spec::SpecError::at(key.pos, m))?;
            }
        }
    }
    Ok(())
}

fn explain(ui: &Ui, built: &BuiltSpec) -> CliResult<()> {
    let nodes = built.topology.describe();
    let columns = |i: usize| -> Option<Vec<(String, String)>> {
        built.schemas[i].as_ref().map(|s| {
            s.fields()
                .iter()
                .map(|f| (f.name().clone(), type_name(f.data_type())))
                .collect()
        })
    };
    let data: Vec<Value> = nodes
        .iter()
        .enumerate()
        .map(|(i, (name, kind, parents, detail))| {
            json!({
                "name": name,
                "kind": kind,
                "parents": parents,
                "detail": detail,
                "columns": columns(i).map(|cs| cs.into_iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>()),
            })
        })
        .collect();
    ui.report(json!({"nodes": data}), |out| {
        for (i, (name, kind, parents, detail)) in nodes.iter().enumerate() {
            let from = if parents.is_empty() {
                String::new()
            } else {
                format!(" <- {}", parents.join(", "))
            };
            writeln!(out, "{name} [{kind}]{from}")?;
            if !detail.is_empty() {
                writeln!(out, "    {detail}")?;
            }
            if let Some(cs) = columns(i) {
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
fn metrics_reporter(ui: &Ui, quiet: bool) -> Box<dyn FnMut(&Metrics)> {
    let json_mode = ui.is_json();
    Box::new(move |m: &Metrics| {
        if json_mode {
            eprintln!("{}", json!({"metrics": metrics_json(m)}));
        } else if !quiet {
            eprintln!("metrics: {m}");
        }
    })
}

fn run_offline(
    global: &GlobalArgs,
    ui: &Ui,
    args: &RunArgs,
    mut built: BuiltSpec,
    inputs: Vec<OfflineInput>,
    spec: &TopologySpec,
) -> CliResult<()> {
    if args.sinks.is_empty() {
        let names: Vec<String> = built
            .topology
            .sinks()
            .into_iter()
            .map(|(n, _, _)| n)
            .collect();
        return Err(CliError::usage(format!(
            "an offline run needs at least one --sink NAME=PATH (sinks: {})",
            names.join(", ")
        )));
    }
    let node_schemas: HashMap<String, Option<SchemaRef>> = built
        .topology
        .describe()
        .iter()
        .enumerate()
        .map(|(i, (name, _, _, _))| (name.clone(), built.schemas[i].clone()))
        .collect();
    let mut to_stdout = false;
    let mut outputs: BTreeMap<String, (String, IpcOutput)> = BTreeMap::new();
    for assignment in &args.sinks {
        let (name, path) = split_assignment("--sink", assignment)?;
        let sink = resolve_node(spec, name, false, "--sink")?;
        if outputs.contains_key(&sink) {
            return Err(CliError::usage(format!(
                "--sink: sink `{sink}` is given twice"
            )));
        }
        // A column Parquet cannot hold fails before the first write, not in the writer.
        if path.ends_with(".parquet")
            && let Some(Some(schema)) = node_schemas.get(&sink)
        {
            crate::io::batch_sink::check_parquet_schema(schema)
                .map_err(|m| CliError::usage(format!("--sink {assignment}: {m}")))?;
        }
        if path == "-" {
            if to_stdout {
                return Err(CliError::usage("--sink: only one sink can write to stdout"));
            }
            refuse_binary_on_tty_or("an Arrow IPC stream", "name a file: --sink NAME=FILE")?;
            to_stdout = true;
        }
        outputs.insert(
            sink,
            (
                path.to_owned(),
                IpcOutput::create(path).map_err(CliError::usage)?,
            ),
        );
    }
    let dead_letter = match (&args.dead_letter, &built.settings.error_policy) {
        (None, _) => None,
        (Some(path), ErrorPolicy::DeadLetter { .. }) => {
            if path == "-" {
                if to_stdout {
                    return Err(CliError::usage(
                        "--dead-letter: only one output can write to stdout",
                    ));
                }
                refuse_binary_on_tty_or("an Arrow IPC stream", "name a file: --sink NAME=FILE")?;
                to_stdout = true;
            }
            Some((
                path.clone(),
                IpcOutput::create(path).map_err(CliError::usage)?,
            ))
        }
        (Some(_), _) => {
            return Err(CliError::usage(
                "--dead-letter needs `error_policy: dead-letter` in the topology settings",
            ));
        }
    };

    let quiet = global.output.quiet > 0;
    let json_mode = ui.is_json();
    let progress: Option<Progress<'_>> = args
        .metrics_interval
        .map(|interval| (interval, metrics_reporter(ui, quiet)));

    // Writers are lent to the run and finished (or discarded) afterwards.
    let sink_schemas = node_schemas;
    let mut outputs: Vec<(String, String, IpcOutput)> = outputs
        .into_iter()
        .map(|(sink, (path, out))| (sink, path, out))
        .collect();
    let mut dead_letter = dead_letter;
    let (metrics, result) = {
        let mut sinks: BTreeMap<String, Box<dyn BatchWriter + '_>> = BTreeMap::new();
        let threads = args.threads.unwrap_or_else(default_threads);
        for (sink, _, out) in &mut outputs {
            out.set_threads(threads);
            sinks.insert(sink.clone(), Box::new(out));
        }
        built.topology.set_threads(threads);
        let run = OfflineRun {
            topology: &mut built.topology,
            inputs,
            sinks,
            policy: built.settings.error_policy.clone(),
            dead_letter: dead_letter
                .as_mut()
                .map(|(_, out)| Box::new(out) as Box<dyn BatchWriter + '_>),
            progress,
        };
        run.run()
    };
    let outcome = result.map_err(|e| CliError::failure(e.to_string()))?;
    for (sink, path, out) in outputs {
        let schema = sink_schemas.get(&sink).cloned().flatten();
        out.finish(schema.as_deref())
            .map_err(|m| CliError::failure(format!("sink `{sink}` ({path}): {m}")))?;
    }
    if let Some((path, out)) = dead_letter {
        out.finish(None)
            .map_err(|m| CliError::failure(format!("dead letters ({path}): {m}")))?;
    }

    let data = json!({
        "outcome": match outcome { Outcome::Completed => "completed", Outcome::OutputClosed => "output closed" },
        "metrics": metrics_json(&metrics),
    });
    if !quiet && global.output.output == OutputMode::Human {
        eprintln!("Processed a total of {} records", metrics.input_records);
        eprintln!("{metrics}");
    }
    if json_mode {
        if to_stdout {
            eprintln!("{}", json!({"data": data}));
            return Ok(());
        }
        return ui.report(data, |_| Ok(()));
    }
    Ok(())
}

impl BatchWriter for &mut IpcOutput {
    fn write(
        &mut self,
        batch: &arrow_array::RecordBatch,
    ) -> Result<(), crate::engine::columnar::runner::offline::WriteError> {
        (**self).write(batch)
    }
}
