//! The demo's schema step: prewarm the orders subjects through the schema cache (one
//! registry call per subject, as `schema prewarm` does), write the cache file the
//! demo's last tail loads (as `--write-cache` does), and inspect the value subject
//! with its Arrow mapping (as `schema inspect get --arrow` does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::engine::columnarschema::describe_arrow;
use crate::engine::schema::avro::registered_text;
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::cache_file::{CacheFile, SubjectEntry};
use crate::engine::schema::prewarm::{PrewarmMode, prewarm};
use crate::engine::schema::registry::{RegisteredSchema, Registry, SchemaSpec, subject_for};
use crate::ops::demo::orders::{ORDER_SCHEMA, ORDERS_TOPIC};
use crate::ops::demo::{Env, failed};
use crate::ops::{Error, Result};

/// Orders are keyed by user name: an Avro string.
pub const ORDER_KEY_SCHEMA: &str = r#""string""#;

/// The subjects prewarmed (auto-registered) and the value subject inspected.
pub struct Prewarmed {
    /// Subject → schema id, of every subject prewarmed.
    pub resolved: BTreeMap<String, i32>,
    pub cache_file: PathBuf,
    pub value_subject: String,
    /// The value subject's latest version.
    pub latest: RegisteredSchema,
    /// Its Arrow schema, one field a line.
    pub arrow: String,
}

/// Prewarms `orders-key` and `orders-value` into a cache file at `cache_path`, then
/// inspects `orders-value`.
pub(crate) fn prewarm_and_inspect(env: &Env<'_>, cache_path: &Path) -> Result<Prewarmed> {
    let cache = SchemaCache::new(env.registry.clone());
    for (is_key, text) in [(true, ORDER_KEY_SCHEMA), (false, ORDER_SCHEMA)] {
        let schema = registered_text(text).map_err(failed)?;
        cache.intern(
            &subject_for(ORDERS_TOPIC, is_key),
            SchemaSpec {
                schema,
                ..Default::default()
            },
        );
    }
    let report = prewarm(&cache, PrewarmMode::AutoRegister).map_err(failed)?;
    if let Some(e) = report.joined_error() {
        return Err(Error::failure(format!("prewarm the orders subjects: {e}")));
    }
    write_cache_file(env.registry.clone(), &env.registry_url, &cache, cache_path)?;
    let value_subject = subject_for(ORDERS_TOPIC, false);
    let latest = env
        .registry
        .latest(&value_subject)
        .map_err(|e| Error::failure(format!("inspect {value_subject}: {e}")))?;
    let arrow = describe_arrow(latest.spec.schema_type, &latest.spec.schema, None, &[])
        .map_err(|e| Error::failure(format!("map {value_subject} to Arrow: {e}")))?;
    Ok(Prewarmed {
        resolved: report.resolved_ids(),
        cache_file: cache_path.to_path_buf(),
        value_subject,
        latest,
        arrow,
    })
}

/// The cache file of the prewarmed subjects, writer schemas fetched by id (D6).
fn write_cache_file(
    registry: Arc<dyn Registry>,
    registry_url: &str,
    prewarmed: &SchemaCache,
    path: &Path,
) -> Result<()> {
    let fetcher = SchemaCache::new(registry);
    let mut file = CacheFile::new(Some(registry_url.to_string()));
    for (subject, id) in prewarmed.subject_ids() {
        let writer = fetcher
            .writer_schema_wait(id, Duration::from_secs(30))
            .map_err(|e| Error::failure(format!("fetch writer schema {}: {e}", id as u32)))?;
        file.subjects.insert(
            subject,
            SubjectEntry {
                id: id as u32,
                version: None,
                mode: Some("auto-register".into()),
                schema_type: writer.schema_type.to_string(),
                schema: None,
            },
        );
        file.add_writer(&writer);
    }
    crate::io::atomic_file::write_whole(path, file.to_json().as_bytes())
        .map_err(|e| Error::failure(format!("cannot write schema cache {}: {e}", path.display())))
}
