//! `state_store: kafka` end to end against Tansu (docs/topology.md "State in
//! Kafka"): the issue's experiment. A group-by `sum(amount)` per user over a
//! 4-partition topic, run by members without any shared directory that join,
//! stop with SIGTERM, are killed with kill -9 and restart while input is
//! produced; every user's final total is compared with the truth the test
//! computes. The state topic is created compacted; another group's state in it
//! is refused, naming both.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use serde_json::json;

use crate::run_online::{
    Read, TIMEOUT, create_topic, produce, read_until, runner_command, start_runner,
};
use crate::support::tansu::Tansu;
use crate::support::unique_name;

const USERS: usize = 20;
const PARTITIONS: i32 = 4;

fn topology(
    dir: &Path,
    group: &str,
    input: &str,
    output: &str,
    state_topic: Option<&str>,
) -> std::path::PathBuf {
    let path = dir.join(format!("{group}.yaml"));
    let topic_line = state_topic
        .map(|t| format!("  state_topic: {t}\n"))
        .unwrap_or_default();
    std::fs::write(
        &path,
        format!(
            r#"version: 1
settings:
  consumer_group: {group}
  state_store: kafka
{topic_line}nodes:
  - source: orders
    topics: [{input}]
    value: json
  - group_by: per-user
    parent: orders
    keys: [user]
    aggregates: [sum(amount) AS total]
  - sink: out
    parent: per-user
    topic: {output}
    value: json
"#
        ),
    )
    .unwrap();
    path
}

/// Produces one batch: `count` orders per user, user u always on partition u % 4,
/// amounts that differ per batch so a lost or doubled batch shows in the totals.
fn produce_batch(bootstrap: &str, topic: &str, batch: i64, truth: &mut BTreeMap<String, i64>) {
    let mut records = Vec::new();
    for u in 0..USERS {
        let user = format!("u{u}");
        let amount = batch * 100 + u as i64 + 1;
        records.push((
            (u as i32) % PARTITIONS,
            user.clone(),
            json!({"user": user, "amount": amount}).to_string(),
        ));
        *truth.entry(user).or_default() += amount;
    }
    produce(bootstrap, topic, &records);
}

/// The last total per user the sink shows.
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

fn signal(child: &Child, name: &str) {
    assert!(
        Command::new("kill")
            .args([name, &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let until = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < until,
            "a runner did not stop within {TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reads the sink until every user's last total is the truth (or the deadline).
fn await_truth(
    bootstrap: &str,
    output: &str,
    truth: &BTreeMap<String, i64>,
) -> BTreeMap<String, i64> {
    totals(&read_until(
        bootstrap,
        output,
        1,
        Duration::from_secs(90),
        |rs| &totals(rs) == truth,
    ))
}

fn cleanup_policy(bootstrap: &str, topic: &str) -> Option<String> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let configs = rt
        .block_on(admin.describe_configs(
            &[ResourceSpecifier::Topic(topic)],
            &AdminOptions::new().request_timeout(Some(TIMEOUT)),
        ))
        .unwrap();
    configs
        .into_iter()
        .next()?
        .ok()?
        .get("cleanup.policy")
        .and_then(|e| e.value.clone())
}

#[test]
fn state_follows_its_partition_across_members_with_no_shared_directory() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    create_topic(&bootstrap, &input, PARTITIONS);
    create_topic(&bootstrap, &output, 1);
    let group = unique_name("sums");
    // Each member is its own machine: its own working directory, no state_dir.
    let machines: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let files: Vec<_> = machines
        .iter()
        .map(|m| topology(m.path(), &group, &input, &output, None))
        .collect();
    let mut truth = BTreeMap::new();
    let mut log = String::new();
    let check = |what: &str, truth: &BTreeMap<String, i64>, log: &mut String| {
        let seen = await_truth(&bootstrap, &output, truth);
        log.push_str(&format!("{what}: {seen:?}\n"));
        assert_eq!(&seen, truth, "after {what}\n{log}");
    };

    produce_batch(&bootstrap, &input, 1, &mut truth);
    let mut a = start_runner(&bootstrap, &files[0], &["-v"]);
    check("a alone", &truth, &mut log);
    assert_eq!(
        cleanup_policy(&bootstrap, &format!("{group}-state")).as_deref(),
        Some("compact")
    );

    // b joins: partitions move from a to b with their state.
    let mut b = start_runner(&bootstrap, &files[1], &["-v"]);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 2, &mut truth);
    check("b joined", &truth, &mut log);

    // a stops cleanly: all its partitions go to b.
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));
    produce_batch(&bootstrap, &input, 3, &mut truth);
    check("a stopped (SIGTERM)", &truth, &mut log);

    // c joins, then b stops cleanly: everything ends on c.
    let mut c = start_runner(&bootstrap, &files[2], &["-v"]);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 4, &mut truth);
    check("c joined", &truth, &mut log);
    signal(&b, "-TERM");
    assert_eq!(wait_exit(&mut b).code(), Some(130));
    produce_batch(&bootstrap, &input, 5, &mut truth);
    check("b stopped (SIGTERM)", &truth, &mut log);

    // a restarts on its machine (its partitions' state comes from the topic).
    let mut a = start_runner(&bootstrap, &files[0], &["-v"]);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 6, &mut truth);
    check("a restarted", &truth, &mut log);

    // kill -9 c: its state was saved before each commit, so nothing is lost. A
    // record may count twice (at-least-once) only if the kill fell between a
    // save and its commit; the sink is idle here, so the totals stay exact.
    c.kill().unwrap();
    c.wait().unwrap();
    produce_batch(&bootstrap, &input, 7, &mut truth);
    check("c killed (kill -9)", &truth, &mut log);

    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));

    // Another group pointed at this state topic is refused, naming both owners.
    let other = unique_name("other");
    let foreign = topology(
        machines[1].path(),
        &other,
        &input,
        &unique_name("other-out"),
        Some(&format!("{group}-state")),
    );
    let refused = runner_command(&bootstrap, &foreign, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("holds the state of group {group}, fingerprint ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("expected group {other}, fingerprint ")),
        "{stderr}"
    );
}
