//! A registry-framed sink's writer schema given as a file, in any of the three
//! registry formats (`avro:FILE.avsc`, `json-schema:FILE.json`,
//! `protobuf:FILE.proto[:pkg.Msg]`, for values and for key columns): one type
//! that parses the file, checks a sink's columns against it, says what is
//! registered, and writes framed values.

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema};

use crate::engine::columnar::topology::spec::SchemaFile;
use crate::engine::columnarschema::avro_file_sink::AvroFileSchema;
use crate::engine::columnarschema::avro_writer::payload_fields;
use crate::engine::columnarschema::json_schema_file_sink::{JsonFileSchema, RowRefusal};
use crate::engine::columnarschema::proto_file_sink::{ImportedFile, ProtoFileSchema};
use crate::engine::columnarschema::sink_format::SinkFormat;
use crate::engine::schema::framing;
use crate::engine::schema::registry::{SchemaSpec, SchemaType};

/// A writer schema read from a file.
#[derive(Debug)]
pub enum FileSchema {
    Avro(AvroFileSchema),
    Json(JsonFileSchema),
    Protobuf(ProtoFileSchema),
}

impl FileSchema {
    /// Parses the file for a `format` sink and, with the sink's input columns known,
    /// checks them against it; errors start with the file's path.
    pub fn read(
        format: SinkFormat,
        file: &SchemaFile,
        input: Option<&Schema>,
    ) -> Result<Self, String> {
        let path = &file.path.value;
        let text = file
            .text
            .as_deref()
            .ok_or_else(|| format!("schema file {path} was not read"))?;
        let message = file.message.as_ref().map(|m| m.value.as_str());
        let schema = match format {
            SinkFormat::Avro => AvroFileSchema::parse(text).map(FileSchema::Avro),
            SinkFormat::JsonSchema => JsonFileSchema::parse(text).map(FileSchema::Json),
            SinkFormat::Protobuf => {
                ProtoFileSchema::parse(text, message, &file.imports).map(FileSchema::Protobuf)
            }
        }
        .map_err(|e| format!("{path}: {e}"))?;
        if let Some(input) = input {
            let fields: Vec<Field> = payload_fields(input).into_iter().map(|(_, f)| f).collect();
            schema
                .check(&Schema::new(fields))
                .map_err(|e| format!("{path}: {e}"))?;
        }
        Ok(schema)
    }

    /// Whether batches of `input` (payload columns) can be written with this schema.
    pub fn check(&self, input: &Schema) -> Result<(), String> {
        match self {
            FileSchema::Avro(s) => s.check(input),
            FileSchema::Json(s) => s.check(input),
            FileSchema::Protobuf(s) => s.check(input),
        }
    }

    /// What is registered: the file's text (Avro: its canonical form) and type.
    pub fn spec(&self) -> SchemaSpec {
        let (schema, schema_type, message_type) = match self {
            FileSchema::Avro(s) => (s.registered.clone(), SchemaType::Avro, None),
            FileSchema::Json(s) => (s.registered.clone(), SchemaType::Json, None),
            FileSchema::Protobuf(s) => (
                s.registered.clone(),
                SchemaType::Protobuf,
                Some(s.message_type.clone()),
            ),
        };
        SchemaSpec {
            schema,
            schema_type,
            message_type,
            ..Default::default()
        }
    }

    /// The files a `.proto` schema file imports, registered before it as its
    /// references (empty for the other formats).
    pub fn references(&self) -> Vec<ImportedFile> {
        match self {
            FileSchema::Protobuf(s) => s.references(),
            _ => Vec::new(),
        }
    }

    /// The import paths the file itself names: its `references` by name.
    pub fn direct_references(&self) -> Vec<String> {
        match self {
            FileSchema::Protobuf(s) => s.direct_references(),
            _ => Vec::new(),
        }
    }

    /// Every row's framed value under schema `id`, or the row's refusal (JSON
    /// Schema validation refuses rows one by one; the other formats fail whole
    /// batches).
    pub fn value_rows(
        &self,
        id: u32,
        batch: &RecordBatch,
    ) -> Result<Vec<Result<Vec<u8>, RowRefusal>>, String> {
        match self {
            FileSchema::Json(s) => Ok(s
                .rows(batch)?
                .into_iter()
                .map(|row| row.map(|body| framing::encode(id, &body)))
                .collect()),
            _ => Ok(self.values(id, batch)?.into_iter().map(Ok).collect()),
        }
    }

    /// Every row's framed value under schema `id`.
    pub fn values(&self, id: u32, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, String> {
        let framed = |bodies: Vec<Vec<u8>>| bodies.iter().map(|b| framing::encode(id, b)).collect();
        match self {
            FileSchema::Avro(s) => s.bodies(batch).map(framed),
            FileSchema::Json(s) => s.bodies(batch).map(framed),
            FileSchema::Protobuf(s) => s.values(id, batch),
        }
    }
}
