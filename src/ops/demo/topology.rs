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

use crate::engine::columnar::runner::offline::memory::{MemoryReader, MemoryWriter};
use crate::engine::columnar::runner::offline::{BatchWriter, OfflineInput, OfflineRun};
use crate::engine::columnar::topology::spec::{self, ErrorPolicy, OfflineCodecs};
use crate::io::topology_file;
use crate::ops::Result;
use crate::ops::demo::failed;
use crate::ops::demo::orders::ReadBack;

/// The example shipped in `examples/topologies/`.
pub const EXAMPLE: &str = include_str!("../../../examples/topologies/large-orders-by-user.yaml");

fn batch_of(records: &[&ReadBack]) -> Result<RecordBatch> {
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
    RecordBatch::try_new(Arc::new(schema), columns).map_err(failed)
}

/// One row of the example's output: a user's total of large orders in one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTotal {
    pub partition: i32,
    pub user: String,
    pub total: i64,
    pub n: i64,
}

/// Runs the example over the read-back orders.
pub fn run(back: &[ReadBack]) -> Result<Vec<UserTotal>> {
    let spec = topology_file::parse(EXAMPLE).map_err(failed)?;
    let batch = batch_of(&back.iter().collect::<Vec<_>>())?;
    let mut built = spec::build(&spec, &OfflineCodecs, &Default::default())
        .map_err(failed)?
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
    result.map_err(failed)?;
    // One input batch: one output batch per partition, partitions ascending.
    let mut partitions: Vec<i32> = back.iter().map(|r| r.partition).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let mut rows = Vec::new();
    for (partition, batch) in partitions.iter().zip(last.batches().iter()) {
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| failed(format!("the example's sink has no column {name}")))
        };
        let users = column("user")?.as_string::<i32>();
        let totals = column("total")?.as_primitive::<Int64Type>();
        let counts = column("n")?.as_primitive::<Int64Type>();
        for i in 0..batch.num_rows() {
            rows.push(UserTotal {
                partition: *partition,
                user: users.value(i).to_owned(),
                total: totals.value(i),
                n: counts.value(i),
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::murmur2::mask_partition;
    use crate::ops::demo::orders::{BASE_TS, ORDERS_PARTITIONS, orders};

    /// The orders as the read-back step sees them: in their key's partition, offsets in order.
    fn read_back() -> Vec<ReadBack> {
        let mut next = BTreeMap::new();
        let mut back: Vec<ReadBack> = orders(BASE_TS)
            .into_iter()
            .map(|o| {
                let partition = mask_partition(&o.user, ORDERS_PARTITIONS as u32) as i32;
                let offset = next.entry(partition).or_insert(0i64);
                *offset += 1;
                ReadBack {
                    partition,
                    offset: *offset - 1,
                    key: o.user.clone(),
                    headers: Vec::new(),
                    schema_id: 1,
                    value: serde_json::json!({"order_id": o.order_id, "user": o.user,
                        "country": o.country, "amount": o.amount, "ts": o.ts}),
                }
            })
            .collect();
        back.sort_by_key(|r| (r.partition, r.offset));
        back
    }

    #[test]
    fn the_example_sums_the_orders_above_100_per_user() {
        let mut totals = run(&read_back()).unwrap();
        totals.sort_by(|a, b| a.user.cmp(&b.user));
        let got: Vec<(&str, i64, i64)> = totals
            .iter()
            .map(|t| (t.user.as_str(), t.total, t.n))
            .collect();
        assert_eq!(
            got,
            [
                ("alice", 371, 3),
                ("bob", 210, 1),
                ("carol", 740, 2),
                ("dave", 130, 1)
            ]
        );
    }
}
