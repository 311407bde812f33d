//! Whose state `run` loads (docs/topology.md "State identity"), end to end: a
//! `state_dir` that another topology used (another topic, another group, same
//! node names) or a changed topology is refused with both identities named,
//! exit 1 and nothing processed; `--adopt-state` takes it over; `snapshot list`
//! shows the identity. Against Tansu, totals compared with the truth.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::run_online::{
    Read, TIMEOUT, create_topic, interrupt, produce, read_until, runner_command, start_runner,
};
use crate::support::tansu::Tansu;
use crate::support::{binary, unique_name};

/// A group-by `sum(amount)` per user named like the issue's (same node names
/// whatever the topic and group).
fn topology(
    dir: &Path,
    file: &str,
    group: &str,
    topic: &str,
    sink: &str,
    aggregate: &str,
) -> std::path::PathBuf {
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!(
            r#"version: 1
settings:
  consumer_group: {group}
  state_store: dir
  state_dir: {state}
nodes:
  - source: orders
    topics: [{topic}]
    value: json
  - group_by: per-user
    parent: orders
    keys: [user]
    aggregates: [{aggregate}]
  - sink: out
    parent: per-user
    topic: {sink}
    value: json
"#,
            state = dir.join("state").display()
        ),
    )
    .unwrap();
    path
}

fn orders(users: usize, per_user: usize, amount: i64) -> Vec<(i32, String, String)> {
    (0..users * per_user)
        .map(|i| {
            (
                0,
                format!("o{i}"),
                json!({"user": format!("u{}", i % users), "amount": amount}).to_string(),
            )
        })
        .collect()
}

