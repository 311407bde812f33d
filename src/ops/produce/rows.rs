//! Rows to records: the input's schema checked against the plan before anything is
//! sent, then each batch encoded by the sink codec of `run` (one implementation:
//! `topology_codecs::OnlineCodecs`). A batch the codec refuses is encoded again row
//! by row, so the error names the row and `--on-error skip|dead-letter` can set
//! exactly that row aside.

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};

use crate::engine::columnar::headers::decode_headers;
use crate::engine::columnar::record::OutRecord;
use crate::engine::columnar::reserved::{
    HEADERS_COLUMN, KEY_COLUMN, OFFSET_COLUMN, PARTITION_COLUMN, TIMESTAMP_COLUMN, is_reserved,
};
use crate::engine::columnar::topology::BatchCodec;
use crate::engine::columnar::topology::spec::{CodecResolver, CodecSpec, Located, SchemaFile};
use crate::engine::columnarschema::topology_codecs::{OnlineCodecs, needs_registry};
use crate::engine::schema::cache::SchemaCache;
use crate::io::schema_file;
use crate::ops::produce::{PartitionChoice, ProducePlan, inner_format};
use crate::ops::{Error, Result};

/// One row, encoded: the record and the row's `__partition`.
pub struct Encoded {
    pub record: OutRecord,
    pub partition: Option<i32>,
}

/// Encodes the rows of one input.
pub struct RowEncoder {
    codec: Arc<dyn BatchCodec>,
    topic: String,
    /// The input columns kept (`--drop-columns` leaves the others out), when some are dropped.
    keep: Option<Vec<usize>>,
}

