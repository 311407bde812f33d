//! The column-parallel writer gives arrow's `ArrowWriter` file byte for byte,
//! at every thread count, statistics included.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::statistics::Statistics;

use super::ParquetColumnsWriter;
use crate::io::batch_sink::parquet_writer;

fn batches(rows: usize, count: usize) -> Vec<RecordBatch> {
    let inner = Fields::from(vec![
        Field::new("city", DataType::Utf8, true),
        Field::new("zip", DataType::Int32, true),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new("address", DataType::Struct(inner.clone()), true),
    ]));
    (0..count)
        .map(|b| {
            let base = (b * rows) as i64;
            let user: StringArray = (0..rows)
                .map(|i| (i % 17 != 0).then(|| format!("user-{}", (base as usize + i) % 977)))
                .collect();
            let amount: Int64Array = (0..rows as i64)
                .map(|i| (i % 13 != 0).then_some((base + i) * 7 % 10_007 - 300))
                .collect();
            let city: ArrayRef = Arc::new(
                (0..rows)
                    .map(|i| Some(["Utrecht", "Gent", "Köln"][i % 3]))
                    .collect::<StringArray>(),
            );
            let zip: ArrayRef = Arc::new(Int32Array::from_iter_values(
                (0..rows as i32).map(|i| 1000 + i % 9000),
            ));
            let address = StructArray::new(inner.clone(), vec![city, zip], None);
            let columns: Vec<ArrayRef> = vec![Arc::new(user), Arc::new(amount), Arc::new(address)];
            RecordBatch::try_new(schema.clone(), columns).unwrap()
        })
        .collect()
}

/// The file `ArrowWriter` writes (tail's settings, row groups of `group` rows).
fn reference(batches: &[RecordBatch], group: usize) -> Vec<u8> {
    let (mut w, _) = parquet_writer(Vec::new(), &batches[0].schema(), group).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.into_inner().unwrap()
}

fn parallel(batches: &[RecordBatch], group: usize, threads: usize) -> Vec<u8> {
    let (w, written) = parquet_writer(Vec::new(), &batches[0].schema(), group).unwrap();
    let mut w = ParquetColumnsWriter::new(w, written, group, threads).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.into_inner().unwrap()
}

#[test]
fn the_file_is_arrow_writers_byte_for_byte_at_every_thread_count() {
    // Batches smaller and larger than a row group, so groups split batches.
    for (rows, count, group) in [(50_000, 4, 65_536), (7, 3, 5), (30_000, 2, 1 << 20)] {
        let input = batches(rows, count);
        let expected = reference(&input, group);
        for threads in [1, 2, 4] {
            assert!(
                parallel(&input, group, threads) == expected,
                "{rows}x{count} rows, groups of {group}, {threads} threads"
            );
        }
    }
}

#[test]
fn the_file_reads_back_with_its_row_groups_and_min_max_statistics() {
    let input = batches(50_000, 3);
    let bytes = bytes::Bytes::from(parallel(&input, 65_536, 4));
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let metadata = builder.metadata().clone();
    assert_eq!(
        metadata.num_row_groups(),
        3,
        "150 000 rows in groups of 65 536"
    );
    let amount = metadata.row_group(0).column(1);
    match amount.statistics() {
        Some(Statistics::Int64(s)) => {
            assert!(s.min_opt().is_some() && s.max_opt().is_some());
            assert!(s.null_count_opt().unwrap() > 0);
        }
        other => panic!("amount statistics: {other:?}"),
    }
    let read: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    let rows: usize = read.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, 150_000);
    let all = arrow::compute::concat_batches(&read[0].schema(), &read).unwrap();
    let expected = arrow::compute::concat_batches(&input[0].schema(), &input).unwrap();
    assert_eq!(all, expected);
}
