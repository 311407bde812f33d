//! `snapshot restore|prune|restore-cut --state-topic` against Tansu, checked
//! with kcat (Debian's, the independent reader): a dry run, and a replace
//! without `--yes`, leave the topic's records exactly as they were; a restore
//! writes the epoch's container byte for byte under the live key; a prune
//! tombstones exactly the epoch keys the directory rule names; a cut restore
//! writes live state recording the cut offsets and commits them; state of
//! another group, or of another fingerprint, is refused naming both owners.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use krabka_streams::engine::columnar::snapshot::container;
use krabka_streams::engine::columnar::snapshot::identity::StateIdentity;

use crate::barrier::fixture::{Cluster, assert_code, cut, json_data, stderr};
use crate::support::admin::committed_offsets;
use crate::support::unique_name;

const KCAT: &str = "/usr/bin/kcat";

/// One record as kcat prints it: partition, offset, key, value length (−1: tombstone), headers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    partition: i32,
    offset: i64,
    key: String,
    size: i64,
    headers: String,
}

fn kcat_rows(bootstrap: &str, topic: &str) -> Vec<Row> {
    let out = Command::new(KCAT)
        .args(["-b", bootstrap, "-C", "-t", topic, "-e", "-q"])
        // Header values hold newlines (the node lines): records end with a marker.
        .args(["-f", "%p\t%o\t%k\t%S\t%h<END>\n"])
        .output()
        .expect("run kcat");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rows: Vec<Row> = String::from_utf8(out.stdout)
        .unwrap()
        .split("<END>\n")
        .filter(|line| !line.is_empty())
        .map(|line| {
            let f: Vec<&str> = line.splitn(5, '\t').collect();
            Row {
                partition: f[0].parse().unwrap(),
                offset: f[1].parse().unwrap(),
                key: f[2].to_owned(),
                size: f[3].parse().unwrap(),
                headers: f.get(4).copied().unwrap_or_default().to_owned(),
            }
        })
        .collect();
    rows.sort_by_key(|r| (r.partition, r.offset));
    rows
}

/// The value bytes of one record, as kcat reads them.
fn kcat_value(bootstrap: &str, topic: &str, row: &Row) -> Vec<u8> {
    let out = Command::new(KCAT)
        .args(["-b", bootstrap, "-C", "-t", topic, "-e", "-q", "-c", "1"])
        .args(["-p", &row.partition.to_string()])
        .args(["-o", &row.offset.to_string()])
        .args(["-D", "", "-f", "%s"])
        .output()
        .expect("run kcat");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The last record under each key.
fn last_by_key(rows: &[Row]) -> BTreeMap<String, Row> {
    rows.iter().map(|r| (r.key.clone(), r.clone())).collect()
}

fn identity(nodes: &str) -> StateIdentity {
    StateIdentity {
        consumer_group: "orders-app".into(),
        nodes: vec![
            "source orders topics=[orders]".into(),
            format!("group_by per-user keys=[user] aggregates=[{nodes}]"),
        ],
    }
}

fn state(n: u8) -> Vec<u8> {
    container::encode(&BTreeMap::from([("per-user".to_owned(), vec![n; 40])]))
}

/// A directory holding `files` (name -> container) and the identity manifest.
fn dir_of(root: &Path, name: &str, identity: &StateIdentity, files: &[(&str, Vec<u8>)]) -> String {
    let dir = root.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("krabka-state-identity.json"), identity.encode()).unwrap();
    for (file, bytes) in files {
        std::fs::write(dir.join(file), bytes).unwrap();
    }
    dir.to_str().unwrap().to_owned()
}

