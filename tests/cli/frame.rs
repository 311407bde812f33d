//! The CLI frame every subcommand shares: help, usage errors, JSON errors, the
//! exit-code table, closed pipes, the demo and the embedded dev cluster.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::BaseRecord;
use rdkafka::{Offset, TopicPartitionList};

use crate::support::checked_producer::CheckedProducer;

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_krabka-streams"));
    for var in [
        "KRABKA_OUTPUT",
        "KRABKA_BOOTSTRAP_SERVER",
        "KRABKA_SCHEMA_REGISTRY_URL",
        "KRABKA_ASSUME_YES",
        "RUST_LOG",
    ] {
        c.env_remove(var);
    }
    c.stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> std::process::Output {
    bin().args(args).output().expect("run krabka-streams")
}

#[test]
fn help_and_version_exit_zero() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("krabka-streams") && text.contains("Exit codes"),
        "{text}"
    );
    assert_eq!(run(&["--version"]).status.code(), Some(0));
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let out = run(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(!out.stderr.is_empty());
}

#[test]
fn a_missing_subcommand_is_a_usage_error() {
    assert_eq!(run(&[]).status.code(), Some(2));
}

#[test]
fn json_mode_reports_usage_errors_as_one_json_document_on_stderr() {
    for args in [
        vec!["--output", "json", "--no-such-flag"],
        vec!["--output=json", "completions", "nosh"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let doc: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|e| {
            panic!(
                "stderr is not one JSON document ({e}): {:?}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(doc["error"]["code"], 2);
        assert!(
            doc["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let out = bin()
        .env("KRABKA_OUTPUT", "json")
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(serde_json::from_slice::<serde_json::Value>(&out.stderr).is_ok());
}

#[test]
fn completions_are_printed_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("krabka-streams"),
            "{shell}"
        );
    }
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let mut child = bin()
        .args(["completions", "zsh"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end at once: every write fails with EPIPE.
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {err}");
}

#[test]
fn the_demo_runs_with_no_setup_and_ctrl_c_cancels_it_at_any_step() {
    let started = Instant::now();
    let out = run(&["demo"]);
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {text}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("demo complete"), "{text}");
    assert!(text.contains("orders-value"), "{text}");
    // Ctrl-C half-way and three-quarters through (after the first tail step, which
    // once kept later signals from ending the walkthrough): cancelled, no report.
    for quarters in [2, 3] {
        let mut child = bin()
            .arg("demo")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the demo");
        std::thread::sleep(took / 4 * quarters);
        if child.try_wait().unwrap().is_some() {
            // It had finished before the signal: nothing to cancel.
            continue;
        }
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(130),
            "stdout: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!stdout.contains("demo complete"), "{stdout}");
    }
}

#[test]
fn the_demo_in_json_mode_prints_exactly_one_document() {
    let out = run(&["--output", "json", "demo"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(
        doc["data"]["steps"]
            .as_array()
            .is_some_and(|s| s.len() >= 4),
        "{doc}"
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_dev_cluster_serves_a_fixed_port_until_sigterm() {
    let port = free_port();
    let mut child = bin()
        .args([
            "dev-cluster",
            "--port",
            &port.to_string(),
            "--topic",
            "greetings:2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert_eq!(first, format!("BOOTSTRAP=127.0.0.1:{port}"));
    let bootstrap = first.trim_start_matches("BOOTSTRAP=").to_string();

    let producer = CheckedProducer::new(ClientConfig::new().set("bootstrap.servers", &bootstrap));
    producer.send(
        BaseRecord::to("greetings")
            .partition(1)
            .key("k")
            .payload("hello"),
    );
    producer.flush();

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "frame-test")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset("greetings", 1, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut got = None;
    while got.is_none() && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            got = Some(m.payload().map(<[u8]>::to_vec));
        }
    }
    assert_eq!(got, Some(Some(b"hello".to_vec())));
    drop(consumer);
    drop(producer);

    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn installed_on_path_it_answers_as_a_krabka_plugin() {
    // A stand-in for the krabka CLI's plugin dispatch: `krabka <name> …` runs `krabka-<name>` from PATH.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_krabka-streams"),
        dir.path().join("krabka-streams"),
    )
    .unwrap();
    let krabka = dir.path().join("krabka");
    std::fs::write(
        &krabka,
        "#!/bin/sh\nname=\"$1\"; shift; exec \"krabka-$name\" \"$@\"\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&krabka).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&krabka, perms).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(&krabka)
        .args(["streams", "--version"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("krabka-streams "));
}
