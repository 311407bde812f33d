//! `snapshot restore-cut` against a real broker (Tansu): cuts written to
//! `__barrier_state` in the frozen format by a test producer (complete, partial,
//! tombstoned, another group), committed offsets set by a real consumer group,
//! a Java/Go snapshot directory. Covers the dry-run default, the execution of
//! both halves, every refusal (partial/missing/tombstoned cut, missing snapshot,
//! active group) leaving files and offsets unchanged.

use std::collections::BTreeMap;
use std::fs;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use krabka_streams::engine::columnar::barrier::record::{
    BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic, TopicPartition, group_partition,
};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;

use crate::snapshot::{bin, code, container_of, group_by_payload, json_data, stderr};
use crate::support::admin::{committed_offsets, create_topics};
use crate::support::tansu::Tansu;
use crate::support::unique_name;

const TIMEOUT: Duration = Duration::from_secs(30);
const BARRIER_PARTITIONS: i32 = 5;

struct Fixture {
    broker: Tansu,
    topic: String,
    group: String,
    consumer_group: String,
    dir: tempfile::TempDir,
}

/// One record per batch, flushed per send: Tansu's high watermark is right then.
fn producer(bootstrap: &str) -> CheckedProducer {
    CheckedProducer::one_per_batch(bootstrap)
}

fn send(p: &CheckedProducer, topic: &str, partition: i32, key: &[u8], value: Option<&[u8]>) {
    let mut record = BaseRecord::<[u8], [u8]>::to(topic)
        .partition(partition)
        .key(key);
    if let Some(v) = value {
        record = record.payload(v);
    }
    p.send(record);
    p.flush();
}

fn cut(topic: &str, status: CutStatus, offsets: &[(i32, i64)]) -> Cut {
    Cut {
        triggered_at: 1_732_870_800_000,
        completed_at: 1_732_870_801_000,
        status,
        topics: vec![CutTopic {
            topic: topic.into(),
            partitions: offsets
                .iter()
                .map(|(partition, offset)| CutOffset {
                    partition: *partition,
                    offset: *offset,
                })
                .collect(),
        }],
        missing: if status == CutStatus::Partial {
            vec![TopicPartition::new(topic, 1)]
        } else {
            vec![]
        },
    }
}

fn publish_cut(p: &CheckedProducer, group: &str, epoch: i64, value: Option<&Cut>) {
    let partition =
        group_partition(group, NonZeroU32::new(BARRIER_PARTITIONS as u32).unwrap()) as i32;
    let key = BarrierStateKey::cut(group, epoch).encode().unwrap();
    let value = value.map(|c| c.encode().unwrap());
    send(p, "__barrier_state", partition, &key, value.as_deref());
}

