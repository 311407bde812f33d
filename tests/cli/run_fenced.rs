//! A fenced member rejoins instead of exiting (issue 19): under exactly-once,
//! a `run` member whose transactional producer is fenced while its round's
//! transaction is open (another producer initialised its transactional.id,
//! which aborts that transaction; Tansu then times the old producer's commit
//! out and refuses its abort, docs/testing.md) drops the in-memory state of
//! its partitions, leaves and rejoins the group with a new producer, reloads
//! its partitions' committed state from the state topic and carries on: the
//! totals are exactly the truth afterwards, and it exits only when asked.
//! Before the rejoin existed the member exited 1 at this point.

use std::collections::BTreeMap;
use std::time::Duration;

use krabka_streams::io::kafka::test_hooks::{PAUSE_BEFORE_COMMIT_ENV, PAUSE_BEFORE_COMMIT_LOG};

use crate::barrier::fixture::StderrLines;
use crate::run_online::{create_topic, runner_command};
use crate::run_state_kafka::{PARTITIONS, await_truth, produce_batch, signal, wait_exit};
use crate::support::tansu::Tansu;
use crate::support::{unique_name, venv_python};

/// Initialises transactions under `argv[2]`: the broker bumps the id's epoch,
/// fencing the producer that held it and aborting its open transaction.
const FENCE: &str = r#"
import json, sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": sys.argv[2]})
p.init_transactions(20)
print(json.dumps({"fenced": sys.argv[2]}))
"#;

fn topology(dir: &std::path::Path, group: &str, input: &str, output: &str) -> std::path::PathBuf {
    let path = dir.join("topology.yaml");
    std::fs::write(
        &path,
        format!(
            r#"version: 1
settings:
  consumer_group: {group}
  guarantee: exactly-once
  state_store: kafka
nodes:
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

fn wait_for(lines: &StderrLines, needle: &str, within: Duration) {
    let until = std::time::Instant::now() + within;
    while lines.matching(needle).is_empty() {
        assert!(
            std::time::Instant::now() < until,
            "no {needle:?} within {within:?}:\n{}",
            lines.all().join("\n")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_member_fenced_mid_transaction_rejoins_and_the_totals_stay_exact_under_exactly_once() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    create_topic(&bootstrap, &input, PARTITIONS);
    create_topic(&bootstrap, &output, 1);
    let group = unique_name("fenced");
    let machine = tempfile::tempdir().unwrap();
    let file = topology(machine.path(), &group, &input, &output);
    let id = unique_name("txn");
    let x_id = format!("transactional.id={id}");
    let mut truth = BTreeMap::new();

    // State and offsets committed by a first run of the member.
    produce_batch(&bootstrap, &input, 1, &mut truth);
    let mut first = runner_command(&bootstrap, &file, &["-X", &x_id])
        .spawn()
        .unwrap();
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth);
    signal(&first, "-TERM");
    assert_eq!(wait_exit(&mut first).code(), Some(130));

    // The member again, its first transaction held open before the commit.
    let mut member = runner_command(&bootstrap, &file, &["-v", "-X", &x_id])
        .env(PAUSE_BEFORE_COMMIT_ENV, "8s")
        .spawn()
        .unwrap();
    let lines = StderrLines::watch(&mut member);
    produce_batch(&bootstrap, &input, 2, &mut truth);
    wait_for(&lines, PAUSE_BEFORE_COMMIT_LOG, Duration::from_secs(60));
    // Another producer takes the transactional id: the open transaction is aborted.
    venv_python(FENCE, &[bootstrap.as_str(), id.as_str()]);
    wait_for(&lines, "rejoins group", Duration::from_secs(60));

    produce_batch(&bootstrap, &input, 3, &mut truth);
    let seen = await_truth(&bootstrap, &output, &truth);
    let alive = member.try_wait().unwrap().is_none();
    assert!(
        alive,
        "the fenced member exited:\n{}",
        lines.all().join("\n")
    );
    assert_eq!(seen, truth, "{}", lines.all().join("\n"));
    // Tansu does not answer the fenced producer's commit with PRODUCER_FENCED:
    // the commit times out and the abort is refused; either way the member
    // rejoins once.
    let rejoined = lines.matching("rejoins group");
    assert_eq!(rejoined.len(), 1, "{}", lines.all().join("\n"));
    assert!(
        rejoined[0].contains("while committing"),
        "{}",
        lines.all().join("\n")
    );
    signal(&member, "-TERM");
    assert_eq!(
        wait_exit(&mut member).code(),
        Some(130),
        "{}",
        lines.all().join("\n")
    );
}
