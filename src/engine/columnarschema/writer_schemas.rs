//! Writer schemas by id, as decoders need them: a hit returns the schema, a miss is
//! the retriable [`WriterSchemaError::Pending`] (behaviour §2 `FetchPendingError`)
//! while the schema is fetched in the background; the caller retries the record on
//! a later poll. Implemented in `io` (over the registry) or by hand for offline use.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::engine::schema::registry::SchemaType;

/// A writer schema as registered, with the texts of its references (dependencies first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterSchema {
    pub id: i32,
    pub schema_type: SchemaType,
    pub text: String,
    pub message_type: Option<String>,
    /// `(reference name, schema text)`, dependencies before dependents.
    pub references: Vec<(String, String)>,
}

/// Why a writer schema is not available now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriterSchemaError {
    /// Being fetched (or to be fetched again after a retriable failure): retry later.
    #[error("writer schema for id {} is pending fetch", *.id as u32)]
    Pending {
        id: i32,
        /// The last failed attempt, if any, for a caller that gives up waiting.
        last_error: Option<String>,
    },
    /// The registry answered that it has no such schema (or another final failure).
    #[error("cannot fetch writer schema {}: {message}", *.id as u32)]
    Failed { id: i32, message: String },
}

impl WriterSchemaError {
    pub fn is_retriable(&self) -> bool {
        matches!(self, WriterSchemaError::Pending { .. })
    }

    /// The message plus the last failed attempt, for a caller that may give up waiting.
    pub fn pending_message(&self) -> String {
        match self {
            WriterSchemaError::Pending {
                last_error: Some(last),
                ..
            } => format!("{self} (last attempt: {last})"),
            _ => self.to_string(),
        }
    }
}

/// Source of writer schemas by id. Must never block on I/O.
pub trait WriterSchemas: Send + Sync {
    fn writer_schema(&self, id: i32) -> Result<Arc<WriterSchema>, WriterSchemaError>;
}

/// Writer schemas seeded by hand: never contacts a registry (offline use, tests).
#[derive(Debug, Default)]
pub struct SeededWriterSchemas {
    schemas: RwLock<HashMap<i32, Arc<WriterSchema>>>,
}

impl SeededWriterSchemas {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&self, schema: WriterSchema) {
        if let Ok(mut map) = self.schemas.write() {
            map.insert(schema.id, Arc::new(schema));
        }
    }

    /// Seeds an Avro schema without references.
    pub fn with_avro(self, id: i32, text: &str) -> Self {
        self.insert(WriterSchema {
            id,
            schema_type: SchemaType::Avro,
            text: text.to_string(),
            message_type: None,
            references: Vec::new(),
        });
        self
    }
}

impl WriterSchemas for SeededWriterSchemas {
    fn writer_schema(&self, id: i32) -> Result<Arc<WriterSchema>, WriterSchemaError> {
        self.schemas
            .read()
            .ok()
            .and_then(|m| m.get(&id).cloned())
            .ok_or_else(|| WriterSchemaError::Failed {
                id,
                message: "not seeded".to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pending_message_prints_the_id_unsigned() {
        let e = WriterSchemaError::Pending {
            id: 7,
            last_error: None,
        };
        assert_eq!(e.to_string(), "writer schema for id 7 is pending fetch");
        assert!(e.is_retriable());
        let e = WriterSchemaError::Pending {
            id: -1,
            last_error: None,
        };
        assert_eq!(
            e.to_string(),
            "writer schema for id 4294967295 is pending fetch"
        );
    }
}
