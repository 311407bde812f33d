//! The codecs of an online topology: a topology file's codec names (`raw`,
//! `string`, `json`, `json-schema` (alias `json-sr`, tail's name), `avro`,
//! `protobuf`, `arrow`, each optionally `gzip+`)
//! turned into [`BatchCodec`]s that decode fetched records into one Arrow batch
//! and encode sink batches back into records. Registry-framed codecs read
//! writer schemas through [`WriterSchemas`] (never blocking: a schema still
//! being fetched fails the batch as retriable, so the poll is retried).
//!
//! Sinks encode `raw`, `string`, `json`, `arrow`, and the registry-framed `avro`,
//! `json-schema` and `protobuf` (see [`RegistrySink`]), each optionally `gzip+`;
//! [`encodable`] lets a caller refuse unknown sink codecs before any data flows. A sink's record key is its `__key` column, or the column named by
//! `key: {column, codec}` ([`column_keys`]).

use std::fmt;
use std::sync::{Arc, Mutex};

use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;

use crate::engine::columnar::batch::{BatchDecoder, RecordPart, encode_rows};
use crate::engine::columnar::codec::blob::{BlobDecoder, DEFAULT_MAX_RECORD_BYTES, encode_blobs};
use crate::engine::columnar::codec::gzip::{DEFAULT_MAX_UNCOMPRESSED_BYTES, GzipDecoder, compress};
use crate::engine::columnar::codec::json::JsonDecoder;
use crate::engine::columnar::codec::raw::{RawDecoder, StringDecoder, ValueColumnEncoder};
use crate::engine::columnar::codec::{self, ValueDecoder};
use crate::engine::columnar::topology::spec::{CodecResolver, CodecSpec};
use crate::engine::columnar::topology::{
    BatchCodec, CodecError, Encoded, OutRecord, Record, RefusedRow,
};
use crate::engine::columnarschema::avro::codec::AvroValueDecoder;
use crate::engine::columnarschema::json_schema::RegistryJsonDecoder;
use crate::engine::columnarschema::json_schema_file_sink::RowRefusal;
use crate::engine::columnarschema::protobuf::ProtobufValueDecoder;
use crate::engine::columnarschema::registry_sink::{RegistrySink, file_schema, writer_schema_text};
use crate::engine::columnarschema::sink_format::SinkFormat;
use crate::engine::columnarschema::sink_rows::{
    KeyCodec, Prerendered, column_keys, payload_json_rows,
};
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::engine::schema::cache::SchemaCache;

/// One codec name, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Raw,
    String,
    Json,
    JsonSchema,
    Avro,
    Protobuf,
    Arrow,
    Gzip(Box<Kind>),
}

impl Kind {
    fn parse(name: &str) -> Result<Kind, String> {
        if let Some(inner) = name.strip_prefix("gzip+") {
            return Ok(Kind::Gzip(Box::new(Kind::parse(inner)?)));
        }
        Ok(match name {
            "raw" => Kind::Raw,
            "string" => Kind::String,
            "json" => Kind::Json,
            "json-schema" | "json-sr" => Kind::JsonSchema,
            "avro" => Kind::Avro,
            "protobuf" => Kind::Protobuf,
            "arrow" => Kind::Arrow,
            other => return Err(format!("unknown codec `{other}`")),
        })
    }

    fn needs_registry(&self) -> bool {
        match self {
            Kind::JsonSchema | Kind::Avro | Kind::Protobuf => true,
            Kind::Gzip(inner) => inner.needs_registry(),
            _ => false,
        }
    }

    fn can_encode(&self) -> bool {
        match self {
            Kind::Raw
            | Kind::String
            | Kind::Json
            | Kind::Arrow
            | Kind::Avro
            | Kind::JsonSchema
            | Kind::Protobuf => true,
            Kind::Gzip(inner) => inner.can_encode(),
        }
    }
}

/// Whether a sink may use `name`: `Err` says why not.
pub fn encodable(name: &str) -> Result<(), String> {
    if Kind::parse(name)?.can_encode() {
        Ok(())
    } else {
        Err(format!(
            "the `{name}` codec cannot write sink records in this build (sinks: raw, string, json, json-schema, avro, protobuf, arrow, optionally gzip+)"
        ))
    }
}

/// Whether a codec name needs a schema registry.
pub fn needs_registry(name: &str) -> bool {
    Kind::parse(name).is_ok_and(|k| k.needs_registry())
}

