//! `run FILE -b …` with a barrier group and with exactly-once, against Tansu: cuts are
//! written to `__barrier_state` in the broker's format; the runner holds records at the cut,
//! saves `partition-<p>-epoch-<e>.snapshot`, and `run --restore-cut` starts again from
//! that state and the cut offsets. Exactly-once is checked across a `kill -9` and a restart
//! by counting the outputs a `read_committed` reader sees (Tansu does not hide aborted
//! records, so the kill here happens between transactions; `mid_transaction.rs` kills a
//! runner inside an open one and reads the control markers) and by the offset gaps that the
//! transaction markers leave in the output topic. A runner fenced by a newer one with the
//! same `transactional.id` stops with exit 1.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use serde_json::Value;

use super::fixture::{Cluster, TIMEOUT, assert_code, cut, stderr};
use crate::support::topic_read::TopicRead;
use crate::support::unique_name;

pub(super) const GROUP: &str = "audit";

pub(super) fn counting_topology(
    dir: &Path,
    consumer_group: &str,
    input: &str,
    output: &str,
) -> PathBuf {
    let path = dir.join("count.yaml");
    let text = format!(
        "version: 1
settings:
  consumer_group: {consumer_group}
  barrier_group: {GROUP}
  state_store: dir
  state_dir: {state}
nodes:
  - source: orders
    topics: [{input}]
    value: json
    columns:
      user: utf8
      amount: int64
  - group_by: totals
    parent: orders
    keys: [user]
    aggregates: [count(*) AS n]
  - sink: out
    parent: totals
    topic: {output}
    value: json
",
        state = dir.join("state").display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

pub(super) fn copying_topology(
    dir: &Path,
    consumer_group: &str,
    input: &str,
    output: &str,
) -> PathBuf {
    let path = dir.join(format!("copy-{consumer_group}.yaml"));
    let text = format!(
        "version: 1
settings:
  consumer_group: {consumer_group}
  guarantee: exactly-once
nodes:
  - source: lines
    topics: [{input}]
    value: string
  - pass_through: copy
    parent: lines
    topic: {output}
"
    );
    std::fs::write(&path, text).unwrap();
    path
}

pub(super) fn runner_command(bootstrap: &str, topology: &Path, extra: &[&str]) -> Command {
    let json = ["--timeout", "20s", "--output", "json"];
    let mut command = crate::run_online::runner_command(bootstrap, topology, &json);
    command.args(extra).env_remove("KRABKA_OUTPUT");
    command
}

pub(super) fn start(bootstrap: &str, topology: &Path, extra: &[&str]) -> Child {
    runner_command(bootstrap, topology, extra).spawn().unwrap()
}

pub(super) use crate::run_online::interrupt;

pub(super) fn kill_9(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// (offset, value) of every record of partition 0 of `topic` a `read_committed` reader sees,
/// read until `done` holds or the timeout passes.
pub(super) fn read_until(
    bootstrap: &str,
    topic: &str,
    done: impl Fn(&[(i64, Vec<u8>)]) -> bool,
) -> Vec<(i64, Vec<u8>)> {
    TopicRead::new(bootstrap, topic, 1).deadline(TIMEOUT).until(
        |m| (m.offset(), m.payload().unwrap_or_default().to_vec()),
        done,
    )
}

fn high_watermark(bootstrap: &str, topic: &str) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    consumer.fetch_watermarks(topic, 0, TIMEOUT).unwrap().1
}

pub(super) fn counts(records: &[(i64, Vec<u8>)]) -> Vec<i64> {
    records
        .iter()
        .map(|(_, v)| {
            let row: Value = serde_json::from_slice(v).unwrap();
            row["n"]
                .as_i64()
                .unwrap_or_else(|| panic!("no count in {row}"))
        })
        .collect()
}

pub(super) fn wait_for(path: &Path) {
    let until = Instant::now() + TIMEOUT;
    while !path.exists() {
        assert!(Instant::now() < until, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(super) fn metrics(output: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", stderr(output)));
    doc["data"]["metrics"].clone()
}

#[test]
fn run_snapshots_at_the_cut_and_restore_cut_resumes_from_that_state_and_offset() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(3);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    for _ in 0..6 {
        cluster.send(&input, 0, None, Some(br#"{"user":"a","amount":1}"#));
    }
    // The cut sits at offset 3: records 0..=2 are before it.
    cluster.write_cut(GROUP, 1, &cut(&input, &[(0, 3)], &[]));
    let dir = tempfile::tempdir().unwrap();
    let topology = counting_topology(dir.path(), &unique_name("g"), &input, &output);
    let bootstrap = cluster.bootstrap();

    let runner = start(&bootstrap, &topology, &[]);
    let first = read_until(&bootstrap, &output, |r| counts(r).contains(&6));
    let snapshot = dir.path().join("state/partition-0-epoch-1.snapshot");
    wait_for(&snapshot);
    let out = interrupt(runner);
    assert_code(&out, 130);
    assert_eq!(counts(&first).last(), Some(&6), "{}", stderr(&out));
    assert!(
        counts(&first).contains(&3),
        "the round stops at the cut, so a total of 3 is emitted: {:?}",
        counts(&first)
    );

    let dump = cluster.run(&[
        "snapshot",
        "dump",
        snapshot.to_str().unwrap(),
        "--output",
        "json",
    ]);
    assert_code(&dump, 0);

    let runner = start(&bootstrap, &topology, &["--restore-cut", "1"]);
    let all = read_until(&bootstrap, &output, |r| {
        r.len() > first.len() && counts(r).last() == Some(&6)
    });
    let out = interrupt(runner);
    assert_code(&out, 130);
    let again = counts(&all[first.len()..]);
    assert_eq!(again.last(), Some(&6), "{}", stderr(&out));
    assert!(
        again.iter().all(|n| *n > 3),
        "restarted from the cut state (3), not from zero: {again:?}"
    );
    assert_eq!(metrics(&out)["input_records"], 3, "restarted at offset 3");
}

#[test]
fn restore_cut_fails_clearly_without_the_cut_or_its_snapshot_and_changes_nothing() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(1);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    cluster.write_cut(GROUP, 2, &cut(&input, &[(0, 0)], &[]));
    let dir = tempfile::tempdir().unwrap();
    let topology = counting_topology(dir.path(), &unique_name("g"), &input, &output);
    let bootstrap = cluster.bootstrap();

    let no_cut = runner_command(&bootstrap, &topology, &["--restore-cut", "9"])
        .output()
        .unwrap();
    assert_code(&no_cut, 1);
    assert!(
        stderr(&no_cut).contains("barrier group audit has no complete cut at epoch 9"),
        "{}",
        stderr(&no_cut)
    );

    let no_snapshot = runner_command(&bootstrap, &topology, &["--restore-cut", "latest"])
        .output()
        .unwrap();
    assert_code(&no_snapshot, 1);
    assert!(
        stderr(&no_snapshot).contains("snapshot epoch 2 is not retained"),
        "{}",
        stderr(&no_snapshot)
    );

    let plain = copying_topology(dir.path(), &unique_name("g"), &input, &output);
    let no_group = runner_command(&bootstrap, &plain, &["--restore-cut", "latest"])
        .output()
        .unwrap();
    assert_code(&no_group, 2);
    assert!(
        stderr(&no_group).contains("restoring to a cut requires a barrier group"),
        "{}",
        stderr(&no_group)
    );
}

#[test]
fn exactly_once_writes_each_output_once_across_a_kill_and_a_restart() {
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

    let runner = start(&bootstrap, &topology, &[]);
    let seen = read_until(&bootstrap, &output, |r| r.len() >= 5);
    assert_eq!(seen.len(), 5);
    // Give the transaction of the last round time to commit its offsets too.
    std::thread::sleep(Duration::from_secs(1));
    kill_9(runner);

    for i in 5..10 {
        cluster.send(&input, 0, None, Some(&line(i)));
    }
    let runner = start(&bootstrap, &topology, &[]);
    let all = read_until(&bootstrap, &output, |r| r.len() >= 10);
    // Anything written twice would arrive shortly after the tenth record.
    std::thread::sleep(Duration::from_secs(2));
    let out = interrupt(runner);
    let all = {
        let more = read_until(&bootstrap, &output, |r| r.len() > all.len());
        if more.len() > all.len() { more } else { all }
    };
    let values: Vec<Vec<u8>> = all.iter().map(|(_, v)| v.clone()).collect();
    assert_eq!(
        values,
        (0..10).map(line).collect::<Vec<_>>(),
        "{}",
        stderr(&out)
    );
    assert!(
        high_watermark(&bootstrap, &output) > 10,
        "transaction markers leave offset gaps in the output"
    );
}

/// Issue 19 changed this: a runner fenced by a newer one with its
/// transactional id no longer stops at once. It rejoins with a new producer
/// (which fences the newer one in turn); when records keep coming the two
/// fence each other, and the first to be fenced by a producer again within 5
/// minutes of rejoining stops with exit 1 naming the shared transactional.id,
/// while the other carries on.
#[test]
fn runners_sharing_a_transactional_id_fence_each_other_once_then_one_stops_with_exit_1_naming_it() {
    let cluster = Cluster::start();
    let (input, output) = (unique_name("lines"), unique_name("copies"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    let dir = tempfile::tempdir().unwrap();
    let bootstrap = cluster.bootstrap();
    let transactional_id = unique_name("tid");
    let id_arg = format!("transactional.id={transactional_id}");
    // Each runner has its own consumer group; only the transactional id is shared.
    let older = copying_topology(dir.path(), &unique_name("g"), &input, &output);
    let newer = copying_topology(dir.path(), &unique_name("g"), &input, &output);

    let mut first = start(&bootstrap, &older, &["-X", &id_arg]);
    cluster.send(&input, 0, None, Some(b"one"));
    read_until(&bootstrap, &output, |r| !r.is_empty());
    let mut second = start(&bootstrap, &newer, &["-X", &id_arg]);
    // The newer runner copies "one" too once it has fenced the older one.
    read_until(&bootstrap, &output, |r| r.len() >= 2);

    // Records keep coming until one of them gives up.
    let until = Instant::now() + Duration::from_secs(150);
    let mut i = 0;
    let (stopped, survivor) = loop {
        if first.try_wait().unwrap().is_some() {
            break (first, second);
        }
        if second.try_wait().unwrap().is_some() {
            break (second, first);
        }
        if Instant::now() > until {
            first.kill().unwrap();
            second.kill().unwrap();
            panic!(
                "neither runner stopped:\nfirst:\n{}\nsecond:\n{}",
                stderr(&first.wait_with_output().unwrap()),
                stderr(&second.wait_with_output().unwrap())
            );
        }
        i += 1;
        cluster.send(&input, 0, None, Some(format!("line {i}").as_bytes()));
        std::thread::sleep(Duration::from_millis(500));
    };
    let stopped = stopped.wait_with_output().unwrap();
    assert_code(&stopped, 1);
    let text = stderr(&stopped);
    assert!(
        text.contains("rejoins group")
            && text.contains("producer fenced")
            && text.contains(
                "again within 300s of rejoining: another runner uses the same transactional.id"
            ),
        "{text}"
    );
    let out = interrupt(survivor);
    assert_code(&out, 130);
}
