//! Turning the shared registry flags into an [`HttpRegistry`], and registry failures
//! into exit codes with a message that says what to do next.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::cmd::exit::CliError;
use crate::cmd::exit::CliResult;
use crate::cmd::global::{ENV_REGISTRY_URL, GlobalArgs};
use crate::engine::schema::error::SchemaError;
use crate::engine::schema::registry::{
    INCOMPATIBLE_SCHEMA, INVALID_SCHEMA, INVALID_VERSION, RegistryError, SCHEMA_NOT_FOUND,
    SUBJECT_NOT_FOUND, VERSION_NOT_FOUND,
};
use crate::io::properties::read_properties_file;
use crate::io::registry_client::{HttpRegistry, HttpRegistryOptions};

/// Env var holding a bearer token for the registry (used when no basic-auth user is set).
pub const ENV_REGISTRY_TOKEN: &str = "KRABKA_SCHEMA_REGISTRY_TOKEN";

/// The `schema` flags that shape the client beyond the shared registry flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectOptions<'a> {
    pub token_file: Option<&'a Path>,
    pub send_message_type: bool,
    /// A long-running command (tail): no overall deadline; every request is still bounded
    /// by `--request-timeout-ms`, and the command bounds how long it waits for an answer.
    pub no_deadline: bool,
}

/// A connected registry client and the URL it talks to.
pub struct Connected {
    pub registry: Arc<HttpRegistry>,
    pub url: String,
}

/// Builds the client: URL and basic auth from the registry flags, bearer token from
/// `--schema-registry-token-file` or env, TLS from the PEM keys of `--command-config`
/// (`ssl.truststore.location` = CA bundle, `ssl.keystore.location` + `ssl.key.location`
/// = client certificate and PKCS#8 key), per-request timeout `--request-timeout-ms`,
/// and the whole command bounded by `--timeout`.
pub fn connect(global: &GlobalArgs, conn: &ConnectOptions<'_>) -> CliResult<Connected> {
    let settings = global.registry.settings()?.ok_or_else(|| {
        CliError::usage(format!(
            "no schema registry given: pass --registry URL or set {ENV_REGISTRY_URL} (`krabka-streams demo --keep-running` starts a local one)"
        ))
    })?;
    let mut opts = HttpRegistryOptions::new(settings.url.clone());
    opts.user = settings.user;
    opts.password = settings.password;
    opts.timeout = std::time::Duration::from_millis(global.connection.request_timeout_ms.max(1));
    opts.deadline = (!conn.no_deadline).then(|| Instant::now() + global.connection.timeout);
    opts.send_message_type = conn.send_message_type;
    opts.bearer_token = match conn.token_file {
        Some(path) => Some(
            crate::io::bounded_read::read_to_string(path, crate::io::bounded_read::CONFIG)
                .map_err(|e| {
                    CliError::usage(format!(
                        "cannot read registry token file {}: {e}",
                        path.display()
                    ))
                })?
                .trim()
                .to_string(),
        ),
        None => std::env::var(ENV_REGISTRY_TOKEN)
            .ok()
            .filter(|t| !t.is_empty()),
    };
    if let Some(config) = &global.connection.command_config {
        let props = read_properties_file(config).map_err(CliError::usage)?;
        let read = |key: &str| -> CliResult<Option<Vec<u8>>> {
            props
                .get(key)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    crate::io::bounded_read::read(
                        std::path::Path::new(p),
                        crate::io::bounded_read::CONFIG,
                    )
                    .map_err(|e| {
                        CliError::usage(format!("{}: cannot read {key} {p}: {e}", config.display()))
                    })
                })
                .transpose()
        };
        opts.ca_pem = read("ssl.truststore.location")?;
        match (read("ssl.keystore.location")?, read("ssl.key.location")?) {
            (Some(cert), Some(key)) => opts.client_identity_pem = Some((cert, key)),
            (None, None) => {}
            _ => {
                return Err(CliError::usage(format!(
                    "{}: ssl.keystore.location and ssl.key.location must be set together",
                    config.display()
                )));
            }
        }
    }
    let registry = HttpRegistry::new(opts).map_err(|e| CliError::usage(e.message))?;
    Ok(Connected {
        registry: Arc::new(registry),
        url: settings.url,
    })
}

/// A registry failure as an exit code and an actionable message; `what` says what was asked.
pub fn registry_error(e: &RegistryError, what: &str) -> CliError {
    if e.is_unreachable() {
        return CliError::unreachable(format!(
            "{what}: {}; check that the registry runs and --registry / {ENV_REGISTRY_URL} points at it (a slow registry needs a larger --request-timeout-ms or --timeout)",
            e.message
        ));
    }
    let hint = match e.error_code {
        Some(SUBJECT_NOT_FOUND) => {
            "subject not found (40401); `krabka-streams schema inspect subjects` lists the registered subjects"
        }
        Some(VERSION_NOT_FOUND) => {
            "version not found (40402); `krabka-streams schema inspect versions SUBJECT` lists the versions"
        }
        Some(SCHEMA_NOT_FOUND) => {
            "schema not found (40403): the registry holds no such schema (under that subject); register it with `schema prewarm --mode auto-register` or check the id"
        }
        Some(INCOMPATIBLE_SCHEMA) => {
            "the registry refused the schema as incompatible with the subject's compatibility level (409); `krabka-streams schema check --against SUBJECT FILE` lists every incompatibility"
        }
        Some(INVALID_SCHEMA) => {
            "the registry refused the schema as invalid or naming a reference it does not hold (42201); fix the schema file or register the referenced subject first"
        }
        Some(INVALID_VERSION) => {
            "invalid version (42202); pass a positive version number or `latest`"
        }
        _ => match e.status {
            401 | 403 => {
                "the registry refused the credentials; check --schema-registry-user and the password (KRABKA_SCHEMA_REGISTRY_PASSWORD or --schema-registry-password-file) or the token"
            }
            _ => "",
        },
    };
    if hint.is_empty() {
        CliError::failure(format!("{what}: {}", e.message))
    } else {
        CliError::failure(format!("{what}: {hint}: {}", e.message))
    }
}

/// A schema-engine failure as an exit code.
pub fn schema_error(e: &SchemaError, what: &str) -> CliError {
    match e {
        SchemaError::Registry(r) => registry_error(r, what),
        other => CliError::failure(format!("{what}: {other}")),
    }
}