/// The registry format of a sink codec (under any `gzip+`), if it has one.
fn registry_format(kind: &Kind) -> Option<SinkFormat> {
    match kind {
        Kind::Avro => Some(SinkFormat::Avro),
        Kind::JsonSchema => Some(SinkFormat::JsonSchema),
        Kind::Protobuf => Some(SinkFormat::Protobuf),
        Kind::Gzip(inner) => registry_format(inner),
        _ => None,
    }
}

/// Checks what a sink codec can check without a registry: that its name encodes and,
/// for `avro` / `json-schema` / `protobuf` with a known input schema, that a writer schema can be
/// derived from it (`--check`).
/// A sink with a schema file (`avro:FILE.avsc`, `json-schema:FILE.json`,
/// `protobuf:FILE.proto[:pkg.Msg]`, for the value or the key column): that the
/// file parses and, with a known input schema, that the sink's columns can be
/// written with it.
pub fn check_sink(codec: &CodecSpec, topic: &str, input: Option<&SchemaRef>) -> Result<(), String> {
    let name = &codec.value.value;
    encodable(name)?;
    let Some(format) = registry_format(&Kind::parse(name)?) else {
        return Ok(());
    };
    match (&codec.schema_file, input) {
        (Some(file), input) => file_schema(format, file, input.map(|s| s.as_ref())).map(|_| ()),
        (None, Some(input)) => writer_schema_text(format, input, topic).map(|_| ()),
        (None, None) => Ok(()),
    }
}

