//! `run FILE --input NAME=PATH … --sink NAME=PATH …`: the topology over Arrow IPC
//! inputs with no broker. Opens the sinks (and the dead-letter output) before the
//! first batch, lends them to the engine's `OfflineRun`, and finishes each output
//! only after the run ended well, so a failed run publishes nothing.

use std::collections::{BTreeMap, HashMap};

use arrow_schema::SchemaRef;

use super::plan::{OpenedInput, RunHooks, RunPlan, resolve_node, split_assignment};
use crate::engine::columnar::metadata::PARTITION_COLUMN;
use crate::engine::columnar::runner::Metrics;
use crate::engine::columnar::runner::offline::{
    BatchWriter, OfflineInput, OfflineRun, Outcome, Progress, WriteError,
};
use crate::engine::columnar::topology::spec::{BuiltSpec, ErrorPolicy, TopologySpec};
use crate::io::arrow_files::{IpcOutput, PrefetchedInput};
use crate::ops::{Error, Result};

/// How an offline run ended.
#[derive(Debug, Clone, Copy)]
pub struct OfflineReport {
    pub outcome: Outcome,
    pub metrics: Metrics,
    /// A sink or the dead letters went to stdout (the report then goes to stderr).
    pub to_stdout: bool,
}

/// Runs `built` over the opened `inputs` into the plan's sinks.
pub(super) fn run_offline(
    plan: &RunPlan,
    hooks: &mut dyn RunHooks,
    mut built: BuiltSpec,
    inputs: Vec<OpenedInput>,
    spec: &TopologySpec,
) -> Result<OfflineReport> {
    let inputs = prepare_inputs(&built, inputs);
    if plan.sinks.is_empty() {
        let names: Vec<String> = built
            .topology
            .sinks()
            .into_iter()
            .map(|(n, _, _)| n)
            .collect();
        return Err(Error::usage(format!(
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
    let mut outputs = open_sinks(plan, hooks, spec, &node_schemas, &mut to_stdout)?;
    let mut dead_letter = open_dead_letter(plan, hooks, &built, &mut to_stdout)?;

    let (metrics, result) = {
        let progress: Option<Progress<'_>> = plan.metrics_interval.map(|interval| {
            let report: Box<dyn FnMut(&Metrics) + '_> = Box::new(|m: &Metrics| hooks.progress(m));
            (interval, report)
        });
        // Writers are lent to the run and finished (or discarded) afterwards.
        let mut sinks: BTreeMap<String, Box<dyn BatchWriter + '_>> = BTreeMap::new();
        let threads = plan
            .threads
            .unwrap_or_else(crate::engine::columnar::parallel::default_threads);
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
    let outcome = result.map_err(|e| Error::failure(e.to_string()))?;
    for (sink, path, out) in outputs {
        let schema = node_schemas.get(&sink).cloned().flatten();
        out.finish(schema.as_deref())
            .map_err(|m| Error::failure(format!("sink `{sink}` ({path}): {m}")))?;
    }
    if let Some((path, out)) = dead_letter {
        out.finish(None)
            .map_err(|m| Error::failure(format!("dead letters ({path}): {m}")))?;
    }
    Ok(OfflineReport {
        outcome,
        metrics,
        to_stdout,
    })
}

/// The engine's inputs: the columns nothing reads are dropped as batches arrive
/// (dead letters keep whole rows), so a stream file is read without them.
fn prepare_inputs(built: &BuiltSpec, inputs: Vec<OpenedInput>) -> Vec<OfflineInput> {
    let needed = match built.settings.error_policy {
        ErrorPolicy::DeadLetter { .. } => BTreeMap::new(),
        _ => built.topology.needed_source_columns(),
    };
    inputs
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
        .collect()
}

/// Opens every `--sink`, in sink-name order: (sink node, path, output).
fn open_sinks(
    plan: &RunPlan,
    hooks: &mut dyn RunHooks,
    spec: &TopologySpec,
    node_schemas: &HashMap<String, Option<SchemaRef>>,
    to_stdout: &mut bool,
) -> Result<Vec<(String, String, IpcOutput)>> {
    let mut outputs: BTreeMap<String, (String, IpcOutput)> = BTreeMap::new();
    for assignment in &plan.sinks {
        let (name, path) = split_assignment("--sink", assignment)?;
        let sink = resolve_node(spec, name, false, "--sink")?;
        if outputs.contains_key(&sink) {
            return Err(Error::usage(format!(
                "--sink: sink `{sink}` is given twice"
            )));
        }
        // A column Parquet cannot hold fails before the first write, not in the writer.
        if path.ends_with(".parquet")
            && let Some(Some(schema)) = node_schemas.get(&sink)
        {
            crate::io::batch_sink::check_parquet_schema(schema)
                .map_err(|m| Error::usage(format!("--sink {assignment}: {m}")))?;
        }
        if path == "-" {
            if *to_stdout {
                return Err(Error::usage("--sink: only one sink can write to stdout"));
            }
            hooks.claim_stdout()?;
            *to_stdout = true;
        }
        outputs.insert(
            sink,
            (
                path.to_owned(),
                IpcOutput::create(path).map_err(Error::usage)?,
            ),
        );
    }
    Ok(outputs
        .into_iter()
        .map(|(sink, (path, out))| (sink, path, out))
        .collect())
}

/// Opens `--dead-letter`, which needs `error_policy: dead-letter`: (path, output).
fn open_dead_letter(
    plan: &RunPlan,
    hooks: &mut dyn RunHooks,
    built: &BuiltSpec,
    to_stdout: &mut bool,
) -> Result<Option<(String, IpcOutput)>> {
    match (&plan.dead_letter, &built.settings.error_policy) {
        (None, _) => Ok(None),
        (Some(path), ErrorPolicy::DeadLetter { .. }) => {
            if path == "-" {
                if *to_stdout {
                    return Err(Error::usage(
                        "--dead-letter: only one output can write to stdout",
                    ));
                }
                hooks.claim_stdout()?;
                *to_stdout = true;
            }
            Ok(Some((
                path.clone(),
                IpcOutput::create(path).map_err(Error::usage)?,
            )))
        }
        (Some(_), _) => Err(Error::usage(
            "--dead-letter needs `error_policy: dead-letter` in the topology settings",
        )),
    }
}

impl BatchWriter for &mut IpcOutput {
    fn write(&mut self, batch: &arrow_array::RecordBatch) -> std::result::Result<(), WriteError> {
        (**self).write(batch)
    }
}
