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
    let path = dir.join("count.yaml");
    let text = format!(
        "version: 1
settings:
  consumer_group: {consumer_group}
  barrier_group: {GROUP}
  state_store: kafka
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
