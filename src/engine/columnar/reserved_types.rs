//! The typed form of two reserved columns, for files other tools read (Arrow IPC,
//! Parquet): `__timestamp` as `timestamp[ms, UTC]` instead of Int64 epoch ms, and
//! `__headers` as `list<struct<key: utf8 not null, value: binary>>` instead of the
//! library's byte cell (formats §3/§4). A list of structs, not a map: Kafka header
//! names repeat, and DuckDB refuses a map with a repeated key; the list keeps order,
//! repeats and null (≠ empty) values, as Spark's and Flink's Kafka sources do.
//!
//! Both conversions are exact and inverse: inputs in either layout are brought back
//! to the library layout before processing ([`to_library`]).

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};

use crate::engine::columnar::headers::{HeadersCellWriter, decode_headers};
use crate::engine::columnar::reserved::{HEADERS_COLUMN, TIMESTAMP_COLUMN};

/// Field names of one typed header.
pub const HEADER_KEY_FIELD: &str = "key";
pub const HEADER_VALUE_FIELD: &str = "value";

fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new(HEADER_KEY_FIELD, DataType::Utf8, false),
        Field::new(HEADER_VALUE_FIELD, DataType::Binary, true),
    ])
}

/// `list<struct<key: utf8 not null, value: binary>>`.
pub fn typed_headers_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(
        DataType::Struct(header_fields()),
        false,
    )))
}

/// `timestamp[ms, UTC]`: Kafka timestamps are epoch milliseconds.
pub fn typed_timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
}

/// The schema [`to_typed`] gives.
pub fn typed_schema(schema: &Schema) -> Schema {
    map_fields(schema, |f| match f.name().as_str() {
        TIMESTAMP_COLUMN if f.data_type() == &DataType::Int64 => {
            Some(f.as_ref().clone().with_data_type(typed_timestamp_type()))
        }
        HEADERS_COLUMN if f.data_type() == &DataType::Binary => {
            Some(f.as_ref().clone().with_data_type(typed_headers_type()))
        }
        _ => None,
    })
}

/// Whether a schema holds a reserved column in its typed form (any timestamp unit).
pub fn has_typed_columns(schema: &Schema) -> bool {
    schema.fields().iter().any(|f| typed_column(f).is_some())
}

/// The library schema of an input in either layout.
pub fn library_schema(schema: &Schema) -> Schema {
    map_fields(schema, |f| {
        typed_column(f).map(|kind| {
            f.as_ref().clone().with_data_type(match kind {
                Kind::Timestamp(_) => DataType::Int64,
                Kind::Headers => DataType::Binary,
            })
        })
    })
}

enum Kind {
    Timestamp(TimeUnit),
    Headers,
}

fn typed_column(f: &FieldRef) -> Option<Kind> {
    match (f.name().as_str(), f.data_type()) {
        (TIMESTAMP_COLUMN, DataType::Timestamp(unit, _)) => Some(Kind::Timestamp(*unit)),
        (HEADERS_COLUMN, DataType::List(item)) if is_header_struct(item.data_type()) => {
            Some(Kind::Headers)
        }
        _ => None,
    }
}

fn is_header_struct(t: &DataType) -> bool {
    match t {
        DataType::Struct(fields) => {
            fields.len() == 2
                && fields[0].name() == HEADER_KEY_FIELD
                && fields[0].data_type() == &DataType::Utf8
                && fields[1].name() == HEADER_VALUE_FIELD
                && fields[1].data_type() == &DataType::Binary
        }
        _ => false,
    }
}

fn map_fields(schema: &Schema, f: impl Fn(&FieldRef) -> Option<Field>) -> Schema {
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|field| f(field).map_or_else(|| field.clone(), Arc::new))
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// The batch with `__timestamp` and `__headers` typed (columns absent or already
/// typed are left as they are). A `__headers` cell that is not a header list is an
/// error naming the row.
pub fn to_typed(batch: &RecordBatch) -> Result<RecordBatch, String> {
    let schema = batch.schema();
    let target: SchemaRef = Arc::new(typed_schema(&schema));
    if target == schema {
        return Ok(batch.clone());
    }
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        columns.push(match (field.name().as_str(), column.data_type()) {
            (TIMESTAMP_COLUMN, DataType::Int64) => {
                let ms = column.as_primitive::<Int64Type>();
                Arc::new(
                    TimestampMillisecondArray::new(ms.values().clone(), ms.nulls().cloned())
                        .with_timezone("UTC"),
                ) as ArrayRef
            }
            (HEADERS_COLUMN, DataType::Binary) => typed_headers(column.as_binary::<i32>())?,
            _ => column.clone(),
        });
    }
    RecordBatch::try_new(target, columns)
        .map_err(|e| format!("cannot type the reserved columns: {e}"))
}

fn typed_headers(cells: &BinaryArray) -> Result<ArrayRef, String> {
    let entry = StructBuilder::new(
        header_fields(),
        vec![
            Box::new(StringBuilder::new()),
            Box::new(BinaryBuilder::new()),
        ],
    );
    let mut list = ListBuilder::new(entry).with_field(Arc::new(Field::new_list_field(
        DataType::Struct(header_fields()),
        false,
    )));
    for row in 0..cells.len() {
        if cells.is_null(row) {
            list.append_null();
            continue;
        }
        let headers = decode_headers(cells.value(row))
            .map_err(|e| format!("row {row}: cannot read __headers: {e}"))?;
        let entries = list.values();
        for h in &headers {
            entries
                .field_builder::<StringBuilder>(0)
                .expect("key builder")
                .append_value(&h.key);
            entries
                .field_builder::<BinaryBuilder>(1)
                .expect("value builder")
                .append_option(h.value.as_deref());
            entries.append(true);
        }
        list.append(true);
    }
    Ok(Arc::new(list.finish()))
}

