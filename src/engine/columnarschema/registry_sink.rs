//! Registry-framed sink values (`avro`, `json-schema`, `protobuf`): the writer schema is
//! derived from the sink batch's Arrow schema (or read from the sink's schema file,
//! see [`FileSchema`]), registered under `<topic>-value` (`<topic>-key` for keys)
//! (the topic-name strategy) through the shared [`SchemaCache`], and every value
//! framed with its id (formats §1: magic byte, 4-byte id, body; Protobuf bodies
//! after the message-index path `[0]`, the derived file's first message).
//!
//! Registration belongs to startup: when the sink's input schema is known while
//! the topology is built (declared source `columns`), the schema is interned in
//! the cache and the runner's prewarm registers it before any record is polled.
//! Otherwise — or when a batch's schema differs from the one prepared — the first
//! batch of that schema registers it once (one blocking registry call per
//! distinct schema, never per record) and the id is remembered. A `.proto`
//! schema file with imports always registers at its first batch: its imports
//! first, each under its import path, then the file with them as `references`.

use std::collections::HashMap;
use std::sync::Mutex;

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema};
use prost_reflect::MessageDescriptor;

use crate::engine::columnar::codec;
use crate::engine::columnar::topology::spec::SchemaFile;
use crate::engine::columnarschema::avro_writer::{
    avro_bodies, avro_name, avro_schema_of, fits, payload_fields,
};
use crate::engine::columnarschema::file_schema_sink::FileSchema;
use crate::engine::columnarschema::json_schema_file_sink::RowRefusal;
use crate::engine::columnarschema::json_schema_writer::json_schema_of;
use crate::engine::columnarschema::proto_writer::{proto_messages, proto_schema_of};
use crate::engine::columnarschema::sink_format::SinkFormat;
use crate::engine::columnarschema::sink_rows::payload_json_rows;
use crate::engine::schema::avro::registered_text;
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::framing;
use crate::engine::schema::protobuf::{ProtoSchema, encode_message};
use crate::engine::schema::registry::{
    RegistryError, SchemaReference, SchemaSpec, SchemaType, subject_for,
};

/// The top message of a derived `.proto` text, compiled.
fn compile_message(text: &str) -> Result<MessageDescriptor, String> {
    ProtoSchema::parse(text, &[])
        .and_then(|s| s.message_at(&[0]))
        .map_err(|e| format!("the derived Protobuf schema does not compile: {e}\n{text}"))
}

/// The schema text a sink registers for batches of `schema` written to `topic`.
pub fn writer_schema_text(
    format: SinkFormat,
    schema: &Schema,
    topic: &str,
) -> Result<String, String> {
    match format {
        SinkFormat::Avro => {
            let value = avro_schema_of(schema, &avro_name(topic))?;
            registered_text(&value.to_string()).map_err(|e| e.to_string())
        }
        SinkFormat::JsonSchema => Ok(json_schema_of(schema, topic)?.to_string()),
        SinkFormat::Protobuf => {
            let text = proto_schema_of(schema, &avro_name(topic))?;
            compile_message(&text)?;
            Ok(text)
        }
    }
}

/// What a writer schema is named after: the topic, or `<topic>-key` for keys
/// (`totals_key`).
pub fn schema_topic(topic: &str, key: bool) -> String {
    if key {
        format!("{topic}-key")
    } else {
        topic.to_owned()
    }
}

/// A sink's schema file, parsed and (with the sink's input columns known) checked
/// against them; errors start with the file's path.
pub fn file_schema(
    format: SinkFormat,
    file: &SchemaFile,
    input: Option<&Schema>,
) -> Result<FileSchema, String> {
    FileSchema::read(format, file, input)
}

/// A failed registration of the sink's schema (or one of its references) under `subject`.
fn registration_error(subject: &str, e: RegistryError) -> codec::CodecError {
    let message = format!("cannot register the sink's writer schema under {subject}: {e}");
    // A registry that is down fails the round as retriable (read again,
    // nothing committed) instead of dead-lettering good records.
    if e.is_retriable() || e.is_unreachable() {
        codec::CodecError::Pending(message)
    } else {
        codec::CodecError::invalid(message)
    }
}

/// The writer schema derived while the topology was built.
#[derive(Debug)]
struct Prepared {
    fields: Vec<Field>,
    text: String,
}

/// Encodes sink batches as registry-framed values.
#[derive(Debug)]
pub struct RegistrySink {
    format: SinkFormat,
    cache: SchemaCache,
    /// Batches that [`fits`] this schema are written with it, so that a batch whose
    /// column happens to be non-nullable does not register a second schema.
    prepared: Option<Prepared>,
    /// The writer schema given as a file (`avro:FILE.avsc`, `json-schema:FILE.json`,
    /// `protobuf:FILE.proto`), used instead of a derived one.
    file: Option<FileSchema>,
    /// Registered schema text → id, per subject.
    ids: Mutex<HashMap<(String, String), i32>>,
    /// Compiled Protobuf schemas by text (compiling costs far more than a batch).
    messages: Mutex<HashMap<String, MessageDescriptor>>,
    /// Writes record keys: subject `<topic>-key`, schema named `<topic>_key`.
    key: bool,
}

