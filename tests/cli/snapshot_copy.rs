//! `snapshot copy` between a snapshot directory and a state topic, against
//! Tansu (docs/topology.md "Copying state between stores"): directory -> topic
//! -> a fresh directory gives back every file byte for byte (a snapshot larger
//! than the topic's records goes in chunks and comes back whole), the identity
//! manifest included, so a run on the new directory needs no --adopt-state;
//! a dry run writes nothing and replacing needs --yes.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use krabka_streams::engine::columnar::snapshot::container;
use krabka_streams::engine::columnar::snapshot::identity::StateIdentity;
use serde_json::Value;

use crate::run_state_kafka::create_topic_with;
use crate::support::tansu::Tansu;
use crate::support::{binary, unique_name};

fn copy(bootstrap: &str, args: &[&str]) -> Output {
    Command::new(binary())
        .args(["--output", "json", "snapshot", "copy", "-b", bootstrap])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn data(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["data"].clone()
}

/// Every file of a directory, by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn a_len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn a_directory_copied_to_a_topic_and_back_is_the_same_bytes_with_its_identity() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let tmp = tempfile::tempdir().unwrap();
    let (from, back) = (tmp.path().join("from"), tmp.path().join("back"));
    std::fs::create_dir(&from).unwrap();
    let identity = StateIdentity {
        consumer_group: "orders-app".into(),
        nodes: vec![
            "source orders topics=[orders]".into(),
            "group_by per-user keys=[user] aggregates=[sum(amount) AS total]".into(),
        ],
    };
    std::fs::write(from.join("krabka-state-identity.json"), identity.encode()).unwrap();
    // 60 000 bytes that do not repeat: in chunks of 20 000 - 16 KiB.
    let big: Vec<u8> = (0..60_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let snapshots = [
        ("partition-0.snapshot", vec![("per-user", vec![1, 2, 3])]),
        ("partition-1.snapshot", vec![("per-user", big)]),
        ("partition-1-epoch-3.snapshot", vec![("per-user", vec![9])]),
    ];
    for (file, entries) in &snapshots {
        let map: BTreeMap<String, Vec<u8>> = entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        std::fs::write(from.join(file), container::encode(&map)).unwrap();
    }
    let topic = unique_name("orders-app-state");
    let (from_s, back_s) = (from.to_str().unwrap(), back.to_str().unwrap());

    // A dry run says what it would do and creates nothing.
    let dry = data(&copy(
        &bootstrap,
        &["--dry-run", "--from-dir", from_s, "--to-topic", &topic],
    ));
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["creates_topic"], true, "{dry}");
    assert_eq!(dry["written"], 0);
    assert_eq!(dry["snapshots"].as_array().unwrap().len(), 3);
    let missing = copy(&bootstrap, &["--from-topic", &topic, "--to-dir", back_s]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains(&format!("the state topic {topic} does not exist")),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );

    create_topic_with(
        &bootstrap,
        &topic,
        &[
            ("cleanup.policy", "compact"),
            ("max.message.bytes", "20000"),
        ],
    );
    let copied = data(&copy(
        &bootstrap,
        &["--from-dir", from_s, "--to-topic", &topic],
    ));
    assert_eq!(copied["written"], 3, "{copied}");
    assert_eq!(copied["identity"]["consumer_group"], "orders-app");

    // Copying again replaces: refused without --yes (no terminal to ask), then done with it.
    let refused = copy(&bootstrap, &["--from-dir", from_s, "--to-topic", &topic]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let again = data(&copy(
        &bootstrap,
        &["--yes", "--from-dir", from_s, "--to-topic", &topic],
    ));
    assert!(
        again["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["action"] == "replace" && s["written"] == true),
        "{again}"
    );

    // list, verify and dump read the topic as a run restores it.
    let snapshot = |args: &[&str]| {
        Command::new(binary())
            .args(["--output", "json", "snapshot"])
            .args(args)
            .args(["-b", &bootstrap])
            .output()
            .unwrap()
    };
    let listed = data(&snapshot(&["list", "--state-topic", &topic]));
    let keys: Vec<&str> = listed["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["partition-0", "partition-1", "partition-1-epoch-3"],
        "{listed}"
    );
    let big_row = &listed["snapshots"][1];
    assert_eq!(big_row["size"], a_len(&from.join("partition-1.snapshot")));
    assert!(big_row["chunks"].as_u64().unwrap() >= 3, "{big_row}");
    assert_eq!(big_row["consumer_group"], "orders-app");
    assert_eq!(big_row["decodes"], true);
    let verified = data(&snapshot(&["verify", "--state-topic", &topic]));
    assert_eq!(verified["checked"], 3, "{verified}");
    assert_eq!(verified["ok"], true);
    let dumped = data(&snapshot(&[
        "dump",
        "--state-topic",
        &topic,
        "--partition",
        "1",
        "--epoch",
        "3",
    ]));
    assert_eq!(dumped["entries"][0]["name"], "per-user", "{dumped}");
    let not_retained = snapshot(&[
        "dump",
        "--state-topic",
        &topic,
        "--partition",
        "1",
        "--epoch",
        "7",
    ]);
    assert_eq!(not_retained.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&not_retained.stderr)
            .contains("snapshot epoch 7 is not retained; available epochs by partition: {1=[3]}"),
        "{}",
        String::from_utf8_lossy(&not_retained.stderr)
    );
    let nothing = snapshot(&["verify", "--state-topic", &unique_name("no-such-state")]);
    assert_eq!(nothing.status.code(), Some(1));

    // Back into a fresh directory: every file, the manifest too, byte for byte.
    let restored = data(&copy(
        &bootstrap,
        &["--from-topic", &topic, "--to-dir", back_s],
    ));
    assert_eq!(restored["written"], 3, "{restored}");
    assert_eq!(restored["identity_manifest"], true);
    let (a, b) = (files(&from), files(&back));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(&b[name] == bytes, "{name} differs after the round trip");
        let status = Command::new("cmp")
            .arg(from.join(name))
            .arg(back.join(name))
            .status()
            .unwrap();
        assert!(status.success(), "cmp {name}");
    }
}
