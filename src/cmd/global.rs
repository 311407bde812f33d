//! The argument groups every subcommand shares: connection, registry, output,
//! verbosity and safety. Parsed once; turned into settings only after validation.

use std::path::PathBuf;

use clap::{ArgAction, Args, ValueEnum};

use crate::cmd::exit::{CliError, CliResult};
use crate::io::kafka::settings::{KafkaSettings, command_client_id};
use crate::io::properties::read_properties_file;

pub const ENV_BOOTSTRAP: &str = "KRABKA_BOOTSTRAP_SERVER";
pub use crate::ops::schema::connect::ENV_REGISTRY_URL;
pub const ENV_REGISTRY_USER: &str = "KRABKA_SCHEMA_REGISTRY_USER";
pub const ENV_REGISTRY_PASSWORD: &str = "KRABKA_SCHEMA_REGISTRY_PASSWORD";
pub const ENV_OUTPUT: &str = "KRABKA_OUTPUT";
pub const ENV_ASSUME_YES: &str = "KRABKA_ASSUME_YES";

/// How reports are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputMode {
    /// Tables and sentences for people.
    #[default]
    Human,
    /// Exactly one JSON document `{"data": …}` on stdout; errors as JSON on stderr.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Broker connection, shared by every subcommand.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Connection")]
pub struct ConnectionArgs {
    /// Bootstrap broker(s), comma-separated host:port list.
    #[arg(short = 'b', long = "bootstrap-server", env = ENV_BOOTSTRAP, global = true, value_name = "HOSTS")]
    pub bootstrap_server: Option<String>,

    /// Kafka client properties file (security.protocol, ssl.*, sasl.*, client.id, …).
    #[arg(long = "command-config", global = true, value_name = "FILE")]
    pub command_config: Option<PathBuf>,

    /// librdkafka property override, repeatable (layered over --command-config).
    #[arg(short = 'X', value_name = "KEY=VALUE", global = true, action = ArgAction::Append)]
    pub overrides: Vec<String>,

    /// Client id sent to the broker [default: krabka-streams/<version> <command>].
    #[arg(long = "client-id", global = true, value_name = "ID")]
    pub client_id: Option<String>,

    /// Per-request timeout in milliseconds.
    #[arg(
        long = "request-timeout-ms",
        global = true,
        default_value_t = 30_000,
        value_name = "MS"
    )]
    pub request_timeout_ms: u64,

    /// Overall timeout of the command's broker and registry operations (e.g. 30s, 2m).
    #[arg(long = "timeout", global = true, default_value = "30s", value_parser = parse_duration_arg, value_name = "DURATION")]
    pub timeout: std::time::Duration,

    /// Set when the bootstrap address came from the environment (it then ranks below -X).
    #[arg(skip)]
    pub bootstrap_from_env: bool,
}

impl ConnectionArgs {
    /// The files this connection reads, as `io::path_conflict` inputs: every command
    /// that checks its outputs against its inputs starts from these.
    pub fn read_files(&self) -> Vec<crate::io::path_conflict::Named> {
        crate::io::path_conflict::connection_inputs(self.command_config.as_deref())
    }
}

/// Schema registry connection.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Schema registry")]
pub struct RegistryArgs {
    /// Schema registry base URL (credentials never go in the URL).
    #[arg(long = "registry", env = ENV_REGISTRY_URL, global = true, value_name = "URL")]
    pub registry: Option<String>,

    /// Basic-auth user for the registry.
    #[arg(long = "schema-registry-user", env = ENV_REGISTRY_USER, global = true, value_name = "USER")]
    pub registry_user: Option<String>,

    /// File holding the registry password (else env KRABKA_SCHEMA_REGISTRY_PASSWORD).
    #[arg(
        long = "schema-registry-password-file",
        global = true,
        value_name = "FILE"
    )]
    pub registry_password_file: Option<PathBuf>,
}

/// Output, logging and safety switches.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Report format.
    #[arg(long = "output", env = ENV_OUTPUT, global = true, value_enum, default_value_t = OutputMode::Human)]
    pub output: OutputMode,

    /// More log output on stderr (-v debug, -vv trace).
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count, global = true, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Less log output on stderr (-q warn, -qq error, -qqq off).
    #[arg(short = 'q', long = "quiet", action = ArgAction::Count, global = true)]
    pub quiet: u8,

    /// Log line format on stderr.
    #[arg(long = "log-format", global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Validate and read, change nothing; the report says what would happen.
    #[arg(long = "dry-run", global = true)]
    pub dry_run: bool,

    /// Do not ask for confirmation.
    #[arg(short = 'y', long = "yes", env = ENV_ASSUME_YES, global = true, value_parser = clap::builder::BoolishValueParser::new(), action = ArgAction::SetTrue)]
    pub yes: bool,
}

/// Everything shared by all subcommands.
#[derive(Debug, Clone, Args, Default)]
pub struct GlobalArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_duration_arg(text: &str) -> Result<std::time::Duration, String> {
    crate::engine::units::parse_duration(text)
}

/// Registry connection settings after validation. The password is never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct RegistrySettings {
    pub url: String,
    pub user: Option<String>,
    pub password: Option<String>,
}

impl std::fmt::Debug for RegistrySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySettings")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