impl RegistrySink {
    /// With the sink's `topic` and input schema known, interns the writer schema under
    /// `<topic>-value` so that prewarm registers it at startup.
    pub fn new(
        format: SinkFormat,
        cache: SchemaCache,
        topic: Option<&str>,
        input: Option<&Schema>,
        schema_file: Option<&SchemaFile>,
    ) -> Result<Self, String> {
        Self::build(format, cache, topic, input, schema_file, false)
    }

    /// A sink's registry-framed keys: batches holding the key column only, their
    /// schema (derived when `input` is known, or the key's schema file) interned
    /// under `<topic>-key`.
    pub fn new_key(
        format: SinkFormat,
        cache: SchemaCache,
        topic: &str,
        input: Option<&Schema>,
        schema_file: Option<&SchemaFile>,
    ) -> Result<Self, String> {
        Self::build(format, cache, Some(topic), input, schema_file, true)
    }

    fn build(
        format: SinkFormat,
        cache: SchemaCache,
        topic: Option<&str>,
        input: Option<&Schema>,
        schema_file: Option<&SchemaFile>,
        key: bool,
    ) -> Result<Self, String> {
        let mut prepared = None;
        let file = match schema_file {
            None => None,
            Some(f) => {
                let file = file_schema(format, f, input)?;
                // A file with references registers at its first batch (see
                // `file_id`): prewarm registers one schema per subject, and the
                // references' versions are known only once the imports are registered.
                if let Some(topic) = topic
                    && file.references().is_empty()
                {
                    cache.intern(&subject_for(topic, key), file.spec());
                }
                Some(file)
            }
        };
        if let (Some(topic), Some(input), None) = (topic, input, &file) {
            let named = schema_topic(topic, key);
            let text = writer_schema_text(format, input, &named)?;
            cache.intern(
                &subject_for(topic, key),
                SchemaSpec {
                    schema: text.clone(),
                    schema_type: format.schema_type(),
                    message_type: format.message_type(&named),
                    ..Default::default()
                },
            );
            let fields = payload_fields(input).into_iter().map(|(_, f)| f).collect();
            prepared = Some(Prepared { fields, text });
        }
        Ok(RegistrySink {
            format,
            cache,
            prepared,
            file,
            ids: Mutex::new(HashMap::new()),
            messages: Mutex::new(HashMap::new()),
            key,
        })
    }

    /// The id of `text` under `subject`: remembered, prewarmed, or registered now.
    fn id_for(
        &self,
        subject: &str,
        text: &str,
        message_type: Option<String>,
    ) -> Result<i32, codec::CodecError> {
        let key = (subject.to_owned(), text.to_owned());
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = ids.get(&key) {
            return Ok(*id);
        }
        let prewarmed = self
            .cache
            .interned_schema(subject)
            .filter(|local| local.spec.schema == text)
            .and(self.cache.subject_id(subject));
        let id = match prewarmed {
            Some(id) => id,
            None => {
                let registry = self.cache.registry().ok_or_else(|| {
                    codec::CodecError::invalid(format!(
                        "subject {subject} has no id for the sink's schema and no registry is configured (--registry)"
                    ))
                })?;
                let spec = SchemaSpec {
                    schema: text.to_owned(),
                    schema_type: self.format.schema_type(),
                    message_type,
                    ..Default::default()
                };
                registry
                    .register(subject, &spec)
                    .map_err(|e| registration_error(subject, e))?
            }
        };
        ids.insert(key, id);
        Ok(id)
    }

