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

use crate::run_online::{Read, TIMEOUT, produce, read_until, runner_command, start_runner};
use crate::support::orders_totals::{dumped_totals, orders_to_totals, write_topology};
use crate::support::unique_name;

pub(crate) const USERS: usize = 20;
pub(crate) const PARTITIONS: i32 = 4;

fn topology(
    dir: &Path,
    group: &str,
    input: &str,
    output: &str,
    state_topic: Option<&str>,
) -> std::path::PathBuf {
    let topic_line = state_topic.map(|t| format!("state_topic: {t}"));
    let mut settings = vec!["state_store: kafka"];
    settings.extend(topic_line.as_deref());
    write_topology(
        &dir.join(format!("{group}.yaml")),
        group,
        input,
        output,
        &settings,
    )
}

/// Produces one batch: `count` orders per user, user u always on partition u % 4,
/// amounts that differ per batch so a lost or doubled batch shows in the totals.
pub(crate) fn produce_batch(
    bootstrap: &str,
    topic: &str,
    batch: i64,
    truth: &mut BTreeMap<String, i64>,
) {
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
pub(crate) fn totals(rs: &[Read]) -> BTreeMap<String, i64> {
    rs.iter()
        .map(|r| {
            (
                r.value["user"].as_str().unwrap_or("").to_owned(),
                r.value["total"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

pub(crate) fn signal(child: &Child, name: &str) {
    assert!(
        Command::new("kill")
            .args([name, &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
}

pub(crate) fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
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
pub(crate) fn await_truth(
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
    let (_tansu, bootstrap, input, output) = orders_to_totals(PARTITIONS);
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

    // b and c come back on their machines, then a leaves: ten membership changes.
    let mut b = start_runner(&bootstrap, &files[1], &["-v"]);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 8, &mut truth);
    check("b restarted", &truth, &mut log);
    let mut c = start_runner(&bootstrap, &files[2], &["-v"]);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 9, &mut truth);
    check("c restarted", &truth, &mut log);
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));
    produce_batch(&bootstrap, &input, 10, &mut truth);
    check("a stopped again (SIGTERM)", &truth, &mut log);
    for member in [&mut b, &mut c] {
        signal(member, "-TERM");
        assert_eq!(wait_exit(member).code(), Some(130));
    }

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

/// Creates `topic` (1 partition) with the given topic configs.
pub(crate) fn create_topic_with(bootstrap: &str, topic: &str, configs: &[(&str, &str)]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut new =
        rdkafka::admin::NewTopic::new(topic, 1, rdkafka::admin::TopicReplication::Fixed(1));
    for (k, v) in configs {
        new = new.set(k, v);
    }
    let results = rt
        .block_on(admin.create_topics(&[new], &AdminOptions::new().request_timeout(Some(TIMEOUT))))
        .unwrap();
    for r in results {
        r.unwrap();
    }
}

#[test]
fn a_snapshot_bigger_than_max_message_bytes_round_trips_in_chunks_and_a_deleting_state_topic_is_refused()
 {
    use rdkafka::message::{Headers, Message};
    let (_tansu, bootstrap, input, output) = orders_to_totals(1);
    let group = unique_name("big");
    let state_topic = format!("{group}-state");
    // 20 000 bytes a record: chunks of 20 000 - 16 KiB = 3 616 bytes.
    create_topic_with(
        &bootstrap,
        &state_topic,
        &[
            ("cleanup.policy", "compact"),
            ("max.message.bytes", "20000"),
        ],
    );
    let machines: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let files: Vec<_> = machines
        .iter()
        .map(|m| topology(m.path(), &group, &input, &output, None))
        .collect();
    let users = 400;
    let mut truth: BTreeMap<String, i64> = BTreeMap::new();
    let produce_round = |round: i64, truth: &mut BTreeMap<String, i64>| {
        let records: Vec<(i32, String, String)> = (0..users)
            .map(|u| {
                let user = format!("user-number-{u}");
                let amount = round * 1000 + u;
                *truth.entry(user.clone()).or_default() += amount;
                (
                    0,
                    user.clone(),
                    json!({"user": user, "amount": amount}).to_string(),
                )
            })
            .collect();
        produce(&bootstrap, &input, &records);
    };
    produce_round(1, &mut truth);
    let mut a = start_runner(&bootstrap, &files[0], &[]);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth);
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));

    // The snapshot is in chunks, then a manifest naming them.
    let records = crate::support::topic_read::TopicRead::new(&bootstrap, &state_topic, 1)
        .deadline(Duration::from_secs(5))
        .until(
            |m| {
                let chunks = m.headers().and_then(|hs| {
                    hs.iter()
                        .find(|h| h.key == "krabka.state.chunks")
                        .and_then(|h| h.value.map(|v| String::from_utf8_lossy(v).into_owned()))
                });
                (
                    String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned(),
                    m.payload().map(<[u8]>::to_vec),
                    chunks,
                )
            },
            |_| false,
        );
    let manifest = records
        .iter()
        .rev()
        .find(|(k, _, _)| k == "partition-0")
        .expect("a manifest");
    let chunks = manifest.2.clone().expect("the snapshot was chunked");
    let count: usize = chunks.split('/').nth(1).unwrap().parse().unwrap();
    assert!(count >= 3, "{chunks}");
    // The chunks, in order, are exactly the gen B container `snapshot dump` decodes.
    let version = chunks.split('/').next().unwrap();
    let mut container = Vec::new();
    for i in 0..count {
        let key = format!("partition-0.chunk-{version}-{i}");
        let (_, value, _) = records
            .iter()
            .rev()
            .find(|(k, _, _)| *k == key)
            .expect("every chunk");
        assert!(value.as_ref().unwrap().len() <= 3616);
        container.extend_from_slice(value.as_ref().unwrap());
    }
    let file = machines[0].path().join("assembled.snapshot");
    std::fs::write(&file, &container).unwrap();
    let text = dumped_totals(&file);
    assert!(
        text.contains("per-user") && text.contains("user-number-399"),
        "{text}"
    );

    // A writer killed mid-way left two chunks of a newer snapshot and no manifest:
    // the next owner must take the previous complete snapshot, not these.
    crate::support::admin::produce_bytes(
        &bootstrap,
        &state_topic,
        &[
            (
                0,
                "partition-0.chunk-1-0".to_owned(),
                vec![0, 0, 0, 1, 0, 0, 0, 9],
            ),
            (0, "partition-0.chunk-1-1".to_owned(), vec![0xff; 3000]),
        ],
    );
    // Another member restores it from the chunks and carries on.
    produce_round(2, &mut truth);
    let mut b = start_runner(&bootstrap, &files[1], &[]);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth);
    signal(&b, "-TERM");
    assert_eq!(wait_exit(&mut b).code(), Some(130));

    // A state topic that deletes by retention is refused before anything runs.
    let other = unique_name("deleting");
    create_topic_with(
        &bootstrap,
        &format!("{other}-state"),
        &[("cleanup.policy", "delete")],
    );
    let file = topology(
        machines[1].path(),
        &other,
        &input,
        &unique_name("out"),
        None,
    );
    let refused = runner_command(&bootstrap, &file, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("the state topic {other}-state exists with cleanup.policy=delete: a state topic must be compacted")),
        "{stderr}"
    );
}

#[test]
fn exactly_once_totals_equal_the_truth_across_handoffs_and_a_kill_9_mid_stream() {
    let (_tansu, bootstrap, input, output) = orders_to_totals(PARTITIONS);
    let group = unique_name("eos-sums");
    let machines: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let files: Vec<_> = machines
        .iter()
        .map(|m| {
            let file = topology(m.path(), &group, &input, &output, None);
            let text = std::fs::read_to_string(&file)
                .unwrap()
                .replace("settings:\n", "settings:\n  guarantee: exactly-once\n");
            std::fs::write(&file, text).unwrap();
            file
        })
        .collect();
    // Members side by side need their own transactional ids; a restart reuses its own.
    let ids = [unique_name("txn-a"), unique_name("txn-b")];
    let member = |i: usize| {
        start_runner(
            &bootstrap,
            &files[i],
            &["-v", "-X", &format!("transactional.id={}", ids[i])],
        )
    };
    let mut truth = BTreeMap::new();
    let mut log = String::new();
    let check = |what: &str, truth: &BTreeMap<String, i64>, log: &mut String| {
        let seen = await_truth(&bootstrap, &output, truth);
        log.push_str(&format!("{what}: {seen:?}\n"));
        assert_eq!(&seen, truth, "after {what}\n{log}");
    };

    produce_batch(&bootstrap, &input, 1, &mut truth);
    let mut a = member(0);
    check("a alone", &truth, &mut log);
    let b = member(1);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 2, &mut truth);
    check("b joined", &truth, &mut log);

    // kill -9 a while it processes: its open transaction (outputs, offsets and
    // snapshots) never commits. Its restart aborts it; the totals stay exact.
    produce_batch(&bootstrap, &input, 3, &mut truth);
    std::thread::sleep(Duration::from_millis(300));
    a.kill().unwrap();
    a.wait().unwrap();
    let mut a = member(0);
    produce_batch(&bootstrap, &input, 4, &mut truth);
    check("a killed mid-stream and restarted", &truth, &mut log);

    // b stops cleanly: everything moves to a with its state.
    signal(&b, "-TERM");
    let mut b = b;
    assert_eq!(wait_exit(&mut b).code(), Some(130));
    produce_batch(&bootstrap, &input, 5, &mut truth);
    check("b stopped (SIGTERM)", &truth, &mut log);
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));
}
