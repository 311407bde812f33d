//! The one thing the batch decoders need from the schema cache: a writer schema by
//! id, never blocking. A hit returns the schema; a miss is the retriable
//! `FetchPendingError` of the shared [`SchemaCache`] (semantics §2) while the schema
//! is fetched in the background, and the caller retries the record on a later poll.
//! The trait exists so a decoder test can stand in for the cache; the product always
//! passes a [`SchemaCache`].

use std::sync::Arc;

use crate::engine::columnar::codec::CodecError;
use crate::engine::schema::cache::SchemaCache;
pub use crate::engine::schema::cache::WriterSchema;
use crate::engine::schema::error::{SchemaError, SchemaResult};

/// Source of writer schemas by id. Must never block on I/O.
pub trait WriterSchemas: Send + Sync {
    fn writer_schema(&self, id: i32) -> SchemaResult<Arc<WriterSchema>>;
    /// The last failed fetch of `id`, named in a pending message for a caller that gives up.
    fn last_failure(&self, _id: i32) -> Option<String> {
        None
    }
}

impl WriterSchemas for SchemaCache {
    fn writer_schema(&self, id: i32) -> SchemaResult<Arc<WriterSchema>> {
        self.writer_schema_unless_failed(id)
    }

    fn last_failure(&self, id: i32) -> Option<String> {
        self.last_fetch_failure(id).map(|e| e.to_string())
    }
}

/// A failed lookup as a codec error: pending stays retriable, the rest fail the record
/// with the id named.
pub fn lookup_error(id: i32, e: SchemaError) -> CodecError {
    match e {
        SchemaError::FetchPending(p) => CodecError::Pending(p.to_string()),
        SchemaError::Registry(r) => CodecError::invalid(format!(
            "cannot fetch writer schema {} from the schema registry: {r}",
            id as u32
        )),
        other => CodecError::invalid(other.to_string()),
    }
}

/// Looks `id` up and turns a failure into the codec error of [`lookup_error`].
pub fn lookup(schemas: &dyn WriterSchemas, id: i32) -> Result<Arc<WriterSchema>, CodecError> {
    schemas
        .writer_schema(id)
        .map_err(|e| match (lookup_error(id, e), schemas.last_failure(id)) {
            (CodecError::Pending(m), Some(last)) => {
                CodecError::Pending(format!("{m} (last attempt: {last})"))
            }
            (e, _) => e,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::schema::error::FetchPendingError;
    use crate::engine::schema::registry::RegistryError;

    #[test]
    fn pending_stays_retriable_and_other_failures_name_the_unsigned_id() {
        let e = lookup_error(7, FetchPendingError { id: 7 }.into());
        assert!(e.is_retriable());
        assert_eq!(e.to_string(), "writer schema for id 7 is pending fetch");
        let e = lookup_error(-1, RegistryError::new(404, "Schema not found").into());
        assert!(!e.is_retriable());
        assert_eq!(
            e.to_string(),
            "cannot fetch writer schema 4294967295 from the schema registry: Schema not found"
        );
        let e = lookup(&SchemaCache::offline(), 9).unwrap_err();
        assert_eq!(
            e.to_string(),
            "writer schema for id 9 is not cached and no schema registry is configured"
        );
    }
}
