//! A test driver over a built topology (the Kafka Streams `TopologyTestDriver` idea):
//! records are piped into input topics, every output is queued per output topic, and
//! reads take the queued records in order. Reading a topic with nothing queued is an
//! error (`` topic `out` has no output ``, vectors COL-DRIVER-EMPTY), never an empty
//! answer a test could mistake for "the record was filtered out".

use std::collections::{BTreeMap, VecDeque};

use crate::engine::columnar::topology::{BuiltTopology, NodeFailure, OutRecord, Record};

/// Why a driver call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    #[error("topic `{0}` has no output")]
    NoOutput(String),
    #[error(transparent)]
    Node(#[from] NodeFailure),
}

/// A topology with an output queue per topic.
pub struct TopologyDriver {
    topology: BuiltTopology,
    outputs: BTreeMap<String, VecDeque<OutRecord>>,
}

impl TopologyDriver {
    pub fn new(topology: BuiltTopology) -> Self {
        TopologyDriver {
            topology,
            outputs: BTreeMap::new(),
        }
    }

    /// Runs `records` (grouped by input topic) and queues what the sinks produce.
    pub fn pipe(&mut self, input: &BTreeMap<String, Vec<Record>>) -> Result<(), DriverError> {
        for produced in self.topology.run_records(input)? {
            self.outputs
                .entry(produced.topic)
                .or_default()
                .push_back(produced.record);
        }
        Ok(())
    }

    /// The oldest queued output record of `topic`.
    pub fn read_output(&mut self, topic: &str) -> Result<OutRecord, DriverError> {
        self.outputs
            .get_mut(topic)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| DriverError::NoOutput(topic.to_owned()))
    }

    /// Every queued output record of `topic`, oldest first (empty when none).
    pub fn read_all_outputs(&mut self, topic: &str) -> Vec<OutRecord> {
        self.outputs
            .remove(topic)
            .map(Vec::from)
            .unwrap_or_default()
    }

    /// The topology, e.g. to snapshot a partition between pipes.
    pub fn topology(&mut self) -> &mut BuiltTopology {
        &mut self.topology
    }
}
