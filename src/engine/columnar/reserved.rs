//! The five reserved metadata columns every decoded batch ends with (formats §4),
//! their builder, and the escaping of payload columns whose name collides with a
//! reserved one (`__key` → `__payload___key` + `krabka.payload.name=__key`).

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder};

use crate::engine::columnar::headers::encode_headers_into;
use crate::engine::columnar::record::{HeadersRef, RecordView};

// One definition of the names, fields and escaping lives in `metadata`; the codecs
// import them from here together with the builder.
pub use crate::engine::columnar::metadata::{
    HEADERS_COLUMN, KEY_COLUMN, OFFSET_COLUMN, PARTITION_COLUMN,
    PAYLOAD_NAME_METADATA as PAYLOAD_NAME_KEY, PAYLOAD_PREFIX as ESCAPED_PREFIX, RESERVED_COLUMNS,
    TIMESTAMP_COLUMN, TOPIC_COLUMN, escape_payload_field, is_reserved, reserved_fields,
    restore_payload_field, topic_field,
};

/// Field metadata: a Utf8 column holding JSON text.
pub const JSON_KEY: &str = "krabka.json";

/// Accumulates the reserved columns, one row per call to [`append`](Self::append).
#[derive(Debug, Default)]
pub struct MetadataBuilder {
    key: BinaryBuilder,
    timestamp: Int64Builder,
    partition: Int32Builder,
    offset: Int64Builder,
    headers: BinaryBuilder,
    /// The headers cell of the record being appended, reused across records.
    scratch: Vec<u8>,
}

impl MetadataBuilder {
    pub fn with_capacity(rows: usize) -> Self {
        MetadataBuilder {
            key: BinaryBuilder::with_capacity(rows, rows * 8),
            timestamp: Int64Builder::with_capacity(rows),
            partition: Int32Builder::with_capacity(rows),
            offset: Int64Builder::with_capacity(rows),
            headers: BinaryBuilder::with_capacity(rows, rows * 4),
            scratch: Vec::new(),
        }
    }

    /// Appends `rows` copies of the record's metadata (a blob value gives many rows).
    pub fn append(&mut self, record: &RecordView<'_>, rows: usize) {
        let cell: &[u8] = match record.headers {
            HeadersRef::Cell(cell) => cell,
            HeadersRef::List(list) => {
                encode_headers_into(&mut self.scratch, list);
                &self.scratch
            }
        };
        for _ in 0..rows {
            self.key.append_option(record.key);
            self.timestamp.append_value(record.timestamp);
            self.partition.append_value(record.partition);
            self.offset.append_value(record.offset);
            self.headers.append_value(cell);
        }
    }

    pub fn len(&self) -> usize {
        self.offset.values_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The five columns in reserved order; the builder is empty afterwards.
    pub fn finish(&mut self) -> [ArrayRef; 5] {
        [
            Arc::new(self.key.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.partition.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.headers.finish()),
        ]
    }
}

/// `batch` (all of one topic) with the `__topic` column inserted just before
/// `__key`, where the reserved columns begin (at the end when there is no `__key`).
pub fn with_topic_column(
    batch: &arrow_array::RecordBatch,
    topic: &str,
) -> Result<arrow_array::RecordBatch, arrow_schema::ArrowError> {
    use arrow_array::{DictionaryArray, Int32Array, StringArray};
    let schema = batch.schema();
    if schema.index_of(TOPIC_COLUMN).is_ok() {
        return Ok(batch.clone());
    }
    let at = schema.index_of(KEY_COLUMN).unwrap_or(schema.fields().len());
    let keys = Int32Array::from(vec![0; batch.num_rows()]);
    let names: ArrayRef = Arc::new(StringArray::from(vec![topic]));
    let column: ArrayRef = Arc::new(DictionaryArray::try_new(keys, names)?);
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields.insert(at, topic_field());
    let mut columns = batch.columns().to_vec();
    columns.insert(at, column);
    let schema = arrow_schema::Schema::new_with_metadata(fields, schema.metadata().clone());
    arrow_array::RecordBatch::try_new_with_options(
        Arc::new(schema),
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field};

    #[test]
    fn a_payload_column_named_like_a_reserved_one_is_escaped_and_restored() {
        let escaped = escape_payload_field(&Field::new("__key", DataType::Utf8, true));
        assert_eq!(escaped.name(), "__payload___key");
        assert_eq!(escaped.metadata().get(PAYLOAD_NAME_KEY).unwrap(), "__key");
        let restored = restore_payload_field(&escaped);
        assert_eq!(restored.name(), "__key");
        assert!(restored.metadata().is_empty());
        let plain = escape_payload_field(&Field::new("user", DataType::Utf8, true));
        assert_eq!(plain.name(), "user");
    }

    #[test]
    fn reserved_fields_are_nullable_without_metadata_in_order() {
        let f = reserved_fields();
        let names: Vec<&str> = f.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, RESERVED_COLUMNS);
        assert!(f.iter().all(|f| f.is_nullable() && f.metadata().is_empty()));
    }

    #[test]
    fn the_topic_column_goes_just_before_the_reserved_columns_dictionary_encoded() {
        use arrow_array::types::Int32Type;
        use arrow_array::{Array, DictionaryArray, Int64Array, RecordBatch, cast::AsArray};
        use arrow_schema::{DataType, Field, Schema};
        let mut fields = vec![Arc::new(Field::new("amount", DataType::Int64, true))];
        fields.extend(reserved_fields());
        let mut b = MetadataBuilder::with_capacity(2);
        let view = RecordView {
            topic: "orders",
            partition: 1,
            offset: 7,
            timestamp: 0,
            key: None,
            value: None,
            headers: HeadersRef::List(&[]),
        };
        b.append(&view, 2);
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(vec![1, 2]))];
        columns.extend(b.finish());
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let with = with_topic_column(&batch, "orders").unwrap();
        let names: Vec<_> = with
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(
            names,
            [
                "amount",
                "__topic",
                "__key",
                "__timestamp",
                "__partition",
                "__offset",
                "__headers"
            ]
        );
        assert_eq!(with.schema().field(1), topic_field().as_ref());
        let topics: &DictionaryArray<Int32Type> = with.column(1).as_dictionary();
        assert_eq!(topics.values().as_string::<i32>().value(0), "orders");
        assert_eq!(topics.values().len(), 1, "the name is stored once");
        assert_eq!(topics.keys().values().as_ref(), &[0, 0]);
        assert!(is_reserved(TOPIC_COLUMN));
    }
}
