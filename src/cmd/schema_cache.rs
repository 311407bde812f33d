//! `--schema-cache FILE` (env `KRABKA_SCHEMA_CACHE`) of `tail` and `run`: the cache file
//! `schema prewarm --write-cache` wrote, loaded at startup into the shared
//! [`SchemaCache`] so a prewarmed id needs no registry round trip. With a registry the
//! cache still fetches ids the file lacks (in the background); without one it is
//! offline and such an id fails its record.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::schema::connect::{ConnectOptions, connect};
use crate::engine::schema::cache::SchemaCache;
use crate::engine::schema::cache_file::CacheFile;
use crate::io::registry_client::HttpRegistry;

/// Env var naming the schema cache file.
pub const ENV_SCHEMA_CACHE: &str = "KRABKA_SCHEMA_CACHE";

#[derive(Debug, Args, Default)]
pub struct SchemaCacheArgs {
    /// Schema cache file written by `schema prewarm --write-cache`: its ids need no registry round trip.
    #[arg(long = "schema-cache", env = ENV_SCHEMA_CACHE, value_name = "FILE")]
    pub schema_cache: Option<PathBuf>,
}

/// The cache a decoding command (`tail`, `run` online) reads writer schemas from: fetching
/// through the same client as `schema` (request timeout, TLS and token from the shared
/// flags, no overall deadline) when a registry is given, seeded from `file` when one is
/// given; `None` when neither is.
pub fn decoding_cache(global: &GlobalArgs, file: Option<&Path>) -> CliResult<Option<SchemaCache>> {
    let registry = global.registry.settings()?;
    if registry.is_none() && file.is_none() {
        return Ok(None);
    }
    let client = match registry {
        Some(_) => Some(
            connect(
                global,
                &ConnectOptions {
                    no_deadline: true,
                    ..ConnectOptions::default()
                },
            )?
            .registry,
        ),
        None => None,
    };
    open_cache(client, file).map(Some)
}

/// Reads and checks a cache file. Any problem (unreadable, not UTF-8, truncated, not a
/// cache file, a newer version) is a usage error naming the file: nothing has run yet.
pub fn read_cache_file(path: &Path) -> CliResult<CacheFile> {
    let shown = path.display();
    let bytes = crate::io::bounded_read::read(path, crate::io::bounded_read::SCHEMA_CACHE)
        .map_err(|e| CliError::usage(format!("cannot read schema cache {shown}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "schema cache {shown}: not UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        ))
    })?;
    CacheFile::parse(&text, &format!("schema cache {shown}")).map_err(|e| {
        CliError::usage(format!(
            "{e}; write it again with `krabka-streams schema prewarm --write-cache {shown}`"
        ))
    })
}

/// The cache a decoding command uses: fetching through `registry` when one is given,
/// seeded from `file` when one is given.
pub fn open_cache(
    registry: Option<Arc<HttpRegistry>>,
    file: Option<&Path>,
) -> CliResult<SchemaCache> {
    let loaded = file.map(read_cache_file).transpose()?;
    let cache = match registry {
        Some(client) => SchemaCache::new(client),
        None => SchemaCache::offline(),
    };
    if let (Some(loaded), Some(path)) = (&loaded, file) {
        loaded
            .seed(&cache)
            .map_err(|e| CliError::usage(format!("schema cache {}: {e}", path.display())))?;
        tracing::debug!(
            "loaded {} subjects and {} writer schemas from {}",
            loaded.subjects.len(),
            loaded.schemas.len(),
            path.display()
        );
    }
    Ok(cache)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::exit::ExitCode;

    #[test]
    fn a_truncated_or_foreign_cache_file_is_a_usage_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.json");
        std::fs::write(
            &path,
            "{\"format\": \"krabka-streams-schema-cache\", \"vers",
        )
        .unwrap();
        let e = open_cache(None, Some(&path)).unwrap_err();
        assert_eq!(e.kind, ExitCode::Usage);
        assert!(
            e.message.starts_with(&format!(
                "schema cache {}: not a schema cache file",
                path.display()
            )),
            "{}",
            e.message
        );
        std::fs::write(&path, b"\xff\xfe").unwrap();
        let e = open_cache(None, Some(&path)).unwrap_err();
        assert!(e.message.contains("not UTF-8 at byte 0"), "{}", e.message);
        let e = open_cache(None, Some(&dir.path().join("missing.json"))).unwrap_err();
        assert_eq!(e.kind, ExitCode::Usage);
        assert!(
            e.message.starts_with("cannot read schema cache"),
            "{}",
            e.message
        );
    }
}
