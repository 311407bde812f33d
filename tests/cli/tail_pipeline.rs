//! `tail`'s pipeline (poll side and decode side on two threads) keeps the semantics
//! of one loop: a partition held for a pending writer schema resumes in order with
//! nothing lost or repeated while the others flow, and `--max-records` writes exactly
//! N rows however the records fall into batches. Small `--batch-records` put many
//! arenas in flight at once.

use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions, SchemaRecord};
use serde_json::Value;

use crate::support::tansu::Tansu;
use crate::support::unique_name;
use crate::tail::{
    BASE_TS, ORDER_SCHEMA, Rec, create_topic, order_body, produce, stderr, value_records,
};

fn tail(bootstrap: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .arg("tail")
        .args(args)
        .args(["-b", bootstrap, "--timeout", "20s", "--format", "ndjson"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

fn rows(out: &Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", stderr(out));
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Offsets per partition in the order they were written.
fn offsets_per_partition(rows: &[Value]) -> BTreeMap<i64, Vec<i64>> {
    let mut per: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in rows {
        per.entry(r["__partition"].as_i64().unwrap())
            .or_default()
            .push(r["__offset"].as_i64().unwrap());
    }
    per
}

#[test]
fn a_partition_held_for_a_pending_schema_resumes_in_order_without_duplicates_while_others_flow() {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let topic = unique_name("held");
    create_topic(&broker.bootstrap(), &topic, 2);
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let id = client
        .register(
            &format!("{topic}-value"),
            &SchemaSpec {
                schema: ORDER_SCHEMA.into(),
                ..Default::default()
            },
        )
        .unwrap() as u32;
    // Two more ids of the same schema: the tail meets each for the first time in the
    // middle of partition 0, and each fetch takes the registry's delay.
    registry.seed_id(77, SchemaRecord::avro(ORDER_SCHEMA));
    registry.seed_id(78, SchemaRecord::avro(ORDER_SCHEMA));
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let (p0, p1) = (40, 60);
    let mut records = Vec::new();
    for i in 0..p0.max(p1) {
        for (partition, n) in [(0, p0), (1, p1)] {
            if i >= n {
                continue;
            }
            let writer = match (partition, i) {
                (0, 15) => 77,
                (0, 28) => 78,
                _ => id,
            };
            records.push(Rec {
                partition,
                key: Some(format!("k{i}").into_bytes()),
                value: Some(framing::encode(writer, &order_body(&schema, i))),
                headers: vec![],
                ts: BASE_TS + i * 1000,
            });
        }
    }
    produce(&broker.bootstrap(), &topic, &records);
    registry.delay(Duration::from_millis(700));
    let url = registry.url();
    let out = tail(
        &broker.bootstrap(),
        &[
            &topic,
            "-e",
            "--value-format",
            "avro",
            "--registry",
            &url,
            "--batch-records",
            "7",
        ],
    );
    let rows = rows(&out);
    let per = offsets_per_partition(&rows);
    assert_eq!(
        per.get(&0),
        Some(&(0..p0).collect::<Vec<_>>()),
        "partition 0: every offset once, in order, across its two holds"
    );
    assert_eq!(per.get(&1), Some(&(0..p1).collect::<Vec<_>>()));
    assert!(
        registry
            .requests()
            .iter()
            .any(|(_, path)| path.contains("/schemas/ids/78")),
        "the second pending id was fetched: {:?}",
        registry.requests()
    );
    let order_id = |r: &Value| r["order_id"].as_str().unwrap().to_string();
    let p0_rows: Vec<String> = rows
        .iter()
        .filter(|r| r["__partition"] == 0)
        .map(order_id)
        .collect();
    assert_eq!(p0_rows[15], "o-0015", "the held record decoded as itself");
    assert_eq!(p0_rows[28], "o-0028");
}

#[test]
fn max_records_writes_exactly_n_rows_across_batches_and_partitions() {
    let broker = Tansu::start();
    let topic = unique_name("maxrec");
    create_topic(&broker.bootstrap(), &topic, 3);
    produce(&broker.bootstrap(), &topic, &value_records(45, 3));
    for (n, batch, bounded) in [
        ("13", "4", true),
        ("1", "4", true),
        ("20", "1000", true),
        ("13", "4", false),
        ("45", "7", true),
        ("100", "7", true),
    ] {
        let mut args = vec![
            topic.as_str(),
            "--value-format",
            "string",
            "--max-records",
            n,
            "--batch-records",
            batch,
        ];
        if bounded {
            args.push("-e");
        }
        let got = rows(&tail(&broker.bootstrap(), &args));
        let want = n.parse::<usize>().unwrap().min(45);
        assert_eq!(
            got.len(),
            want,
            "-n {n} --batch-records {batch} -e {bounded}"
        );
        // No row twice, and each partition's rows in offset order from its start.
        for (p, offsets) in offsets_per_partition(&got) {
            assert_eq!(
                offsets,
                (0..offsets.len() as i64).collect::<Vec<_>>(),
                "partition {p} with -n {n}"
            );
        }
    }
}

#[test]
fn a_closed_stdout_ends_a_bounded_or_endless_tail_quietly_with_exit_0() {
    let broker = Tansu::start();
    let topic = unique_name("epipe");
    create_topic(&broker.bootstrap(), &topic, 1);
    produce(&broker.bootstrap(), &topic, &value_records(50, 1));
    for bounded in [true, false] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_krabka-streams"));
        cmd.args([
            "tail",
            &topic,
            "--value-format",
            "string",
            "--batch-records",
            "5",
        ])
        .args(["-b", &broker.bootstrap(), "--timeout", "20s"])
        .env_remove("KRABKA_OUTPUT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        if bounded {
            cmd.arg("-e");
        }
        let mut child = cmd.spawn().unwrap();
        // The read end closed at once: the decode side's first write fails with EPIPE.
        drop(child.stdout.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("the tail (-e: {bounded}) did not end after its stdout closed");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(0), "-e: {bounded}: {err}");
        assert!(!err.contains("rror"), "-e: {bounded}: {err}");
    }
}

#[test]
fn ctrl_c_ends_a_tail_whose_only_work_left_is_records_held_for_a_slow_schema() {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let topic = unique_name("heldint");
    create_topic(&broker.bootstrap(), &topic, 1);
    registry.seed_id(91, SchemaRecord::avro(ORDER_SCHEMA));
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let records: Vec<Rec> = (0..3)
        .map(|i| Rec {
            partition: 0,
            key: None,
            value: Some(framing::encode(91, &order_body(&schema, i))),
            headers: vec![],
            ts: BASE_TS + i * 1000,
        })
        .collect();
    produce(&broker.bootstrap(), &topic, &records);
    // The fetch outlasts the test: the poll side reads all three records and is done,
    // the decode side waits alone for their schema.
    registry.delay(Duration::from_secs(25));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("held.parquet");
    let (bootstrap, url) = (broker.bootstrap(), registry.url());
    let running = crate::support::process::Running::start(
        dir.path(),
        &[
            "tail",
            &topic,
            "-e",
            "--value-format",
            "avro",
            "--registry",
            &url,
            "--out",
            file.to_str().unwrap(),
            "-b",
            &bootstrap,
            "--timeout",
            "30s",
        ],
    );
    std::thread::sleep(Duration::from_secs(4));
    let done = running.interrupt_and_wait(Duration::from_secs(10));
    assert_eq!(done.code(), 130, "{}", done.stderr);
    assert!(
        file.exists(),
        "the Parquet file is closed and published on Ctrl-C"
    );
}

/// A group tail that `--max-records` ends mid-arena commits the records it wrote and
/// no more: the next tails of the group start right after them, so across the runs
/// every record comes out exactly once.
#[test]
fn a_group_tail_cut_by_max_records_commits_only_what_it_wrote() {
    let broker = Tansu::start();
    let topic = unique_name("maxrec-group");
    create_topic(&broker.bootstrap(), &topic, 3);
    produce(&broker.bootstrap(), &topic, &value_records(45, 3));
    let group = unique_name("maxrec-group");
    let mut seen: Vec<Value> = Vec::new();
    for (n, batch) in [("13", "1000"), ("5", "4"), ("7", "1000")] {
        let got = rows(&tail(
            &broker.bootstrap(),
            &[
                topic.as_str(),
                "-g",
                &group,
                // Tansu answers a JoinGroup after half the session timeout.
                "-X",
                "session.timeout.ms=6000",
                "--value-format",
                "string",
                "--max-records",
                n,
                "--batch-records",
                batch,
            ],
        ));
        assert_eq!(got.len(), n.parse::<usize>().unwrap(), "-n {n}");
        seen.extend(got);
    }
    let rest = rows(&tail(
        &broker.bootstrap(),
        &[
            topic.as_str(),
            "-g",
            &group,
            "-X",
            "session.timeout.ms=6000",
            "-e",
            "--value-format",
            "string",
        ],
    ));
    assert_eq!(rest.len(), 45 - 25, "the records after the three cuts");
    seen.extend(rest);
    let mut per = offsets_per_partition(&seen);
    for offsets in per.values_mut() {
        offsets.sort_unstable();
    }
    assert_eq!(
        per,
        (0..3)
            .map(|p| (p, (0..15).collect()))
            .collect::<BTreeMap<i64, Vec<i64>>>(),
        "every record exactly once across the group's runs"
    );
}
