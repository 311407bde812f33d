//! Evaluation of a validated topology (semantics §5), one logical partition at a
//! time with per-partition operator instances created lazily and kept; partition
//! snapshots (node name → bytes), restore and release.
//!
//! Two entry points share one evaluator: [`BuiltTopology::run_records`] decodes
//! consumed records with the source codecs and encodes sink outputs (the group
//! runner), [`BuiltTopology::run_partition_batches`] takes already-decoded
//! batches per source and hands back sink batches (offline Arrow IPC runs).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::BooleanBuffer;

use super::codec::{OutRecord, Record, RefusedRow};
use super::{NodeDef, NodeKind};
use crate::engine::columnar::ops::join::{JoinCheckpoint, JoinProcessor};
use crate::engine::columnar::ops::{ColumnSet, OpError, Processor};

/// A failure while running a partition, naming the node that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFailure {
    pub node: String,
    pub message: String,
    pub retriable: bool,
}

impl NodeFailure {
    fn at(node: &str, e: OpError) -> Self {
        NodeFailure {
            node: node.to_owned(),
            message: e.message,
            retriable: e.retriable,
        }
    }

    fn internal(message: impl Into<String>) -> Self {
        NodeFailure {
            node: String::new(),
            message: message.into(),
            retriable: false,
        }
    }
}

impl fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.node.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "node `{}`: {}", self.node, self.message)
        }
    }
}

impl std::error::Error for NodeFailure {}

/// What a sink emitted for one partition run.
#[derive(Debug, Clone)]
pub enum SinkOutput {
    /// A coded sink's batch (encoded by the caller or written as Arrow).
    Batch {
        sink: String,
        topic: String,
        batch: RecordBatch,
    },
    /// A pass-through sink's raw copies.
    Raw {
        sink: String,
        topic: String,
        records: Vec<OutRecord>,
    },
}

/// One encoded record for a sink topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produced {
    pub topic: String,
    pub record: OutRecord,
}

/// A sink row its codec refused alone (see [`BuiltTopology::run_partition_records_by_row`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The sink node.
    pub sink: String,
    pub row: RefusedRow,
}

impl Refused {
    /// The failure as the fail policy reports it: `node `<sink>`: …`.
    pub fn failure(&self) -> NodeFailure {
        NodeFailure {
            node: self.sink.clone(),
            message: self.row.message.clone(),
            retriable: false,
        }
    }
}

/// A partition's rollback point (see [`BuiltTopology::checkpoint_partition`]).
pub struct Checkpoint(Option<Vec<Option<InstanceCheckpoint>>>);

enum InstanceCheckpoint {
    Bytes(Vec<u8>),
    Join(JoinCheckpoint),
}

enum Instance {
    Stateless,
    Operator(Box<dyn Processor>),
    Join(Box<JoinProcessor>),
}

/// A validated, reusable topology with per-partition state.
pub struct BuiltTopology {
    nodes: Arc<Vec<NodeDef>>,
    partitions: BTreeMap<i32, Vec<Instance>>,
    /// Threads an operator may process one batch on (see [`BuiltTopology::set_threads`]).
    threads: usize,
}

impl fmt::Debug for BuiltTopology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltTopology")
            .field("nodes", &self.nodes.len())
            .field("partitions", &self.partitions.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Decoded input of one partition run: batches per source node name, and the
/// raw records per topic for pass-through sinks, borrowed from the caller (a
/// poll's records are read, never copied, on their way to the sinks).
#[derive(Debug, Default, Clone)]
pub struct PartitionInput<'a> {
    pub batches: BTreeMap<String, Vec<RecordBatch>>,
    pub raw: Option<&'a BTreeMap<String, Vec<Record>>>,
}

impl BuiltTopology {
    pub(crate) fn new(nodes: Vec<NodeDef>) -> Self {
        BuiltTopology {
            nodes: Arc::new(nodes),
            partitions: BTreeMap::new(),
            threads: 1,
        }
    }

