//! The demo's schema step: prewarm the orders subjects through the schema cache (one
//! registry call per subject, as `schema prewarm` does) and inspect the value subject
//! with its Arrow mapping (as `schema inspect get --arrow` does).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::cmd::demo::orders::{ORDER_SCHEMA, ORDERS_TOPIC};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::output::table;
use crate::engine::columnarschema::describe_arrow;
use crate::engine::schema::avro::registered_text;
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::prewarm::{PrewarmMode, prewarm};
use crate::engine::schema::registry::{Registry, SchemaSpec, subject_for};

/// Orders are keyed by user name: an Avro string.
pub const ORDER_KEY_SCHEMA: &str = r#""string""#;

/// Prewarms `orders-key` and `orders-value`, then inspects `orders-value`.
/// Returns the human text and the JSON result of the step.
pub fn prewarm_and_inspect(registry: Arc<dyn Registry>) -> CliResult<(String, Value)> {
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
        "{t}\n`schema inspect get {value_subject} --arrow`: id {}, version {}, {}\n{}\narrow schema:\n{arrow}",
        latest.id as u32,
        latest.version.unwrap_or(0),
        latest.spec.schema_type,
        latest.spec.schema,
    );
    let data = json!({
        "resolved": report.resolved_ids(),
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
