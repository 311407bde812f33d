//! The offline runner (`engine::columnar::runner::offline`) over topologies read by
//! [`super::topology_file`]: here, not in the engine, because the engine never imports `io`
//! and these cases are written as the topology files a user writes.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;

use crate::engine::columnar::headers::decode_headers;
use crate::engine::columnar::metadata::HEADERS_COLUMN;
use crate::engine::columnar::ops::testing::{int64s, transactions};
use crate::engine::columnar::runner::offline::memory::{MemoryReader, MemoryWriter};
use crate::engine::columnar::runner::offline::*;
use crate::engine::columnar::topology::BuiltTopology;
use crate::engine::columnar::topology::spec::{self, ErrorPolicy, OfflineCodecs};
use crate::io::topology_file::parse as parse_file;

fn parse(text: &str) -> crate::engine::columnar::topology::spec::TopologySpec {
    parse_file(text).unwrap()
}

fn input(batches: Vec<RecordBatch>) -> OfflineInput {
    OfflineInput {
        source: "orders".into(),
        topic: "orders".into(),
        reader: Box::new(MemoryReader::new(batches[0].schema(), batches)),
    }
}

fn topology(policy: ErrorPolicy) -> BuiltTopology {
    let mut spec = parse(
        "version: 1\nnodes:\n  - source: orders\n    topics: [orders]\n    value: arrow\n  - group_by: totals\n    parent: orders\n    keys: [user]\n    aggregates: [sum(amount) AS total]\n  - sink: out\n    parent: totals\n    topic: out\n    value: arrow\n",
    );
    spec.settings.error_policy = policy;
    spec::build(&spec, &OfflineCodecs, &Default::default())
        .unwrap()
        .topology
}

#[test]
fn partitions_run_in_ascending_order_with_their_own_state() {
    let mut built = topology(ErrorPolicy::Fail);
    let mut batch = transactions(&["a", "a", "a"], &[1, 2, 4], &[1, 2, 3], 0);
    let mut columns = batch.columns().to_vec();
    columns[4] = Arc::new(arrow_array::Int32Array::from(vec![2, 1, 2]));
    batch = RecordBatch::try_new(batch.schema(), columns).unwrap();
    let out = MemoryWriter::default();
    let (metrics, result) = OfflineRun {
        topology: &mut built,
        inputs: vec![input(vec![batch])],
        sinks: BTreeMap::from([(
            "out".to_owned(),
            Box::new(out.clone()) as Box<dyn BatchWriter>,
        )]),
        policy: ErrorPolicy::Fail,
        dead_letter: None,
        progress: None,
    }
    .run();
    assert_eq!(result, Ok(Outcome::Completed));
    let written = out.batches();
    assert_eq!(int64s(&written[0], "total"), [Some(2)], "partition 1 first");
    assert_eq!(int64s(&written[1], "total"), [Some(5)]);
    assert_eq!(metrics.batches, 1);
    assert_eq!(metrics.input_records, 3);
    assert_eq!(metrics.output_records, 2);
    assert_eq!(built.owned_partitions(), [1, 2]);
}

#[test]
fn skip_rolls_the_partition_back_and_dead_letter_keeps_the_rows_with_headers() {
    for policy in [
        ErrorPolicy::Skip,
        ErrorPolicy::DeadLetter {
            topic: "dlq".into(),
        },
    ] {
        let mut built = topology(policy.clone());
        let batches = vec![
            transactions(&["a"], &[5], &[1], 0),
            transactions(&["a", "b"], &[i64::MAX, 1], &[2, 3], 0),
            transactions(&["a"], &[1], &[4], 0),
        ];
        let (out, dlq) = (MemoryWriter::default(), MemoryWriter::default());
        let (metrics, result) = OfflineRun {
            topology: &mut built,
            inputs: vec![input(batches)],
            sinks: BTreeMap::from([(
                "out".to_owned(),
                Box::new(out.clone()) as Box<dyn BatchWriter>,
            )]),
            policy: policy.clone(),
            dead_letter: Some(Box::new(dlq.clone())),
            progress: None,
        }
        .run();
        assert_eq!(result, Ok(Outcome::Completed));
        assert_eq!(metrics.failures, 1);
        let written = out.batches();
        assert_eq!(written.len(), 2);
        assert_eq!(
            int64s(&written[1], "total"),
            [Some(6)],
            "the failed batch left no trace in the state"
        );
        let dead = dlq.batches();
        if matches!(policy, ErrorPolicy::Skip) {
            assert!(dead.is_empty());
            assert_eq!(metrics.dead_letter_records, 0);
            continue;
        }
        assert_eq!(metrics.dead_letter_records, 2);
        let cell = dead[0]
            .column_by_name(HEADERS_COLUMN)
            .unwrap()
            .as_binary::<i32>()
            .value(1)
            .to_vec();
        let headers = decode_headers(&cell).unwrap();
        let keys: Vec<&str> = headers.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "krabka.error.class",
                "krabka.error.message",
                "krabka.source.topic",
                "krabka.source.partition",
                "krabka.source.offset"
            ]
        );
        assert_eq!(
            headers[0].value.as_deref(),
            Some(PROCESSING_ERROR_CLASS.as_bytes())
        );
        assert!(
            String::from_utf8_lossy(headers[1].value.as_deref().unwrap())
                .contains("integer overflow")
        );
        assert_eq!(headers[4].value.as_deref(), Some(&b"1"[..]));
        assert_eq!(
            dead[0]
                .column_by_name("amount")
                .unwrap()
                .as_primitive::<Int64Type>()
                .value(0),
            i64::MAX
        );
    }
}

#[test]
fn only_the_columns_read_downstream_reach_the_operators() {
    let built = topology(ErrorPolicy::Fail);
    let needed = built.needed_source_columns();
    let columns: Vec<&str> = needed["orders"]
        .as_ref()
        .unwrap()
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(columns, ["amount", "user"]);
    let spec = parse(
        "version: 1\nnodes:\n  - source: orders\n    topics: [orders]\n    value: arrow\n  - filter: big\n    parent: orders\n    where: amount > 1\n  - sink: out\n    parent: big\n    topic: out\n    value: arrow\n",
    );
    let built = spec::build(&spec, &OfflineCodecs, &Default::default())
        .unwrap()
        .topology;
    assert_eq!(
        built.needed_source_columns()["orders"],
        None,
        "a sink after a filter sees every column"
    );
}
