//! `dev-cluster`: an embedded single-process Kafka-protocol cluster for trying the tool.

use clap::Args;
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
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

/// SIGINT or SIGTERM as the normal end of a command that serves until stopped
/// (exit 0): listening starts at [`StopSignal::listen`], so a signal that arrives
/// while the command is still starting is not lost, nor taken for a cancellation
/// (`cmd::interrupt`).
pub struct StopSignal {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    _cooperation: crate::cmd::interrupt::Cooperation,
}

impl StopSignal {
    pub fn listen() -> StopSignal {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        StopSignal {
            _cooperation: crate::cmd::interrupt::cooperate(stop.clone()),
            stop,
        }
    }

    /// Blocks until the signal (checked every 50 ms).
    pub fn wait(self) -> CliResult<()> {
        while !self.stop.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(())
    }
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
