//! The schema cache (semantics §2): what serdes read synchronously while records flow.
//!
//! One lock guards all state: the schema interned per subject, subject → id, and per
//! writer id its text, kind, messageType and resolved references, plus the ids whose
//! fetch is in flight. Reads never block on I/O: a writer id that is not cached answers
//! the retriable [`FetchPendingError`] and starts exactly one background
//! `ResolvedSchemaByID` for it, shared by every caller that asks meanwhile; success
//! stores the schema, and success or failure clears the in-flight mark. Registry calls
//! happen only there and in [`prewarm`](crate::engine::schema::prewarm). A cache built
//! without a registry and seeded by hand (or from a cache file) never does I/O.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::engine::schema::error::{FetchPendingError, SchemaError, SchemaResult};
use crate::engine::schema::registry::{Registry, RegistryError, SchemaSpec, SchemaType};
use crate::engine::schema::resolve::{ResolvedReference, resolved_schema_by_id};

/// The schema a serde registers for a subject: interned before prewarm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSchema {
    /// The registered text (Avro: the canonical form of D1).
    pub spec: SchemaSpec,
}

/// A writer schema by id, as decoding needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterSchema {
    pub id: i32,
    pub schema_type: SchemaType,
    pub text: String,
    pub message_type: Option<String>,
    /// Referenced texts, dependencies first.
    pub references: Vec<ResolvedReference>,
}

impl WriterSchema {
    /// `(import name, text)` of every reference, dependencies first.
    pub fn reference_texts(&self) -> Vec<(String, String)> {
        self.references
            .iter()
            .map(|r| (r.name.clone(), r.spec_text.clone()))
            .collect()
    }
}

#[derive(Debug, Default)]
struct State {
    interned: BTreeMap<String, LocalSchema>,
    subject_ids: BTreeMap<String, i32>,
    writers: BTreeMap<i32, Arc<WriterSchema>>,
    in_flight: HashSet<i32>,
    /// The last failed background fetch per id, for diagnostics only.
    last_failure: BTreeMap<i32, RegistryError>,
    /// After a retriable failure: consecutive failures and when the next fetch may start,
    /// so a registry that is down is asked at a growing interval, not on every poll.
    retry_at: BTreeMap<i32, (u32, Instant)>,
}

/// Pause before the next background fetch after `failures` retriable failures in a row:
/// 0.5 s, 1 s, 2 s, … up to 8 s.
fn retry_pause(failures: u32) -> Duration {
    Duration::from_millis(500)
        .saturating_mul(1u32 << failures.saturating_sub(1).min(4))
        .min(Duration::from_secs(8))
}

struct Inner {
    state: Mutex<State>,
    /// Signalled whenever a background fetch ends.
    fetched: Condvar,
    registry: Option<Arc<dyn Registry>>,
}

/// A shared handle on one cache; clones see the same state.
#[derive(Clone)]
pub struct SchemaCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SchemaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("SchemaCache")
            .field("subjects", &state.subject_ids)
            .field("writer_ids", &state.writers.keys().collect::<Vec<_>>())
            .field("in_flight", &state.in_flight)
            .finish()
    }
}

impl SchemaCache {
    /// A cache that resolves through `registry`.
    pub fn new(registry: Arc<dyn Registry>) -> Self {
        Self::build(Some(registry))
    }

    /// A cache that never contacts a registry: everything must be seeded.
    pub fn offline() -> Self {
        Self::build(None)
    }

