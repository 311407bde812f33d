//! Avro with apache-avro: the registered text (D1, [`canonical`]), parsing with
//! schema references, and bodies read with full reader/writer resolution (defaults
//! for added fields, dropped fields, numeric promotion, aliases) into JSON.
//! Error messages are those of semantics §2.

pub mod canonical;
mod json;
pub mod resolution;
pub mod strict;

use std::sync::Arc;

use apache_avro::Schema;
use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::schema::ResolvedSchema;
use apache_avro::types::Value as AvroValue;
use apache_avro::writer::datum::GenericDatumWriter;

use crate::engine::schema::cache::{SchemaCache, WriterSchema};
use crate::engine::schema::error::{SchemaError, SchemaResult};
use crate::engine::schema::framing;
use crate::engine::schema::registry::{SchemaSpec, SchemaType};

pub use json::avro_to_json;

/// A parsed Avro schema with the named schemas it references.
#[derive(Debug, Clone)]
pub struct AvroSchema {
    pub schema: Schema,
    /// Referenced schemas, dependencies first.
    pub references: Vec<Schema>,
}

impl AvroSchema {
    /// Parses `text`; `invalid Avro schema: …` when it does not parse.
    pub fn parse(text: &str) -> SchemaResult<Self> {
        Self::parse_with_references(text, &[])
            .map_err(|e| SchemaError::invalid(format!("invalid Avro schema: {e}")))
    }

    /// Parses the references in order (each may use the ones before it), then `text`.
    /// The error names the reference that failed: `invalid Avro reference schema <name>: …`.
    pub fn parse_with_named_references(
        text: &str,
        references: &[(String, String)],
    ) -> SchemaResult<Self> {
        let mut texts: Vec<&str> = Vec::new();
        for (name, ref_text) in references {
            Schema::parse_str_with_list(ref_text, &texts).map_err(|e| {
                SchemaError::invalid(format!("invalid Avro reference schema {name}: {e}"))
            })?;
            texts.push(ref_text);
        }
        Self::parse_with_references(text, &texts).map_err(SchemaError::invalid)
    }

    fn parse_with_references(text: &str, references: &[&str]) -> Result<Self, String> {
        if references.is_empty() {
            let schema = Schema::parse_str(text).map_err(|e| e.to_string())?;
            return Ok(AvroSchema {
                schema,
                references: Vec::new(),
            });
        }
        let (schema, references) =
            Schema::parse_str_with_list(text, references).map_err(|e| e.to_string())?;
        Ok(AvroSchema { schema, references })
    }

    /// The writer schema of a cached id: references first, then the writer text.
    pub fn from_writer(writer: &WriterSchema) -> SchemaResult<Self> {
        let refs: Vec<(String, String)> = writer
            .references
            .iter()
            .map(|r| (r.name.clone(), r.spec_text.clone()))
            .collect();
        Self::parse_with_named_references(&writer.text, &refs).map_err(|e| match e {
            SchemaError::Invalid(m) if !m.starts_with("invalid Avro reference schema") => {
                SchemaError::invalid(format!("invalid writer schema {}: {m}", writer.id as u32))
            }
            other => other,
        })
    }

    pub(crate) fn all(&self) -> Vec<&Schema> {
        self.references.iter().chain([&self.schema]).collect()
    }

    /// The same schema with every decimal replaced by the bytes or fixed carrying it.
    pub(crate) fn lowered(&self) -> AvroSchema {
        AvroSchema {
            schema: lower_decimals(&self.schema),
            references: self.references.iter().map(lower_decimals).collect(),
        }
    }
}

fn lower_decimals(s: &Schema) -> Schema {
    use apache_avro::schema::{ArraySchema, InnerDecimalSchema, MapSchema, UnionSchema};
    match s {
        Schema::Decimal(d) => match &d.inner {
            InnerDecimalSchema::Bytes => Schema::Bytes,
            InnerDecimalSchema::Fixed(f) => Schema::Fixed(f.clone()),
        },
        Schema::Array(a) => Schema::Array(ArraySchema {
            items: Box::new(lower_decimals(&a.items)),
            attributes: a.attributes.clone(),
        }),
        Schema::Map(m) => Schema::Map(MapSchema {
            types: Box::new(lower_decimals(&m.types)),
            attributes: m.attributes.clone(),
        }),
        Schema::Union(u) => UnionSchema::new(u.variants().iter().map(lower_decimals).collect())
            .map(Schema::Union)
            .unwrap_or_else(|_| s.clone()),
        Schema::Record(r) => {
            let mut r = r.clone();
            for f in &mut r.fields {
                f.schema = lower_decimals(&f.schema);
            }
            Schema::Record(r)
        }
        other => other.clone(),
    }
}