/// The last total the sink showed per user.
fn totals(rs: &[Read]) -> BTreeMap<String, i64> {
    rs.iter()
        .map(|r| {
            (
                r.value["user"].as_str().unwrap_or("").to_owned(),
                r.value["total"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn snapshot_list(state: &Path) -> Value {
    let out = Command::new(binary())
        .args([
            "--output",
            "json",
            "snapshot",
            "list",
            state.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["data"].clone()
}

#[test]
fn a_state_dir_another_topology_used_is_refused_naming_both_and_adopted_only_when_told() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (orders_topic, refunds_topic) = (unique_name("orders"), unique_name("refunds"));
    let (orders_out, refunds_out) = (unique_name("order-totals"), unique_name("refund-totals"));
    for topic in [&orders_topic, &refunds_topic, &orders_out, &refunds_out] {
        create_topic(&bootstrap, topic, 1);
    }
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (orders_group, refunds_group) = (unique_name("orders-app"), unique_name("refunds-app"));

    // The first topology fills the state_dir: 4 users, 5 orders of 10 each.
    let first = topology(
        tmp.path(),
        "orders.yaml",
        &orders_group,
        &orders_topic,
        &orders_out,
        "sum(amount) AS total",
    );
    produce(&bootstrap, &orders_topic, &orders(4, 5, 10));
    let runner = start_runner(&bootstrap, &first, &[]);
    let read = read_until(&bootstrap, &orders_out, 1, TIMEOUT, |rs| {
        totals(rs).values().filter(|t| **t == 50).count() == 4
    });
    let out = interrupt(runner);
    assert_eq!(
        totals(&read).values().filter(|t| **t == 50).count(),
        4,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = snapshot_list(&state);
    let identity = &listed["identities"][0];
    assert_eq!(identity["file"], "krabka-state-identity.json", "{listed}");
    assert_eq!(identity["consumer_group"], json!(orders_group));
    assert_eq!(
        identity["stateful_nodes"],
        json!([
            format!("source orders topics=[{orders_topic}]"),
            "group_by per-user keys=[user] aggregates=[sum(amount) AS total]"
        ])
    );
    let fingerprint = identity["fingerprint"].as_str().unwrap().to_owned();
    assert_eq!(
        listed["ignored"], 0,
        "the manifest is not an unknown file: {listed}"
    );

    // Another topic and another group, the same node names: refused before anything is read.
    let second = topology(
        tmp.path(),
        "refunds.yaml",
        &refunds_group,
        &refunds_topic,
        &refunds_out,
        "sum(amount) AS total",
    );
    produce(&bootstrap, &refunds_topic, &orders(4, 2, 1));
    let refused = runner_command(&bootstrap, &second, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    // The source topics are part of the fingerprint: same node names, other state.
    assert!(
        stderr.contains("it holds the state of another consumer group and another topology: "),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "found group {orders_group}, fingerprint {fingerprint} (source orders topics=[{orders_topic}]; "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("expected group {refunds_group}, fingerprint "))
            && !stderr.contains(&format!(
                "expected group {refunds_group}, fingerprint {fingerprint}"
            ))
            && stderr.contains(&format!("(source orders topics=[{refunds_topic}]; ")),
        "{stderr}"
    );
    assert!(
        stderr.contains("nothing was processed") && stderr.contains("--adopt-state"),
        "{stderr}"
    );

    // The same group with a changed aggregate is another topology.
    let changed = topology(
        tmp.path(),
        "changed.yaml",
        &orders_group,
        &orders_topic,
        &orders_out,
        "count(*) AS total",
    );
    let refused = runner_command(&bootstrap, &changed, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the state of a topology with other stateful nodes"),
        "{stderr}"
    );
    assert!(
        stderr.contains("aggregates=[count(*) AS total]")
            && stderr.contains("aggregates=[sum(amount) AS total]"),
        "{stderr}"
    );

    // Nothing was processed: the refunds sink is empty and the manifest unchanged.
    let nothing = read_until(&bootstrap, &refunds_out, 1, Duration::from_secs(3), |rs| {
        !rs.is_empty()
    });
    assert!(nothing.is_empty(), "{nothing:?}");
    assert_eq!(
        snapshot_list(&state)["identities"][0]["consumer_group"],
        json!(orders_group)
    );

    // Told to, the refunds run takes the state over (its totals then start from the orders' 50).
    let adopting = start_runner(&bootstrap, &second, &["--adopt-state"]);
    let read = read_until(&bootstrap, &refunds_out, 1, TIMEOUT, |rs| {
        totals(rs).values().filter(|t| **t == 52).count() == 4
    });
    let out = interrupt(adopting);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(
        totals(&read).values().filter(|t| **t == 52).count(),
        4,
        "{read:?}\n{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "--adopt-state: took over the state of group {orders_group}"
        )),
        "{stderr}"
    );
    assert_eq!(
        snapshot_list(&state)["identities"][0]["consumer_group"],
        json!(refunds_group)
    );
}

#[test]
fn snapshots_of_unrecorded_identity_are_refused_before_the_broker_is_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    std::fs::create_dir(&state).unwrap();
    // A Java or Go runner's live state: a gen B container with one entry.
    let mut container = vec![0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 8];
    container.extend_from_slice(b"per-user");
    container.extend_from_slice(&[0, 0, 0, 0]);
    std::fs::write(state.join("partition-0.snapshot"), &container).unwrap();
    let file = topology(
        tmp.path(),
        "t.yaml",
        "g",
        "orders",
        "totals",
        "sum(amount) AS total",
    );
    let out = runner_command("127.0.0.1:1", &file, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "holds 1 snapshot file(s) but no identity manifest krabka-state-identity.json"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("--adopt-state"), "{stderr}");
    assert!(!state.join("krabka-state-identity.json").exists());
    // The bytes Java and Go read are untouched.
    assert_eq!(
        std::fs::read(state.join("partition-0.snapshot")).unwrap(),
        container
    );
}

#[test]
fn a_dir_store_alone_warns_at_start_that_state_stays_on_this_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let file = topology(
        tmp.path(),
        "t.yaml",
        "g",
        "orders",
        "totals",
        "sum(amount) AS total",
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = runner_command(&format!("127.0.0.1:{port}"), &file, &["--timeout", "3s"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "state_store dir: partition state is kept in {} on this machine only",
            tmp.path().join("state").display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("unless every member shares this directory"),
        "{stderr}"
    );
}
