//! Log setup: stderr only, level from -v/-q, `RUST_LOG` overrides, text or JSON lines.

use tracing_subscriber::EnvFilter;

use crate::cmd::global::{LogFormat, OutputArgs, OutputMode};

/// The default filter for a verbosity: info, -v debug, -vv trace, -q warn, -qq error, -qqq off.
pub fn level_for(verbose: u8, quiet: u8) -> &'static str {
    match (verbose, quiet) {
        (0, 0) => "info",
        (1, _) => "debug",
        (v, _) if v >= 2 => "trace",
        (_, 1) => "warn",
        (_, 2) => "error",
        _ => "off",
    }
}

/// The filter directives: the level, and with `-q` librdkafka's client lines off
/// (they are warnings, but a quiet command's only output on a dead broker should be
/// its one error line).
///
/// Below `-vv`, rdkafka's consumer module is off too: our consumers close themselves
/// promptly (`io::kafka::prompt_close`), and rdkafka's drop then logs an error for
/// its own, refused, second close of every consumer.
pub fn directives(verbose: u8, quiet: u8) -> String {
    let level = level_for(verbose, quiet);
    let mut out = level.to_string();
    if quiet > 0 {
        out.push_str(&format!(",{}=off", crate::io::kafka::client_log::TARGET));
    }
    if verbose < 2 {
        out.push_str(",rdkafka::consumer::base_consumer=off");
    }
    out
}

/// Installs the global subscriber once; later calls are no-ops. With `--output json`
/// log lines are JSON too, so stderr holds only JSON documents (the logs, then the
/// one error) and never a text line before the error.
pub fn init(args: &OutputArgs) {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|s| EnvFilter::try_new(s).ok())
        .unwrap_or_else(|| EnvFilter::new(directives(args.verbose, args.quiet)));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let json = args.log_format == LogFormat::Json || args.output == OutputMode::Json;
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.without_time().try_init()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_maps_to_the_convention() {
        assert_eq!(level_for(0, 0), "info");
        assert_eq!(level_for(1, 0), "debug");
        assert_eq!(level_for(2, 0), "trace");
        assert_eq!(level_for(0, 1), "warn");
        assert_eq!(level_for(0, 2), "error");
        assert_eq!(level_for(0, 3), "off");
        assert_eq!(
            directives(0, 0),
            "info,rdkafka::consumer::base_consumer=off"
        );
        assert_eq!(
            directives(0, 1),
            "warn,librdkafka=off,rdkafka::consumer::base_consumer=off"
        );
        assert_eq!(directives(2, 0), "trace");
    }
}
