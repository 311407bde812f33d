//! Demo step: the example topology `large-orders-by-user.yaml` run offline over
//! the orders read back from the cluster, as `tail … | run …` would.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{
    ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};

use super::orders::ReadBack;
use crate::cmd::exit::{CliError, CliResult};
use crate::engine::columnar::runner::offline::memory::{MemoryReader, MemoryWriter};
use crate::engine::columnar::runner::offline::{BatchWriter, OfflineInput, OfflineRun};
use crate::engine::columnar::topology::spec::{self, ErrorPolicy, OfflineCodecs};
use crate::io::topology_file;

/// The example shipped in `examples/topologies/`.
pub const EXAMPLE: &str = include_str!("../../../examples/topologies/large-orders-by-user.yaml");

fn batch_of(records: &[&ReadBack]) -> CliResult<RecordBatch> {
    let text = |r: &ReadBack, f: &str| r.value[f].as_str().unwrap_or_default().to_owned();
    let int = |r: &ReadBack, f: &str| r.value[f].as_i64().unwrap_or_default();
    let schema = Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("country", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
        Field::new("__key", DataType::Binary, true),
        Field::new("__timestamp", DataType::Int64, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
        Field::new("__headers", DataType::Binary, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            records.iter().map(|r| text(r, "user")),
        )),
        Arc::new(StringArray::from_iter_values(
            records.iter().map(|r| text(r, "country")),
        )),
        Arc::new(Int64Array::from_iter_values(
            records.iter().map(|r| int(r, "amount")),
        )),
        Arc::new(
            TimestampMillisecondArray::from_iter_values(records.iter().map(|r| int(r, "ts")))
                .with_timezone("UTC"),
        ),
        Arc::new(BinaryArray::from_iter_values(
            records.iter().map(|r| r.key.as_bytes()),
        )),
        Arc::new(Int64Array::from_iter_values(
            records.iter().map(|r| int(r, "ts")),
        )),
        Arc::new(Int32Array::from_iter_values(
            records.iter().map(|r| r.partition),
        )),
        Arc::new(Int64Array::from_iter_values(
            records.iter().map(|r| r.offset),
        )),
        Arc::new(BinaryArray::from_iter_values(
            records.iter().map(|_| [0u8; 4]),
        )),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).map_err(|e| CliError::failure(e.to_string()))
}

/// Runs the example over the read-back orders; rows of (partition, user, total, n).
pub fn run(back: &[ReadBack]) -> CliResult<Vec<(i32, String, i64, i64)>> {
    let spec = topology_file::parse(EXAMPLE).map_err(|e| CliError::failure(e.to_string()))?;
    let batch = batch_of(&back.iter().collect::<Vec<_>>())?;
    let mut built = spec::build(&spec, &OfflineCodecs, &Default::default())
        .map_err(|e| CliError::failure(e.to_string()))?
        .topology;
    let last = MemoryWriter::default();
    let (_, result) = OfflineRun {
        topology: &mut built,
        inputs: vec![OfflineInput {
            source: "orders".into(),
            topic: "orders".into(),
            reader: Box::new(MemoryReader::new(batch.schema(), [batch])),
        }],
        sinks: BTreeMap::from([(
            "large-orders-by-user".to_owned(),
            Box::new(last.clone()) as Box<dyn BatchWriter>,
        )]),
        policy: ErrorPolicy::Fail,
        dead_letter: None,
        progress: None,
    }
    .run();
    result.map_err(|e| CliError::failure(e.to_string()))?;
    // One input batch: one output batch per partition, partitions ascending.
    let mut partitions: Vec<i32> = back.iter().map(|r| r.partition).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let mut rows = Vec::new();
    let batches = last.batches();
    for (partition, batch) in partitions.iter().zip(batches.iter()) {
        let users = batch
            .column_by_name("user")
            .expect("user")
            .as_string::<i32>();
        let totals = batch
            .column_by_name("total")
            .expect("total")
            .as_primitive::<Int64Type>();
        let counts = batch
            .column_by_name("n")
            .expect("n")
            .as_primitive::<Int64Type>();
        for i in 0..batch.num_rows() {
            rows.push((
                *partition,
                users.value(i).to_owned(),
                totals.value(i),
                counts.value(i),
            ));
        }
    }
    Ok(rows)
}