/// The batch in the library layout (formats §4), from either layout: a typed
/// `__timestamp` of any unit back to epoch ms (a value that is not a whole
/// millisecond is refused: Kafka timestamps are ms), typed headers back to the cell.
pub fn to_library(batch: &RecordBatch) -> Result<RecordBatch, String> {
    let schema = batch.schema();
    if !has_typed_columns(&schema) {
        return Ok(batch.clone());
    }
    let target = Arc::new(library_schema(&schema));
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        columns.push(match typed_column(field) {
            Some(Kind::Timestamp(unit)) => library_timestamps(column.as_ref(), unit)?,
            Some(Kind::Headers) => library_headers(column.as_ref())?,
            None => column.clone(),
        });
    }
    RecordBatch::try_new(target, columns)
        .map_err(|e| format!("cannot restore the reserved columns: {e}"))
}

fn library_timestamps(column: &dyn Array, unit: TimeUnit) -> Result<ArrayRef, String> {
    let raw = arrow_cast::cast(column, &DataType::Int64).map_err(|e| e.to_string())?;
    let values = raw.as_primitive::<Int64Type>();
    let out: Int64Array = match unit {
        TimeUnit::Millisecond => values.clone(),
        TimeUnit::Second => values
            .iter()
            .enumerate()
            .map(|(row, v)| {
                v.map(|s| {
                    s.checked_mul(1000).ok_or_else(|| {
                        format!("__timestamp row {row}: {s} s is outside the epoch-ms range")
                    })
                })
                .transpose()
            })
            .collect::<Result<_, _>>()?,
        TimeUnit::Microsecond | TimeUnit::Nanosecond => {
            let per_ms = if unit == TimeUnit::Microsecond {
                1_000
            } else {
                1_000_000
            };
            values
                .iter()
                .enumerate()
                .map(|(row, v)| {
                    v.map(|t| {
                        if t % per_ms != 0 {
                            Err(format!(
                                "__timestamp row {row}: {t} is not a whole millisecond (Kafka timestamps are epoch ms)"
                            ))
                        } else {
                            Ok(t / per_ms)
                        }
                    })
                    .transpose()
                })
                .collect::<Result<_, _>>()?
        }
    };
    Ok(Arc::new(out))
}

fn library_headers(column: &dyn Array) -> Result<ArrayRef, String> {
    let list = column.as_list::<i32>();
    let entries = list.values().as_struct();
    let keys = entries.column(0).as_string::<i32>();
    let values = entries.column(1).as_binary::<i32>();
    let offsets = list.value_offsets();
    let mut out = BinaryBuilder::with_capacity(list.len(), list.len() * 4);
    let mut cell = Vec::new();
    for row in 0..list.len() {
        if list.is_null(row) {
            out.append_null();
            continue;
        }
        cell.clear();
        let mut writer = HeadersCellWriter::new(&mut cell);
        for i in offsets[row] as usize..offsets[row + 1] as usize {
            if entries.is_null(i) || keys.is_null(i) {
                return Err(format!("__headers row {row}: a header without a name"));
            }
            writer.push(keys.value(i), (!values.is_null(i)).then(|| values.value(i)));
        }
        writer.finish();
        out.append_value(&cell);
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnar::headers::{Header, encode_headers};
    use crate::engine::columnar::reserved::reserved_fields;
    use arrow_array::{Int32Array, TimestampMicrosecondArray};

    fn library_batch() -> RecordBatch {
        let cells = [
            encode_headers(&[
                Header::new("a", Some(b"1".to_vec())),
                Header::new("a", Some(vec![])),
                Header::new("b", None),
            ]),
            encode_headers(&[]),
        ];
        RecordBatch::try_new(
            Arc::new(Schema::new(reserved_fields().to_vec())),
            vec![
                Arc::new(BinaryArray::from(vec![Some(b"k".as_ref()), None])),
                Arc::new(Int64Array::from(vec![1_732_870_800_123, 0])),
                Arc::new(Int32Array::from(vec![0, 1])),
                Arc::new(Int64Array::from(vec![5, 6])),
                Arc::new(BinaryArray::from(vec![
                    cells[0].as_slice(),
                    cells[1].as_slice(),
                ])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn typed_and_back_is_the_identity_keeping_order_repeats_and_nulls() {
        let batch = library_batch();
        let typed = to_typed(&batch).unwrap();
        assert_eq!(typed.schema().field(1).data_type(), &typed_timestamp_type());
        assert_eq!(typed.schema().field(4).data_type(), &typed_headers_type());
        let list = typed.column(4).as_list::<i32>();
        assert_eq!(list.value_length(0), 3);
        assert_eq!(list.value_length(1), 0);
        assert!(!list.is_null(1), "no headers is an empty list, not null");
        assert_eq!(to_library(&typed).unwrap(), batch);
        assert_eq!(to_library(&batch).unwrap(), batch);
    }

    #[test]
    fn microsecond_timestamps_come_back_as_ms_and_a_fraction_is_refused() {
        let schema = Arc::new(Schema::new(vec![Field::new(
            TIMESTAMP_COLUMN,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        )]));
        let whole = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_000_000), None]).with_timezone("UTC"),
            )],
        )
        .unwrap();
        let back = to_library(&whole).unwrap();
        let ms = back.column(0).as_primitive::<Int64Type>();
        assert_eq!(ms.value(0), 1000);
        assert!(ms.is_null(1));
        let fraction = RecordBatch::try_new(
            schema,
            vec![Arc::new(
                TimestampMicrosecondArray::from(vec![1_500]).with_timezone("UTC"),
            )],
        )
        .unwrap();
        assert!(to_library(&fraction).unwrap_err().contains("row 0"));
    }
}
