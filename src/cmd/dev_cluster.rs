//! `dev-cluster`: an embedded single-process Kafka-protocol cluster for trying the tool.

use clap::Args;
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::interrupt::StopSignal;
use crate::cmd::output::Ui;
use crate::io::kafka::mock_cluster::EmbeddedCluster;

#[derive(Debug, Args)]
pub struct DevClusterArgs {
    /// Port to serve on (127.0.0.1 only); 0 picks a free one.
    #[arg(long, default_value_t = 9092)]
    pub port: u16,

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
    let cluster = EmbeddedCluster::start(Some(args.port))
        .map_err(|e| CliError::failure(format!("cannot start the embedded cluster: {e}")))?;
    for (name, parts) in &topics {
        cluster
            .create_topic(name, *parts)
            .map_err(|e| CliError::failure(e.to_string()))?;
    }
    let bootstrap = cluster.bootstrap().to_string();
    ui.report(
        json!({"bootstrap": bootstrap, "topics": topics.iter().map(|(n, p)| json!({"name": n, "partitions": p})).collect::<Vec<_>>()}),
        |out| {
            writeln!(out, "BOOTSTRAP={bootstrap}")?;
            writeln!(out, "embedded Kafka-protocol cluster (librdkafka mock, in memory) serving; Ctrl-C stops it")?;
            writeln!(out, "try: krabka-streams -b {bootstrap} …")
        },
    )?;
    stop.wait()?;
    tracing::info!("stopping the embedded cluster");
    drop(cluster);
    Ok(())
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
}
