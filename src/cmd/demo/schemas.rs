//! The demo's schema step: prewarm the orders subjects through the schema cache (one
//! registry call per subject, as `schema prewarm` does), write the cache file the
//! demo's tail step loads (as `--write-cache` does), and inspect the value subject
//! with its Arrow mapping (as `schema inspect get --arrow` does).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cmd::demo::orders::{ORDER_SCHEMA, ORDERS_TOPIC};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::output::table;
use crate::engine::columnarschema::describe_arrow;
use crate::engine::schema::avro::registered_text;
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::cache_file::{CacheFile, SubjectEntry};
use crate::engine::schema::prewarm::{PrewarmMode, prewarm};
use crate::engine::schema::registry::{Registry, SchemaSpec, subject_for};

/// Orders are keyed by user name: an Avro string.
pub const ORDER_KEY_SCHEMA: &str = r#""string""#;

/// Prewarms `orders-key` and `orders-value` into a cache file at `cache_path`, then
/// inspects `orders-value`. Returns the human text and the JSON result of the step.
pub fn prewarm_and_inspect(
    registry: Arc<dyn Registry>,
    registry_url: &str,
    cache_path: &Path,
) -> CliResult<(String, Value)> {
    let cache = SchemaCache::new(registry.clone());
    for (is_key, text) in [(true, ORDER_KEY_SCHEMA), (false, ORDER_SCHEMA)] {
        let schema = registered_text(text).map_err(|e| CliError::failure(e.to_string()))?;
        cache.intern(
            &subject_for(ORDERS_TOPIC, is_key),
            SchemaSpec {
                schema,
                ..Default::default()
            },
        );
    }
    let report =
        prewarm(&cache, PrewarmMode::AutoRegister).map_err(|e| CliError::failure(e.to_string()))?;
    if let Some(e) = report.joined_error() {
        return Err(CliError::failure(format!(
            "prewarm the orders subjects: {e}"
        )));
    }
    write_cache_file(registry.clone(), registry_url, &cache, cache_path)?;
    let mut t = table(&["subject", "id", "mode"]);
    for (subject, r) in &report.resolved {
        t.add_row(vec![
            subject.clone(),
            (r.id as u32).to_string(),
            "auto-register".into(),
        ]);
    }
    let value_subject = subject_for(ORDERS_TOPIC, false);
    let latest = registry
        .latest(&value_subject)
        .map_err(|e| CliError::failure(format!("inspect {value_subject}: {e}")))?;
    let arrow = describe_arrow(latest.spec.schema_type, &latest.spec.schema, None, &[])
        .map_err(|e| CliError::failure(format!("map {value_subject} to Arrow: {e}")))?;
    let text = format!(
        "{t}\nwrote schema cache {} (`schema prewarm --write-cache`)\n`schema inspect get {value_subject} --arrow`: id {}, version {}, {}\n{}\narrow schema:\n{arrow}",
        cache_path.display(),
        latest.id as u32,
        latest.version.unwrap_or(0),
        latest.spec.schema_type,
        latest.spec.schema,
    );
    let data = json!({
        "resolved": report.resolved_ids(),
        "cache_file": cache_path.display().to_string(),
        "inspect": {
            "subject": value_subject,
            "id": latest.id as u32,
            "version": latest.version,
            "schema": latest.spec.schema,
            "arrow": arrow.lines().collect::<Vec<_>>(),
        },
    });
    Ok((text, data))
}

/// The cache file of the prewarmed subjects, writer schemas fetched by id (D6).
fn write_cache_file(
    registry: Arc<dyn Registry>,
    registry_url: &str,
    prewarmed: &SchemaCache,
    path: &Path,
) -> CliResult<()> {
    let fetcher = SchemaCache::new(registry);
    let mut file = CacheFile::new(Some(registry_url.to_string()));
    for (subject, id) in prewarmed.subject_ids() {
        let writer = fetcher
            .writer_schema_wait(id, Duration::from_secs(30))
            .map_err(|e| CliError::failure(format!("fetch writer schema {}: {e}", id as u32)))?;
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
    crate::io::atomic_file::write_whole(path, file.to_json().as_bytes()).map_err(|e| {
        CliError::failure(format!("cannot write schema cache {}: {e}", path.display()))
    })
}
