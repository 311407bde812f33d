//! `--schema-cache FILE` (env `KRABKA_SCHEMA_CACHE`) of `tail` and `run`: the cache file
//! `schema prewarm --write-cache` wrote, loaded at startup into the shared
//! [`SchemaCache`] so a prewarmed id needs no registry round trip. With a registry the
//! cache still fetches ids the file lacks (in the background); without one it is
//! offline and such an id fails its record. The flag and the registry plan of the shared
//! flags are here; reading the file and building the cache is `ops::schema::cache`.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::engine::schema::cache::SchemaCache;
pub use crate::ops::schema::cache::{open_cache, read_cache_file};
use crate::ops::schema::connect::{RegistryPlan, connect};

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
        Some(settings) => Some(connect(&decoding_plan(global, settings))?.registry),
        None => None,
    };
    open_cache(client, file).map(Some)
}

/// The registry of a long-running decoding command: no overall deadline, every request
/// bounded by `--request-timeout-ms`, token from env, TLS from `--command-config`.
fn decoding_plan(
    global: &GlobalArgs,
    settings: crate::cmd::global::RegistrySettings,
) -> RegistryPlan {
    RegistryPlan {
        url: settings.url,
        user: settings.user,
        password: settings.password,
        request_timeout: std::time::Duration::from_millis(
            global.connection.request_timeout_ms.max(1),
        ),
        deadline: None,
        send_message_type: false,
        token_file: None,
        command_config: global.connection.command_config.clone(),
    }
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