/// The text a serde registers for an Avro schema: the Go-form canonical text (D1).
pub fn registered_text(text: &str) -> SchemaResult<String> {
    AvroSchema::parse(text)?;
    canonical::canonical_text(text)
        .map_err(|e| SchemaError::invalid(format!("invalid Avro schema: {e}")))
}

/// Decodes one Avro body with `writer`, resolved onto `reader` when given, into JSON.
/// A body that ends early or has bytes after the datum is refused ([`strict`]).
pub fn decode_body(
    writer: &AvroSchema,
    writer_id: i32,
    reader: Option<&AvroSchema>,
    body: &[u8],
) -> SchemaResult<serde_json::Value> {
    let deser = |e: apache_avro::Error| SchemaError::Deserialize(e.to_string());
    if let Some(reader) = reader {
        // Our own walk (it honours aliases, which apache-avro's checker does not).
        let problems = resolution::problems(writer, reader)?;
        if !problems.is_empty() {
            return Err(SchemaError::invalid(format!(
                "cannot resolve writer schema {} against the reader schema: {}",
                writer_id as u32,
                problems.join("; ")
            )));
        }
    }
    // apache-avro refuses bytes decimals shorter than their precision's capacity (valid
    // Avro); decimals are therefore read as their raw bytes and printed by `avro_to_json`
    // from the original schema.
    let writer_low = writer.lowered();
    let reader_low = reader.map(AvroSchema::lowered);
    let writer_names = ResolvedSchema::new_with_schemata(writer_low.all()).map_err(deser)?;
    let reader_names = reader_low
        .as_ref()
        .map(|r| ResolvedSchema::new_with_schemata(r.all()))
        .transpose()
        .map_err(deser)?;
    let datum_reader = GenericDatumReader::builder(&writer_low.schema)
        .resolved_writer_schemata(writer_names)
        .maybe_reader_schema(reader_low.as_ref().map(|r| &r.schema))
        .maybe_resolved_reader_schemata(reader_names)
        .build()
        .map_err(deser)?;
    let value = strict::read_whole_datum(&datum_reader, body)
        .map_err(|e| SchemaError::Deserialize(e.to_string()))?;
    let shown = reader.unwrap_or(writer);
    let names = ResolvedSchema::new_with_schemata(shown.all()).map_err(deser)?;
    avro_to_json(&value, &shown.schema, names.get_names()).map_err(SchemaError::Deserialize)
}

/// Encodes a JSON value as an Avro body of `schema` (records as objects, unions by
/// the first branch that accepts the value).
pub fn encode_body(schema: &AvroSchema, value: &serde_json::Value) -> SchemaResult<Vec<u8>> {
    let ser = |e: apache_avro::Error| SchemaError::Serialize(e.to_string());
    let resolved = AvroValue::try_from(value.clone())
        .map_err(ser)?
        .resolve_schemata(&schema.schema, schema.references.iter().collect())
        .map_err(ser)?;
    GenericDatumWriter::builder(&schema.schema)
        .schemata(schema.all())
        .map_err(ser)?
        .build()
        .map_err(ser)?
        .write_value_to_vec(resolved)
        .map_err(ser)
}

/// An Avro serde over the schema cache (semantics §2 lifecycle): the reader schema is
/// fixed at construction, its canonical text interned under the subject.
#[derive(Debug, Clone)]
pub struct AvroSerde {
    cache: SchemaCache,
    subject: String,
    reader: Arc<AvroSchema>,
}

impl AvroSerde {
    /// Parses `schema_text` (`invalid Avro schema: …`) and interns its registered text.
    pub fn new(cache: &SchemaCache, subject: &str, schema_text: &str) -> SchemaResult<Self> {
        let reader = AvroSchema::parse(schema_text)?;
        let text = registered_text(schema_text)?;
        cache.intern(
            subject,
            SchemaSpec {
                schema: text,
                schema_type: SchemaType::Avro,
                ..Default::default()
            },
        );
        Ok(AvroSerde {
            cache: cache.clone(),
            subject: subject.to_string(),
            reader: Arc::new(reader),
        })
    }

    /// `None` (a tombstone) stays `None`; otherwise a Confluent frame with the subject's id.
    pub fn serialize(&self, value: Option<&serde_json::Value>) -> SchemaResult<Option<Vec<u8>>> {
        let Some(value) = value else {
            return Ok(None);
        };
        let id = self.cache.require_subject_id(&self.subject)?;
        let body = encode_body(&self.reader, value)?;
        Ok(Some(framing::encode(id as u32, &body)))
    }