    /// Lets operators process a batch on up to `threads` threads (`run
    /// --threads`), for the partitions already running and those to come. The
    /// output is the same at every count; 1 (the default) is the one-thread path.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        for instances in self.partitions.values_mut() {
            for instance in instances {
                match instance {
                    Instance::Operator(processor) => processor.set_threads(self.threads),
                    Instance::Join(join) => join.set_threads(self.threads),
                    Instance::Stateless => {}
                }
            }
        }
    }

    /// `(name, kind, parents, detail)` of every node in order, for `--explain`.
    pub fn describe(&self) -> Vec<(String, &'static str, Vec<String>, String)> {
        self.nodes
            .iter()
            .map(|n| {
                let parents = n
                    .parents
                    .iter()
                    .map(|p| self.nodes[*p].name.clone())
                    .collect();
                let (kind, detail) = match &n.kind {
                    NodeKind::Source { topics, codec } => (
                        "source",
                        format!("topics {} ({})", topics.join(", "), codec.name()),
                    ),
                    NodeKind::Operator { op } => ("operator", op.describe()),
                    NodeKind::Merge => ("merge", String::new()),
                    NodeKind::Join { spec } => (
                        "join",
                        format!(
                            "{} = {} within {} ms, prefixes {} / {}",
                            spec.left_key,
                            spec.right_key,
                            spec.window_ms,
                            spec.left_prefix,
                            spec.right_prefix
                        ),
                    ),
                    NodeKind::Sink {
                        topic,
                        codec: Some(codec),
                    } => ("sink", format!("topic {topic} ({})", codec.name())),
                    NodeKind::Sink { topic, codec: None } => {
                        ("sink", format!("topic {topic} (pass-through)"))
                    }
                };
                (n.name.clone(), kind, parents, detail)
            })
            .collect()
    }

    /// Source node names with their topics, in node order.
    pub fn sources(&self) -> Vec<(String, Vec<String>)> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Source { topics, .. } => Some((n.name.clone(), topics.clone())),
                _ => None,
            })
            .collect()
    }

    /// Sink node names with their topics and whether they pass records through.
    pub fn sinks(&self) -> Vec<(String, String, bool)> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Sink { topic, codec } => {
                    Some((n.name.clone(), topic.clone(), codec.is_none()))
                }
                _ => None,
            })
            .collect()
    }

    /// Per source node, the columns anything downstream reads (`None` = all of
    /// them): sinks, joins and merges need everything, operators say what they need.
    pub fn needed_source_columns(&self) -> BTreeMap<String, Option<ColumnSet>> {
        let n = self.nodes.len();
        // needed[i]: what node i's consumers need from its output; Some(empty) = nothing yet.
        let mut needed: Vec<Option<ColumnSet>> = vec![Some(ColumnSet::new()); n];
        for index in (0..n).rev() {
            let node = &self.nodes[index];
            let input_needs: Option<ColumnSet> = match &node.kind {
                NodeKind::Source { .. } => continue,
                NodeKind::Operator { op } => op.input_columns(needed[index].as_ref()),
                NodeKind::Merge | NodeKind::Join { .. } | NodeKind::Sink { .. } => None,
            };
            for parent in &node.parents {
                needed[*parent] = match (needed[*parent].take(), &input_needs) {
                    (Some(mut have), Some(more)) => {
                        have.extend(more.iter().cloned());
                        Some(have)
                    }
                    _ => None,
                };
            }
        }
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Source { .. }))
            .map(|(i, n)| (n.name.clone(), needed[i].clone()))
            .collect()
    }

    fn instances(&mut self, partition: i32) -> &mut Vec<Instance> {
        let nodes = self.nodes.clone();
        let threads = self.threads;
        self.partitions.entry(partition).or_insert_with(|| {
            nodes
                .iter()
                .map(|n| match &n.kind {
                    NodeKind::Operator { op } => {
                        let mut processor = op.instantiate();
                        processor.set_threads(threads);
                        Instance::Operator(processor)
                    }
                    NodeKind::Join { spec } => {
                        let mut join = spec.instantiate();
                        join.set_threads(threads);
                        Instance::Join(Box::new(join))
                    }
                    _ => Instance::Stateless,
                })
                .collect()
        })
    }

    /// Runs one partition over decoded batches; sink outputs in node order.
    pub fn run_partition_batches(
        &mut self,
        partition: i32,
        input: &PartitionInput<'_>,
    ) -> Result<Vec<SinkOutput>, NodeFailure> {
        let nodes = self.nodes.clone();
        let instances = self.instances(partition);
        let mut frames: Vec<Vec<RecordBatch>> = vec![Vec::new(); nodes.len()];
        // A filter read only by operators forwards its input batches with the
        // rows it keeps marked instead of a filtered copy of them.
        let mut selections: Vec<Vec<(RecordBatch, BooleanBuffer)>> = vec![Vec::new(); nodes.len()];
        let mut outputs = Vec::new();
        for (index, node) in nodes.iter().enumerate() {
            let produced = match (&node.kind, &mut instances[index]) {
                (NodeKind::Source { .. }, _) => {
                    input.batches.get(&node.name).cloned().unwrap_or_default()
                }
                (NodeKind::Operator { .. }, Instance::Operator(processor)) => {
                    let fail = |e| NodeFailure::at(&node.name, e);
                    let parent = node.parents[0];
                    let read_by_operators_only = nodes[index + 1..]
                        .iter()
                        .filter(|n| n.parents.contains(&index))
                        .all(|n| matches!(n.kind, NodeKind::Operator { .. }));
                    let mut out = Vec::new();
                    for batch in &frames[parent] {
                        if read_by_operators_only && let Some(selected) = processor.selection(batch)
                        {
                            selections[index].push((batch.clone(), selected.map_err(fail)?));
                            continue;
                        }
                        out.extend(processor.process(batch).map_err(fail)?);
                    }
                    for (batch, selected) in &selections[parent] {
                        out.extend(processor.process_selected(batch, selected).map_err(fail)?);
                    }
                    out
                }
                (NodeKind::Merge, _) => {
                    let parts: Vec<&RecordBatch> =
                        node.parents.iter().flat_map(|p| &frames[*p]).collect();
                    match parts.first() {
                        None => Vec::new(),
                        Some(first) => {
                            let schema = first.schema();
                            if parts.iter().any(|b| b.schema() != schema) {
                                return Err(NodeFailure::at(
                                    &node.name,
                                    OpError::new("Arrow batch schemas differ"),
                                ));
                            }
                            let merged =
                                arrow::compute::concat_batches(&schema, parts.iter().copied())
                                    .map_err(|e| NodeFailure::at(&node.name, e.into()))?;
                            vec![merged]
                        }
                    }
                }
                (NodeKind::Join { .. }, Instance::Join(join)) => {
                    let (left, right) = (&frames[node.parents[0]], &frames[node.parents[1]]);
                    join.process_sides(left, right)
                        .map_err(|e| NodeFailure::at(&node.name, e))?
                }
                (NodeKind::Sink { topic, codec }, _) => {
                    let parent = &nodes[node.parents[0]];
                    if codec.is_none() {
                        if let NodeKind::Source { topics, .. } = &parent.kind {
                            let mut records = Vec::new();
                            for (t, raw) in input.raw.into_iter().flatten() {
                                if topics.contains(t) {
                                    records.extend(raw.iter().map(OutRecord::copy_of));
                                }
                            }
                            outputs.push(SinkOutput::Raw {
                                sink: node.name.clone(),
                                topic: topic.clone(),
                                records,
                            });
                        }
                    } else {
                        for batch in &frames[node.parents[0]] {
                            outputs.push(SinkOutput::Batch {
                                sink: node.name.clone(),
                                topic: topic.clone(),
                                batch: batch.clone(),
                            });
                        }
                    }
                    Vec::new()
                }
                _ => {
                    return Err(NodeFailure::internal(format!(
                        "unknown columnar node type {index}"
                    )));
                }
            };
            frames[index] = produced;
            // A frame nobody later reads is dropped at once: one batch per node live.
            for parent in &node.parents {
                if nodes[index + 1..]
                    .iter()
                    .all(|n| !n.parents.contains(parent))
                {
                    frames[*parent] = Vec::new();
                    selections[*parent] = Vec::new();
                }
            }
        }
        Ok(outputs)
    }

    /// Runs consumed records: grouped by logical partition (ascending), decoded
    /// per source (one decode per listed topic with records, topics sorted, only
    /// when a non-pass-through child consumes the source), evaluated, and encoded
    /// by the coded sinks; pass-through sinks copy the raw records.
    pub fn run_records(
        &mut self,
        input: &BTreeMap<String, Vec<Record>>,
    ) -> Result<Vec<Produced>, NodeFailure> {
        let partitions: BTreeSet<i32> = input.values().flatten().map(|r| r.partition).collect();
        let mut produced = Vec::new();
        for partition in partitions {
            let per_topic: BTreeMap<String, Vec<Record>> = input
                .iter()
                .map(|(t, rs)| {
                    (
                        t.clone(),
                        rs.iter()
                            .filter(|r| r.partition == partition)
                            .cloned()
                            .collect(),
                    )
                })
                .collect();
            produced.extend(self.run_partition_records(partition, &per_topic)?);
        }
        Ok(produced)
    }

    /// Runs one partition's records; every record must belong to it. A sink row
    /// its codec refuses fails the partition.
    pub fn run_partition_records(
        &mut self,
        partition: i32,
        input: &BTreeMap<String, Vec<Record>>,
    ) -> Result<Vec<Produced>, NodeFailure> {
        let (produced, refused) = self.run_partition_records_by_row(partition, input)?;
        match refused.first() {
            Some(first) => Err(first.failure()),
            None => Ok(produced),
        }
    }

    /// [`Self::run_partition_records`], but a sink row its codec refuses alone
    /// (a JSON Schema file's validation) is handed back beside the records of
    /// the rows that encoded, for the skip and dead-letter policies to treat
    /// one row at a time.
    pub fn run_partition_records_by_row(
        &mut self,
        partition: i32,
        input: &BTreeMap<String, Vec<Record>>,
    ) -> Result<(Vec<Produced>, Vec<Refused>), NodeFailure> {
        if input.values().flatten().any(|r| r.partition != partition) {
            return Err(NodeFailure::internal(format!(
                "record does not belong to partition {partition}"
            )));
        }
        let mut decoded = PartitionInput {
            raw: Some(input),
            ..Default::default()
        };
        for (index, node) in self.nodes.iter().enumerate() {
            let NodeKind::Source { topics, codec } = &node.kind else {
                continue;
            };
            let consumed = self.nodes.iter().any(|n| {
                n.parents.contains(&index) && !matches!(n.kind, NodeKind::Sink { codec: None, .. })
            });
            if !consumed {
                continue;
            }
            let mut batches = Vec::new();
            for (topic, records) in input {
                if !records.is_empty() && topics.contains(topic) {
                    let batch = codec.decode(topic, records).map_err(|e| NodeFailure {
                        node: node.name.clone(),
                        message: e.message,
                        retriable: e.retriable,
                    })?;
                    batches.push(batch);
                }
            }
            decoded.batches.insert(node.name.clone(), batches);
        }
        let outputs = self.run_partition_batches(partition, &decoded)?;
        let mut produced = Vec::new();
        let mut refused = Vec::new();
        for output in outputs {
            match output {
                SinkOutput::Raw { topic, records, .. } => {
                    produced.extend(records.into_iter().map(|record| Produced {
                        topic: topic.clone(),
                        record,
                    }));
                }
                SinkOutput::Batch { sink, topic, batch } => {
                    let codec = self
                        .nodes
                        .iter()
                        .find_map(|n| match &n.kind {
                            NodeKind::Sink { codec: Some(c), .. } if n.name == sink => {
                                Some(c.clone())
                            }
                            _ => None,
                        })
                        .expect("coded sink");
                    let encoded = codec.encode_rows(&topic, &batch).map_err(|e| NodeFailure {
                        node: sink.clone(),
                        message: e.message,
                        retriable: e.retriable,
                    })?;
                    produced.extend(encoded.records.into_iter().map(|record| Produced {
                        topic: topic.clone(),
                        record,
                    }));
                    refused.extend(encoded.refused.into_iter().map(|row| Refused {
                        sink: sink.clone(),
                        row,
                    }));
                }
            }
        }
        Ok((produced, refused))
    }

    /// Node name → state bytes of every operator and join instance of the
    /// partition (empty bytes for stateless ones); an untouched partition gives an empty map.
    pub fn snapshot_partition(
        &self,
        partition: i32,
    ) -> Result<BTreeMap<String, Vec<u8>>, NodeFailure> {
        let mut out = BTreeMap::new();
        let Some(instances) = self.partitions.get(&partition) else {
            return Ok(out);
        };
        for (node, instance) in self.nodes.iter().zip(instances) {
            let bytes = match instance {
                Instance::Stateless => continue,
                Instance::Operator(p) => p.snapshot(),
                Instance::Join(j) => j.snapshot(),
            }
            .map_err(|e| NodeFailure::at(&node.name, e))?;
            out.insert(node.name.clone(), bytes);
        }
        Ok(out)
    }

    /// Restores entries in sorted name order into matching nodes; unknown names are ignored.
    pub fn restore_partition(
        &mut self,
        partition: i32,
        snapshot: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), NodeFailure> {
        let nodes = self.nodes.clone();
        let instances = self.instances(partition);
        for (name, bytes) in snapshot {
            let Some(index) = nodes.iter().position(|n| &n.name == name) else {
                continue;
            };
            match &mut instances[index] {
                Instance::Stateless => {}
                Instance::Operator(p) => p.restore(bytes).map_err(|e| NodeFailure::at(name, e))?,
                Instance::Join(j) => j.restore(bytes).map_err(|e| NodeFailure::at(name, e))?,
            }
        }
        Ok(())
    }

    /// A rollback point for the partition, cheaper than a snapshot: joins keep
    /// their stored batches by reference instead of serialising them.
    pub fn checkpoint_partition(&self, partition: i32) -> Result<Checkpoint, NodeFailure> {
        let Some(instances) = self.partitions.get(&partition) else {
            return Ok(Checkpoint(None));
        };
        let mut states = Vec::with_capacity(instances.len());
        for (node, instance) in self.nodes.iter().zip(instances) {
            states.push(match instance {
                Instance::Stateless => None,
                Instance::Operator(p) => Some(InstanceCheckpoint::Bytes(
                    p.snapshot().map_err(|e| NodeFailure::at(&node.name, e))?,
                )),
                Instance::Join(j) => Some(InstanceCheckpoint::Join(j.checkpoint())),
            });
        }
        Ok(Checkpoint(Some(states)))
    }

    /// Puts the partition back as it was at `checkpoint` (an untouched
    /// partition is released, to start afresh).
    pub fn rollback_partition(
        &mut self,
        partition: i32,
        checkpoint: Checkpoint,
    ) -> Result<(), NodeFailure> {
        self.release_partition(partition);
        let Some(states) = checkpoint.0 else {
            return Ok(());
        };
        let nodes = self.nodes.clone();
        let instances = self.instances(partition);
        for ((node, instance), state) in nodes.iter().zip(instances.iter_mut()).zip(states) {
            match (instance, state) {
                (Instance::Operator(p), Some(InstanceCheckpoint::Bytes(bytes))) => p
                    .restore(&bytes)
                    .map_err(|e| NodeFailure::at(&node.name, e))?,
                (Instance::Join(j), Some(InstanceCheckpoint::Join(c))) => {
                    j.rollback(c).map_err(|e| NodeFailure::at(&node.name, e))?
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Drops the partition's instances and state.
    pub fn release_partition(&mut self, partition: i32) {
        self.partitions.remove(&partition);
    }

    pub fn has_partition(&self, partition: i32) -> bool {
        self.partitions.contains_key(&partition)
    }

    /// Partitions that currently hold instances, ascending.
    pub fn owned_partitions(&self) -> Vec<i32> {
        self.partitions.keys().copied().collect()
    }
}
