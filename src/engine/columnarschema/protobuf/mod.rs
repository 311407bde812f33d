//! The registry-framed Protobuf value codec: Confluent frame with its message-index
//! path → writer schema by id (never blocking: a miss is a retriable pending error)
//! → the message at that path, decoded by prost-reflect → Arrow rows.
//!
//! The columns are the mapping of [`proto_arrow`](crate::engine::columnarschema::proto_arrow)
//! for the first message this decoder meets; later records (other writer ids of the
//! same message) fill those columns by field name. A record of another message is
//! refused, as is a body that does not parse.

pub mod columns;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{Field, FieldRef};
use prost_reflect::{DynamicMessage, MessageDescriptor};

use crate::engine::columnar::codec::{CodecError, PayloadColumns, ValueDecoder};
use crate::engine::columnarschema::proto_arrow::message_to_arrow;
use crate::engine::columnarschema::protobuf::columns::Column;
use crate::engine::columnarschema::writer_schemas::{WriterSchemas, lookup};
use crate::engine::schema::framing;
use crate::engine::schema::protobuf::ProtoSchema;
use crate::engine::schema::registry::SchemaType;

/// The columns, fixed by the first message met.
struct Reader {
    message: String,
    fields: Vec<FieldRef>,
    columns: Vec<Column>,
}

/// Decodes Confluent-framed Protobuf values into columns.
pub struct ProtobufValueDecoder {
    schemas: Arc<dyn WriterSchemas>,
    /// Compiled writer schemas by id (compiling a `.proto` costs far more than a record).
    compiled: HashMap<i32, Result<Arc<ProtoSchema>, String>>,
    /// The message of each (id, message-index path) seen.
    messages: HashMap<(i32, Vec<i32>), MessageDescriptor>,
    reader: Option<Reader>,
}

fn deserialize_error(e: impl std::fmt::Display) -> CodecError {
    CodecError::invalid(format!("cannot deserialize schema value: {e}"))
}

impl ProtobufValueDecoder {
    pub fn new(schemas: Arc<dyn WriterSchemas>) -> Self {
        ProtobufValueDecoder {
            schemas,
            compiled: HashMap::new(),
            messages: HashMap::new(),
            reader: None,
        }
    }

    /// The Arrow fields, once the first message is known.
    pub fn fields(&self) -> Option<&[FieldRef]> {
        self.reader.as_ref().map(|r| r.fields.as_slice())
    }

    fn message(&mut self, id: i32, path: &[i32]) -> Result<MessageDescriptor, CodecError> {
        if let Some(m) = self.messages.get(&(id, path.to_vec())) {
            return Ok(m.clone());
        }
        if !self.compiled.contains_key(&id) {
            let writer = lookup(self.schemas.as_ref(), id)?;
            if writer.schema_type != SchemaType::Protobuf {
                return Err(CodecError::invalid(format!(
                    "writer schema {} is {}, not PROTOBUF",
                    id as u32, writer.schema_type
                )));
            }
            let compiled = ProtoSchema::from_writer(&writer)
                .map(Arc::new)
                .map_err(|e| e.to_string());
            self.compiled.insert(id, compiled);
        }
        let schema = match self.compiled.get(&id).expect("inserted above") {
            Ok(s) => s.clone(),
            Err(e) => return Err(CodecError::invalid(e.clone())),
        };
        let message = schema
            .message_at(path)
            .map_err(|e| CodecError::invalid(format!("writer schema {}: {e}", id as u32)))?;
        self.messages.insert((id, path.to_vec()), message.clone());
        Ok(message)
    }

    fn reader_for(&mut self, message: &MessageDescriptor) -> Result<&mut Reader, CodecError> {
        if self.reader.is_none() {
            let schema = message_to_arrow(message).map_err(|e| {
                CodecError::invalid(format!(
                    "cannot map Protobuf message {} to Arrow: {e}",
                    message.full_name()
                ))
            })?;
            let fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
            let columns = fields
                .iter()
                .map(|f| Column::new(f, ""))
                .collect::<Result<Vec<_>, _>>()
                .map_err(CodecError::invalid)?;
            self.reader = Some(Reader {
                message: message.full_name().to_string(),
                fields,
                columns,
            });
        }
        let reader = self.reader.as_mut().expect("set above");
        if reader.message != message.full_name() {
            return Err(CodecError::invalid(format!(
                "Protobuf message {} differs from {}, the message whose columns this tail writes; tail one message type per topic",
                message.full_name(),
                reader.message
            )));
        }
        Ok(reader)
    }
}

impl ValueDecoder for ProtobufValueDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        let Some(bytes) = value else {
            let Some(reader) = self.reader.as_mut() else {
                return Err(CodecError::invalid(
                    "a tombstone before any Protobuf value: the columns are not known yet",
                ));
            };
            for c in &mut reader.columns {
                c.append_null().map_err(CodecError::invalid)?;
            }
            return Ok(1);
        };
        let frame =
            framing::decode_protobuf(bytes).map_err(|e| CodecError::invalid(e.to_string()))?;
        let path = frame.message_indexes.as_deref().unwrap_or(&[0]);
        let message = self.message(frame.schema_id, path)?;
        let decoded = DynamicMessage::decode(message.clone(), frame.body).map_err(|e| {
            deserialize_error(format!(
                "Protobuf message {} of writer schema {}: {e}",
                message.full_name(),
                frame.schema_id as u32
            ))
        })?;
        let reader = self.reader_for(&message)?;
        Column::append_fields(&mut reader.columns, &decoded).map_err(deserialize_error)?;
        Ok(1)
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(reader.fields.len());
        for (field, column) in reader.fields.iter().zip(reader.columns.iter_mut()) {
            let array = column.finish().map_err(CodecError::invalid)?;
            out.push((Arc::clone(field), array));
        }
        Ok(out)
    }

    fn reset(&mut self) {
        // A failed row may have left children uneven: rebuild the builders.
        if let Some(reader) = self.reader.as_mut()
            && let Ok(columns) = reader
                .fields
                .iter()
                .map(|f: &FieldRef| Column::new(f.as_ref() as &Field, ""))
                .collect::<Result<Vec<_>, _>>()
        {
            reader.columns = columns;
        }
    }
}

#[cfg(test)]
mod tests;
