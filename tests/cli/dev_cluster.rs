//! `dev-cluster` as a new user meets it: it prints where its cluster and registry
//! are, and the commands that need internal topics or a registry work against it
//! with no other setup (`leader run --create-topic`, registry-framed `produce` and
//! `tail`, `barrier list`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::support::tansu::free_port;
use crate::support::{binary, unique_name};

struct Served {
    child: Child,
    bootstrap: String,
    registry: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve() -> Served {
    let port = free_port().to_string();
    let mut child = Command::new(binary())
        .args(["dev-cluster", "--port", &port, "--registry-port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = |prefix: &str| {
        let line = lines.next().unwrap().unwrap();
        line.strip_prefix(prefix)
            .unwrap_or_else(|| panic!("expected {prefix}…, got {line:?}"))
            .to_owned()
    };
    let bootstrap = next("BOOTSTRAP=");
    let registry = next("REGISTRY=");
    assert_eq!(bootstrap, format!("127.0.0.1:{port}"));
    assert!(registry.starts_with("http://127.0.0.1:"), "{registry}");
    Served {
        child,
        bootstrap,
        registry,
    }
}

fn krabka(args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn every_subcommand_works_against_the_dev_cluster_with_no_setup() {
    let served = serve();
    let b = served.bootstrap.as_str();
    let r = served.registry.as_str();
    // The mock answers no CreateTopics: the coordination topic must already be there.
    let role = unique_name("role");
    let out = krabka(
        &[
            "-b",
            b,
            "leader",
            "run",
            "--create-topic",
            "--role",
            &role,
            "--member",
            "m1",
            "--",
            "echo",
            "held",
        ],
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "held");
    let out = krabka(
        &[
            "-b", b, "--output", "json", "leader", "status", "--role", &role,
        ],
        b"",
    );
    assert!(!out.stdout.is_empty());
    krabka(&["-b", b, "barrier", "list", "--all"], b"");
    // A registry-framed round trip through the registry it serves.
    let topic = unique_name("orders");
    krabka(
        &[
            "-b",
            b,
            "--registry",
            r,
            "produce",
            &topic,
            "--format",
            "ndjson",
            "--value-format",
            "avro",
        ],
        b"{\"id\":7,\"user\":\"ada\"}\n",
    );
    let out = krabka(
        &[
            "-b",
            b,
            "--registry",
            r,
            "tail",
            &topic,
            "-e",
            "-q",
            "--value-format",
            "avro",
            "--format",
            "ndjson",
        ],
        b"",
    );
    let row: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (row["id"].as_i64(), row["user"].as_str()),
        (Some(7), Some("ada"))
    );
    let out = krabka(&["--registry", r, "schema", "inspect", "subjects"], b"");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{topic}-value")));
}

#[test]
fn dev_cluster_help_says_what_it_serves_and_lists_only_its_flags() {
    let out = Command::new(binary())
        .args(["dev-cluster", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for said in [
        "schema registry",
        "REGISTRY=",
        "BOOTSTRAP=",
        "__coordination_state",
        "--registry-port",
    ] {
        assert!(help.contains(said), "{said}: {help}");
    }
    for absent in [
        "--bootstrap-server",
        "--registry <",
        "--dry-run",
        "--command-config",
    ] {
        assert!(!help.contains(absent), "{absent}: {help}");
    }
}
