//! `run`: a topology file (docs/topology.md) checked, explained, run offline over
//! Arrow IPC inputs (`offline`), or run online as a consumer group (`online`).
//!
//! [`run`] is the one entry point `cmd::run` calls: it checks the paths, loads the
//! file, opens the inputs (their schemas take part in validation), builds the
//! topology and then answers `--explain` or `--check`, or runs it. What only the
//! command line can do (prompting, terminals, signals, printing) it asks of
//! [`RunHooks`]; what it found it returns as a [`RunAnswer`] for `cmd` to render.

pub mod offline;
pub mod online;
pub mod plan;
pub mod restore_cut;

use std::collections::HashMap;
use std::path::Path;

use arrow_schema::SchemaRef;

use crate::engine::columnar::expr::types::type_name;
use crate::engine::columnar::runner::offline::{BatchReader, normalized_schema};
use crate::engine::columnar::topology::spec::{
    self, BuiltSpec, NodeOp, OfflineCodecs, TopologySpec,
};
use crate::engine::columnarschema::topology_codecs;
use crate::io::arrow_files::IpcInput;
use crate::io::topology_file;
use crate::ops::{Error, Result};

pub use offline::OfflineReport;
pub use online::{OnlineOutcome, OnlineReport};
pub use plan::{RunHooks, RunPlan, StartedInfo};

use plan::{OpenedInput, invalid, invalid_kind, resolve_node, split_assignment};

/// One node of `--explain`: name, kind, parents, detail and, when known, its columns
/// as (name, type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainedNode {
    pub name: String,
    pub kind: &'static str,
    pub parents: Vec<String>,
    pub detail: String,
    pub columns: Option<Vec<(String, String)>>,
}

/// What a run found or did.
#[derive(Debug)]
pub enum RunAnswer {
    /// `--explain`: the node graph.
    Explained(Vec<ExplainedNode>),
    /// `--check` passed.
    Checked { file: String, nodes: usize },
    /// The offline run finished.
    Offline(OfflineReport),
    /// The online run ended (interrupted or failed: see its outcome).
    Online(OnlineReport),
}

/// Checks, loads and builds the topology of `plan`, then explains, checks or runs it.
pub fn run(plan: &RunPlan, hooks: &mut dyn RunHooks) -> Result<RunAnswer> {
    check_paths(plan)?;
    let spec = load(plan)?;
    // Offline runs move Arrow batches and resolve no registry codec, so the cache is
    // only loaded and checked here: a bad file fails before any input is read, and
    // the same file works unchanged once sources consume topics.
    if plan.schema_cache.is_some() {
        hooks.check_schema_cache()?;
    }
    let file = plan.file.display().to_string();

    if !plan.inputs.is_empty() {
        crate::io::process::keep_freed_batch_memory();
    }
    let (inputs, input_schemas) = open_inputs(plan, &spec)?;
    let built =
        spec::build(&spec, &OfflineCodecs, &input_schemas).map_err(|e| invalid(plan, &file, e))?;

    if plan.explain {
        return Ok(RunAnswer::Explained(explain(&built)));
    }
    if plan.check {
        // Offline runs write Arrow batches and never use a sink codec; online
        // runs check the same when they build their codecs.
        check_sinks(&spec, &built).map_err(|e| invalid(plan, &file, e))?;
        let nodes = built.topology.describe().len();
        return Ok(RunAnswer::Checked { file, nodes });
    }
    if inputs.is_empty() {
        if !plan.sinks.is_empty() || plan.dead_letter.is_some() {
            return Err(Error::usage(
                "--sink and --dead-letter belong to offline runs: add --input NAME=PATH, or drop them to run online with -b",
            ));
        }
        if plan.threads.is_some() {
            return Err(Error::usage(
                "--threads belongs to offline runs: add --input NAME=PATH",
            ));
        }
        drop(built);
        return online::run_online(plan, hooks, &spec, &file).map(RunAnswer::Online);
    }
    offline::run_offline(plan, hooks, built, inputs, &spec).map(RunAnswer::Offline)
}