    /// The id of a schema file with imports under `subject`, registering once:
    /// every imported file first (dependencies before dependents) under the
    /// subject named by its import path, its version looked up, then the file
    /// with `references` [{name: import path, subject, version}] — as the
    /// Confluent Protobuf serializer registers a schema's dependencies.
    fn file_id(&self, subject: &str, file: &FileSchema) -> Result<i32, codec::CodecError> {
        let root = file.spec();
        let key = (subject.to_owned(), root.schema.clone());
        if let Some(id) = self.ids.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(*id);
        }
        let registry = self.cache.registry().ok_or_else(|| {
            codec::CodecError::invalid(format!(
                "subject {subject} has no id for the sink's schema file and no registry is configured (--registry)"
            ))
        })?;
        let mut versions: HashMap<String, i32> = HashMap::new();
        let references = |names: &[String], versions: &HashMap<String, i32>| {
            names
                .iter()
                .map(|name| SchemaReference {
                    name: name.clone(),
                    subject: name.clone(),
                    version: versions.get(name).copied().unwrap_or(-1),
                })
                .collect::<Vec<_>>()
        };
        for import in file.references() {
            let spec = SchemaSpec {
                schema: import.text.clone(),
                schema_type: SchemaType::Protobuf,
                message_type: None,
                references: references(&import.imports, &versions),
            };
            let name = &import.name;
            registry
                .register(name, &spec)
                .map_err(|e| registration_error(name, e))?;
            let found = registry
                .lookup(name, &spec)
                .map_err(|e| registration_error(name, e))?;
            let version = found.version.ok_or_else(|| {
                codec::CodecError::invalid(format!(
                    "cannot register the sink's writer schema under {name}: the registry answered no version"
                ))
            })?;
            versions.insert(name.clone(), version);
        }
        let spec = SchemaSpec {
            references: references(&file.direct_references(), &versions),
            ..root
        };
        let id = registry
            .register(subject, &spec)
            .map_err(|e| registration_error(subject, e))?;
        self.ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, id);
        Ok(id)
    }

    /// Every row's framed value, or that row's refusal: a JSON Schema file
    /// refuses the rows it does not validate one by one; any other failure is
    /// the batch's.
    pub fn value_rows(
        &self,
        topic: &str,
        batch: &RecordBatch,
    ) -> Result<Vec<Result<Vec<u8>, RowRefusal>>, codec::CodecError> {
        match &self.file {
            Some(file) => {
                let id = self.file_schema_id(topic, file)?;
                file.value_rows(id, batch)
                    .map_err(codec::CodecError::invalid)
            }
            None => Ok(self.values(topic, batch)?.into_iter().map(Ok).collect()),
        }
    }

    /// The id a schema file is written under, registered when needed.
    fn file_schema_id(&self, topic: &str, file: &FileSchema) -> Result<u32, codec::CodecError> {
        let spec = file.spec();
        let subject = subject_for(topic, self.key);
        Ok(if file.references().is_empty() {
            self.id_for(&subject, &spec.schema, spec.message_type)?
        } else {
            self.file_id(&subject, file)?
        } as u32)
    }

    /// Every row's framed value; a row the schema file refuses fails the batch.
    pub fn values(
        &self,
        topic: &str,
        batch: &RecordBatch,
    ) -> Result<Vec<Vec<u8>>, codec::CodecError> {
        if let Some(file) = &self.file {
            let id = self.file_schema_id(topic, file)?;
            return file.values(id, batch).map_err(codec::CodecError::invalid);
        }
        let schema = batch.schema();
        let actual = payload_fields(&schema);
        let (text, columns) = match &self.prepared {
            Some(p)
                if p.fields.len() == actual.len()
                    && p.fields.iter().zip(&actual).all(|(p, (_, a))| fits(p, a)) =>
            {
                let columns = actual
                    .iter()
                    .zip(&p.fields)
                    .map(|((i, _), f)| (*i, f.clone()))
                    .collect();
                (p.text.clone(), columns)
            }
            _ => (
                writer_schema_text(self.format, &schema, &schema_topic(topic, self.key))
                    .map_err(codec::CodecError::invalid)?,
                actual,
            ),
        };
        let id = self.id_for(
            &subject_for(topic, self.key),
            &text,
            self.format.message_type(&schema_topic(topic, self.key)),
        )? as u32;
        let bodies = match self.format {
            SinkFormat::Avro => avro_bodies(batch, &columns).map_err(codec::CodecError::invalid)?,
            SinkFormat::JsonSchema => payload_json_rows(batch)?
                .into_iter()
                .map(String::into_bytes)
                .collect(),
            SinkFormat::Protobuf => {
                let message = self.message(&text).map_err(codec::CodecError::invalid)?;
                let messages = proto_messages(batch, &columns, &message)
                    .map_err(codec::CodecError::invalid)?;
                return messages
                    .iter()
                    .map(|m| {
                        let body = encode_message(m)
                            .map_err(|e| codec::CodecError::invalid(e.to_string()))?;
                        framing::encode_protobuf(id, &[0], &body)
                            .map_err(|e| codec::CodecError::invalid(e.to_string()))
                    })
                    .collect();
            }
        };
        Ok(bodies.iter().map(|b| framing::encode(id, b)).collect())
    }

    fn message(&self, text: &str) -> Result<MessageDescriptor, String> {
        let mut messages = self.messages.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = messages.get(text) {
            return Ok(m.clone());
        }
        let m = compile_message(text)?;
        messages.insert(text.to_owned(), m.clone());
        Ok(m)
    }
}

#[cfg(test)]
mod tests;