impl ConnectionArgs {
    /// The bootstrap servers, or the usage error every broker command gives without them.
    pub fn require_bootstrap(&self) -> CliResult<&str> {
        self.bootstrap_server
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| {
                CliError::usage(format!(
                    "no broker given: pass -b/--bootstrap-server HOST:PORT or set {ENV_BOOTSTRAP} (try `krabka-streams dev-cluster` for a local one)"
                ))
            })
    }

    /// librdkafka settings in precedence order: defaults < --command-config < env < -X < flags.
    pub fn kafka_settings(&self, command: &str) -> CliResult<KafkaSettings> {
        let mut s = KafkaSettings::new();
        s.set("client.id", command_client_id(command));
        if let Some(path) = &self.command_config {
            let java = read_properties_file(path).map_err(CliError::usage)?;
            let translated = KafkaSettings::from_java_properties(&java)
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
            s.overlay(&translated);
        }
        let bootstrap = self.require_bootstrap()?.to_string();
        if self.bootstrap_from_env {
            s.set("bootstrap.servers", bootstrap.clone());
        }
        s.overlay(&KafkaSettings::from_overrides(&self.overrides).map_err(CliError::usage)?);
        if !self.bootstrap_from_env {
            s.set("bootstrap.servers", bootstrap);
        }
        if let Some(id) = &self.client_id {
            s.set("client.id", id.clone());
        }
        s.set("socket.timeout.ms", self.request_timeout_ms.to_string());
        Ok(s)
    }
}

impl RegistryArgs {
    /// The validated registry settings, or `None` when no registry was given.
    pub fn settings(&self) -> CliResult<Option<RegistrySettings>> {
        let Some(url) = self.registry.as_deref().filter(|u| !u.is_empty()) else {
            return Ok(None);
        };
        let url = url.trim_end_matches('/').to_string();
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(CliError::usage(format!(
                "registry base URL {url:?} has no scheme or host"
            )));
        };
        let authority = rest.split('/').next().unwrap_or("");
        if scheme.is_empty() || authority.is_empty() {
            return Err(CliError::usage(format!(
                "registry base URL {url:?} has no scheme or host"
            )));
        }
        if authority.contains('@') {
            return Err(CliError::usage(format!(
                "the registry URL must not carry credentials; pass --schema-registry-user and set {ENV_REGISTRY_PASSWORD} (or --schema-registry-password-file)"
            )));
        }
        if scheme != "http" && scheme != "https" {
            return Err(CliError::usage(format!(
                "registry URL scheme {scheme:?} is not http or https"
            )));
        }
        let password = match &self.registry_password_file {
            Some(path) => Some(
                crate::io::bounded_read::read_to_string(path, crate::io::bounded_read::CONFIG)
                    .map_err(|e| {
                        CliError::usage(format!(
                            "cannot read registry password file {}: {e}",
                            path.display()
                        ))
                    })?
                    .trim_end_matches(['\n', '\r'])
                    .to_string(),
            ),
            None => std::env::var(ENV_REGISTRY_PASSWORD).ok(),
        };
        if password.is_some() && self.registry_user.is_none() {
            return Err(CliError::usage(
                "a registry password is set but no user: pass --schema-registry-user",
            ));
        }
        Ok(Some(RegistrySettings {
            url,
            user: self.registry_user.clone(),
            password,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_urls_with_credentials_are_refused_without_echoing_them() {
        let args = RegistryArgs {
            registry: Some("https://bob:hunter2@reg:8081".into()),
            ..Default::default()
        };
        let err = args.settings().unwrap_err();
        assert_eq!(err.kind, crate::cmd::exit::ExitCode::Usage);
        assert!(!err.message.contains("hunter2"), "{}", err.message);
    }

    #[test]
    fn registry_context_paths_are_kept_and_trailing_slash_trimmed() {
        let args = RegistryArgs {
            registry: Some("http://h:8081/registry/".into()),
            ..Default::default()
        };
        assert_eq!(
            args.settings().unwrap().unwrap().url,
            "http://h:8081/registry"
        );
        let bad = RegistryArgs {
            registry: Some("h:8081".into()),
            ..Default::default()
        };
        assert!(bad.settings().is_err());
    }

    #[test]
    fn flags_beat_overrides_and_overrides_beat_env() {
        let mut c = ConnectionArgs {
            bootstrap_server: Some("flag:9092".into()),
            overrides: vec!["bootstrap.servers=x:1".into(), "client.id=from-x".into()],
            client_id: None,
            request_timeout_ms: 1000,
            ..Default::default()
        };
        let s = c.kafka_settings("tail").unwrap();
        assert_eq!(s.get("bootstrap.servers"), Some("flag:9092"));
        assert_eq!(s.get("client.id"), Some("from-x"));
        c.bootstrap_from_env = true;
        let s = c.kafka_settings("tail").unwrap();
        assert_eq!(s.get("bootstrap.servers"), Some("x:1"));
        c.client_id = Some("flag-id".into());
        assert_eq!(
            c.kafka_settings("tail").unwrap().get("client.id"),
            Some("flag-id")
        );
    }

    #[test]
    fn a_missing_broker_is_a_usage_error() {
        let c = ConnectionArgs::default();
        assert_eq!(
            c.kafka_settings("tail").unwrap_err().kind,
            crate::cmd::exit::ExitCode::Usage
        );
    }
}