    /// `None` stays `None`; a pending writer fetch is returned unwrapped (retriable).
    pub fn deserialize(&self, data: Option<&[u8]>) -> SchemaResult<Option<serde_json::Value>> {
        let Some(data) = data else {
            return Ok(None);
        };
        let frame = framing::decode(data)?;
        let writer = self.cache.writer_schema(frame.schema_id)?;
        AvroSchema::from_writer(&writer)
            .and_then(|w| decode_body(&w, frame.schema_id, Some(&self.reader), frame.body))
            .map(Some)
            .map_err(wrap_deserialize)
    }
}

/// Body failures read `cannot deserialize schema value: …`; a pending fetch stays as is.
pub(crate) fn wrap_deserialize(e: SchemaError) -> SchemaError {
    match e {
        SchemaError::FetchPending(_) | SchemaError::Frame(_) | SchemaError::Deserialize(_) => e,
        other => SchemaError::Deserialize(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::schema::resolve::ResolvedReference;
    use serde_json::json;

    const V1: &str = r#"{"type":"record","name":"Order","namespace":"demo","fields":[
        {"name":"id","type":"string"},{"name":"qty","type":"int"},{"name":"gone","type":"string"}]}"#;
    const V2: &str = r#"{"type":"record","name":"Purchase","namespace":"demo","aliases":["demo.Order"],"fields":[
        {"name":"id","type":"string"},{"name":"qty","type":"long"},
        {"name":"note","type":"string","default":"none"}]}"#;

    fn writer(id: i32, text: &str, references: Vec<ResolvedReference>) -> WriterSchema {
        WriterSchema {
            id,
            schema_type: SchemaType::Avro,
            text: text.into(),
            message_type: None,
            references,
        }
    }

    #[test]
    fn readers_resolve_added_dropped_promoted_and_aliased_fields() {
        let cache = SchemaCache::offline();
        let w = AvroSchema::parse(V1).unwrap();
        let body = encode_body(&w, &json!({"id": "o-1", "qty": 3, "gone": "x"})).unwrap();
        cache.seed_writer(writer(1, V1, vec![]));
        let serde = AvroSerde::new(&cache, "orders-value", V2).unwrap();
        let got = serde.deserialize(Some(&framing::encode(1, &body))).unwrap();
        assert_eq!(got, Some(json!({"id": "o-1", "qty": 3, "note": "none"})));
        assert_eq!(serde.deserialize(None).unwrap(), None);
    }

    #[test]
    fn decoding_failures_use_the_behaviour_messages() {
        let cache = SchemaCache::offline();
        let serde = AvroSerde::new(
            &cache,
            "s",
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#,
        )
        .unwrap();
        cache.seed_writer(writer(
            2,
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"string"}]}"#,
            vec![],
        ));
        let e = serde
            .deserialize(Some(&framing::encode(2, &[0])))
            .unwrap_err();
        assert!(
            e.to_string().starts_with("cannot deserialize schema value: cannot resolve writer schema 2 against the reader schema: "),
            "{e}"
        );
        cache.seed_writer(writer(3, "{not json", vec![]));
        let e = serde
            .deserialize(Some(&framing::encode(3, &[0])))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot deserialize schema value: invalid writer schema 3: "),
            "{e}"
        );
        let bad_ref = ResolvedReference {
            name: "demo.Dep".into(),
            subject: "dep".into(),
            version: 1,
            spec_text: "{".into(),
        };
        cache.seed_writer(writer(4, "\"int\"", vec![bad_ref]));
        let e = serde
            .deserialize(Some(&framing::encode(4, &[0])))
            .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "cannot deserialize schema value: invalid Avro reference schema demo.Dep: "
            ),
            "{e}"
        );
        // Zero-length non-null data is the frame error, not a body error.
        assert_eq!(
            serde.deserialize(Some(&[])).unwrap_err().to_string(),
            "schema frame is shorter than 5 bytes"
        );
        assert!(
            AvroSchema::parse("{")
                .unwrap_err()
                .to_string()
                .starts_with("invalid Avro schema: ")
        );
    }

    #[test]
    fn an_uncached_writer_id_of_an_offline_cache_is_a_cache_error() {
        let cache = SchemaCache::offline();
        let serde = AvroSerde::new(&cache, "s", "\"int\"").unwrap();
        // Offline: a miss cannot be fetched and says so.
        let e = serde
            .deserialize(Some(&framing::encode(9, &[0])))
            .unwrap_err();
        assert_eq!(e, SchemaError::NotCached(9));
    }
}
