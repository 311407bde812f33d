//! One fetched batch of records → one Arrow `RecordBatch`: payload columns from
//! the key and value codecs, then the five reserved columns (formats §4). A
//! record that fails is reported by index; the caller drops it (skip, dead
//! letter, hold for a pending schema) and decodes the rest again.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{Field, FieldRef, Fields, Schema};

use crate::engine::columnar::codec::{CodecError, PayloadColumns, RowEncoder, ValueDecoder};
use crate::engine::columnar::headers::decode_headers;
use crate::engine::columnar::record::{OutRecord, Record, Records};
use crate::engine::columnar::reserved::{
    HEADERS_COLUMN, KEY_COLUMN, MetadataBuilder, TIMESTAMP_COLUMN, escape_payload_field,
    reserved_fields,
};

/// The payload column holding a decoded key.
pub const DECODED_KEY_COLUMN: &str = "key";

/// Which part of a record failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordPart {
    Key,
    Value,
}

/// A record of the batch that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFailure {
    /// Index into the records handed to [`BatchDecoder::decode`].
    pub index: usize,
    pub part: RecordPart,
    pub error: CodecError,
}

/// Decodes batches of one topic with its key and value codecs.
pub struct BatchDecoder {
    /// `None`: the key stays raw bytes in `__key` only.
    key: Option<Box<dyn ValueDecoder>>,
    value: Box<dyn ValueDecoder>,
}

impl BatchDecoder {
    pub fn new(key: Option<Box<dyn ValueDecoder>>, value: Box<dyn ValueDecoder>) -> Self {
        BatchDecoder { key, value }
    }

    /// Decodes `records` into one batch, or names the first record that failed.
    pub fn decode(&mut self, records: &[&Record]) -> Result<RecordBatch, RecordFailure> {
        self.decode_from(records)
    }

    /// [`decode`](Self::decode) from records held in any shape (an arena, owned records).
    pub fn decode_from<R: Records + ?Sized>(
        &mut self,
        records: &R,
    ) -> Result<RecordBatch, RecordFailure> {
        let result = self.try_decode(records);
        if result.is_err() {
            self.value.reset();
            if let Some(k) = self.key.as_mut() {
                k.reset();
            }
        }
        result
    }

    /// Some codecs validate in bulk when finishing (e.g. UTF-8 of a whole column); a
    /// failure there names no record, so the records are tried one by one to find it.
    fn locate<R: Records + ?Sized>(&mut self, records: &R, error: CodecError) -> RecordFailure {
        self.value.reset();
        if let Some(k) = self.key.as_mut() {
            k.reset();
        }
        for index in 0..records.len() {
            let r = records.get(index);
            if let Some(k) = self.key.as_mut() {
                let appended = k.append(r.key);
                if let Err(error) = appended.and_then(|_| k.finish()) {
                    return RecordFailure {
                        index,
                        part: RecordPart::Key,
                        error,
                    };
                }
            }
            let appended = self.value.append(r.value);
            if let Err(error) = appended.and_then(|_| self.value.finish()) {
                return RecordFailure {
                    index,
                    part: RecordPart::Value,
                    error,
                };
            }
        }
        RecordFailure {
            index: records.len().saturating_sub(1),
            part: RecordPart::Value,
            error,
        }
    }