/// The indices of the columns left after dropping `drop`; a name the input lacks is
/// refused (a typo must not silently keep the column in every value).
fn kept_columns(schema: &Schema, drop: &[String]) -> Result<Option<Vec<usize>>> {
    if drop.is_empty() {
        return Ok(None);
    }
    for name in drop {
        if schema.field_with_name(name).is_err() {
            return Err(Error::usage(format!(
                "--drop-columns {name}: the input has no such column (columns: {})",
                schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(Some(
        schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| !drop.contains(f.name()))
            .map(|(i, _)| i)
            .collect(),
    ))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The writer schema file `--value-schema` names (a `.proto` may end in `:pkg.Msg`),
/// read with its imports.
fn schema_file(path: &Path, protobuf: bool) -> Result<SchemaFile> {
    let text = path.to_string_lossy().into_owned();
    let (file, message) = match text.rsplit_once(':') {
        Some((f, m)) if protobuf && !m.is_empty() && !m.contains('/') => (
            f.to_owned(),
            Some(Located::new(m.to_owned(), Default::default())),
        ),
        _ => (text.clone(), None),
    };
    let source = schema_file::read(Path::new(&file))
        .map_err(|e| Error::usage(format!("--value-schema: {e}")))?;
    let imports = if protobuf {
        schema_file::read_proto_imports(Path::new(&file), &source)
            .map_err(|e| Error::usage(format!("--value-schema {file}: {e}")))?
    } else {
        Vec::new()
    };
    Ok(SchemaFile {
        path: Located::new(file, Default::default()),
        message,
        text: Some(source),
        imports,
    })
}

/// The input's columns checked against what the plan encodes (docs/formats.md §4).
pub fn check_schema(plan: &ProducePlan, schema: &Schema) -> Result<()> {
    let reserved_type = |name: &str, want: DataType, what: &str| -> Result<()> {
        match schema.field_with_name(name) {
            Ok(f) if f.data_type() != &want => Err(Error::usage(format!(
                "column {name} is {}, not {want} ({what}; docs/formats.md §4)",
                f.data_type()
            ))),
            _ => Ok(()),
        }
    };
    reserved_type(KEY_COLUMN, DataType::Binary, "the key bytes")?;
    reserved_type(
        TIMESTAMP_COLUMN,
        DataType::Int64,
        "epoch ms, or timestamp[ms, UTC]",
    )?;
    reserved_type(PARTITION_COLUMN, DataType::Int32, "a partition")?;
    reserved_type(
        HEADERS_COLUMN,
        DataType::Binary,
        "the header cell, or list<struct<key: utf8, value: binary>>",
    )?;
    let _ = OFFSET_COLUMN;
    if plan.partition == PartitionChoice::Keep && schema.field_with_name(PARTITION_COLUMN).is_err()
    {
        return Err(Error::usage(
            "--partition keep sends each row to its __partition, and the input has no __partition column (pass --partition hash or N)",
        ));
    }
    if let Some(column) = &plan.key_column {
        if is_reserved(column) {
            return Err(Error::usage(format!(
                "--key-column {column} is a reserved column; without --key-column the key is __key as it is"
            )));
        }
        if schema.field_with_name(column).is_err() {
            return Err(Error::usage(format!(
                "--key-column {column}: the input has no such column (columns: {})",
                payload_names(schema).join(", ")
            )));
        }
    }
    let payload = payload_names(schema);
    match inner_format(&plan.value_format) {
        "raw" | "string" => {
            let value = schema.field_with_name("value").map_err(|_| {
                Error::usage(format!(
                    "--value-format {} sends the `value` column, and the input has none (columns: {}); pick json, avro, protobuf, json-sr or arrow to encode the columns",
                    plan.value_format,
                    payload.join(", ")
                ))
            })?;
            if !matches!(value.data_type(), DataType::Binary | DataType::Utf8) {
                return Err(Error::usage(format!(
                    "column value is {}, not binary or utf8 (--value-format {})",
                    value.data_type(),
                    plan.value_format
                )));
            }
            let extra: Vec<&String> = payload
                .iter()
                .filter(|c| *c != "value" && Some(*c) != plan.key_column.as_ref())
                .collect();
            if !extra.is_empty() {
                return Err(Error::usage(format!(
                    "--value-format {} sends only the `value` column, and the input also has {}: they would be lost; pick json, avro, protobuf, json-sr or arrow to encode every column",
                    plan.value_format,
                    extra
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        _ if payload.is_empty() => {
            return Err(Error::usage(format!(
                "the input has no payload columns to encode as {} (only reserved ones)",
                plan.value_format
            )));
        }
        _ => {}
    }
    Ok(())
}

fn payload_names(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .filter(|f| !is_reserved(f.name()))
        .map(|f| f.name().clone())
        .collect()
}

fn located(text: &str) -> Located<String> {
    Located::new(text.to_owned(), Default::default())
}

impl RowEncoder {
    /// Checks `schema` and builds the codec; every failure is a usage error.
    pub fn new(
        plan: &ProducePlan,
        schema: &SchemaRef,
        schemas: Option<SchemaCache>,
    ) -> Result<Self> {
        let keep = kept_columns(schema, &plan.drop_columns)?;
        let schema: &SchemaRef = &match &keep {
            Some(keep) => Arc::new(
                schema
                    .project(keep)
                    .map_err(|e| Error::usage(e.to_string()))?,
            ),
            None => schema.clone(),
        };
        check_schema(plan, schema)?;
        let registry_key = plan.key_format.as_deref().is_some_and(needs_registry);
        if (needs_registry(&plan.value_format) || registry_key) && schemas.is_none() {
            return Err(Error::usage(format!(
                "{} is registry-framed: pass --registry URL or set KRABKA_SCHEMA_REGISTRY_URL",
                if registry_key {
                    plan.key_format.as_deref().unwrap_or_default()
                } else {
                    plan.value_format.as_str()
                }
            )));
        }
        let value_schema = match &plan.value_schema {
            Some(p) => Some(schema_file(
                p,
                inner_format(&plan.value_format) == "protobuf",
            )?),
            None => None,
        };
        let spec = CodecSpec {
            value: located(&plan.value_format),
            key: plan.key_format.as_deref().map(located),
            key_column: plan.key_column.as_deref().map(located),
            topic: Some(plan.topic.clone()),
            schema_file: value_schema,
            key_schema_file: None,
        };
        let codec = OnlineCodecs { schemas }
            .resolve(&spec, Some(schema))
            .map_err(|e| Error::usage(format!("--value-format {}: {e}", plan.value_format)))?;
        Ok(RowEncoder {
            codec,
            topic: plan.topic.clone(),
            keep,
        })
    }

    /// Every row of `batch` encoded, or why that row cannot be. A failure that is
    /// not the row's (a registry that does not answer) fails the whole call.
    pub fn encode(&self, batch: &RecordBatch) -> Result<Vec<std::result::Result<Encoded, String>>> {
        let projected;
        let batch = match &self.keep {
            Some(keep) => {
                projected = batch
                    .project(keep)
                    .map_err(|e| Error::failure(e.to_string()))?;
                &projected
            }
            None => batch,
        };
        let rows = batch.num_rows();
        let records: Vec<std::result::Result<OutRecord, String>> =
            match self.codec.encode_rows(&self.topic, batch) {
                Ok(enc) if enc.refused.is_empty() && enc.records.len() == rows => {
                    enc.records.into_iter().map(Ok).collect()
                }
                Err(e) if e.retriable => return Err(Error::unreachable(e.message)),
                _ => (0..rows)
                    .map(|row| self.encode_one(&batch.slice(row, 1)))
                    .collect::<Result<_>>()?,
            };
        let timestamps = batch
            .column_by_name(TIMESTAMP_COLUMN)
            .map(|c| c.as_primitive::<Int64Type>().clone());
        let partitions = batch
            .column_by_name(PARTITION_COLUMN)
            .map(|c| c.as_primitive::<Int32Type>().clone());
        let headers = batch
            .column_by_name(HEADERS_COLUMN)
            .map(|c| c.as_binary::<i32>().clone());
        let now = now_ms();
        Ok(records
            .into_iter()
            .enumerate()
            .map(|(row, record)| {
                let mut record = record?;
                record.timestamp = match timestamps.as_ref().filter(|t| t.is_valid(row)) {
                    // No timestamp: the time of sending, as kcat and rpk stamp it.
                    None => now,
                    Some(t) if t.value(row) < 0 => {
                        return Err(format!(
                            "__timestamp {} is negative (Kafka timestamps are epoch ms)",
                            t.value(row)
                        ));
                    }
                    // Kafka keeps 0 as a timestamp, but librdkafka stamps a record
                    // given 0 with the current time: sending it would write another
                    // time than the row's, so the row is refused instead.
                    Some(t) if t.value(row) == 0 => {
                        return Err(
                            "__timestamp 0 cannot be sent as 0: librdkafka, the producer here, replaces 0 with the current time (give a null __timestamp for \"now\")"
                                .to_owned(),
                        );
                    }
                    Some(t) => t.value(row),
                };
                // The codecs read a malformed cell as "no headers" (formats §3); a
                // producer must not drop them silently.
                if let Some(cells) = headers.as_ref().filter(|h| h.is_valid(row)) {
                    record.headers =
                        decode_headers(cells.value(row)).map_err(|e| format!("__headers: {e}"))?;
                }
                let partition = partitions
                    .as_ref()
                    .filter(|p| p.is_valid(row))
                    .map(|p| p.value(row));
                Ok(Encoded { record, partition })
            })
            .collect())
    }

    fn encode_one(&self, row: &RecordBatch) -> Result<std::result::Result<OutRecord, String>> {
        match self.codec.encode_rows(&self.topic, row) {
            Ok(mut enc) if enc.refused.is_empty() && enc.records.len() == 1 => {
                Ok(Ok(enc.records.remove(0)))
            }
            Ok(enc) => Ok(Err(enc
                .refused
                .into_iter()
                .next()
                .map_or_else(|| "the codec gave no record".to_owned(), |r| r.message))),
            Err(e) if e.retriable => Err(Error::unreachable(e.message)),
            Err(e) => Ok(Err(e.message)),
        }
    }
}
