//! The Arrow blob codec (formats §5): one record value is one Arrow IPC stream of
//! many rows. Decoding reads the IPC stream or file format, takes the first batch
//! (later ones are reported, decision D17), turns dictionary columns into plain ones,
//! and requires every record of one decode call to have the identical schema.
//! Encoding cuts a batch into envelope runs and packs each run into records of at
//! most `max_record_bytes`.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, Int64Array, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::engine::columnar::codec::{CodecError, PayloadColumns, ValueDecoder};
use crate::engine::columnar::headers::{Header, decode_headers};
use crate::engine::columnar::ipc::read_batches;
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::reserved::{
    HEADERS_COLUMN, KEY_COLUMN, TIMESTAMP_COLUMN, is_reserved, restore_payload_field,
};

/// `DefaultMaxRecordBytes`: the serialised IPC stream of one record, 900 KiB.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 900 * 1024;

/// Checks a record-size cap: at least 1.
pub fn check_max_record_bytes(n: i64) -> Result<usize, CodecError> {
    if n < 1 {
        return Err(CodecError::invalid("maxRecordBytes must be positive"));
    }
    Ok(n as usize)
}

/// Decodes IPC values; many rows per record.
#[derive(Debug, Default)]
pub struct BlobDecoder {
    schema: Option<SchemaRef>,
    batches: Vec<RecordBatch>,
    /// Records seen in this decode call (for `cannot decode Arrow record <i>`).
    records: usize,
    /// Extra batches ignored so far (D17: read the first, warn about the rest).
    pub ignored_batches: usize,
}

impl BlobDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Replaces dictionary columns by their plain value type.
fn undictionary(batch: RecordBatch) -> Result<RecordBatch, String> {
    let schema = batch.schema();
    if !schema
        .fields()
        .iter()
        .any(|f| matches!(f.data_type(), DataType::Dictionary(_, _)))
    {
        return Ok(batch);
    }
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if let DataType::Dictionary(_, value) = f.data_type() {
            let plain = arrow_cast::cast(c, value).map_err(|e| e.to_string())?;
            fields.push(
                Field::new(f.name(), value.as_ref().clone(), f.is_nullable())
                    .with_metadata(f.metadata().clone()),
            );
            columns.push(plain);
        } else {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
        }
    }
    let schema = Schema::new_with_metadata(fields, schema.metadata().clone());
    RecordBatch::try_new(Arc::new(schema), columns).map_err(|e| e.to_string())
}

impl ValueDecoder for BlobDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        let index = self.records;
        self.records += 1;
        let Some(bytes) = value else {
            return Ok(0);
        };
        let fail =
            |m: String| CodecError::invalid(format!("cannot decode Arrow record {index}: {m}"));
        let (_, batches) =
            read_batches(bytes).map_err(|e| fail(format!("cannot read Arrow IPC stream: {e}")))?;
        let mut it = batches.into_iter();
        let batch = it
            .next()
            .ok_or_else(|| fail("Arrow IPC stream has no record batch".to_string()))?;
        let extra = it.count();
        if extra > 0 && self.ignored_batches == 0 {
            tracing::warn!(
                "an Arrow IPC record value holds {} record batches; only the first is read",
                extra + 1
            );
        }
        self.ignored_batches += extra;
        let batch = undictionary(batch).map_err(fail)?;
        match &self.schema {
            None => self.schema = Some(batch.schema()),
            Some(s) if s.as_ref() != batch.schema().as_ref() => {
                return Err(CodecError::invalid("Arrow batch schemas differ"));
            }
            Some(_) => {}
        }
        let rows = batch.num_rows();
        self.batches.push(batch);
        Ok(rows)
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        self.records = 0;
        let batches = std::mem::take(&mut self.batches);
        let Some(schema) = self.schema.take() else {
            return Ok(Vec::new());
        };
        let all = arrow_select::concat::concat_batches(&schema, &batches)
            .map_err(|e| CodecError::invalid(format!("cannot concatenate Arrow records: {e}")))?;
        Ok(schema
            .fields()
            .iter()
            .cloned()
            .zip(all.columns().iter().cloned())
            .collect())
    }

    fn reset(&mut self) {
        self.batches.clear();
        self.schema = None;
        self.records = 0;
    }
}

/// The payload part of a batch: reserved columns dropped, escaped names restored.
pub fn payload_of(batch: &RecordBatch) -> Result<RecordBatch, CodecError> {
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if is_reserved(f.name()) {
            continue;
        }
        fields.push(restore_payload_field(f));
        columns.push(c.clone());
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| CodecError::invalid(e.to_string()))
}

/// One IPC stream (schema, one batch, end-of-stream), uncompressed, no dictionaries.
pub fn ipc_stream(batch: &RecordBatch) -> Result<Vec<u8>, CodecError> {
    let fail = |e: arrow_schema::ArrowError| {
        CodecError::invalid(format!("cannot write Arrow IPC stream: {e}"))
    };
    let mut w = StreamWriter::try_new(Vec::new(), &batch.schema()).map_err(fail)?;
    w.write(batch).map_err(fail)?;
    w.finish().map_err(fail)?;
    w.into_inner().map_err(fail)
}

/// Envelope of one row: key bytes, timestamp and header list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Envelope {
    key: Option<Vec<u8>>,
    timestamp: i64,
    headers: Vec<Header>,
}

fn envelope(batch: &RecordBatch, row: usize) -> Envelope {
    let binary = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<BinaryArray>().cloned())
            .filter(|a| !a.is_null(row))
            .map(|a| a.value(row).to_vec())
    };
    let timestamp = batch
        .column_by_name(TIMESTAMP_COLUMN)
        .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned())
        .filter(|a| !a.is_null(row))
        .map_or(0, |a| a.value(row));
    let headers = binary(HEADERS_COLUMN)
        .and_then(|cell| decode_headers(&cell).ok())
        .unwrap_or_default();
    Envelope {
        key: binary(KEY_COLUMN),
        timestamp,
        headers,
    }
}

/// Encodes a batch into blob records of at most `max_record_bytes` each.
pub fn encode_blobs(
    batch: &RecordBatch,
    max_record_bytes: usize,
) -> Result<Vec<OutRecord>, CodecError> {
    let payload = payload_of(batch)?;
    let rows = batch.num_rows();
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows {
        // The envelope run starting at `start`.
        let env = envelope(batch, start);
        let mut end = start + 1;
        while end < rows && envelope(batch, end) == env {
            end += 1;
        }
        let mut at = start;
        while at < end {
            // Longest prefix of [at, end) whose stream fits the cap.
            let (mut lo, mut hi) = (1, end - at);
            let mut best: Option<(usize, Vec<u8>)> = None;
            while lo <= hi {
                let mid = lo + (hi - lo) / 2;
                let bytes = ipc_stream(&payload.slice(at, mid))?;
                if bytes.len() <= max_record_bytes {
                    best = Some((mid, bytes));
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            let Some((n, bytes)) = best else {
                return Err(CodecError::invalid(format!(
                    "one Arrow row exceeds maxRecordBytes={max_record_bytes}"
                )));
            };
            let last = envelope(batch, at + n - 1);
            out.push(OutRecord {
                key: last.key,
                value: Some(bytes),
                timestamp: last.timestamp,
                headers: last.headers,
            });
            at += n;
        }
        start = end;
    }
    Ok(out)
}
