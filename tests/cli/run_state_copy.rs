//! The default state store with a `state_dir` on each machine (docs/topology.md
//! "State stores"): the two-machine experiment as a new user writes it
//! (no `state_store` line, each member its own `state_dir`). The state lives in
//! the `<group>-state` topic, so the partitions a stopped member hands over keep
//! their totals on the other machine; each directory is the Java/Go-layout copy
//! of what its member saved, byte for byte the topic's record values.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use rdkafka::message::Message;

use crate::run_online::start_runner;
use crate::run_state_kafka::{PARTITIONS, await_truth, produce_batch, signal, wait_exit};
use crate::support::orders_totals::{orders_to_totals, two_machines, write_topology};
use crate::support::topic_read::TopicRead;
use crate::support::unique_name;

fn topology(machine: &Path, group: &str, input: &str, output: &str) -> std::path::PathBuf {
    let state_dir = format!("state_dir: {}", machine.join("state").display());
    write_topology(
        &machine.join("sums.yaml"),
        group,
        input,
        output,
        &[&state_dir],
    )
}

/// The value of the last record under each `partition-<p>` key of the state topic.
fn live_snapshots(bootstrap: &str, topic: &str) -> BTreeMap<String, Vec<u8>> {
    TopicRead::new(bootstrap, topic, PARTITIONS)
        .deadline(Duration::from_secs(5))
        .until(
            |m| {
                (
                    String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned(),
                    m.payload().map(<[u8]>::to_vec),
                )
            },
            |_| false,
        )
        .into_iter()
        .filter(|(k, _)| k.starts_with("partition-") && !k.contains('.'))
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
}

#[test]
fn by_default_state_follows_the_partition_and_each_state_dir_is_a_copy_of_the_topic() {
    let (_tansu, bootstrap, input, output) = orders_to_totals(PARTITIONS);
    let group = unique_name("sums");
    let (machines, files) = two_machines(|m| topology(m, &group, &input, &output));
    let mut truth = BTreeMap::new();

    produce_batch(&bootstrap, &input, 1, &mut truth);
    let mut a = start_runner(&bootstrap, &files[0], &[]);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth, "a alone");
    let mut b = start_runner(&bootstrap, &files[1], &[]);
    std::thread::sleep(Duration::from_secs(6));
    produce_batch(&bootstrap, &input, 2, &mut truth);
    assert_eq!(await_truth(&bootstrap, &output, &truth), truth, "b joined");

    // a stops halfway: its partitions move to b's machine, whose state_dir never
    // saw them. Before the Kafka store this lost the first half of their totals.
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));
    produce_batch(&bootstrap, &input, 3, &mut truth);
    assert_eq!(
        await_truth(&bootstrap, &output, &truth),
        truth,
        "a stopped (SIGTERM)"
    );
    signal(&b, "-TERM");
    assert_eq!(wait_exit(&mut b).code(), Some(130));
    let stderr = String::from_utf8_lossy(&b.wait_with_output().unwrap().stderr).into_owned();
    assert!(!stderr.contains("on this machine only"), "{stderr}");

    // b owned every partition last and saved each on SIGTERM: its directory holds
    // the Java/Go files, each exactly the container in the topic, and the manifest.
    let topic = live_snapshots(&bootstrap, &format!("{group}-state"));
    assert_eq!(topic.len(), PARTITIONS as usize, "{:?}", topic.keys());
    let state = machines[1].path().join("state");
    for (key, value) in &topic {
        let file = std::fs::read(state.join(format!("{key}.snapshot"))).unwrap();
        assert_eq!(&file, value, "{key}");
    }
    assert!(state.join("krabka-state-identity.json").exists());
    // a's directory holds what a saved: the partitions it owned when it stopped.
    let a_files = std::fs::read_dir(machines[0].path().join("state"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".snapshot"))
        .count();
    assert!(a_files >= 1, "a wrote no local copy");
}
