//! The demo's tails: a topic read to its end into Parquet (`ops::demo`), the
//! preview rendered as a table.

use std::path::Path;
use std::sync::Arc;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::tail_host::ConsoleHost;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::ops::demo::{TailToParquet, tail_to_parquet};

/// Tails `topic` (`value_format` values via the registry, writer schemas from
/// `schema_cache` first) to the end into a Parquet file, then renders the file's
/// first rows as a table preview.
pub fn demo_to_parquet(
    bootstrap: &str,
    registry_url: &str,
    schema_cache: Option<&Path>,
    topic: &str,
    value_format: &str,
    path: &Path,
    preview_rows: usize,
) -> CliResult<(u64, String)> {
    let mut global = GlobalArgs::default();
    global.connection.bootstrap_server = Some(bootstrap.to_string());
    global.connection.request_timeout_ms = 30_000;
    global.connection.timeout = std::time::Duration::from_secs(30);
    global.registry.registry = Some(registry_url.to_string());
    let settings = global.connection.kafka_settings("tail")?;
    let schemas = crate::cmd::schema_cache::decoding_cache(&global, schema_cache)?
        .map(|c| Arc::new(c) as Arc<dyn WriterSchemas>);
    let host = ConsoleHost {
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let (rows, shown) = tail_to_parquet(TailToParquet {
        settings,
        timeout: global.connection.timeout,
        schemas,
        topic,
        value_format,
        path,
        preview_rows,
        host: &host,
    })?;
    let mut preview = Vec::new();
    if let Some(batch) = shown {
        crate::cmd::batch_table::render(&mut preview, &batch)?;
    }
    Ok((rows, String::from_utf8_lossy(&preview).into_owned()))
}
