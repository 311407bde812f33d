//! Writer schemas by id through the registry, never blocking the caller: a miss
//! answers "pending" and starts exactly one background fetch for that id
//! (`GET /schemas/ids/{id}`, then every reference by subject and version,
//! dependencies first). A retriable failure clears the in-flight mark so a later
//! miss fetches again — after a pause that doubles per failed round (0.5 s up to
//! 8 s), so a failing registry is not hammered by a decoder that retries every
//! poll; a final failure (e.g. 40403) is remembered and reported.
//!
//! Stand-in for the shared schema cache (`engine::schema::cache`), which replaces it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::columnarschema::writer_schemas::{
    WriterSchema, WriterSchemaError, WriterSchemas,
};
use crate::engine::schema::registry::{Registry, RegistryError, SchemaReference};

#[derive(Default)]
struct State {
    ready: HashMap<i32, Arc<WriterSchema>>,
    failed: HashMap<i32, String>,
    last_error: HashMap<i32, String>,
    in_flight: HashSet<i32>,
    /// After a retriable failure: failed rounds so far and when the next may start.
    retry: HashMap<i32, (u32, Instant)>,
}

/// The pause before fetch round `failed + 1` after `failed` failed rounds.
fn round_pause(failed: u32) -> Duration {
    Duration::from_millis(500)
        .saturating_mul(1 << failed.saturating_sub(1).min(4))
        .min(Duration::from_secs(8))
}

/// Writer schemas fetched from a registry in the background.
pub struct RegistryWriterSchemas {
    registry: Arc<dyn Registry>,
    state: Arc<Mutex<State>>,
}

impl RegistryWriterSchemas {
    pub fn new(registry: Arc<dyn Registry>) -> Self {
        RegistryWriterSchemas {
            registry,
            state: Arc::new(Mutex::new(State::default())),
        }
    }
}

/// Resolves the references of a schema, dependencies first; a subject@version
/// already on the current path is skipped (cycles tolerated).
fn resolve_references(
    registry: &dyn Registry,
    refs: &[SchemaReference],
    path: &mut Vec<(String, i32)>,
    out: &mut Vec<(String, String)>,
) -> Result<(), RegistryError> {
    for r in refs {
        let key = (r.subject.clone(), r.version);
        if path.contains(&key) || out.iter().any(|(n, _)| n == &r.name) {
            continue;
        }
        let schema = registry.version(&r.subject, r.version)?;
        path.push(key);
        resolve_references(registry, &schema.spec.references, path, out)?;
        path.pop();
        out.push((r.name.clone(), schema.spec.schema));
    }
    Ok(())
}

fn fetch(registry: &dyn Registry, id: i32) -> Result<WriterSchema, RegistryError> {
    let s = registry.schema_by_id(id)?;
    let mut references = Vec::new();
    resolve_references(
        registry,
        &s.spec.references,
        &mut Vec::new(),
        &mut references,
    )?;
    Ok(WriterSchema {
        id,
        schema_type: s.spec.schema_type,
        text: s.spec.schema,
        message_type: s.spec.message_type,
        references,
    })
}

impl WriterSchemas for RegistryWriterSchemas {
    fn writer_schema(&self, id: i32) -> Result<Arc<WriterSchema>, WriterSchemaError> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = st.ready.get(&id) {
            return Ok(s.clone());
        }
        if let Some(m) = st.failed.get(&id) {
            return Err(WriterSchemaError::Failed {
                id,
                message: m.clone(),
            });
        }
        let last_error = st.last_error.get(&id).cloned();
        let waiting = st
            .retry
            .get(&id)
            .is_some_and(|(_, next)| Instant::now() < *next);
        if !waiting && st.in_flight.insert(id) {
            let registry = self.registry.clone();
            let state = self.state.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("schema-fetch-{}", id as u32))
                .spawn(move || {
                    let result = fetch(registry.as_ref(), id);
                    let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
                    st.in_flight.remove(&id);
                    match result {
                        Ok(s) => {
                            st.last_error.remove(&id);
                            st.retry.remove(&id);
                            st.ready.insert(id, Arc::new(s));
                        }
                        Err(e) if e.is_retriable() => {
                            st.last_error.insert(id, e.to_string());
                            let failed = st.retry.get(&id).map_or(0, |(n, _)| *n) + 1;
                            st.retry
                                .insert(id, (failed, Instant::now() + round_pause(failed)));
                        }
                        Err(e) => {
                            st.failed.insert(id, e.to_string());
                        }
                    }
                });
            if let Err(e) = spawned {
                st.in_flight.remove(&id);
                st.last_error
                    .insert(id, format!("cannot start the fetch thread: {e}"));
            }
        }
        Err(WriterSchemaError::Pending { id, last_error })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::engine::schema::registry::SchemaSpec;
    use crate::io::registry_client::{HttpRegistry, HttpRegistryOptions};
    use crate::io::registry_server::{RegistryServer, RegistryServerOptions};

    #[test]
    fn a_miss_is_pending_and_fetches_once_over_http() {
        let server = RegistryServer::start(RegistryServerOptions::default()).unwrap();
        let registry = Arc::new(HttpRegistry::new(HttpRegistryOptions::new(server.url())).unwrap());
        let id = registry
            .register(
                "t-value",
                &SchemaSpec {
                    schema: r#""string""#.into(),
                    ..Default::default()
                },
            )
            .unwrap();
        let cache = RegistryWriterSchemas::new(registry);
        let before = server.requests().len();
        let first = cache.writer_schema(id).unwrap_err();
        assert!(first.is_retriable(), "{first}");
        assert_eq!(
            first.to_string(),
            format!("writer schema for id {id} is pending fetch")
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let got = loop {
            match cache.writer_schema(id) {
                Ok(s) => break s,
                Err(e) if e.is_retriable() && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(got.text, r#""string""#);
        let fetches = server.requests()[before..]
            .iter()
            .filter(|(_, path)| path.starts_with("/schemas/ids/"))
            .count();
        assert_eq!(fetches, 1);
        // An unknown id fails for good (40403), not pending forever.
        let _ = cache.writer_schema(999);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match cache.writer_schema(999) {
                Err(WriterSchemaError::Failed { .. }) => break,
                _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                other => panic!("{other:?}"),
            }
        }
    }
}
