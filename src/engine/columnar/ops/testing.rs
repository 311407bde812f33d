//! Test batches: `user`/`amount` payload plus the five reserved columns.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use crate::engine::columnar::metadata::reserved_fields;

pub fn transactions(
    users: &[&str],
    amounts: &[i64],
    timestamps: &[i64],
    partition: i32,
) -> RecordBatch {
    let mut fields = vec![
        Arc::new(Field::new("user", DataType::Utf8, true)),
        Arc::new(Field::new("amount", DataType::Int64, true)),
    ];
    fields.extend(reserved_fields());
    let n = users.len();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(users.to_vec())),
        Arc::new(Int64Array::from(amounts.to_vec())),
        Arc::new(BinaryArray::from_opt_vec(vec![None; n])),
        Arc::new(Int64Array::from(timestamps.to_vec())),
        Arc::new(Int32Array::from(vec![partition; n])),
        Arc::new(Int64Array::from_iter_values(0..n as i64)),
        Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
            [0u8, 0, 0, 0],
            n,
        ))),
    ];
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

pub fn int64s(batch: &RecordBatch, name: &str) -> Vec<Option<i64>> {
    use arrow_array::cast::AsArray;
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_primitive::<arrow_array::types::Int64Type>()
        .iter()
        .collect()
}

pub fn strings(batch: &RecordBatch, name: &str) -> Vec<Option<String>> {
    use arrow_array::cast::AsArray;
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_string::<i32>()
        .iter()
        .map(|v| v.map(str::to_owned))
        .collect()
}
