//! Registry-framed JSON Schema values: Confluent frame → writer schema by id (never
//! blocking) → the JSON row bridge with columns from that JSON Schema (semantics §3).
//! The first writer schema met fixes the columns; JSON bodies written with later
//! schema versions fill those columns by name.

use std::sync::Arc;

use crate::engine::columnar::codec::json::{JsonDecoder, JsonRowSchema};
use crate::engine::columnar::codec::{CodecError, PayloadColumns, ValueDecoder};
use crate::engine::columnarschema::writer_schemas::{WriterSchemas, lookup};
use crate::engine::schema::framing;
use crate::engine::schema::registry::SchemaType;

pub struct RegistryJsonDecoder {
    schemas: Arc<dyn WriterSchemas>,
    inner: Option<JsonDecoder>,
}

impl RegistryJsonDecoder {
    pub fn new(schemas: Arc<dyn WriterSchemas>) -> Self {
        RegistryJsonDecoder {
            schemas,
            inner: None,
        }
    }
}

impl ValueDecoder for RegistryJsonDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        let Some(bytes) = value else {
            return match self.inner.as_mut() {
                Some(inner) => inner.append(None),
                None => Err(CodecError::invalid(
                    "a tombstone before any JSON Schema value: the columns are not known yet",
                )),
            };
        };
        let frame = framing::decode(bytes).map_err(|e| CodecError::invalid(e.to_string()))?;
        if self.inner.is_none() {
            let writer = lookup(self.schemas.as_ref(), frame.schema_id)?;
            if writer.schema_type != SchemaType::Json {
                return Err(CodecError::invalid(format!(
                    "writer schema {} is {}, not JSON",
                    frame.schema_id as u32, writer.schema_type
                )));
            }
            let schema = JsonRowSchema::from_json_schema(&writer.text)
                .map_err(|e| e.context(format!("writer schema {}", frame.schema_id as u32)))?;
            self.inner = Some(JsonDecoder::with_schema(schema));
        }
        self.inner
            .as_mut()
            .expect("set above")
            .append(Some(frame.body))
            .map_err(|e| e.context("cannot deserialize schema value"))
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        match self.inner.as_mut() {
            Some(inner) => inner.finish(),
            None => Ok(Vec::new()),
        }
    }

    fn reset(&mut self) {
        if let Some(inner) = self.inner.as_mut() {
            inner.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::columnarschema::writer_schemas::WriterSchema;
    use crate::engine::schema::cache::SchemaCache;

    #[test]
    fn columns_come_from_the_registered_json_schema() {
        let seeded = SchemaCache::offline();
        seeded.seed_writer(WriterSchema {
            id: 3,
            schema_type: SchemaType::Json,
            text: r#"{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"n":{"type":"integer"}}}"#.into(),
            message_type: None,
            references: Vec::new(),
        });
        let mut d = RegistryJsonDecoder::new(Arc::new(seeded.clone()));
        d.append(Some(&framing::encode(3, br#"{"n":5,"id":"a"}"#)))
            .unwrap();
        let err = d
            .append(Some(&framing::encode(3, br#"{"n":5}"#)))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot deserialize schema value: required JSON field is null: id"
        );
        let cols = d.finish().unwrap();
        let names: Vec<&str> = cols.iter().map(|(f, _)| f.name().as_str()).collect();
        assert_eq!(names, ["id", "n"]);
        assert!(!cols[0].0.is_nullable());
        // `schema inspect --arrow` shows exactly the columns the decoder writes.
        let text = seeded.cached_writer(3).unwrap().text.clone();
        let mapped =
            crate::engine::columnarschema::arrow_schema_for(SchemaType::Json, &text, None, &[])
                .unwrap();
        let decoded: Vec<arrow_schema::Field> =
            cols.iter().map(|(f, _)| f.as_ref().clone()).collect();
        let mapped: Vec<arrow_schema::Field> =
            mapped.fields().iter().map(|f| f.as_ref().clone()).collect();
        assert_eq!(mapped, decoded);
    }
}