/// The same for a sink's registry-framed key column (`key: {column, codec}`): its
/// schema file, or the schema derived from the column when it is known.
pub fn check_sink_key(
    codec: &CodecSpec,
    topic: &str,
    input: Option<&SchemaRef>,
) -> Result<(), String> {
    if let (Some(column), Some(key)) = (&codec.key_column, &codec.key)
        && let Some(format) = Kind::parse(&key.value)
            .ok()
            .and_then(|k| registry_format(&k))
    {
        let schema = key_schema(input, &column.value);
        match (&codec.key_schema_file, &schema) {
            (Some(file), schema) => {
                file_schema(format, file, schema.as_ref())?;
            }
            (None, Some(schema)) => {
                writer_schema_text(format, schema, &format!("{topic}-key"))?;
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// Resolves codec names with an optional registry behind them.
pub struct OnlineCodecs {
    pub schemas: Option<SchemaCache>,
}

impl CodecResolver for OnlineCodecs {
    fn resolve(
        &self,
        codec: &CodecSpec,
        payload: Option<&SchemaRef>,
    ) -> Result<Arc<dyn BatchCodec>, String> {
        let value = Kind::parse(&codec.value.value)?;
        let key = match &codec.key {
            Some(k) => Some(Kind::parse(&k.value)?),
            None => None,
        };
        let mut name = codec.value.value.clone();
        if let Some(k) = &codec.key {
            name = format!("key {} / value {name}", k.value);
        }
        // Decoders are built now so that a missing registry is reported before any data flows.
        let schemas = self
            .schemas
            .clone()
            .map(|c| Arc::new(c) as Arc<dyn WriterSchemas>);
        let make_value = decoder(&value, schemas.as_ref())?;
        let make_key = match &key {
            None | Some(Kind::Raw) => None,
            Some(Kind::Arrow) => {
                return Err("Arrow data is a record value only, never a key".into());
            }
            Some(_) if codec.key_column.is_some() => None,
            Some(k) => Some(decoder(k, schemas.as_ref())?),
        };
        let key_column = match (&codec.key_column, &codec.key) {
            (Some(column), key) => {
                let key_name = key.as_ref().map_or("string", |k| k.value.as_str());
                let format = Kind::parse(key_name).ok().and_then(|k| registry_format(&k));
                let writer = match (format, &codec.topic, &self.schemas) {
                    (Some(format), Some(topic), Some(cache)) => {
                        SinkKey::Registry(Box::new(RegistrySink::new_key(
                            format,
                            cache.clone(),
                            topic,
                            key_schema(payload, &column.value).as_ref(),
                            codec.key_schema_file.as_ref(),
                        )?))
                    }
                    (Some(_), _, None) => {
                        return Err(format!(
                            "a {key_name} sink key needs a schema registry: pass --registry URL or set KRABKA_SCHEMA_REGISTRY_URL"
                        ));
                    }
                    _ => SinkKey::Plain(KeyCodec::parse(key_name)?),
                };
                Some((column.value.clone(), writer))
            }
            (None, _) => None,
        };
        // Only a sink (which has a topic) writes registry-framed values.
        let registry = match (registry_format(&value), &codec.topic, &self.schemas) {
            (Some(format), Some(topic), Some(cache)) => Some(RegistrySink::new(
                format,
                cache.clone(),
                Some(topic),
                payload.map(|p| p.as_ref()),
                codec.schema_file.as_ref(),
            )?),
            _ => None,
        };
        Ok(Arc::new(RecordCodec {
            name,
            decoder: Mutex::new(BatchDecoder::new(make_key, make_value)),
            value,
            key_column,
            registry,
        }))
    }
}

fn decoder(
    kind: &Kind,
    schemas: Option<&Arc<dyn WriterSchemas>>,
) -> Result<Box<dyn ValueDecoder>, String> {
    let registry = |what: &str| {
        schemas.cloned().ok_or_else(|| {
            format!("the {what} codec needs a schema registry: pass --registry URL or set KRABKA_SCHEMA_REGISTRY_URL")
        })
    };
    Ok(match kind {
        Kind::Raw => Box::new(RawDecoder::default()),
        Kind::String => Box::new(StringDecoder::default()),
        Kind::Json => Box::new(JsonDecoder::inferring()),
        Kind::JsonSchema => Box::new(RegistryJsonDecoder::new(registry("json-schema")?)),
        Kind::Avro => Box::new(AvroValueDecoder::new(registry("avro")?)),
        Kind::Protobuf => Box::new(ProtobufValueDecoder::new(registry("protobuf")?)),
        Kind::Arrow => Box::new(BlobDecoder::new()),
        Kind::Gzip(inner) => Box::new(GzipDecoder::new(
            decoder(inner, schemas)?,
            DEFAULT_MAX_UNCOMPRESSED_BYTES,
        )),
    })
}

/// How a sink's key column becomes key bytes.
#[derive(Debug)]
enum SinkKey {
    Plain(KeyCodec),
    /// `avro`, `json-schema`, `protobuf`: the key column as a one-field record
    /// (object, message), registered under `<topic>-key`.
    Registry(Box<RegistrySink>),
}

/// The key column alone, as a sink key batch holds it (when the input is known).
fn key_schema(payload: Option<&SchemaRef>, column: &str) -> Option<arrow_schema::Schema> {
    let field = payload?.field_with_name(column).ok()?.clone();
    Some(arrow_schema::Schema::new(vec![field]))
}

/// Every row's registry-framed key; a null cell gives a keyless record.
fn registry_keys(
    sink: &RegistrySink,
    topic: &str,
    batch: &RecordBatch,
    column: &str,
) -> Result<Vec<Option<Vec<u8>>>, codec::CodecError> {
    let index = batch.schema().index_of(column).map_err(|_| {
        codec::CodecError::invalid(format!("sink key column does not exist: {column}"))
    })?;
    let keys = batch
        .project(&[index])
        .map_err(|e| codec::CodecError::invalid(e.to_string()))?;
    let framed = sink.values(topic, &keys)?;
    let cells = batch.column(index);
    Ok(framed
        .into_iter()
        .enumerate()
        .map(|(row, key)| cells.is_valid(row).then_some(key))
        .collect())
}

/// A source or sink codec: key and value decoders for fetched records, the
/// value kind for encoding.
struct RecordCodec {
    name: String,
    decoder: Mutex<BatchDecoder>,
    value: Kind,
    /// A sink's key column and how its cells become key bytes.
    key_column: Option<(String, SinkKey)>,
    /// A registry-framed sink's schema registration.
    registry: Option<RegistrySink>,
}

impl fmt::Debug for RecordCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordCodec")
            .field("name", &self.name)
            .finish()
    }
}

fn codec_error(e: codec::CodecError) -> CodecError {
    CodecError {
        retriable: e.is_retriable(),
        message: e.to_string(),
    }
}

impl BatchCodec for RecordCodec {
    fn decode(&self, topic: &str, records: &[Record]) -> Result<RecordBatch, CodecError> {
        // A panic elsewhere while holding the lock leaves the decoder reset on its next failure.
        let mut decoder = self.decoder.lock().unwrap_or_else(|p| p.into_inner());
        decoder.decode_from(records).map_err(|failure| {
            let record = &records[failure.index.min(records.len() - 1)];
            let part = match failure.part {
                RecordPart::Key => "key",
                RecordPart::Value => "value",
            };
            CodecError {
                retriable: failure.error.is_retriable(),
                message: format!(
                    "{topic}/{} offset {}: cannot decode the {part} ({}): {}",
                    record.partition, record.offset, self.name, failure.error
                ),
            }
        })
    }

    fn encode(&self, topic: &str, batch: &RecordBatch) -> Result<Vec<OutRecord>, CodecError> {
        let encoded = self.encode_rows(topic, batch)?;
        match encoded.refused.into_iter().next() {
            Some(row) => Err(CodecError::new(row.message)),
            None => Ok(encoded.records),
        }
    }

    fn encode_rows(&self, topic: &str, batch: &RecordBatch) -> Result<Encoded, CodecError> {
        let failed = |m: String| CodecError::new(format!("cannot encode records for {topic}: {m}"));
        let (mut records, refusals) = encode(&self.value, topic, self.registry.as_ref(), batch)
            .map_err(|e| CodecError {
                retriable: e.retriable,
                ..failed(e.message)
            })?;
        if let Some((column, writer)) = &self.key_column {
            let keys = match writer {
                SinkKey::Plain(codec) => column_keys(batch, column, *codec).map_err(failed)?,
                SinkKey::Registry(sink) => {
                    registry_keys(sink, topic, batch, column).map_err(|e| CodecError {
                        retriable: e.is_retriable(),
                        ..failed(e.to_string())
                    })?
                }
            };
            for (record, key) in records.iter_mut().zip(keys) {
                record.key = key;
            }
        }
        if refusals.is_empty() {
            return Ok(Encoded {
                records,
                refused: Vec::new(),
            });
        }
        let mut refusals = refusals.into_iter().peekable();
        let mut encoded = Encoded::default();
        for (row, record) in records.into_iter().enumerate() {
            match refusals.next_if(|(at, _)| *at == row) {
                Some((_, refusal)) => encoded.refused.push(RefusedRow {
                    message: format!("cannot encode records for {topic}: {}", refusal.message),
                    partition: refusal.partition,
                    offset: refusal.offset,
                    record,
                }),
                None => encoded.records.push(record),
            }
        }
        Ok(encoded)
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// A batch's records (a refused row's value is its unframed body) and the
/// refused rows by index, ascending.
type RowsEncoded = (Vec<OutRecord>, Vec<(usize, RowRefusal)>);

fn encode(
    kind: &Kind,
    topic: &str,
    registry: Option<&RegistrySink>,
    batch: &RecordBatch,
) -> Result<RowsEncoded, CodecError> {
    let whole = |records: Vec<OutRecord>| (records, Vec::new());
    match kind {
        Kind::Raw | Kind::String => encode_rows(batch, &ValueColumnEncoder)
            .map(whole)
            .map_err(codec_error),
        Kind::Json => {
            let rows = payload_json_rows(batch).map_err(codec_error)?;
            let rows = Prerendered {
                rows: rows.into_iter().map(String::into_bytes).collect(),
            };
            encode_rows(batch, &rows).map(whole).map_err(codec_error)
        }
        Kind::Avro | Kind::JsonSchema | Kind::Protobuf => {
            let registry = registry.ok_or_else(|| {
                CodecError::new("a registry-framed sink needs a schema registry (--registry)")
            })?;
            let mut refused = Vec::new();
            let rows = registry
                .value_rows(topic, batch)
                .map_err(codec_error)?
                .into_iter()
                .enumerate()
                .map(|(row, value)| match value {
                    Ok(framed) => framed,
                    Err(refusal) => {
                        let body = refusal.body.clone();
                        refused.push((row, refusal));
                        body
                    }
                })
                .collect();
            let records = encode_rows(batch, &Prerendered { rows }).map_err(codec_error)?;
            Ok((records, refused))
        }
        Kind::Arrow => encode_blobs(batch, DEFAULT_MAX_RECORD_BYTES)
            .map(whole)
            .map_err(codec_error),
        Kind::Gzip(inner) => {
            let (mut records, refused) = encode(inner, topic, registry, batch)?;
            // A refused row's body stays plain: it is never written to the sink,
            // only dead-lettered (as the row's JSON) when no source record is
            // named, and a dead letter must read without knowing the sink's codec.
            let mut refused_rows = refused.iter().map(|(row, _)| *row).peekable();
            for (row, r) in records.iter_mut().enumerate() {
                if refused_rows.next_if_eq(&row).is_some() {
                    continue;
                }
                if let Some(v) = r.value.as_mut() {
                    *v = compress(v);
                }
            }
            Ok((records, refused))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::engine::columnar::topology::spec::Located;

    fn spec(value: &str) -> CodecSpec {
        CodecSpec {
            value: Located::new(value.to_owned(), Default::default()),
            key: None,
            key_column: None,
            schema_file: None,
            key_schema_file: None,
            topic: None,
        }
    }

    fn record(offset: i64, value: &str) -> Record {
        Record {
            topic: "t".into(),
            partition: 2,
            offset,
            timestamp: 1_000 + offset,
            key: Some(format!("k{offset}").into_bytes()),
            value: Some(value.as_bytes().to_vec()),
            headers: Vec::new(),
        }
    }

    #[test]
    fn json_values_decode_to_columns_and_encode_back_as_objects_with_key_and_timestamp() {
        let codec = OnlineCodecs { schemas: None }
            .resolve(&spec("json"), None)
            .unwrap();
        let batch = codec
            .decode(
                "t",
                &[
                    record(0, r#"{"user":"a","amount":5}"#),
                    record(1, r#"{"user":"b","amount":7}"#),
                ],
            )
            .unwrap();
        assert_eq!(batch.num_rows(), 2);
        let out = codec.encode("out", &batch).unwrap();
        assert_eq!(
            out[1].value.as_deref(),
            Some(br#"{"user":"b","amount":7}"#.as_slice())
        );
        assert_eq!(out[1].key.as_deref(), Some(b"k1".as_slice()));
        assert_eq!(out[1].timestamp, 1_001);
    }

    #[test]
    fn a_bad_record_is_named_by_topic_partition_and_offset() {
        let codec = OnlineCodecs { schemas: None }
            .resolve(&spec("json"), None)
            .unwrap();
        let e = codec
            .decode("t", &[record(0, r#"{"a":1}"#), record(1, "not json")])
            .unwrap_err();
        assert!(!e.retriable);
        assert!(
            e.message
                .starts_with("t/2 offset 1: cannot decode the value (json)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn registry_codecs_without_a_registry_and_unencodable_sinks_are_refused_up_front() {
        let e = OnlineCodecs { schemas: None }
            .resolve(&spec("gzip+avro"), None)
            .unwrap_err();
        assert!(e.contains("needs a schema registry"), "{e}");
        assert!(encodable("gzip+json").is_ok());
        assert!(encodable("gzip+avro").is_ok());
        assert!(encodable("gzip+protobuf").is_ok());
        assert!(
            encodable("protobuf3")
                .unwrap_err()
                .contains("unknown codec")
        );
    }

    #[test]
    fn gzip_string_values_round_trip() {
        let codec = OnlineCodecs { schemas: None }
            .resolve(&spec("gzip+string"), None)
            .unwrap();
        let gz = Record {
            value: Some(compress(b"hello")),
            ..record(0, "")
        };
        let batch = codec.decode("t", &[gz]).unwrap();
        let out = codec.encode("o", &batch).unwrap();
        let back =
            crate::engine::columnar::codec::gzip::decompress(out[0].value.as_deref().unwrap(), 100)
                .unwrap();
        assert_eq!(back, b"hello");
    }

    /// A writer schema cache holding a Protobuf schema (id 1) and a JSON Schema (id 2)
    /// of the same order shape.
    fn registry_schemas() -> SchemaCache {
        use crate::engine::columnarschema::writer_schemas::WriterSchema;
        use crate::engine::schema::registry::SchemaType;
        let cache = SchemaCache::offline();
        cache.seed_writer(WriterSchema {
            id: 1,
            schema_type: SchemaType::Protobuf,
            text: PROTO.into(),
            message_type: Some("shop.Order".into()),
            references: Vec::new(),
        });
        cache.seed_writer(WriterSchema {
            id: 2,
            schema_type: SchemaType::Json,
            text: r#"{"type":"object","properties":{"user":{"type":"string"},"qty":{"type":"integer"}}}"#
                .into(),
            message_type: None,
            references: Vec::new(),
        });
        cache
    }

    const PROTO: &str = r#"syntax = "proto3";
package shop;
message Order { string user = 1; int32 qty = 2; }
"#;

    fn framed_record(offset: i64, value: Vec<u8>) -> Record {
        Record {
            value: Some(value),
            ..record(offset, "")
        }
    }

    #[test]
    fn protobuf_and_json_sr_sources_decode_registry_framed_records_that_a_json_sink_writes_back() {
        use crate::engine::schema::framing;
        use crate::engine::schema::protobuf::{ProtoSchema, encode_body};
        let codecs = OnlineCodecs {
            schemas: Some(registry_schemas()),
        };
        let json_sink = codecs.resolve(&spec("json"), None).unwrap();
        let message = ProtoSchema::parse(PROTO, &[])
            .unwrap()
            .message_at(&[0])
            .unwrap();
        let proto = |user: &str, qty: i32| {
            let body = encode_body(&message, &serde_json::json!({"user": user, "qty": qty}));
            framing::encode_protobuf(1, &[0], &body.unwrap()).unwrap()
        };
        let json = |user: &str, qty: i32| {
            let body = serde_json::json!({"user": user, "qty": qty}).to_string();
            framing::encode(2, body.as_bytes())
        };
        for (name, records) in [
            (
                "protobuf",
                vec![
                    framed_record(0, proto("a", 1)),
                    framed_record(1, proto("b", 2)),
                ],
            ),
            (
                "gzip+json-sr",
                vec![
                    framed_record(0, compress(&json("a", 1))),
                    framed_record(1, compress(&json("b", 2))),
                ],
            ),
        ] {
            let source = codecs.resolve(&spec(name), None).unwrap();
            let batch = source.decode("t", &records).unwrap();
            let out = json_sink.encode("out", &batch).unwrap();
            let values: Vec<Value> = out
                .iter()
                .map(|r| serde_json::from_slice(r.value.as_deref().unwrap()).unwrap())
                .collect();
            assert_eq!(
                values,
                [
                    serde_json::json!({"user": "a", "qty": 1}),
                    serde_json::json!({"user": "b", "qty": 2})
                ],
                "{name}"
            );
        }
    }

    #[test]
    fn registry_framed_sink_keys_register_under_the_key_subject_and_decode_back_to_the_column() {
        use std::sync::Arc;

        use arrow_array::{Int64Array, StringArray};
        use arrow_schema::{DataType, Field, Schema};

        use crate::engine::columnarschema::writer_schemas::WriterSchema;
        use crate::engine::schema::registry::SchemaType;
        let input = Arc::new(Schema::new(vec![
            Field::new("user", DataType::Utf8, true),
            Field::new("n", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            input.clone(),
            vec![
                Arc::new(StringArray::from(vec![Some("alice"), None])),
                Arc::new(Int64Array::from(vec![2, 1])),
            ],
        )
        .unwrap();
        for (format, schema_type) in [
            ("avro", SchemaType::Avro),
            ("json-schema", SchemaType::Json),
            ("protobuf", SchemaType::Protobuf),
        ] {
            let cache = SchemaCache::offline();
            let codecs = OnlineCodecs {
                schemas: Some(cache.clone()),
            };
            let mut sink = spec("json");
            sink.topic = Some("totals".into());
            sink.key_column = Some(Located::new("user".into(), Default::default()));
            sink.key = Some(Located::new(format.into(), Default::default()));
            let codec = codecs.resolve(&sink, Some(&input)).unwrap();
            let interned = cache.interned_schema("totals-key").expect(format);
            assert!(cache.interned_schema("totals-value").is_none(), "{format}");
            cache.seed_subject_id("totals-key", 9);
            cache.seed_writer(WriterSchema {
                id: 9,
                schema_type,
                text: interned.spec.schema.clone(),
                message_type: interned.spec.message_type.clone(),
                references: Vec::new(),
            });
            let out = codec.encode("totals", &batch).unwrap();
            assert_eq!(out[1].key, None, "{format}: a null key cell is keyless");
            let key = out[0].key.clone().unwrap();
            assert_eq!(&key[..5], &[0, 0, 0, 0, 9], "{format}");
            let source = codecs.resolve(&spec(format), None).unwrap();
            let decoded = source.decode("totals", &[framed_record(0, key)]).unwrap();
            let users = decoded.column_by_name("user").expect(format);
            assert_eq!(
                crate::engine::columnar::json_values::column_to_json(
                    users.as_ref(),
                    decoded.schema().field_with_name("user").unwrap()
                )
                .unwrap(),
                [r#""alice""#],
                "{format}"
            );
        }
    }

    #[test]
    fn a_protobuf_source_needs_a_registry_and_protobuf_sinks_encode() {
        let e = OnlineCodecs { schemas: None }
            .resolve(&spec("protobuf"), None)
            .unwrap_err();
        assert!(
            e.contains("the protobuf codec needs a schema registry"),
            "{e}"
        );
        assert!(encodable("protobuf").is_ok());
        assert!(encodable("json-sr").is_ok());
    }
}