/// A real member of `group` subscribed to `topic`, polling until stopped.
fn start_member(
    bootstrap: &str,
    group: &str,
    topic: &str,
) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let joined = Arc::new(AtomicBool::new(false));
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let (s, j) = (stop.clone(), joined.clone());
    let handle = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            let _ = consumer.poll(Duration::from_millis(100));
            if consumer.assignment().is_ok_and(|a| a.count() > 0) {
                j.store(true, Ordering::Relaxed);
            }
        }
        consumer.unsubscribe();
    });
    let deadline = Instant::now() + TIMEOUT;
    while !joined.load(Ordering::Relaxed) {
        assert!(
            Instant::now() < deadline,
            "the member never got an assignment"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (stop, handle)
}

fn setup() -> Fixture {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("cut-orders");
    let group = unique_name("ledger");
    let consumer_group = unique_name("ledger-app");
    create_topics(
        &bootstrap,
        &[("__barrier_state", BARRIER_PARTITIONS), (topic.as_str(), 2)],
    );
    let p = producer(&bootstrap);
    for i in 0..6 {
        send(&p, &topic, i % 2, format!("k{i}").as_bytes(), Some(b"v"));
    }
    // The group's history: two complete cuts, a partial one, one deleted by a tombstone,
    // and another group's cut with the same epoch.
    publish_cut(
        &p,
        &group,
        1,
        Some(&cut(&topic, CutStatus::Complete, &[(0, 1), (1, 1)])),
    );
    publish_cut(
        &p,
        &group,
        2,
        Some(&cut(&topic, CutStatus::Complete, &[(0, 2), (1, 3)])),
    );
    publish_cut(
        &p,
        &group,
        3,
        Some(&cut(&topic, CutStatus::Partial, &[(0, 3)])),
    );
    publish_cut(
        &p,
        &group,
        5,
        Some(&cut(&topic, CutStatus::Complete, &[(0, 3), (1, 3)])),
    );
    publish_cut(&p, &group, 5, None);
    publish_cut(
        &p,
        "other-group",
        2,
        Some(&cut(&topic, CutStatus::Complete, &[(0, 0), (1, 0)])),
    );

    // The application's consumer group read everything and committed: then it stopped.
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", &consumer_group)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(&topic, 0, Offset::Offset(3))
        .unwrap();
    tpl.add_partition_offset(&topic, 1, Offset::Offset(3))
        .unwrap();
    consumer.commit(&tpl, CommitMode::Sync).expect("commit");
    drop(consumer);

    let dir = tempfile::tempdir().unwrap();
    for (name, marker) in [
        ("partition-0-epoch-1.snapshot", 1u8),
        ("partition-0-epoch-2.snapshot", 2),
        ("partition-1-epoch-2.snapshot", 3),
        ("partition-0.snapshot", 9),
    ] {
        fs::write(
            dir.path().join(name),
            container_of(&[("by_user", group_by_payload()), ("marker", vec![marker])]),
        )
        .unwrap();
    }
    Fixture {
        broker,
        topic,
        group,
        consumer_group,
        dir,
    }
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

impl Fixture {
    fn restore_cut(&self, epoch: &str, extra: &[&str]) -> std::process::Output {
        bin()
            .args(["-b", &self.broker.bootstrap(), "--timeout", "20s"])
            .args(extra)
            .args([
                "snapshot",
                "restore-cut",
                "--group",
                &self.group,
                "--epoch",
                epoch,
                "--snapshot-dir",
                self.dir.path().to_str().unwrap(),
                "--consumer-group",
                &self.consumer_group,
            ])
            .output()
            .unwrap()
    }

    fn offsets(&self) -> BTreeMap<i32, Option<i64>> {
        committed_offsets(
            &self.broker.bootstrap(),
            &self.consumer_group,
            &self.topic,
            2,
        )
    }
}

#[test]
fn restore_cut_previews_by_default_then_restores_state_and_offsets_with_yes() {
    let f = setup();
    let files_before = files(f.dir.path());
    let offsets_before = f.offsets();
    assert_eq!(offsets_before, BTreeMap::from([(0, Some(3)), (1, Some(3))]));

    let dry = f.restore_cut("latest", &[]);
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(text.starts_with("DRY RUN: no change was made.\n"), "{text}");
    assert!(text.contains("epoch 2"), "{text}");
    assert_eq!(files(f.dir.path()), files_before);
    assert_eq!(f.offsets(), offsets_before);

    let json = f.restore_cut("latest", &["--output", "json"]);
    let doc = json_data(&json);
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["data"]["executed"], false);
    let offsets: Vec<(i64, Value, i64)> = doc["data"]["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["partition"].as_i64().unwrap(),
                o["current"].clone(),
                o["new"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(offsets, [(0, 3.into(), 2), (1, 3.into(), 3)]);

    let out = f.restore_cut("latest", &["--yes", "--output", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc = json_data(&out);
    assert_eq!(doc["data"]["executed"], true);
    assert!(doc.get("dry_run").is_none());
    let after = files(f.dir.path());
    assert_eq!(
        after["partition-0.snapshot"],
        files_before["partition-0-epoch-2.snapshot"]
    );
    assert_eq!(
        after["partition-1.snapshot"],
        files_before["partition-1-epoch-2.snapshot"]
    );
    assert_eq!(f.offsets(), BTreeMap::from([(0, Some(2)), (1, Some(3))]));
}

#[test]
fn restore_cut_refuses_partial_missing_and_unretained_cuts_and_active_groups() {
    let f = setup();
    let files_before = files(f.dir.path());
    let offsets_before = f.offsets();
    let unchanged = |what: &str| {
        assert_eq!(files(f.dir.path()), files_before, "{what}: files changed");
        assert_eq!(f.offsets(), offsets_before, "{what}: offsets changed");
    };

    let out = f.restore_cut("3", &["--yes"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains(&format!(
            "barrier group {} has no complete cut at epoch 3: that cut is partial (missing: {}/1)",
            f.group, f.topic
        )),
        "{}",
        stderr(&out)
    );
    unchanged("partial");

    let out = f.restore_cut("5", &["--yes"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains(&format!("barrier group {} has no complete cut at epoch 5 (cuts of the group: 1 (complete), 2 (complete), 3 (partial))", f.group)),
        "{}",
        stderr(&out)
    );
    unchanged("tombstoned");

    // Epoch 1 is a complete cut, but partition 1 has no snapshot for it (D15).
    let out = f.restore_cut("1", &["--yes"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out)
            .contains("snapshot epoch 1 is not retained; available epochs by partition: {1=[2]}"),
        "{}",
        stderr(&out)
    );
    unchanged("missing snapshot");

    let (stop, member) = start_member(&f.broker.bootstrap(), &f.consumer_group, &f.topic);
    let out = f.restore_cut("2", &["--yes"]);
    stop.store(true, Ordering::Relaxed);
    member.join().unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("consumer group {} is active", f.consumer_group)),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("nothing was changed"));
    unchanged("active group");

    let out = bin()
        .args([
            "-b",
            &f.broker.bootstrap(),
            "snapshot",
            "restore-cut",
            "--group",
            &f.group,
            "--epoch",
            "2",
        ])
        .args([
            "--snapshot-dir",
            f.dir.path().to_str().unwrap(),
            "--consumer-group",
            &f.consumer_group,
            "--layout",
            "rust",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    unchanged("rust layout");
}

#[test]
fn restore_cut_without_a_broker_is_unreachable_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("partition-0-epoch-1.snapshot"),
        container_of(&[]),
    )
    .unwrap();
    let before = files(dir.path());
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = bin()
        .args(["-b", &format!("127.0.0.1:{port}"), "--timeout", "3s"])
        .args([
            "snapshot",
            "restore-cut",
            "--group",
            "g",
            "--epoch",
            "1",
            "--consumer-group",
            "cg",
            "--yes",
        ])
        .args(["--snapshot-dir", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(files(dir.path()), before);
}
