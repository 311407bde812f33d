//! The registry client a `schema` use case (and a decoding command's schema cache) talks
//! through, built from validated settings, and registry failures as errors whose message
//! says what to do next (`docs/semantics.md` §1).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::schema::error::SchemaError;
use crate::engine::schema::registry::{
    INCOMPATIBLE_SCHEMA, INVALID_SCHEMA, INVALID_VERSION, RegistryError, SCHEMA_NOT_FOUND,
    SUBJECT_NOT_FOUND, VERSION_NOT_FOUND,
};
use crate::io::properties::read_properties_file;
use crate::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use crate::ops::{Error, Result};

/// Env var holding a bearer token for the registry (used when no basic-auth user is set).
pub const ENV_REGISTRY_TOKEN: &str = "KRABKA_SCHEMA_REGISTRY_TOKEN";

/// Env var naming the registry's base URL (the `--registry` flag's env), quoted in hints.
pub const ENV_REGISTRY_URL: &str = "KRABKA_SCHEMA_REGISTRY_URL";

/// How to reach the registry. Its `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct RegistryPlan {
    /// Base URL, validated (scheme and host, no credentials).
    pub url: String,
    pub user: Option<String>,
    pub password: Option<String>,
    /// Bound of each request.
    pub request_timeout: Duration,
    /// End of the whole command; `None` for a long-running one (tail), whose requests
    /// are still bounded by `request_timeout`.
    pub deadline: Option<Instant>,
    pub send_message_type: bool,
    /// File holding a bearer token; else env [`ENV_REGISTRY_TOKEN`].
    pub token_file: Option<PathBuf>,
    /// `--command-config`: its PEM keys configure TLS.
    pub command_config: Option<PathBuf>,
}

impl std::fmt::Debug for RegistryPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryPlan")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("deadline", &self.deadline)
            .field("send_message_type", &self.send_message_type)
            .field("token_file", &self.token_file)
            .field("command_config", &self.command_config)
            .finish()
    }
}

/// A connected registry client and the URL it talks to.
pub struct Connected {
    pub registry: Arc<HttpRegistry>,
    pub url: String,
}

/// Builds the client: basic auth from the plan, bearer token from the token file or env,
/// TLS from the PEM keys of the command config (`ssl.truststore.location` = CA bundle,
/// `ssl.keystore.location` + `ssl.key.location` = client certificate and PKCS#8 key).
/// Every unreadable or inconsistent input is a usage error naming it.
pub fn connect(plan: &RegistryPlan) -> Result<Connected> {
    let mut opts = HttpRegistryOptions::new(plan.url.clone());
    opts.user = plan.user.clone();
    opts.password = plan.password.clone();
    opts.timeout = plan.request_timeout;
    opts.deadline = plan.deadline;
    opts.send_message_type = plan.send_message_type;
    opts.bearer_token = match &plan.token_file {
        Some(path) => Some(
            crate::io::bounded_read::read_to_string(path, crate::io::bounded_read::CONFIG)
                .map_err(|e| {
                    Error::usage(format!(
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
    if let Some(config) = &plan.command_config {
        let props = read_properties_file(config).map_err(Error::usage)?;
        let read = |key: &str| -> Result<Option<Vec<u8>>> {
            props
                .get(key)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    crate::io::bounded_read::read(
                        std::path::Path::new(p),
                        crate::io::bounded_read::CONFIG,
                    )
                    .map_err(|e| {
                        Error::usage(format!("{}: cannot read {key} {p}: {e}", config.display()))
                    })
                })
                .transpose()
        };
        opts.ca_pem = read("ssl.truststore.location")?;
        match (read("ssl.keystore.location")?, read("ssl.key.location")?) {
            (Some(cert), Some(key)) => opts.client_identity_pem = Some((cert, key)),
            (None, None) => {}
            _ => {
                return Err(Error::usage(format!(
                    "{}: ssl.keystore.location and ssl.key.location must be set together",
                    config.display()
                )));
            }
        }
    }
    let registry = HttpRegistry::new(opts).map_err(|e| Error::usage(e.message))?;
    Ok(Connected {
        registry: Arc::new(registry),
        url: plan.url.clone(),
    })
}

/// A registry failure as an exit code and an actionable message; `what` says what was asked.
pub fn registry_error(e: &RegistryError, what: &str) -> Error {
    if e.is_unreachable() {
        return Error::unreachable(format!(
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
        Error::failure(format!("{what}: {}", e.message))
    } else {
        Error::failure(format!("{what}: {hint}: {}", e.message))
    }
}

/// A schema-engine failure as an exit code.
pub fn schema_error(e: &SchemaError, what: &str) -> Error {
    match e {
        SchemaError::Registry(r) => registry_error(r, what),
        other => Error::failure(format!("{what}: {other}")),
    }
}
