//! Turning the shared registry flags into an [`RegistryPlan`] and connecting through
//! `ops::schema::connect`; the client and the error hints live there.

use std::path::Path;
use std::time::Instant;

use crate::cmd::exit::CliError;
use crate::cmd::exit::CliResult;
use crate::cmd::global::{ENV_REGISTRY_URL, GlobalArgs};
pub use crate::ops::schema::connect::{
    Connected, ENV_REGISTRY_TOKEN, RegistryPlan, registry_error, schema_error,
};

/// The `schema` flags that shape the client beyond the shared registry flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectOptions<'a> {
    pub token_file: Option<&'a Path>,
    pub send_message_type: bool,
    /// A long-running command (tail): no overall deadline; every request is still bounded
    /// by `--request-timeout-ms`, and the command bounds how long it waits for an answer.
    pub no_deadline: bool,
}

/// The registry plan of the flags: URL and basic auth from the registry flags, bearer
/// token from `--schema-registry-token-file` or env, TLS from `--command-config`,
/// per-request timeout `--request-timeout-ms`, the whole command bounded by `--timeout`.
pub fn registry_plan(global: &GlobalArgs, conn: &ConnectOptions<'_>) -> CliResult<RegistryPlan> {
    let settings = global.registry.settings()?.ok_or_else(|| {
        CliError::usage(format!(
            "no schema registry given: pass --registry URL or set {ENV_REGISTRY_URL} (`krabka-streams demo --keep-running` starts a local one)"
        ))
    })?;
    Ok(RegistryPlan {
        url: settings.url,
        user: settings.user,
        password: settings.password,
        request_timeout: std::time::Duration::from_millis(
            global.connection.request_timeout_ms.max(1),
        ),
        deadline: (!conn.no_deadline).then(|| Instant::now() + global.connection.timeout),
        send_message_type: conn.send_message_type,
        token_file: conn.token_file.map(Path::to_path_buf),
        command_config: global.connection.command_config.clone(),
    })
}

/// Builds the client of the flags (see [`registry_plan`]).
pub fn connect(global: &GlobalArgs, conn: &ConnectOptions<'_>) -> CliResult<Connected> {
    crate::ops::schema::connect::connect(&registry_plan(global, conn)?)
}
