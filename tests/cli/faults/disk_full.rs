//! A full disk (a 2 MiB tmpfs) under `tail --out x.parquet|x.arrows` and under snapshot
//! writes (`restore --from-json`, `dump --lossless --out`): a clear error naming the file
//! and the cause, exit 1, nothing under the final name (a replaced file keeps its old
//! bytes) and no temp file left behind. Skipped, with the reason printed, where mounting
//! a tmpfs is not permitted.

use std::collections::BTreeMap;
use std::time::Duration;

use krabka_streams::engine::columnar::snapshot::container;
use rdkafka::config::ClientConfig;
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;

use super::create_topic;
use crate::support::process::{Finished, Running};
use crate::support::small_disk::SmallDisk;
use crate::support::tansu::Tansu;
use crate::support::unique_name;

fn small_disk() -> Option<SmallDisk> {
    match SmallDisk::mount("2m") {
        Ok(d) => Some(d),
        Err(reason) => {
            eprintln!("SKIPPED: {reason}");
            None
        }
    }
}

/// Incompressible bytes.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn assert_disk_full(out: &Finished, name: &str) {
    assert_eq!(out.code(), 1, "stderr:\n{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("No space left on device") && last.contains(name),
        "the error names the file and the cause: {}",
        out.stderr
    );
}

#[test]
fn a_full_disk_under_tail_out_fails_clearly_and_publishes_nothing() {
    let Some(disk) = small_disk() else { return };
    let broker = Tansu::start();
    let topic = unique_name("big");
    create_topic(&broker.bootstrap(), &topic, 1);
    let producer = CheckedProducer::new(
        ClientConfig::new()
            .set("bootstrap.servers", broker.bootstrap())
            .set("linger.ms", "0")
            .set("batch.num.messages", "1"),
    );
    for i in 0..48 {
        let value = noise(i, 64 << 10);
        producer.send(
            BaseRecord::<[u8], [u8]>::to(&topic)
                .partition(0)
                .payload(&value),
        );
        producer.flush();
    }
    let work = tempfile::tempdir().unwrap();
    let bootstrap = broker.bootstrap();
    for name in ["out.parquet", "out.arrows", "out.ndjson"] {
        let target = disk.join(name);
        let out = Running::start(
            work.path(),
            &[
                "-b",
                &bootstrap,
                "--timeout",
                "20s",
                "tail",
                &topic,
                "-e",
                "--out",
                target.to_str().unwrap(),
            ],
        )
        .wait(Duration::from_secs(60));
        assert_disk_full(&out, name);
        assert!(disk.names().is_empty(), "left behind: {:?}", disk.names());
    }
}

#[test]
fn a_full_disk_under_snapshot_writes_keeps_the_old_file_and_leaves_no_partial_one() {
    let Some(disk) = small_disk() else { return };
    let work = tempfile::tempdir().unwrap();
    let entries: BTreeMap<String, Vec<u8>> = [("state".to_string(), noise(7, 3 << 20))]
        .into_iter()
        .collect();
    let big = work.path().join("big.snapshot");
    std::fs::write(&big, container::encode(&entries)).unwrap();
    let dump = work.path().join("dump.json");
    let out = Running::start(
        work.path(),
        &[
            "snapshot",
            "dump",
            big.to_str().unwrap(),
            "--lossless",
            "--out",
            dump.to_str().unwrap(),
        ],
    )
    .wait(Duration::from_secs(60));
    assert_eq!(out.code(), 0, "{}", out.stderr);

    // Restore over an existing live file on the full disk: the old bytes stay.
    let live = disk.join("partition-0.snapshot");
    let old: BTreeMap<String, Vec<u8>> =
        [("state".to_string(), vec![1, 2, 3])].into_iter().collect();
    let old = container::encode(&old);
    std::fs::write(&live, &old).unwrap();
    let out = Running::start(
        work.path(),
        &[
            "--yes",
            "snapshot",
            "restore",
            "--from-json",
            dump.to_str().unwrap(),
            "--to",
            live.to_str().unwrap(),
        ],
    )
    .wait(Duration::from_secs(60));
    assert_disk_full(&out, "partition-0.snapshot");
    assert_eq!(std::fs::read(&live).unwrap(), old);
    assert_eq!(disk.names(), ["partition-0.snapshot"]);

    // A lossless dump written to the full disk: nothing under the name.
    let out = Running::start(
        work.path(),
        &[
            "snapshot",
            "dump",
            big.to_str().unwrap(),
            "--lossless",
            "--out",
            disk.join("dump.json").to_str().unwrap(),
        ],
    )
    .wait(Duration::from_secs(60));
    assert_disk_full(&out, "dump.json");
    assert_eq!(disk.names(), ["partition-0.snapshot"]);
}