    fn try_decode<R: Records + ?Sized>(
        &mut self,
        records: &R,
    ) -> Result<RecordBatch, RecordFailure> {
        let mut meta = MetadataBuilder::with_capacity(records.len());
        let batch_failure = |error: CodecError| RecordFailure {
            index: records.len().saturating_sub(1),
            part: RecordPart::Value,
            error,
        };
        for index in 0..records.len() {
            let r = records.get(index);
            if let Some(k) = self.key.as_mut() {
                let rows = k.append(r.key).map_err(|error| RecordFailure {
                    index,
                    part: RecordPart::Key,
                    error,
                })?;
                if rows != 1 {
                    return Err(RecordFailure {
                        index,
                        part: RecordPart::Key,
                        error: CodecError::invalid("a key must decode to exactly one row"),
                    });
                }
            }
            let rows = self.value.append(r.value).map_err(|error| RecordFailure {
                index,
                part: RecordPart::Value,
                error,
            })?;
            if self.key.is_some() && rows != 1 {
                return Err(RecordFailure {
                    index,
                    part: RecordPart::Value,
                    error: CodecError::invalid(
                        "a decoded key needs exactly one value row per record; Arrow blob values cannot have a decoded key",
                    ),
                });
            }
            meta.append(&r, rows);
        }
        let mut fields: Vec<FieldRef> = Vec::new();
        let mut columns: Vec<ArrayRef> = Vec::new();
        let key_columns = match self.key.as_mut().map(|k| k.finish()) {
            Some(Err(e)) => return Err(self.locate(records, e)),
            other => other.map(Result::unwrap_or_default),
        };
        let value_columns = match self.value.finish() {
            Ok(c) => c,
            Err(e) => return Err(self.locate(records, e)),
        };
        if let Some(cols) = key_columns {
            let (f, c) = key_column(cols).map_err(batch_failure)?;
            fields.push(f);
            columns.push(c);
        }
        for (f, c) in value_columns {
            fields.push(Arc::new(escape_payload_field(f.as_ref())));
            columns.push(c);
        }
        if fields
            .iter()
            .filter(|f| f.name() == DECODED_KEY_COLUMN)
            .count()
            > 1
        {
            return Err(batch_failure(CodecError::invalid(
                "the decoded key column `key` collides with a value column of the same name; use --key-format raw",
            )));
        }
        fields.extend(reserved_fields());
        columns.extend(meta.finish());
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| {
            batch_failure(CodecError::invalid(format!(
                "cannot build the Arrow batch: {e}"
            )))
        })
    }
}

/// A decoded key becomes one column `key`: the single column renamed, or a struct of several.
fn key_column(cols: PayloadColumns) -> Result<(FieldRef, ArrayRef), CodecError> {
    if cols.len() == 1 {
        let (f, c) = cols.into_iter().next().expect("one column");
        let field = f.as_ref().clone().with_name(DECODED_KEY_COLUMN);
        return Ok((Arc::new(field), c));
    }
    let (fields, arrays): (Vec<FieldRef>, Vec<ArrayRef>) = cols.into_iter().unzip();
    let s = StructArray::try_new(Fields::from(fields), arrays, None)
        .map_err(|e| CodecError::invalid(format!("cannot build the key column: {e}")))?;
    let field = Field::new(DECODED_KEY_COLUMN, s.data_type().clone(), true);
    Ok((Arc::new(field), Arc::new(s)))
}

/// Encodes every row of a batch back into a record (row codecs): value from the
/// encoder; key, timestamp and headers from the reserved columns (a null or
/// malformed `__headers` cell means no headers).
pub fn encode_rows(
    batch: &RecordBatch,
    encoder: &dyn RowEncoder,
) -> Result<Vec<OutRecord>, CodecError> {
    use arrow_array::{BinaryArray, Int64Array};
    let binary = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<BinaryArray>().cloned())
    };
    let keys = binary(KEY_COLUMN);
    let headers = binary(HEADERS_COLUMN);
    let timestamps = batch
        .column_by_name(TIMESTAMP_COLUMN)
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned());
    (0..batch.num_rows())
        .map(|row| {
            Ok(OutRecord {
                key: keys
                    .as_ref()
                    .filter(|a| !a.is_null(row))
                    .map(|a| a.value(row).to_vec()),
                value: encoder.encode_row(batch, row)?,
                timestamp: timestamps
                    .as_ref()
                    .filter(|a| !a.is_null(row))
                    .map_or(0, |a| a.value(row)),
                headers: headers
                    .as_ref()
                    .filter(|a| !a.is_null(row))
                    .and_then(|a| decode_headers(a.value(row)).ok())
                    .unwrap_or_default(),
            })
        })
        .collect()
}
