//! Cuts as Arrow rows for `barrier list --format arrow|parquet`: one row per
//! (group, epoch, topic, partition, offset), cuts in the order given, partitions in encoded
//! order. A partial cut's missing partitions follow its offsets as rows with a null offset, so
//! the rows describe the cut completely.
//!
//! Times are `Timestamp(Millisecond, "UTC")`: milliseconds, never nanoseconds, which every
//! Parquet reader (Spark, Athena, DuckDB) accepts.

use std::sync::Arc;

use arrow_array::builder::{
    Int32Builder, Int64Builder, StringBuilder, TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};

use super::cut_log::BarrierCut;

/// The schema of the rows.
pub fn cut_rows_schema() -> SchemaRef {
    let time = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
    Arc::new(Schema::new(vec![
        Field::new("group", DataType::Utf8, false),
        Field::new("epoch", DataType::Int64, false),
        Field::new("status", DataType::Utf8, false),
        Field::new("triggered_at", time.clone(), false),
        Field::new("completed_at", time, false),
        Field::new("topic", DataType::Utf8, false),
        Field::new("partition", DataType::Int32, false),
        Field::new("offset", DataType::Int64, true),
    ]))
}

/// One batch holding the rows of every cut.
pub fn cut_rows(cuts: &[BarrierCut]) -> Result<RecordBatch, ArrowError> {
    let rows: usize = cuts
        .iter()
        .map(|c| c.cut.offsets().count() + c.cut.missing.len())
        .sum();
    let mut group = StringBuilder::with_capacity(rows, rows * 8);
    let mut epoch = Int64Builder::with_capacity(rows);
    let mut status = StringBuilder::with_capacity(rows, rows * 8);
    let mut triggered = TimestampMillisecondBuilder::with_capacity(rows).with_timezone("UTC");
    let mut completed = TimestampMillisecondBuilder::with_capacity(rows).with_timezone("UTC");
    let mut topic = StringBuilder::with_capacity(rows, rows * 8);
    let mut partition = Int32Builder::with_capacity(rows);
    let mut offset = Int64Builder::with_capacity(rows);
    for c in cuts {
        let status_text = c.cut.status.to_string();
        let offsets = c.cut.offsets().map(|(tp, o)| (tp, Some(o)));
        let missing = c.cut.missing.iter().map(|tp| (tp.clone(), None));
        for (tp, o) in offsets.chain(missing) {
            group.append_value(&c.group);
            epoch.append_value(c.epoch);
            status.append_value(&status_text);
            triggered.append_value(c.cut.triggered_at);
            completed.append_value(c.cut.completed_at);
            topic.append_value(&tp.topic);
            partition.append_value(tp.partition);
            offset.append_option(o);
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(group.finish()),
        Arc::new(epoch.finish()),
        Arc::new(status.finish()),
        Arc::new(triggered.finish()),
        Arc::new(completed.finish()),
        Arc::new(topic.finish()),
        Arc::new(partition.finish()),
        Arc::new(offset.finish()),
    ];
    RecordBatch::try_new(cut_rows_schema(), columns)
}

#[cfg(test)]
mod tests {
    use arrow_array::{Array, Int64Array, StringArray};

    use super::*;
    use crate::engine::columnar::barrier::record::{
        Cut, CutOffset, CutStatus, CutTopic, TopicPartition,
    };

    fn barrier_cut(epoch: i64, status: CutStatus, missing: Vec<TopicPartition>) -> BarrierCut {
        BarrierCut {
            group: "audit".into(),
            epoch,
            cut: Cut {
                triggered_at: 1_000,
                completed_at: 2_000,
                status,
                topics: vec![CutTopic {
                    topic: "orders".into(),
                    partitions: vec![
                        CutOffset {
                            partition: 0,
                            offset: 10,
                        },
                        CutOffset {
                            partition: 1,
                            offset: 20,
                        },
                    ],
                }],
                missing,
            },
        }
    }

    #[test]
    fn one_row_per_cut_partition_and_missing_partitions_have_null_offsets() {
        let cuts = [
            barrier_cut(1, CutStatus::Complete, vec![]),
            barrier_cut(
                2,
                CutStatus::Partial,
                vec![TopicPartition::new("orders", 2)],
            ),
        ];
        let batch = cut_rows(&cuts).unwrap();
        assert_eq!(batch.num_rows(), 5);
        let offsets = batch
            .column_by_name("offset")
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(
            offsets.iter().collect::<Vec<_>>(),
            [Some(10), Some(20), Some(10), Some(20), None]
        );
        let status = batch
            .column_by_name("status")
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(status.value(4), "partial");
        assert_eq!(
            batch
                .schema()
                .field_with_name("triggered_at")
                .unwrap()
                .data_type(),
            &DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
        );
        assert_eq!(batch.column(3).null_count(), 0);
    }

    #[test]
    fn no_cuts_give_an_empty_batch_with_the_schema() {
        let batch = cut_rows(&[]).unwrap();
        assert_eq!(batch.num_rows(), 0);
        assert_eq!(batch.schema(), cut_rows_schema());
    }
}