#[test]
fn restore_prune_and_restore_cut_change_a_state_topic_as_they_change_a_directory() {
    let mut cluster = Cluster::start();
    cluster.create_barrier_state(3);
    let bootstrap = cluster.bootstrap();
    let input = unique_name("orders");
    cluster.create_topic(&input, 2, false);
    let topic = unique_name("orders-app-state");
    cluster.create_topic(&topic, 2, true);
    let tmp = tempfile::tempdir().unwrap();
    let owner = identity("count(*) AS n");
    let from = dir_of(
        tmp.path(),
        "from",
        &owner,
        &[
            ("partition-0-epoch-1.snapshot", state(1)),
            ("partition-0-epoch-2.snapshot", state(2)),
            ("partition-1-epoch-1.snapshot", state(11)),
            ("partition-1-epoch-2.snapshot", state(12)),
            ("partition-0.snapshot", state(9)),
        ],
    );
    assert_code(
        &cluster.run(&[
            "snapshot",
            "copy",
            "--from-dir",
            &from,
            "--to-topic",
            &topic,
        ]),
        0,
    );
    let before = kcat_rows(&bootstrap, &topic);
    assert_eq!(before.len(), 5, "{before:?}");
    let restore = [
        "snapshot",
        "restore",
        "--state-topic",
        &topic,
        "--partition",
        "0-1",
        "--from-epoch",
        "2",
        "--to-epoch",
        "live",
        "--output",
        "json",
    ];

    // A dry run reports the plan and produces nothing.
    let dry = cluster.run(&[&restore[..], &["--dry-run"]].concat());
    assert_code(&dry, 0);
    let data = json_data(&dry);
    assert_eq!(data["to"], format!("state topic {topic}"));
    assert_eq!(data["written"], 0);
    let files = data["files"].as_array().unwrap();
    let plan: Vec<(&str, &str, &str)> = files
        .iter()
        .map(|f| {
            (
                f["target"].as_str().unwrap(),
                f["source"].as_str().unwrap(),
                f["action"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        plan,
        [
            ("partition-0", "partition-0-epoch-2", "replace"),
            ("partition-1", "partition-1-epoch-2", "create")
        ]
    );
    assert_eq!(kcat_rows(&bootstrap, &topic), before);

    // Replacing live state needs --yes: on a non-interactive stdin, exit 2, nothing produced.
    let refused = cluster.run(&restore);
    assert_code(&refused, 2);
    assert!(stderr(&refused).contains("--yes"), "{}", stderr(&refused));
    assert_eq!(kcat_rows(&bootstrap, &topic), before);

    // A missing epoch: D15, worded as for a directory, nothing produced.
    let missing = cluster.run(&[
        "snapshot",
        "restore",
        "--state-topic",
        &topic,
        "--partition",
        "0-1",
        "--from-epoch",
        "7",
        "--to-epoch",
        "live",
        "--yes",
    ]);
    assert_code(&missing, 1);
    assert!(
        stderr(&missing).contains(
            "snapshot epoch 7 is not retained; available epochs by partition: {0=[1, 2], 1=[1, 2]}"
        ),
        "{}",
        stderr(&missing)
    );
    assert_eq!(kcat_rows(&bootstrap, &topic), before);

    let done = cluster.run(&[&restore[..], &["--yes"]].concat());
    assert_code(&done, 0);
    assert_eq!(json_data(&done)["written"], 2);
    let after = kcat_rows(&bootstrap, &topic);
    let last = last_by_key(&after);
    assert_eq!(
        kcat_value(&bootstrap, &topic, &last["partition-0"]),
        state(2)
    );
    assert_eq!(
        kcat_value(&bootstrap, &topic, &last["partition-1"]),
        state(12)
    );
    assert_eq!(
        last["partition-1"].partition, 1,
        "logical partition p lives in p % partitions"
    );
    assert!(last["partition-0"].headers.contains(&owner.fingerprint()));

    // prune --keep 1: the epoch-1 keys get tombstones, nothing else is touched.
    let prune = [
        "snapshot",
        "prune",
        "--state-topic",
        &topic,
        "--keep",
        "1",
        "--output",
        "json",
    ];
    let dry = cluster.run(&[&prune[..], &["--dry-run"]].concat());
    assert_code(&dry, 0);
    let data = json_data(&dry);
    let planned: Vec<&str> = data["delete"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(planned, ["partition-0-epoch-1", "partition-1-epoch-1"]);
    assert_eq!(data["deleted"], 0);
    assert_eq!(kcat_rows(&bootstrap, &topic), after);
    let pruned = cluster.run(&[&prune[..], &["--yes"]].concat());
    assert_code(&pruned, 0);
    assert_eq!(json_data(&pruned)["deleted"], 2);
    let rows = kcat_rows(&bootstrap, &topic);
    assert_eq!(rows.len(), after.len() + 2, "two tombstones: {rows:?}");
    let last = last_by_key(&rows);
    assert_eq!(last["partition-0-epoch-1"].size, -1);
    assert_eq!(last["partition-1-epoch-1"].size, -1);
    for kept in [
        "partition-0-epoch-2",
        "partition-1-epoch-2",
        "partition-0",
        "partition-1",
    ] {
        assert!(last[kept].size > 0, "{kept} was touched: {rows:?}");
    }

    // restore-cut: a dry run by default; the group's state only; with --yes the live
    // snapshots record the cut offsets, and the group's offsets are set to them.
    let barrier = unique_name("app-barrier");
    cluster.write_cut(&barrier, 2, &cut(&input, &[(0, 5), (1, 7)], &[]));
    let restore_cut = |consumer_group: &str, yes: bool| {
        let mut args = vec![
            "snapshot",
            "restore-cut",
            "--group",
            &barrier,
            "--epoch",
            "latest",
            "--state-topic",
            &topic,
            "--consumer-group",
            consumer_group,
            "--output",
            "json",
        ];
        if yes {
            args.push("--yes");
        }
        cluster.run(&args)
    };
    let before = kcat_rows(&bootstrap, &topic);
    let foreign = restore_cut("billing-app", true);
    assert_code(&foreign, 1);
    assert!(
        stderr(&foreign).contains(&format!(
            "holds the state of group orders-app, fingerprint {}; expected the state of group billing-app",
            owner.fingerprint()
        )),
        "{}",
        stderr(&foreign)
    );
    let planned = restore_cut("orders-app", false);
    assert_code(&planned, 0);
    let data = json_data(&planned);
    assert_eq!(data["executed"], false);
    assert_eq!(data["state_topic"], topic.as_str());
    assert_eq!(data["files"].as_array().unwrap().len(), 2);
    assert_eq!(kcat_rows(&bootstrap, &topic), before);
    assert_eq!(
        committed_offsets(&bootstrap, "orders-app", &input, 2),
        BTreeMap::from([(0, None), (1, None)])
    );
    let restored = restore_cut("orders-app", true);
    assert_code(&restored, 0);
    assert_eq!(json_data(&restored)["executed"], true);
    let rows = kcat_rows(&bootstrap, &topic);
    assert_eq!(rows.len(), before.len() + 2);
    let last = last_by_key(&rows);
    assert_eq!(
        kcat_value(&bootstrap, &topic, &last["partition-0"]),
        state(2)
    );
    assert_eq!(
        kcat_value(&bootstrap, &topic, &last["partition-1"]),
        state(12)
    );
    assert!(
        last["partition-0"]
            .headers
            .contains(&format!("krabka.state.offsets={input}:0:5")),
        "{:?}",
        last["partition-0"]
    );
    assert!(
        last["partition-1"]
            .headers
            .contains(&format!("krabka.state.offsets={input}:1:7")),
        "{:?}",
        last["partition-1"]
    );
    assert_eq!(
        committed_offsets(&bootstrap, "orders-app", &input, 2),
        BTreeMap::from([(0, Some(5)), (1, Some(7))])
    );

    // Live state of a changed topology (same group, other fingerprint) is never
    // replaced by this owner's epoch: refused naming both fingerprints.
    let changed = identity("sum(amount) AS n");
    let other = dir_of(
        tmp.path(),
        "other",
        &changed,
        &[("partition-0.snapshot", state(30))],
    );
    assert_code(
        &cluster.run(&[
            "snapshot",
            "copy",
            "--from-dir",
            &other,
            "--to-topic",
            &topic,
            "--yes",
        ]),
        0,
    );
    let before = kcat_rows(&bootstrap, &topic);
    let mixed = cluster.run(&[&restore[..], &["--yes"]].concat());
    assert_code(&mixed, 1);
    let text = stderr(&mixed);
    assert!(
        text.contains(&format!(
            "partition-0 (offset {}) holds the state of group orders-app, fingerprint {}",
            last_by_key(&before)["partition-0"].offset,
            changed.fingerprint()
        )) && text.contains(&format!(
            "partition-0-epoch-2 holds the state of group orders-app, fingerprint {}",
            owner.fingerprint()
        )),
        "{text}"
    );
    assert_eq!(kcat_rows(&bootstrap, &topic), before);
}