/// Opens every `--input`, in order, and normalises its schema.
fn open_inputs(
    plan: &RunPlan,
    spec: &TopologySpec,
) -> Result<(Vec<OpenedInput>, HashMap<String, SchemaRef>)> {
    let mut inputs: Vec<OpenedInput> = Vec::new();
    let mut input_schemas: HashMap<String, SchemaRef> = HashMap::new();
    for assignment in &plan.inputs {
        let (name, path) = split_assignment("--input", assignment)?;
        let source = resolve_node(spec, name, true, "--input")?;
        if input_schemas.contains_key(&source) {
            return Err(Error::usage(format!(
                "--input: source `{source}` is given twice"
            )));
        }
        if path == "-" && inputs.iter().any(|(_, topic, _)| topic == "-") {
            return Err(Error::usage("--input: only one input can read stdin"));
        }
        let reader = IpcInput::open(path).map_err(Error::failure)?;
        let schema = normalized_schema(&reader.schema())
            .map_err(|m| Error::failure(format!("--input {assignment}: {m}")))?;
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
    Ok((inputs, input_schemas))
}

fn load(plan: &RunPlan) -> Result<TopologySpec> {
    let file = plan.file.display().to_string();
    // An unreadable or non-UTF-8 file is an invalid file to --check (3, as documented).
    let text = topology_file::read(&plan.file).map_err(|m| Error::new(invalid_kind(plan), m))?;
    let mut spec = topology_file::parse(&text).map_err(|e| invalid(plan, &file, e))?;
    let dir = plan.file.parent().unwrap_or(Path::new(""));
    topology_file::load_schema_files(&mut spec, dir).map_err(|e| invalid(plan, &file, e))?;
    Ok(spec)
}

/// No output destroys an input or another output (`io::path_conflict`): the topology
/// file, `--command-config`, `--schema-cache` and every `--input` are read; every
/// `--sink` and `--dead-letter` is written. Checked before anything is opened.
fn check_paths(plan: &RunPlan) -> Result<()> {
    use crate::io::path_conflict::{Named, check};
    let mut named = vec![Named::input(
        format!("the topology file {}", plan.file.display()),
        &plan.file,
    )];
    named.extend(crate::io::path_conflict::connection_inputs(
        plan.command_config.as_deref(),
    ));
    if let Some(p) = &plan.schema_cache {
        named.push(Named::input(format!("--schema-cache {}", p.display()), p));
    }
    for (flag, values, input) in [
        ("--input", &plan.inputs, true),
        ("--sink", &plan.sinks, false),
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
    if let Some(p) = &plan.dead_letter {
        named.push(Named::output(format!("--dead-letter {p}"), p));
    }
    let stdin_inputs = plan
        .inputs
        .iter()
        .filter(|a| a.split_once('=').is_some_and(|(_, p)| p == "-"))
        .count();
    if stdin_inputs > 1 {
        return Err(Error::usage(format!(
            "--input: {stdin_inputs} inputs read stdin (`-`); only one can"
        )));
    }
    check(&named).map_err(Error::usage)?;
    // Outputs opened with their first batch (Parquet) fail now on a missing
    // directory, as IPC outputs do, before any input is read.
    let outputs = plan
        .sinks
        .iter()
        .filter_map(|a| a.split_once('=').map(|(_, p)| p))
        .chain(plan.dead_letter.as_deref());
    for path in outputs.filter(|p| *p != "-") {
        crate::io::atomic_file::check_writable(Path::new(path))
            .map_err(|e| Error::usage(format!("cannot create {path}: {e}")))?;
    }
    Ok(())
}

/// What the sinks' codecs can be checked for without a broker or registry: that
/// they encode at all and, for registry-framed ones whose input schema is known,
/// that a writer schema can be derived from it.
fn check_sinks(spec: &TopologySpec, built: &BuiltSpec) -> std::result::Result<(), spec::SpecError> {
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

/// The node graph with each node's columns, in the topology's order.
fn explain(built: &BuiltSpec) -> Vec<ExplainedNode> {
    built
        .topology
        .describe()
        .into_iter()
        .enumerate()
        .map(|(i, (name, kind, parents, detail))| ExplainedNode {
            name,
            kind,
            parents,
            detail,
            columns: built.schemas[i].as_ref().map(|s| {
                s.fields()
                    .iter()
                    .map(|f| (f.name().clone(), type_name(f.data_type())))
                    .collect()
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
    use arrow_schema::{DataType, Field, Schema, TimeUnit};

    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::engine::columnar::runner::Metrics;
    use crate::engine::schema::cache::SchemaCache;
    use crate::io::kafka::settings::KafkaSettings;
    use crate::ops::ErrorKind;

    /// Records which hooks the run asked for; refuses stdout and the cluster.
    #[derive(Default)]
    struct Fake {
        asked: Vec<&'static str>,
    }

    impl RunHooks for Fake {
        fn check_schema_cache(&mut self) -> Result<()> {
            self.asked.push("schema cache");
            Ok(())
        }
        fn claim_stdout(&mut self) -> Result<()> {
            self.asked.push("stdout");
            Err(Error::usage("stdout is a terminal"))
        }
        fn progress(&mut self, _: &Metrics) {
            self.asked.push("progress");
        }
        fn connect(&mut self) -> Result<(KafkaSettings, Option<SchemaCache>)> {
            self.asked.push("connect");
            Err(Error::unreachable("no broker here"))
        }
        fn online_started(&mut self, _: &StartedInfo<'_>) -> Result<()> {
            self.asked.push("started");
            Ok(())
        }
        fn stop_requested(&self) -> bool {
            true
        }
    }

    fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/topologies/large-orders-by-user.yaml")
    }

    /// Three orders as `tail` writes them (payload columns; the reserved ones are added).
    fn orders_stream(dir: &Path) -> String {
        let schema = Arc::new(Schema::new(vec![
            Field::new("user", DataType::Utf8, true),
            Field::new("country", DataType::Utf8, true),
            Field::new("amount", DataType::Int64, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec!["a", "b", "a"])),
                Arc::new(StringArray::from(vec!["DE", "FR", "DE"])),
                Arc::new(Int64Array::from(vec![150, 50, 300])),
                Arc::new(TimestampMillisecondArray::from(vec![1, 2, 3]).with_timezone("UTC")),
            ],
        )
        .unwrap();
        let path = dir.join("orders.arrows");
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = arrow_ipc::writer::StreamWriter::try_new(file, &schema).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        path.display().to_string()
    }

    #[test]
    fn check_answers_with_the_node_count_and_asks_nothing_of_the_command_line() {
        let mut hooks = Fake::default();
        let plan = RunPlan {
            file: example(),
            check: true,
            ..RunPlan::default()
        };
        match run(&plan, &mut hooks).unwrap() {
            RunAnswer::Checked { file, nodes } => {
                assert!(file.ends_with("large-orders-by-user.yaml"));
                assert_eq!(nodes, 4);
            }
            other => panic!("expected a check answer, got {other:?}"),
        }
        assert!(hooks.asked.is_empty());
    }

    #[test]
    fn explain_lists_each_node_with_its_parents_and_declared_columns() {
        let plan = RunPlan {
            file: example(),
            explain: true,
            ..RunPlan::default()
        };
        let RunAnswer::Explained(nodes) = run(&plan, &mut Fake::default()).unwrap() else {
            panic!("expected an explanation");
        };
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names[0], "orders");
        assert_eq!(nodes[1].parents, ["orders"]);
        let columns = nodes[0].columns.as_ref().unwrap();
        assert!(columns.iter().any(|(n, t)| n == "amount" && t == "int64"));
    }

    #[test]
    fn a_run_without_inputs_goes_online_and_the_cluster_error_is_the_answer() {
        let mut hooks = Fake::default();
        let plan = RunPlan {
            file: example(),
            ..RunPlan::default()
        };
        let e = run(&plan, &mut hooks).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unreachable);
        assert_eq!(hooks.asked, ["connect"]);
    }

    #[test]
    fn sinks_without_inputs_are_a_usage_error_before_any_connection() {
        let mut hooks = Fake::default();
        let dir = tempfile::tempdir().unwrap();
        let plan = RunPlan {
            file: example(),
            sinks: vec![format!(
                "large-orders-by-user={}",
                dir.path().join("t.arrows").display()
            )],
            ..RunPlan::default()
        };
        let e = run(&plan, &mut hooks).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Usage);
        assert!(e.message.contains("belong to offline runs"), "{e}");
        assert!(hooks.asked.is_empty());
    }

    #[test]
    fn a_refused_stdout_stops_the_offline_run_before_any_batch_and_writes_nothing() {
        let mut hooks = Fake::default();
        let dir = tempfile::tempdir().unwrap();
        let plan = RunPlan {
            file: example(),
            inputs: vec![format!("orders={}", orders_stream(dir.path()))],
            sinks: vec!["large-orders-by-user=-".into()],
            metrics_interval: Some(Duration::from_millis(1)),
            ..RunPlan::default()
        };
        let e = run(&plan, &mut hooks).unwrap_err();
        assert_eq!(e.message, "stdout is a terminal");
        assert_eq!(hooks.asked, ["stdout"]);
    }

    #[test]
    fn an_offline_run_writes_its_sink_and_reports_the_counts() {
        let mut hooks = Fake::default();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("totals.arrows");
        let plan = RunPlan {
            file: example(),
            inputs: vec![format!("orders={}", orders_stream(dir.path()))],
            sinks: vec![format!("large-orders-by-user={}", out.display())],
            ..RunPlan::default()
        };
        let RunAnswer::Offline(report) = run(&plan, &mut hooks).unwrap() else {
            panic!("expected an offline report");
        };
        assert_eq!(report.metrics.input_records, 3);
        assert!(!report.to_stdout);
        let reader =
            arrow_ipc::reader::StreamReader::try_new(std::fs::File::open(&out).unwrap(), None)
                .unwrap();
        let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(rows as u64, report.metrics.output_records);
        assert!(rows > 0);
    }
}
