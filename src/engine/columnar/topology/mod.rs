//! The columnar node graph (semantics §5): a [`Topology`] builder whose nodes are
//! kept in insertion order with parents that must already exist (so no cycle
//! can be written down), validated into a [`BuiltTopology`] only by
//! [`Topology::build`]. `spec` turns a parsed topology file into builder calls,
//! checking expressions against the schemas that flow along the graph.

pub mod built;
pub mod codec;
pub mod driver;
pub mod spec;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use built::{BuiltTopology, NodeFailure, Produced, Refused, SinkOutput};
pub use codec::{BatchCodec, CodecError, Encoded, OutRecord, Record, RefusedRow};

use crate::engine::columnar::ops::Operator;
use crate::engine::columnar::ops::join::JoinSpec;

/// A builder or validation error, naming the node it concerns when there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TopologyError {
    pub message: String,
    /// Index of the offending node, when the error concerns one.
    pub node: Option<usize>,
}

impl TopologyError {
    fn new(message: impl Into<String>) -> Self {
        TopologyError {
            message: message.into(),
            node: None,
        }
    }
}

/// A handle to a node of one topology, passed as the parent of later nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeId {
    topology: u64,
    index: usize,
}

impl NodeId {
    pub fn index(&self) -> usize {
        self.index
    }
}

#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Source {
        topics: Vec<String>,
        codec: Arc<dyn BatchCodec>,
    },
    Operator {
        op: Arc<dyn Operator>,
    },
    Merge,
    Join {
        spec: JoinSpec,
    },
    /// `codec: None` is a pass-through sink.
    Sink {
        topic: String,
        codec: Option<Arc<dyn BatchCodec>>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct NodeDef {
    pub name: String,
    pub kind: NodeKind,
    pub parents: Vec<usize>,
}

static NEXT_TOPOLOGY: AtomicU64 = AtomicU64::new(1);

/// The graph builder.
#[derive(Debug)]
pub struct Topology {
    id: u64,
    nodes: Vec<NodeDef>,
}

impl Default for Topology {
    fn default() -> Self {
        Self::new()
    }
}

impl Topology {
    pub fn new() -> Self {
        Topology {
            id: NEXT_TOPOLOGY.fetch_add(1, Ordering::Relaxed),
            nodes: Vec::new(),
        }
    }

    fn add(&mut self, name: &str, kind: NodeKind, parents: Vec<usize>) -> NodeId {
        self.nodes.push(NodeDef {
            name: name.to_owned(),
            kind,
            parents,
        });
        NodeId {
            topology: self.id,
            index: self.nodes.len() - 1,
        }
    }

    fn require_parent(&self, parent: NodeId) -> Result<usize, TopologyError> {
        if parent.topology != self.id || parent.index >= self.nodes.len() {
            return Err(TopologyError::new("parent is not a node in this topology"));
        }
        Ok(parent.index)
    }

    /// A source decoding the records of any of `topics`.
    pub fn add_source(
        &mut self,
        name: &str,
        topics: Vec<String>,
        codec: Arc<dyn BatchCodec>,
    ) -> Result<NodeId, TopologyError> {
        if topics.is_empty() {
            return Err(TopologyError::new("a source needs at least one topic"));
        }
        Ok(self.add(name, NodeKind::Source { topics, codec }, Vec::new()))
    }

    /// An operator; each logical partition gets its own fresh instance.
    pub fn add_operator(
        &mut self,
        name: &str,
        op: Arc<dyn Operator>,
        parent: NodeId,
    ) -> Result<NodeId, TopologyError> {
        let parent = self.require_parent(parent)?;
        Ok(self.add(name, NodeKind::Operator { op }, vec![parent]))
    }

    /// Concatenates the batches of two or more parents (same schema), in parent order.
    pub fn add_merge(&mut self, name: &str, parents: &[NodeId]) -> Result<NodeId, TopologyError> {
        if parents.len() < 2 {
            return Err(TopologyError::new("a merge needs at least two parents"));
        }
        let parents = parents
            .iter()
            .map(|p| self.require_parent(*p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.add(name, NodeKind::Merge, parents))
    }

    /// An event-time join of two different parents.
    pub fn add_join(
        &mut self,
        name: &str,
        spec: JoinSpec,
        left: NodeId,
        right: NodeId,
    ) -> Result<NodeId, TopologyError> {
        let (l, r) = (self.require_parent(left)?, self.require_parent(right)?);
        if l == r {
            return Err(TopologyError::new("a join needs two different parents"));
        }
        Ok(self.add(name, NodeKind::Join { spec }, vec![l, r]))
    }

    /// Encodes the parent's batches to `topic`.
    pub fn add_sink(
        &mut self,
        name: &str,
        topic: &str,
        codec: Arc<dyn BatchCodec>,
        parent: NodeId,
    ) -> Result<NodeId, TopologyError> {
        let parent = self.require_parent(parent)?;
        let kind = NodeKind::Sink {
            topic: topic.to_owned(),
            codec: Some(codec),
        };
        Ok(self.add(name, kind, vec![parent]))
    }

    /// Copies a source's raw records (key, value, timestamp, headers) to `topic`.
    pub fn add_pass_through_sink(
        &mut self,
        name: &str,
        topic: &str,
        source: NodeId,
    ) -> Result<NodeId, TopologyError> {
        let parent = self.require_parent(source)?;
        if !matches!(self.nodes[parent].kind, NodeKind::Source { .. }) {
            return Err(TopologyError::new(
                "a pass-through sink must be attached directly to a source",
            ));
        }
        let kind = NodeKind::Sink {
            topic: topic.to_owned(),
            codec: None,
        };
        Ok(self.add(name, kind, vec![parent]))
    }

    /// Every source's topics concatenated in node order (the subscription list).
    pub fn source_topics(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Source { topics, .. } => Some(topics.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Duplicate names, invalid parents, then at least one source and one sink, in that order.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let mut names = std::collections::HashSet::new();
        let (mut sources, mut sinks) = (0, 0);
        for (index, node) in self.nodes.iter().enumerate() {
            let at = |message: String| TopologyError {
                message,
                node: Some(index),
            };
            if !names.insert(node.name.as_str()) {
                return Err(at(format!("duplicate node name `{}`", node.name)));
            }
            match node.kind {
                NodeKind::Source { .. } => sources += 1,
                _ => {
                    if node.parents.is_empty() || node.parents.iter().any(|p| *p >= index) {
                        return Err(at(format!("node `{}` has an invalid parent", node.name)));
                    }
                }
            }
            if matches!(node.kind, NodeKind::Sink { .. }) {
                sinks += 1;
            }
        }
        if sources == 0 {
            return Err(TopologyError::new("topology has no source"));
        }
        if sinks == 0 {
            return Err(TopologyError::new("topology has no sink"));
        }
        Ok(())
    }

    /// Validates and returns the reusable, runnable topology.
    /// Each call gives an independent instance with fresh state.
    pub fn build(&self) -> Result<BuiltTopology, TopologyError> {
        self.validate()?;
        Ok(BuiltTopology::new(self.nodes.clone()))
    }
}

#[cfg(test)]
pub(crate) mod tests;
