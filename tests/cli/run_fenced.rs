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
use crate::run_online::runner_command;
use crate::run_state_kafka::{PARTITIONS, await_truth, produce_batch, signal, wait_exit};
use crate::support::orders_totals::{orders_to_totals, two_machines, write_topology};
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
    let settings = ["guarantee: exactly-once", "state_store: kafka"];
    write_topology(&dir.join("topology.yaml"), group, input, output, &settings)
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
    let (_tansu, bootstrap, input, output) = orders_to_totals(PARTITIONS);
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

/// The other way a member is fenced: it is paused (SIGSTOP) past its session
/// timeout while input keeps coming, its partitions move to the other member,
/// and it resumes. Whether it then runs a round under its stale generation
/// (refused by the group, so it rejoins) or first sees the rebalance (its
/// partitions are lost, then assigned again: what Tansu showed each time this
/// was run), it must not exit, and the totals stay exactly the truth under
/// exactly-once.
#[test]
fn a_member_paused_past_its_session_carries_on_and_the_totals_stay_exact_under_exactly_once() {
    let (_tansu, bootstrap, input, output) = orders_to_totals(PARTITIONS);
    let group = unique_name("paused");
    let (_machines, files) = two_machines(|m| topology(m, &group, &input, &output));
    let ids = [unique_name("txn-a"), unique_name("txn-b")];
    let member = |i: usize| {
        let x_id = format!("transactional.id={}", ids[i]);
        runner_command(&bootstrap, &files[i], &["-v", "-X", &x_id])
            .spawn()
            .unwrap()
    };
    let mut truth = BTreeMap::new();
    produce_batch(&bootstrap, &input, 1, &mut truth);
    let mut a = member(0);
    let a_lines = StderrLines::watch(&mut a);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth);
    let mut b = member(1);
    let b_lines = StderrLines::watch(&mut b);
    wait_for(&b_lines, "assigned:", Duration::from_secs(60));
    produce_batch(&bootstrap, &input, 2, &mut truth);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth);

    // a stops answering for longer than its session (6 s): b takes everything.
    signal(&a, "-STOP");
    std::thread::sleep(Duration::from_secs(9));
    produce_batch(&bootstrap, &input, 3, &mut truth);
    let seen = await_truth(&bootstrap, &output, &truth);
    assert_eq!(
        seen,
        truth,
        "b after a paused:\n{}",
        b_lines.all().join("\n")
    );
    produce_batch(&bootstrap, &input, 4, &mut truth);
    signal(&a, "-CONT");
    std::thread::sleep(Duration::from_secs(8));
    produce_batch(&bootstrap, &input, 5, &mut truth);
    let seen = await_truth(&bootstrap, &output, &truth);
    let report = || {
        format!(
            "a:\n{}\nb:\n{}",
            a_lines.all().join("\n"),
            b_lines.all().join("\n")
        )
    };
    assert!(a.try_wait().unwrap().is_none(), "a exited:\n{}", report());
    assert!(b.try_wait().unwrap().is_none(), "b exited:\n{}", report());
    assert_eq!(seen, truth, "{}", report());
    signal(&a, "-TERM");
    signal(&b, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130), "{}", report());
    assert_eq!(wait_exit(&mut b).code(), Some(130), "{}", report());
}
