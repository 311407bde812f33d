//! `--dry-run` never lies (issue 20): every command that cannot honour it — it would
//! write a sink, a file or offsets, or run a child — refuses it with exit 2 naming the
//! command, and nothing is written. Commands that honour it are tested with their own
//! behaviour (snapshot prune/restore/restore-cut, leader resign/deregister, schema
//! prewarm).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::admin::committed_offsets;
use crate::support::tansu::Tansu;
use crate::support::{binary, unique_name};
use crate::tail::{create_topic, produce, value_records};

fn krabka(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_ASSUME_YES")
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

/// Exit 2, the refusal naming `command` on stderr, nothing on stdout.
fn assert_refused(out: &Output, command: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
    assert!(
        stderr.contains(&format!("`{command}` does not support --dry-run")),
        "{command}: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/topologies")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn an_offline_run_refuses_dry_run_and_writes_no_sink() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("orders.arrows");
    // The input is never read: an empty file is enough to prove it.
    std::fs::write(&input, b"").unwrap();
    let sink = dir.path().join("totals.arrows");
    let out = krabka(&[
        "--dry-run",
        "run",
        &example("large-orders-by-user.yaml"),
        "--input",
        &format!("orders={}", s(&input)),
        "--sink",
        &format!("large-orders-by-user={}", s(&sink)),
    ]);
    assert_refused(&out, "run");
    assert!(!sink.exists(), "a refused dry run wrote its sink");
    // --check is the dry run of a topology, and it is honoured.
    let out = krabka(&[
        "--dry-run",
        "run",
        &example("large-orders-by-user.yaml"),
        "--check",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tail_with_a_group_or_an_out_file_refuses_dry_run_and_commits_or_writes_nothing() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("dry-tail");
    create_topic(&bootstrap, &topic, 1);
    produce(&bootstrap, &topic, &value_records(3, 1));
    let group = unique_name("dry-group");
    let out = krabka(&[
        "-b",
        &bootstrap,
        "--dry-run",
        "tail",
        &topic,
        "-e",
        "-g",
        &group,
        "--format",
        "ndjson",
    ]);
    assert_refused(&out, "tail");
    assert_eq!(
        committed_offsets(&bootstrap, &group, &topic, 1)[&0],
        None,
        "a dry run committed offsets"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.arrows");
    let out = krabka(&[
        "-b",
        &bootstrap,
        "--dry-run",
        "tail",
        &topic,
        "-e",
        "--out",
        s(&file),
    ]);
    assert_refused(&out, "tail");
    assert!(!file.exists());
}

#[test]
fn an_online_run_refuses_dry_run() {
    let broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let out = krabka(&[
        "-b",
        &broker.bootstrap(),
        "--dry-run",
        "run",
        &example("large-orders-by-user.yaml"),
    ]);
    assert_refused(&out, "run");
    drop(dir);
}

#[test]
fn barrier_list_to_a_file_refuses_dry_run_and_writes_no_file() {
    let broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cuts.arrows");
    let out = krabka(&[
        "-b",
        &broker.bootstrap(),
        "--dry-run",
        "barrier",
        "list",
        "--format",
        "arrow",
        "--out",
        s(&file),
    ]);
    assert_refused(&out, "barrier list");
    assert!(!file.exists());
}

#[test]
fn snapshot_dump_to_a_file_refuses_dry_run_and_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("partition-0.snapshot");
    std::fs::write(
        &snapshot,
        crate::snapshot::container_of(&[("by_user", crate::snapshot::group_by_payload())]),
    )
    .unwrap();
    let dump = dir.path().join("dump.json");
    let out = krabka(&[
        "--dry-run",
        "snapshot",
        "dump",
        s(&snapshot),
        "--lossless",
        "--out",
        s(&dump),
    ]);
    assert_refused(&out, "snapshot dump");
    assert!(!dump.exists());
    // Printing the dump changes nothing: honoured.
    let out = krabka(&["--dry-run", "snapshot", "dump", s(&snapshot), "--lossless"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn leader_run_refuses_dry_run_and_never_starts_its_command() {
    let broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = krabka(&[
        "-b",
        &broker.bootstrap(),
        "--dry-run",
        "leader",
        "run",
        "--role",
        &unique_name("role"),
        "--member",
        "m1",
        "--create-topic",
        "--",
        "touch",
        s(&marker),
    ]);
    assert_refused(&out, "leader run");
    assert!(!marker.exists(), "a dry run started the leader's command");
}

#[test]
fn demo_dev_cluster_and_asset_generation_refuse_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    assert_refused(&krabka(&["--dry-run", "demo"]), "demo");
    assert_refused(&krabka(&["--dry-run", "dev-cluster"]), "dev-cluster");
    let out = krabka(&["--dry-run", "generate-assets", "--root", s(dir.path())]);
    assert_refused(&out, "generate-assets");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
