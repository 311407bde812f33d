//! What `run` was asked to do ([`RunPlan`]), what it asks of the command line
//! ([`RunHooks`]), and the checks of the plan's names every run mode shares. A
//! leaf of `ops::run`: the modes import it, it imports none of them.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::engine::columnar::runner::Metrics;
use crate::engine::columnar::topology::spec::{self, NodeOp, TopologySpec};
use crate::engine::schema::cache::SchemaCache;
use crate::io::arrow_files::IpcInput;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, ErrorKind, Result};

use super::restore_cut::RestoredCut;

/// What `run` was asked to do, without any command-line type.
#[derive(Debug, Clone, Default)]
pub struct RunPlan {
    /// The topology file.
    pub file: PathBuf,
    /// Validate and answer; invalid files are exit 3.
    pub check: bool,
    /// Describe the node graph and answer.
    pub explain: bool,
    /// Offline inputs, each `NAME=PATH` as given.
    pub inputs: Vec<String>,
    /// Offline sinks, each `NAME=PATH` as given.
    pub sinks: Vec<String>,
    /// Offline dead-letter output.
    pub dead_letter: Option<String>,
    /// Offline: threads the engine may process one batch on (`None`: the available cores).
    pub threads: Option<usize>,
    /// Report the metrics so far at this interval.
    pub metrics_interval: Option<Duration>,
    /// Online: start from this barrier cut.
    pub restore_cut: Option<EpochSelector>,
    /// Online: take over state recorded for another owner.
    pub adopt_state: bool,
    /// `--command-config`, an input no output may overwrite.
    pub command_config: Option<PathBuf>,
    /// `--schema-cache`, an input no output may overwrite.
    pub schema_cache: Option<PathBuf>,
    /// The broker timeout of online runs.
    pub timeout: Duration,
}

/// What only the command line can do, asked for at the moment the run needs it
/// (so the order of checks, prompts and messages is the command's documented one).
pub trait RunHooks {
    /// Loads and checks the `--schema-cache` file of an offline run.
    fn check_schema_cache(&mut self) -> Result<()>;
    /// A sink or the dead letters are about to be written to stdout: refuse a terminal.
    fn claim_stdout(&mut self) -> Result<()>;
    /// The metrics so far, every `metrics_interval`.
    fn progress(&mut self, metrics: &Metrics);
    /// The cluster settings and the registry-backed schema cache of an online run.
    fn connect(&mut self) -> Result<(KafkaSettings, Option<SchemaCache>)>;
    /// The online runner is subscribed: from here on a stop request ends it after
    /// the round in flight (before this, a signal ends the process at once).
    fn online_started(&mut self, started: &StartedInfo<'_>) -> Result<()>;
    /// True once the online run is asked to stop (Ctrl-C).
    fn stop_requested(&self) -> bool;
}

/// What the command line hears when the runner is subscribed.
pub struct StartedInfo<'a> {
    pub group: &'a str,
    pub topics: &'a [String],
    /// The cut the run started from (`--restore-cut`).
    pub restored: Option<&'a RestoredCut>,
}

/// An input opened for a source: (source node, its first topic, the reader).
pub(crate) type OpenedInput = (String, String, IpcInput);

pub(crate) fn split_assignment<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str)> {
    text.split_once('=')
        .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        .ok_or_else(|| Error::usage(format!("{flag} {text}: expected NAME=PATH")))
}

/// Finds the node a NAME means: a node of the kind, else the one of that kind reading/writing topic NAME.
pub(crate) fn resolve_node(
    spec: &TopologySpec,
    name: &str,
    sources: bool,
    flag: &str,
) -> Result<String> {
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
        [] => Err(Error::usage(format!(
            "{flag} {name}: no {} node or topic of that name (known: {})",
            if sources { "source" } else { "sink" },
            candidates
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        several => Err(Error::usage(format!(
            "{flag} {name}: topic {name} belongs to several nodes ({}); name the node",
            several.join(", ")
        ))),
    }
}

/// The kind of error an invalid topology file is: 3 under `--check` (as documented), else 1.
pub(crate) fn invalid_kind(plan: &RunPlan) -> ErrorKind {
    if plan.check {
        ErrorKind::CheckFailed
    } else {
        ErrorKind::Failure
    }
}

/// An error in the topology file, at its position.
pub(crate) fn invalid(plan: &RunPlan, file: &str, e: spec::SpecError) -> Error {
    Error::new(invalid_kind(plan), format!("{file}:{e}"))
}
