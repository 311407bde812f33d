//! A dead broker (a port nobody listens on: bound, then closed) fails every command
//! that reads from Kafka fast and quietly: exit 4 in a few seconds with one line that
//! says so, librdkafka's retries never printed line by line, `-q` leaving only the
//! error, and `--output json` leaving only JSON on stderr. The elapsed-time bound is a
//! hang guard, not a measurement.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::binary;

/// Far above the ~3 s a refused bootstrap takes, far below the 30 s `--timeout`.
const HANG_GUARD: Duration = Duration::from_secs(15);

const TOPOLOGY: &str = "version: 1
settings:
  consumer_group: dead-broker-test
nodes:
  - source: words
    topics: [words]
    value: string
  - sink: out
    parent: words
    topic: out
    value: json
";

fn dead_bootstrap() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr.to_string()
}

/// Every command that talks to the broker, with what it needs besides `-b`.
fn commands(dir: &std::path::Path) -> Vec<Vec<String>> {
    let topology = dir.join("t.yaml");
    std::fs::write(&topology, TOPOLOGY).unwrap();
    let snapshots = dir.join("snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        s(&["tail", "words", "-e", "--format", "ndjson"]),
        s(&["tail", "words", "-g", "readers", "-e", "--format", "ndjson"]),
        s(&["barrier", "list"]),
        s(&["barrier", "show", "--group", "audit", "--epoch", "latest"]),
        s(&[
            "barrier",
            "verify",
            "--group",
            "audit",
            "--epoch",
            "1",
            "--consumer-group",
            "app",
        ]),
        s(&[
            "snapshot",
            "restore-cut",
            "--group",
            "audit",
            "--epoch",
            "latest",
            "--snapshot-dir",
            snapshots.to_str().unwrap(),
            "--consumer-group",
            "app",
        ]),
        s(&["run", topology.to_str().unwrap()]),
    ]
}

fn run(global: &[&str], command: &[String]) -> (Output, Duration) {
    let started = Instant::now();
    let out = Command::new(binary())
        .args(global)
        .args(["-b", &dead_bootstrap(), "--timeout", "30s"])
        .args(command)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_BOOTSTRAP_SERVER")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, started.elapsed())
}

fn lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_exits_4_at_once_with_one_line_when_every_bootstrap_address_refuses() {
    let dir = tempfile::tempdir().unwrap();
    for command in commands(dir.path()) {
        let (out, elapsed) = run(&[], &command);
        let err = lines(&out);
        assert_eq!(out.status.code(), Some(4), "{command:?}: {err:?}");
        assert!(elapsed < HANG_GUARD, "{command:?} took {elapsed:?}");
        assert!(err.len() <= 3, "{command:?}: {err:#?}");
        assert!(
            err.iter().any(|l| l.contains("refused the connection")),
            "{command:?}: {err:#?}"
        );

        let (quiet, _) = run(&["-q"], &command);
        let err = lines(&quiet);
        assert_eq!(quiet.status.code(), Some(4), "-q {command:?}: {err:?}");
        assert_eq!(
            err.len(),
            1,
            "-q leaves the error only: {command:?}: {err:#?}"
        );

        let (json, _) = run(&["--output", "json"], &command);
        let err = lines(&json);
        assert_eq!(json.status.code(), Some(4), "json {command:?}: {err:?}");
        for line in &err {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{command:?}: not JSON ({e}): {line}"));
        }
        let last: serde_json::Value = serde_json::from_str(err.last().unwrap()).unwrap();
        assert_eq!(last["error"]["code"], 4, "{command:?}: {err:#?}");
    }
}

/// A broker that accepts connections and closes them at once is not refused: the
/// client tries until `--timeout`, and its repeated failures are one line each.
#[test]
fn a_broker_that_accepts_and_hangs_up_is_bounded_by_the_timeout_with_collapsed_logs() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            drop(stream);
        }
    });
    let started = Instant::now();
    let out = Command::new(binary())
        .args(["-b", &addr, "--timeout", "4s"])
        .args(["tail", "words", "-e", "--format", "ndjson"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let err = lines(&out);
    assert_eq!(out.status.code(), Some(4), "{err:#?}");
    assert!(elapsed < HANG_GUARD, "took {elapsed:?}");
    let mut unique = err.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), err.len(), "a line repeated: {err:#?}");
    assert!(err.len() <= 6, "{err:#?}");
}
