//! The typed errors of the schema engine. Callers branch on one property only:
//! [`SchemaError::is_retriable`] — a pending writer-schema fetch or a registry
//! failure worth another attempt fails the poll without committing (semantics §2).

use crate::engine::schema::framing::FramingError;
use crate::engine::schema::registry::RegistryError;

/// A writer schema was not cached; one background fetch for it is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("writer schema for id {id} is pending fetch")]
pub struct FetchPendingError {
    /// The id as registry URLs print it (unsigned 32-bit).
    pub id: u32,
}

/// Everything the cache, prewarm and the serdes can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// Retriable: the record must be read again after the fetch completes.
    #[error(transparent)]
    FetchPending(#[from] FetchPendingError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Frame(#[from] FramingError),
    /// Serialising for a subject that prewarm has not resolved to an id.
    #[error("schema ID for {0} is not resolved; call RegisterSubject and prewarm first")]
    Unresolved(String),
    /// A writer schema missing from an offline (registry-less) cache.
    #[error("writer schema for id {0} is not cached and no schema registry is configured")]
    NotCached(u32),
    /// A schema text that does not parse or resolve (message as semantics §2 words it).
    #[error("{0}")]
    Invalid(String),
    #[error("cannot serialize schema value: {0}")]
    Serialize(String),
    #[error("cannot deserialize schema value: {0}")]
    Deserialize(String),
}

impl SchemaError {
    /// A pending fetch, or a registry error that another attempt may cure.
    pub fn is_retriable(&self) -> bool {
        match self {
            SchemaError::FetchPending(_) => true,
            SchemaError::Registry(e) => e.is_retriable(),
            _ => false,
        }
    }

    /// The registry gave no HTTP answer (unreachable or timed out).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, SchemaError::Registry(e) if e.is_unreachable())
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        SchemaError::Invalid(message.into())
    }
}

pub type SchemaResult<T> = Result<T, SchemaError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_fetch_is_retriable_and_names_the_unsigned_id() {
        let e = SchemaError::from(FetchPendingError { id: 4_294_967_295 });
        assert!(e.is_retriable());
        assert_eq!(
            e.to_string(),
            "writer schema for id 4294967295 is pending fetch"
        );
    }

    #[test]
    fn invalid_schemas_and_unresolved_subjects_are_not_retriable() {
        assert!(!SchemaError::invalid("invalid Avro schema: x").is_retriable());
        let e = SchemaError::Unresolved("orders-value".into());
        assert!(!e.is_retriable());
        assert_eq!(
            e.to_string(),
            "schema ID for orders-value is not resolved; call RegisterSubject and prewarm first"
        );
    }
}
