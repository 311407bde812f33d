//! The registry-framed Avro value codec: Confluent frame → writer schema by id
//! (never blocking: a miss is a retriable pending error) → Arrow rows.
//!
//! The reader schema, and so the Arrow schema, is fixed by the first writer schema
//! this decoder meets (or given up front). Records written with that schema, or a
//! structurally identical one, go through the hand-written decoder; records with
//! another writer schema are resolved against the reader schema by apache-avro
//! (defaults, promotions, aliases), re-encoded with the reader schema and then
//! decoded the fast way.

use std::collections::HashMap;
use std::sync::Arc;

use crate::engine::columnar::codec::{CodecError, PayloadColumns, ValueDecoder};
use crate::engine::columnarschema::avro::decoder::RowDecoder;
use crate::engine::columnarschema::avro::schema::AvroSchema;
use crate::engine::columnarschema::writer_schemas::{WriterSchema, WriterSchemas, lookup};
use crate::engine::schema::avro::strict::{self, StrictError};
use crate::engine::schema::framing;
use crate::engine::schema::registry::SchemaType;

/// The reader side: parsed schema, its apache-avro form (for resolution), the row decoder.
struct Reader {
    id: Option<i32>,
    schema: Arc<AvroSchema>,
    source: Arc<WriterSchema>,
    apache: Option<(apache_avro::Schema, Vec<apache_avro::Schema>)>,
    rows: RowDecoder,
}

/// How records of one writer id reach the reader schema.
enum Resolution {
    Same,
    Apache {
        writer: apache_avro::Schema,
        writer_refs: Vec<apache_avro::Schema>,
    },
    Broken(String),
}

fn parse(source: &WriterSchema) -> Result<AvroSchema, String> {
    let refs: Vec<&str> = source
        .references
        .iter()
        .map(|r| r.spec_text.as_str())
        .collect();
    AvroSchema::parse_with_references(&refs, &source.text).map_err(|e| e.0)
}

fn parse_apache(
    source: &WriterSchema,
) -> Result<(apache_avro::Schema, Vec<apache_avro::Schema>), String> {
    if source.references.is_empty() {
        return apache_avro::Schema::parse_str(&source.text)
            .map(|s| (s, Vec::new()))
            .map_err(|e| e.to_string());
    }
    let refs: Vec<&str> = source
        .references
        .iter()
        .map(|r| r.spec_text.as_str())
        .collect();
    apache_avro::Schema::parse_str_with_list(&source.text, refs).map_err(|e| e.to_string())
}

/// Decodes Confluent-framed Avro values into columns.
pub struct AvroValueDecoder {
    schemas: Arc<dyn WriterSchemas>,
    reader: Option<Reader>,
    resolutions: HashMap<i32, Resolution>,
}

impl AvroValueDecoder {
    /// A decoder whose reader schema is the first writer schema it meets.
    pub fn new(schemas: Arc<dyn WriterSchemas>) -> Self {
        AvroValueDecoder {
            schemas,
            reader: None,
            resolutions: HashMap::new(),
        }
    }

    /// A decoder with a fixed reader schema (e.g. a local `.avsc`).
    pub fn with_reader_schema(
        schemas: Arc<dyn WriterSchemas>,
        reader: WriterSchema,
    ) -> Result<Self, CodecError> {
        let mut d = Self::new(schemas);
        d.reader = Some(Self::make_reader(None, Arc::new(reader))?);
        Ok(d)
    }

    fn make_reader(id: Option<i32>, source: Arc<WriterSchema>) -> Result<Reader, CodecError> {
        let label = id.map_or_else(
            || "reader schema".to_string(),
            |i| format!("writer schema {}", i as u32),
        );
        let schema =
            parse(&source).map_err(|e| CodecError::invalid(format!("invalid {label}: {e}")))?;
        let schema = Arc::new(schema);
        let rows = RowDecoder::new(schema.clone()).map_err(|e| CodecError::invalid(e.0))?;
        Ok(Reader {
            id,
            schema,
            source,
            apache: None,
            rows,
        })
    }

    fn ensure_resolution(&mut self, id: i32, writer: &WriterSchema) {
        let reader = self.reader.as_mut().expect("reader set before resolving");
        self.resolutions.entry(id).or_insert_with(|| {
            let parsed = match parse(writer) {
                Ok(p) => p,
                Err(e) => {
                    return Resolution::Broken(format!("invalid writer schema {}: {e}", id as u32));
                }
            };
            if parsed == *reader.schema {
                return Resolution::Same;
            }
            if reader.apache.is_none() {
                match parse_apache(&reader.source) {
                    Ok(a) => reader.apache = Some(a),
                    Err(e) => return Resolution::Broken(format!("invalid reader schema: {e}")),
                }
            }
            match parse_apache(writer) {
                Ok((writer, writer_refs)) => Resolution::Apache {
                    writer,
                    writer_refs,
                },
                Err(e) => Resolution::Broken(format!("invalid writer schema {}: {e}", id as u32)),
            }
        });
    }