    fn build(registry: Option<Arc<dyn Registry>>) -> Self {
        SchemaCache {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                fetched: Condvar::new(),
                registry,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps half-updated (every
        // update is a single insert or remove), so a poisoned lock is still usable.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn registry(&self) -> Option<&Arc<dyn Registry>> {
        self.inner.registry.as_ref()
    }

    /// Records the schema to register for `subject`; no I/O. The first schema interned
    /// for a subject wins: returns false (and keeps the first) when one was there.
    pub fn intern(&self, subject: &str, spec: SchemaSpec) -> bool {
        let mut state = self.lock();
        if state.interned.contains_key(subject) {
            return false;
        }
        state
            .interned
            .insert(subject.to_string(), LocalSchema { spec });
        true
    }

    /// Every interned subject with its schema, sorted by subject.
    pub fn interned(&self) -> Vec<(String, LocalSchema)> {
        self.lock()
            .interned
            .iter()
            .map(|(s, l)| (s.clone(), l.clone()))
            .collect()
    }

    /// The schema interned for a subject.
    pub fn interned_schema(&self, subject: &str) -> Option<LocalSchema> {
        self.lock().interned.get(subject).cloned()
    }

    /// The id `subject` resolved to, if prewarm (or seeding) resolved it.
    pub fn subject_id(&self, subject: &str) -> Option<i32> {
        self.lock().subject_ids.get(subject).copied()
    }

    /// The id a serialiser must frame with, or the unresolved-subject error.
    pub fn require_subject_id(&self, subject: &str) -> SchemaResult<i32> {
        self.subject_id(subject)
            .ok_or_else(|| SchemaError::Unresolved(subject.to_string()))
    }

    /// Every resolved subject → id.
    pub fn subject_ids(&self) -> BTreeMap<String, i32> {
        self.lock().subject_ids.clone()
    }

    /// Seeds subject → id by hand (offline use, cache files, prewarm results).
    pub fn seed_subject_id(&self, subject: &str, id: i32) {
        self.lock().subject_ids.insert(subject.to_string(), id);
    }

    /// Seeds a writer schema by hand; replaces any cached one for the id.
    pub fn seed_writer(&self, writer: WriterSchema) {
        let mut state = self.lock();
        state.in_flight.remove(&writer.id);
        state.writers.insert(writer.id, Arc::new(writer));
    }

    /// Every cached writer schema, by id.
    pub fn writers(&self) -> Vec<Arc<WriterSchema>> {
        self.lock().writers.values().cloned().collect()
    }

    /// The cached writer schema of `id`, without side effects.
    pub fn cached_writer(&self, id: i32) -> Option<Arc<WriterSchema>> {
        self.lock().writers.get(&id).cloned()
    }

    /// Whether a background fetch for `id` is running.
    pub fn is_fetching(&self, id: i32) -> bool {
        self.lock().in_flight.contains(&id)
    }

    /// The error of the last failed background fetch for `id`, if any.
    pub fn last_fetch_failure(&self, id: i32) -> Option<RegistryError> {
        self.lock().last_failure.get(&id).cloned()
    }

    /// The writer schema of `id`, never blocking. A miss answers the retriable
    /// [`FetchPendingError`] and starts one background fetch unless one is running.
    pub fn writer_schema(&self, id: i32) -> SchemaResult<Arc<WriterSchema>> {
        let mut state = self.lock();
        if let Some(w) = state.writers.get(&id) {
            return Ok(w.clone());
        }
        let Some(registry) = self.inner.registry.clone() else {
            return Err(SchemaError::NotCached(id as u32));
        };
        if state.in_flight.insert(id) {
            drop(state);
            let cache = self.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("schema-fetch-{}", id as u32))
                .spawn(move || cache.fetch(registry.as_ref(), id));
            if let Err(e) = spawned {
                let mut state = self.lock();
                state.in_flight.remove(&id);
                return Err(SchemaError::Registry(RegistryError::new(
                    -1,
                    format!("cannot start the schema fetch for id {}: {e}", id as u32),
                )));
            }
        }
        Err(FetchPendingError { id: id as u32 }.into())
    }

    /// Starts, in the background, the fetch of the writer schema now latest under
    /// `subject`. Records produced since it was registered carry its id, so a
    /// consumer that calls this while it joins its group decodes its first batch
    /// without a fetch round. Only a hint: a failure is logged at debug level and
    /// the records' own ids are fetched as usual.
    pub fn prefetch_latest(&self, subject: &str) -> Option<std::thread::JoinHandle<()>> {
        let registry = self.inner.registry.clone()?;
        let cache = self.clone();
        let subject = subject.to_owned();
        std::thread::Builder::new()
            .name("schema-prefetch".into())
            .spawn(move || match registry.latest(&subject) {
                Ok(latest) => {
                    let _ = cache.writer_schema(latest.id);
                }
                Err(e) => tracing::debug!("no latest schema to prefetch under {subject}: {e}"),
            })
            .ok()
    }

    /// [`writer_schema`](Self::writer_schema) for long-running decoders: an id whose
    /// last fetch failed for good (the registry answered, e.g. 40403) answers that
    /// registry error instead of fetching again on every retry of the record; an id
    /// whose last fetch failed retriably (unreachable, 5xx) is fetched again.
    pub fn writer_schema_unless_failed(&self, id: i32) -> SchemaResult<Arc<WriterSchema>> {
        {
            let state = self.lock();
            if let Some(w) = state.writers.get(&id) {
                return Ok(w.clone());
            }
            if let Some(e) = state.last_failure.get(&id)
                && !e.is_retriable()
                && !state.in_flight.contains(&id)
            {
                return Err(SchemaError::Registry(e.clone()));
            }
            if let Some((_, at)) = state.retry_at.get(&id)
                && Instant::now() < *at
            {
                return Err(FetchPendingError { id: id as u32 }.into());
            }
        }
        self.writer_schema(id)
    }

    /// For one-shot tools: [`writer_schema`](Self::writer_schema), then wait for the
    /// background fetch until `timeout`. A failed fetch answers its registry error.
    pub fn writer_schema_wait(
        &self,
        id: i32,
        timeout: Duration,
    ) -> SchemaResult<Arc<WriterSchema>> {
        let deadline = Instant::now() + timeout;
        match self.writer_schema(id) {
            Err(SchemaError::FetchPending(pending)) => {
                let mut state = self.lock();
                state.last_failure.remove(&id);
                loop {
                    if let Some(w) = state.writers.get(&id) {
                        return Ok(w.clone());
                    }
                    if !state.in_flight.contains(&id) {
                        return Err(match state.last_failure.get(&id) {
                            Some(e) => SchemaError::Registry(e.clone()),
                            None => pending.into(),
                        });
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(pending.into());
                    }
                    state = self
                        .inner
                        .fetched
                        .wait_timeout(state, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            other => other,
        }
    }

    fn fetch(&self, registry: &dyn Registry, id: i32) {
        let result = resolved_schema_by_id(registry, id);
        let mut state = self.lock();
        state.in_flight.remove(&id);
        match result {
            Ok(resolved) => {
                state.last_failure.remove(&id);
                state.retry_at.remove(&id);
                let spec = resolved.schema.spec;
                state.writers.insert(
                    id,
                    Arc::new(WriterSchema {
                        id,
                        schema_type: spec.schema_type,
                        text: spec.schema,
                        message_type: spec.message_type,
                        references: resolved.references,
                    }),
                );
            }
            Err(e) => {
                tracing::warn!("fetching writer schema {}: {e}", id as u32);
                let failures = state.retry_at.get(&id).map_or(0, |(n, _)| *n) + 1;
                state
                    .retry_at
                    .insert(id, (failures, Instant::now() + retry_pause(failures)));
                state.last_failure.insert(id, e);
            }
        }
        drop(state);
        self.inner.fetched.notify_all();
    }

    /// Stores a prewarm success: subject → id, the local text as writer text for the id
    /// and the messageType when non-empty; references fetched earlier stay (semantics §2).
    pub(crate) fn record_resolved(
        &self,
        subject: &str,
        id: i32,
        local: &SchemaSpec,
        message_type: Option<String>,
    ) {
        let mut state = self.lock();
        state.subject_ids.insert(subject.to_string(), id);
        let previous = state.writers.get(&id).cloned();
        let message_type = message_type
            .filter(|m| !m.is_empty())
            .or_else(|| previous.as_ref().and_then(|p| p.message_type.clone()));
        state.writers.insert(
            id,
            Arc::new(WriterSchema {
                id,
                schema_type: local.schema_type,
                text: local.schema.clone(),
                message_type,
                references: previous.map(|p| p.references.clone()).unwrap_or_default(),
            }),
        );
    }
}

#[cfg(test)]
mod retry_tests {
    use super::retry_pause;
    use std::time::Duration;

    #[test]
    fn failed_fetches_are_spaced_from_half_a_second_doubling_up_to_eight() {
        let pauses: Vec<Duration> = (1..=7).map(retry_pause).collect();
        let ms: Vec<u128> = pauses.iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, [500, 1000, 2000, 4000, 8000, 8000, 8000]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::schema::registry::{
        RegisteredSchema, RegistryResult, SchemaReference, SubjectVersion,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A registry whose `schema_by_id` is slow, counted, and fails while `fail` is set.
    /// (A fake: the exact interleaving of concurrent callers cannot be forced over HTTP.)
    #[derive(Default)]
    struct Fake {
        by_id_calls: AtomicUsize,
        fail: std::sync::atomic::AtomicBool,
        /// Answer 404 (a final failure) instead of 503.
        missing: std::sync::atomic::AtomicBool,
        versions: Mutex<BTreeMap<(String, i32), RegisteredSchema>>,
    }

    fn schema(text: &str, refs: Vec<SchemaReference>) -> RegisteredSchema {
        RegisteredSchema {
            spec: SchemaSpec {
                schema: text.into(),
                references: refs,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn unused<T>() -> RegistryResult<T> {
        Err(RegistryError::protocol("not used by these tests"))
    }

    impl Registry for Fake {
        fn register(&self, _: &str, _: &SchemaSpec) -> RegistryResult<i32> {
            unused()
        }
        fn lookup(&self, _: &str, _: &SchemaSpec) -> RegistryResult<RegisteredSchema> {
            unused()
        }
        fn latest(&self, subject: &str) -> RegistryResult<RegisteredSchema> {
            let versions = self.versions.lock().unwrap();
            versions
                .iter()
                .filter(|((s, _), _)| s == subject)
                .map(|(_, r)| r.clone())
                .next_back()
                .ok_or_else(|| RegistryError::new(404, "Subject not found"))
        }
        fn version(&self, subject: &str, version: i32) -> RegistryResult<RegisteredSchema> {
            self.versions
                .lock()
                .unwrap()
                .get(&(subject.to_string(), version))
                .cloned()
                .ok_or_else(|| RegistryError::new(404, "no such version"))
        }
        fn versions(&self, _: &str) -> RegistryResult<Vec<i32>> {
            unused()
        }
        fn subjects(&self) -> RegistryResult<Vec<String>> {
            unused()
        }
        fn schema_by_id(&self, id: i32) -> RegistryResult<RegisteredSchema> {
            self.by_id_calls.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            if self.missing.load(Ordering::SeqCst) {
                return Err(RegistryError::new(404, "Schema not found"));
            }
            if self.fail.load(Ordering::SeqCst) {
                return Err(RegistryError::new(503, "unavailable"));
            }
            let refs = if id == 1 {
                vec![SchemaReference {
                    name: "a".into(),
                    subject: "a".into(),
                    version: 1,
                }]
            } else {
                vec![]
            };
            Ok(schema("\"string\"", refs))
        }
        fn compatibility(&self, _: Option<&str>) -> RegistryResult<String> {
            unused()
        }
        fn set_compatibility(&self, _: Option<&str>, _: &str) -> RegistryResult<String> {
            unused()
        }
        fn delete_subject(&self, _: &str, _: bool) -> RegistryResult<Vec<i32>> {
            unused()
        }
        fn delete_version(&self, _: &str, _: i32, _: bool) -> RegistryResult<i32> {
            unused()
        }
        fn id_versions(&self, _: i32) -> RegistryResult<Vec<SubjectVersion>> {
            unused()
        }
    }

    fn wait_for_writer(cache: &SchemaCache, id: i32) -> Option<Arc<WriterSchema>> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(w) = cache.cached_writer(id) {
                return Some(w);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    #[test]
    fn a_prefetched_latest_schema_is_cached_before_any_record_asks_for_its_id() {
        let fake = Arc::new(Fake::default());
        let mut latest = schema("\"string\"", vec![]);
        latest.id = 7;
        fake.versions
            .lock()
            .unwrap()
            .insert(("orders-value".into(), 3), latest);
        let cache = SchemaCache::new(fake.clone());
        cache
            .prefetch_latest("orders-value")
            .unwrap()
            .join()
            .unwrap();
        let writer = wait_for_writer(&cache, 7).expect("the latest schema was fetched");
        assert_eq!(writer.id, 7);
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 1);
        // A record with that id now decodes at once: no second fetch.
        assert_eq!(cache.writer_schema(7).unwrap().id, 7);
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn prefetching_a_subject_the_registry_lacks_leaves_record_ids_to_their_own_fetch() {
        let fake = Arc::new(Fake::default());
        let cache = SchemaCache::new(fake.clone());
        cache
            .prefetch_latest("absent-value")
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 0);
        assert!(cache.writers().is_empty());
        assert!(SchemaCache::offline().prefetch_latest("x-value").is_none());
    }

    #[test]
    fn concurrent_misses_share_exactly_one_background_fetch() {
        let fake = Arc::new(Fake::default());
        let cache = SchemaCache::new(fake.clone());
        std::thread::scope(|s| {
            for _ in 0..8 {
                let cache = cache.clone();
                s.spawn(move || {
                    let e = cache.writer_schema(5).unwrap_err();
                    assert!(matches!(
                        e,
                        SchemaError::FetchPending(FetchPendingError { id: 5 })
                    ));
                });
            }
        });
        cache.writer_schema_wait(5, Duration::from_secs(5)).unwrap();
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_fetch_clears_the_marker_so_the_next_miss_fetches_again() {
        let fake = Arc::new(Fake::default());
        fake.fail.store(true, Ordering::SeqCst);
        let cache = SchemaCache::new(fake.clone());
        let e = cache
            .writer_schema_wait(5, Duration::from_secs(5))
            .unwrap_err();
        assert!(
            matches!(&e, SchemaError::Registry(r) if r.status == 503),
            "{e:?}"
        );
        assert!(!cache.is_fetching(5));
        assert_eq!(cache.last_fetch_failure(5).unwrap().status, 503);
        fake.fail.store(false, Ordering::SeqCst);
        assert!(cache.writer_schema(5).is_err(), "a miss is pending again");
        cache.writer_schema_wait(5, Duration::from_secs(5)).unwrap();
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn decoders_fetch_again_after_a_retriable_failure_but_not_after_a_final_one() {
        let fake = Arc::new(Fake::default());
        fake.fail.store(true, Ordering::SeqCst);
        let cache = SchemaCache::new(fake.clone());
        cache
            .writer_schema_wait(5, Duration::from_secs(5))
            .unwrap_err();
        assert!(matches!(
            cache.writer_schema_unless_failed(5),
            Err(SchemaError::FetchPending(_))
        ));
        cache
            .writer_schema_wait(5, Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 2);
        fake.missing.store(true, Ordering::SeqCst);
        cache
            .writer_schema_wait(5, Duration::from_secs(5))
            .unwrap_err();
        for _ in 0..3 {
            let e = cache.writer_schema_unless_failed(5).unwrap_err();
            assert!(
                matches!(&e, SchemaError::Registry(r) if r.status == 404),
                "{e:?}"
            );
        }
        assert_eq!(fake.by_id_calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn reference_cycles_are_resolved_once_dependencies_first() {
        let fake = Arc::new(Fake::default());
        {
            let mut v = fake.versions.lock().unwrap();
            let b_ref = SchemaReference {
                name: "b".into(),
                subject: "b".into(),
                version: 1,
            };
            let a_ref = SchemaReference {
                name: "a".into(),
                subject: "a".into(),
                version: 1,
            };
            v.insert(("a".into(), 1), schema("A", vec![b_ref]));
            v.insert(("b".into(), 1), schema("B", vec![a_ref]));
        }
        let cache = SchemaCache::new(fake);
        let w = cache.writer_schema_wait(1, Duration::from_secs(5)).unwrap();
        let names: Vec<&str> = w.references.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["b", "a"]);
    }

    #[test]
    fn the_first_schema_interned_for_a_subject_wins() {
        let cache = SchemaCache::offline();
        assert!(cache.intern(
            "s",
            SchemaSpec {
                schema: "\"a\"".into(),
                ..Default::default()
            }
        ));
        assert!(!cache.intern(
            "s",
            SchemaSpec {
                schema: "\"b\"".into(),
                ..Default::default()
            }
        ));
        assert_eq!(cache.interned_schema("s").unwrap().spec.schema, "\"a\"");
    }
}
