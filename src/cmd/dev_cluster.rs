//! `dev-cluster`: an embedded single-process Kafka-protocol cluster (the librdkafka
//! mock) and the in-repo schema registry, for trying every subcommand with no setup.
//! The mock answers no CreateTopics, so the topics the tool's own commands need —
//! `__coordination_state` (16 partitions, docs/formats.md §9) for `leader`, and
//! `__barrier_state` (50, formats §7) for `barrier` and exactly-once runs — exist
//! from the start; others are created on first use with 4 partitions.

use clap::Args;
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::interrupt::StopSignal;
use crate::cmd::output::Ui;
use crate::engine::columnar::barrier::{BARRIER_STATE_TOPIC, DEFAULT_BARRIER_STATE_PARTITIONS};
use crate::engine::coordination::{COORDINATION_TOPIC, DEFAULT_PARTITIONS};
use crate::io::kafka::mock_cluster::EmbeddedCluster;
use crate::io::registry_server::{RegistryServer, RegistryServerOptions};

// What it serves is said in `cmd::Command::DevCluster`'s help.
#[derive(Debug, Args)]
pub struct DevClusterArgs {
    /// Kafka port to serve on (127.0.0.1 only); 0 picks a free one.
    #[arg(long, default_value_t = 9092)]
    pub port: u16,

    /// Schema registry port (127.0.0.1 only); 0 picks a free one [default: 8081, or a free one when 8081 is taken].
    #[arg(long = "registry-port", value_name = "PORT")]
    pub registry_port: Option<u16>,

    /// Topic to create at start, as NAME or NAME:PARTITIONS (repeatable). Others are auto-created with 4 partitions.
    #[arg(long = "topic", value_name = "NAME[:PARTITIONS]")]
    pub topics: Vec<String>,
}

fn parse_topic(spec: &str) -> CliResult<(String, i32)> {
    let (name, parts) = match spec.rsplit_once(':') {
        Some((n, p)) => {
            let parts: i32 = p.parse().ok().filter(|p| *p >= 1).ok_or_else(|| {
                CliError::usage(format!(
                    "--topic {spec}: partitions must be a positive integer"
                ))
            })?;
            (n, parts)
        }
        None => (spec, 1),
    };
    if name.is_empty() {
        return Err(CliError::usage("--topic needs a name"));
    }
    Ok((name.to_string(), parts))
}

pub fn run(global: &GlobalArgs, args: DevClusterArgs) -> CliResult<()> {
    let topics = args
        .topics
        .iter()
        .map(|t| parse_topic(t))
        .collect::<CliResult<Vec<_>>>()?;
    let ui = Ui::new(&global.output);
    let stop = StopSignal::listen();
    let topics = with_internal_topics(topics);
    let cluster = EmbeddedCluster::start(Some(args.port))
        .map_err(|e| CliError::failure(format!("cannot start the embedded cluster: {e}")))?;
    let registry = start_registry(args.registry_port)?;
    for (name, parts) in &topics {
        cluster
            .create_topic(name, *parts)
            .map_err(|e| CliError::failure(e.to_string()))?;
    }
    let bootstrap = cluster.bootstrap().to_string();
    let registry_url = registry.url();
    ui.report(
        json!({"bootstrap": bootstrap, "registry": registry_url, "topics": topics.iter().map(|(n, p)| json!({"name": n, "partitions": p})).collect::<Vec<_>>()}),
        |out| {
            writeln!(out, "BOOTSTRAP={bootstrap}")?;
            writeln!(out, "REGISTRY={registry_url}")?;
            writeln!(out, "embedded Kafka-protocol cluster (librdkafka mock, in memory) and schema registry serving; Ctrl-C stops them")?;
            writeln!(out, "try: krabka-streams -b {bootstrap} --registry {registry_url} …")
        },
    )?;
    stop.wait()?;
    tracing::info!("stopping the embedded cluster and registry");
    drop(registry);
    drop(cluster);
    Ok(())
}

/// The registry on the port asked for (which must be free), else on 8081, else —
/// 8081 taken, e.g. by another dev cluster — on a free port, which REGISTRY= prints.
fn start_registry(port: Option<u16>) -> CliResult<RegistryServer> {
    let start = |p: u16| RegistryServer::start(RegistryServerOptions::default().port(p));
    match port {
        Some(p) => start(p).map_err(|e| {
            CliError::failure(format!(
                "cannot start the schema registry on 127.0.0.1:{p}: {e} (pass --registry-port 0 for a free port)"
            ))
        }),
        None => start(DEFAULT_REGISTRY_PORT)
            .or_else(|e| {
                tracing::info!(
                    "port {DEFAULT_REGISTRY_PORT} is not free ({e}); serving the registry on a free port"
                );
                start(0)
            })
            .map_err(|e| CliError::failure(format!("cannot start the schema registry: {e}"))),
    }
}

/// The Confluent schema registry's usual port.
const DEFAULT_REGISTRY_PORT: u16 = 8081;

/// The topics asked for, plus the tool's internal topics not among them (a
/// `--topic __barrier_state:N` keeps its own count).
fn with_internal_topics(mut topics: Vec<(String, i32)>) -> Vec<(String, i32)> {
    for (name, parts) in [
        (COORDINATION_TOPIC, DEFAULT_PARTITIONS),
        (BARRIER_STATE_TOPIC, DEFAULT_BARRIER_STATE_PARTITIONS as i32),
    ] {
        if !topics.iter().any(|(n, _)| n == name) {
            topics.push((name.to_owned(), parts));
        }
    }
    topics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_specs_take_an_optional_partition_count() {
        assert_eq!(parse_topic("orders").unwrap(), ("orders".into(), 1));
        assert_eq!(parse_topic("orders:12").unwrap(), ("orders".into(), 12));
        assert!(parse_topic("orders:0").is_err());
        assert!(parse_topic(":3").is_err());
    }

    #[test]
    fn the_internal_topics_are_added_unless_asked_for() {
        let topics = with_internal_topics(vec![("__barrier_state".into(), 3)]);
        assert_eq!(
            topics,
            vec![
                ("__barrier_state".to_owned(), 3),
                ("__coordination_state".to_owned(), 16)
            ]
        );
    }
}
