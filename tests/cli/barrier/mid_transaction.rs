//! Exactly-once across a `kill -9` while the runner's transaction is open, against Tansu.
//! The test hook `KRABKA_STREAMS_TEST_PAUSE_BEFORE_COMMIT` holds the first runner after it
//! has sent and flushed a round's records and added its offsets, before the commit; the test
//! kills it there and starts a second runner with the same `transactional.id`. Tansu's
//! `read_committed` does not hide aborted records, so the outcome of every output record is
//! read from the raw batches and control markers (`support::txn_log`).

use std::time::{Duration, Instant};

use krabka_streams::io::kafka::test_hooks::{PAUSE_BEFORE_COMMIT_ENV, PAUSE_BEFORE_COMMIT_LOG};

use super::fixture::{Cluster, StderrLines, TIMEOUT, assert_code, stderr};
use super::runner::{copying_topology, interrupt, kill_9, runner_command, start};
use crate::support::txn_log::{Outcome, TxnLog};
use crate::support::unique_name;

/// Reads the output log until `done` holds or the timeout passes.
fn log_until(bootstrap: &str, topic: &str, done: impl Fn(&TxnLog) -> bool) -> TxnLog {
    let until = Instant::now() + TIMEOUT;
    loop {
        let log = TxnLog::read(bootstrap, topic, 0);
        if done(&log) || Instant::now() > until {
            return log;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_kill_9_inside_an_open_transaction_is_aborted_by_the_next_runner_and_each_input_is_committed_once()
 {
    let cluster = Cluster::start();
    let (input, output) = (unique_name("lines"), unique_name("copies"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    let dir = tempfile::tempdir().unwrap();
    let topology = copying_topology(dir.path(), &unique_name("g"), &input, &output);
    let bootstrap = cluster.bootstrap();
    let line = |i: usize| format!("line-{i}").into_bytes();
    for i in 0..5 {
        cluster.send(&input, 0, None, Some(&line(i)));
    }

    let mut first = runner_command(&bootstrap, &topology, &[])
        .env(PAUSE_BEFORE_COMMIT_ENV, "120s")
        .spawn()
        .unwrap();
    StderrLines::watch(&mut first).wait_for(PAUSE_BEFORE_COMMIT_LOG);
    // The pause comes after the flush: the round's records are in the log, inside an
    // open transaction (no marker yet), and nothing is committed.
    let open = TxnLog::read(&bootstrap, &output, 0);
    let in_flight = open.values(Outcome::Open);
    assert!(!in_flight.is_empty(), "the open transaction holds records");
    assert_eq!(
        in_flight,
        (0..in_flight.len()).map(line).collect::<Vec<_>>()
    );
    assert!(open.values(Outcome::Committed).is_empty(), "{open:?}");
    assert!(open.markers.is_empty(), "{open:?}");
    let killed = open.with_outcome(Outcome::Open)[0].clone();
    kill_9(first);

    let second = start(&bootstrap, &topology, &[]);
    let log = log_until(&bootstrap, &output, |l| {
        l.values(Outcome::Committed).len() >= 5
    });
    for i in 5..8 {
        cluster.send(&input, 0, None, Some(&line(i)));
    }
    let log_before_stop = log_until(&bootstrap, &output, |l| {
        l.values(Outcome::Committed).len() >= 8
    });
    // A duplicate would be committed right after the last record; give it time to show.
    std::thread::sleep(Duration::from_secs(2));
    let out = interrupt(second);
    assert_code(&out, 130);
    let log = {
        let last = TxnLog::read(&bootstrap, &output, 0);
        assert!(last.records.len() >= log_before_stop.records.len());
        assert!(last.records.len() >= log.records.len());
        last
    };

    // Every input is output exactly once among committed records, in input order.
    assert_eq!(
        log.values(Outcome::Committed),
        (0..8).map(line).collect::<Vec<_>>(),
        "{log:#?}\n{}",
        stderr(&out)
    );
    // The killed runner's records are still in the log, aborted, never committed.
    let aborted = log.with_outcome(Outcome::Aborted);
    assert_eq!(
        aborted.iter().map(|r| r.value.clone()).collect::<Vec<_>>(),
        in_flight,
        "{log:#?}"
    );
    assert!(aborted.iter().all(|r| r.producer_id == killed.producer_id));
    // The second runner's init fenced the first (same producer id, higher epoch) and wrote
    // the abort marker of the open transaction before any record of its own.
    let abort = log
        .markers
        .iter()
        .find(|m| !m.commit)
        .expect("an abort marker for the killed transaction");
    assert_eq!(abort.producer_id, killed.producer_id, "{log:#?}");
    let committed = log.with_outcome(Outcome::Committed);
    assert!(
        committed.iter().all(|r| r.offset > abort.offset),
        "{log:#?}"
    );
    assert!(
        committed.iter().all(
            |r| r.producer_id == killed.producer_id && r.producer_epoch > killed.producer_epoch
        ),
        "{log:#?}"
    );
}