    /// The Arrow fields, once the reader schema is known.
    pub fn fields(&self) -> Option<&[arrow_schema::FieldRef]> {
        self.reader.as_ref().map(|r| r.rows.fields())
    }
}

fn deserialize_error(e: impl std::fmt::Display) -> CodecError {
    CodecError::invalid(format!("cannot deserialize schema value: {e}"))
}

impl ValueDecoder for AvroValueDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        let Some(bytes) = value else {
            let Some(reader) = self.reader.as_mut() else {
                return Err(CodecError::invalid(
                    "a tombstone before any Avro value: the columns are not known yet",
                ));
            };
            reader
                .rows
                .append_null()
                .map_err(|e| CodecError::invalid(e.0))?;
            return Ok(1);
        };
        // Hot path: a well-formed frame of the reader's own writer id needs no lookup.
        if let (Some(reader), [0, a, b, c, d, body @ ..]) = (self.reader.as_mut(), bytes)
            && reader.id == Some(i32::from_be_bytes([*a, *b, *c, *d]))
        {
            reader.rows.decode(body).map_err(deserialize_error)?;
            return Ok(1);
        }
        let frame = framing::decode(bytes).map_err(|e| CodecError::invalid(e.to_string()))?;
        let id = frame.schema_id;
        let writer = lookup(self.schemas.as_ref(), id)?;
        if writer.schema_type != SchemaType::Avro {
            return Err(CodecError::invalid(format!(
                "writer schema {} is {}, not Avro",
                id as u32, writer.schema_type
            )));
        }
        if self.reader.is_none() {
            self.reader = Some(Self::make_reader(Some(id), writer.clone())?);
        }
        let same_id = self.reader.as_ref().is_some_and(|r| r.id == Some(id));
        if same_id {
            let reader = self.reader.as_mut().expect("set above");
            reader.rows.decode(frame.body).map_err(deserialize_error)?;
            return Ok(1);
        }
        self.ensure_resolution(id, &writer);
        let resolution = self.resolutions.get(&id).expect("ensured above");
        let resolved: Option<Vec<u8>> = match resolution {
            Resolution::Same => None,
            Resolution::Broken(m) => return Err(CodecError::invalid(m.clone())),
            Resolution::Apache {
                writer,
                writer_refs,
            } => {
                let reader = self.reader.as_ref().expect("set above");
                let (reader_schema, reader_refs) =
                    reader.apache.as_ref().expect("parsed in resolution");
                let datum_reader = apache_avro::reader::datum::GenericDatumReader::builder(writer)
                    .writer_schemata(writer_refs.iter().collect())
                    .and_then(|b| {
                        b.reader_schema(reader_schema)
                            .reader_schemata(reader_refs.iter().collect())
                    })
                    .and_then(|b| b.build())
                    .map_err(|e| {
                        CodecError::invalid(format!(
                            "cannot resolve writer schema {} against the reader schema: {e}",
                            id as u32
                        ))
                    })?;
                // A short or over-long body is a bad record, never a resolved value.
                let value = match strict::read_whole_datum(&datum_reader, frame.body) {
                    Ok(v) => v,
                    Err(StrictError::Avro(e)) => {
                        return Err(CodecError::invalid(format!(
                            "cannot resolve writer schema {} against the reader schema: {e}",
                            id as u32
                        )));
                    }
                    Err(e) => return Err(deserialize_error(e)),
                };
                let bytes = apache_avro::writer::datum::GenericDatumWriter::builder(reader_schema)
                    .schemata(reader_refs.iter().collect())
                    .and_then(|b| b.build())
                    .and_then(|w| w.write_value_to_vec(value))
                    .map_err(deserialize_error)?;
                Some(bytes)
            }
        };
        let reader = self.reader.as_mut().expect("set above");
        reader
            .rows
            .decode(resolved.as_deref().unwrap_or(frame.body))
            .map_err(deserialize_error)?;
        Ok(1)
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        match self.reader.as_mut() {
            Some(r) => r.rows.finish().map_err(deserialize_error),
            None => Ok(Vec::new()),
        }
    }

    fn reset(&mut self) {
        // A failed row may have left builders uneven: rebuild them from the schema.
        if let Some(r) = self.reader.as_mut()
            && let Ok(rows) = RowDecoder::new(r.schema.clone())
        {
            r.rows = rows;
        }
    }
}
