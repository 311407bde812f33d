//! Barrier alignment with the state in Kafka (`state_store: kafka`, no
//! `state_dir`): the cut epoch's snapshot of each partition is a record
//! `partition-<p>-epoch-<e>` of the state topic, exactly the gen B container,
//! and `run --restore-cut` starts again from it; an epoch the topic does not
//! hold is refused with the epochs it does hold (D15), nothing changed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rdkafka::message::Message;

use super::fixture::{Cluster, assert_code, cut, stderr};
use super::runner::{GROUP, counts, interrupt, metrics, read_until, runner_command, start};
use crate::support::topic_read::TopicRead;
use crate::support::unique_name;

fn topology(dir: &Path, consumer_group: &str, input: &str, output: &str) -> PathBuf {
    topology_with(dir, consumer_group, input, output, "")
}

/// The counting topology with `extra` settings lines (each `  key: value\n`).
fn topology_with(
    dir: &Path,
    consumer_group: &str,
    input: &str,
    output: &str,
    extra: &str,
) -> PathBuf {
    let path = dir.join("count.yaml");
    let text = format!(
        "version: 1
settings:
  consumer_group: {consumer_group}
  barrier_group: {GROUP}
  state_store: kafka
{extra}nodes:
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
"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The value of the last record under `key` in the state topic, once there is one.
fn state_record(bootstrap: &str, topic: &str, key: &str) -> Option<Vec<u8>> {
    TopicRead::new(bootstrap, topic, 1)
        .deadline(Duration::from_secs(30))
        .until(
            |m| {
                (
                    String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned(),
                    m.payload().map(<[u8]>::to_vec),
                )
            },
            |rs| rs.iter().any(|(k, _)| k == key),
        )
        .into_iter()
        .rev()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v)
}

#[test]
fn cut_epochs_are_saved_to_the_state_topic_and_restore_cut_resumes_from_them() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(3);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    for _ in 0..6 {
        cluster.send(&input, 0, None, Some(br#"{"user":"a","amount":1}"#));
    }
    cluster.write_cut(GROUP, 1, &cut(&input, &[(0, 3)], &[]));
    let dir = tempfile::tempdir().unwrap();
    let group = unique_name("g");
    let topology = topology(dir.path(), &group, &input, &output);
    let bootstrap = cluster.bootstrap();
    let state_topic = format!("{group}-state");

    let runner = start(&bootstrap, &topology, &[]);
    let first = read_until(&bootstrap, &output, |r| counts(r).contains(&6));
    let epoch = state_record(&bootstrap, &state_topic, "partition-0-epoch-1")
        .expect("the cut's snapshot in the state topic");
    let out = interrupt(runner);
    assert_code(&out, 130);
    assert!(counts(&first).contains(&3), "{:?}", counts(&first));
    // No state_dir: nothing on disk but the topology.
    assert!(!dir.path().join("state").exists());

    // The record is the gen B container `snapshot dump` decodes: the count at the cut.
    let file = dir.path().join("epoch-1.snapshot");
    std::fs::write(&file, &epoch).unwrap();
    let dump = cluster.run(&[
        "snapshot",
        "dump",
        file.to_str().unwrap(),
        "--output",
        "json",
    ]);
    assert_code(&dump, 0);
    let text = String::from_utf8_lossy(&dump.stdout);
    assert!(
        text.contains(r#""name":"totals""#) && text.contains(r#""aggregates":[{"t":"int","v":3}]"#),
        "{text}"
    );

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

    // A cut whose epoch the topic does not hold: refused, naming the epochs it holds.
    cluster.write_cut(GROUP, 2, &cut(&input, &[(0, 4)], &[]));
    let missing = runner_command(&bootstrap, &topology, &["--restore-cut", "2"])
        .output()
        .unwrap();
    assert_code(&missing, 1);
    assert!(
        stderr(&missing)
            .contains("snapshot epoch 2 is not retained; available epochs by partition: {0=[1]}"),
        "{}",
        stderr(&missing)
    );
}

/// The value sizes of the last record under each key of `topic`, as kcat (Debian's,
/// the independent reader) sees them: −1 is a tombstone.
fn kcat_last_sizes(bootstrap: &str, topic: &str) -> std::collections::BTreeMap<String, i64> {
    let out = std::process::Command::new("/usr/bin/kcat")
        .args([
            "-b", bootstrap, "-C", "-t", topic, "-e", "-q", "-f", "%k\t%S\n",
        ])
        .output()
        .expect("run kcat");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, s)| (k.to_owned(), s.parse().unwrap()))
        .collect()
}

#[test]
fn cut_epochs_beyond_state_epochs_kept_get_tombstones_in_the_state_topic() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(3);
    let (input, output) = (unique_name("orders"), unique_name("totals"));
    cluster.create_topic(&input, 1, false);
    cluster.create_topic(&output, 1, false);
    for epoch in 1..=4 {
        cluster.write_cut(GROUP, epoch, &cut(&input, &[(0, 2 * epoch)], &[]));
    }
    let dir = tempfile::tempdir().unwrap();
    let group = unique_name("g");
    let topology = topology_with(
        dir.path(),
        &group,
        &input,
        &output,
        "  state_epochs_kept: 2\n",
    );
    let bootstrap = cluster.bootstrap();
    let state_topic = format!("{group}-state");
    let runner = start(&bootstrap, &topology, &[]);
    for _ in 0..10 {
        cluster.send(&input, 0, None, Some(br#"{"user":"a","amount":1}"#));
    }
    read_until(&bootstrap, &output, |r| counts(r).contains(&10));
    let epoch_4 = state_record(&bootstrap, &state_topic, "partition-0-epoch-4");
    let out = interrupt(runner);
    assert_code(&out, 130);
    assert!(epoch_4.is_some(), "epoch 4 was saved: {}", stderr(&out));
    let sizes = kcat_last_sizes(&bootstrap, &state_topic);
    assert_eq!(sizes["partition-0-epoch-1"], -1, "{sizes:?}");
    assert_eq!(sizes["partition-0-epoch-2"], -1, "{sizes:?}");
    assert!(sizes["partition-0-epoch-3"] > 0, "{sizes:?}");
    assert!(sizes["partition-0-epoch-4"] > 0, "{sizes:?}");
    assert!(sizes["partition-0"] > 0, "live state stays: {sizes:?}");

    // What the store kept is what a restore can reach: the retired epoch is D15.
    let gone = runner_command(&bootstrap, &topology, &["--restore-cut", "1"])
        .output()
        .unwrap();
    assert_code(&gone, 1);
    assert!(
        stderr(&gone).contains(
            "snapshot epoch 1 is not retained; available epochs by partition: {0=[3, 4]}"
        ),
        "{}",
        stderr(&gone)
    );
}
