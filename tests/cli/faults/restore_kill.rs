//! `kill -9` at many points of `snapshot restore`: a lossless dump written back over an
//! existing file, and an epoch copy of twelve partitions over live state. After every
//! kill each target holds exactly its previous bytes or exactly its new bytes — never a
//! torn file. A killed restore may leave `<name>.krabka-<pid>.<random>.tmp` files beside
//! the targets: no reader takes them for a snapshot, `snapshot list` reports them, and the
//! next write of the same target removes them once their pid is gone.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use krabka_streams::engine::columnar::snapshot::container;

use crate::support::process::Running;

/// Incompressible bytes (xorshift), different per seed.
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

fn container_of(seed: u64, len: usize) -> Vec<u8> {
    let entries: BTreeMap<String, Vec<u8>> = [
        ("state".to_string(), noise(seed, len)),
        ("meta".to_string(), noise(seed + 1, 64)),
    ]
    .into_iter()
    .collect();
    container::encode(&entries)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs to the end and returns how long a complete run takes.
fn full_run(dir: &Path, args: &[&str]) -> Duration {
    let out = Running::start(dir, args).wait(Duration::from_secs(120));
    assert_eq!(out.code(), 0, "{}", out.stderr);
    out.elapsed
}

/// Kill points from "at once" to past the end of a complete run.
/// From at once to 2.5 times a full run: a loaded machine can make a killed run slower
/// than the timed one, and the late points must still land after the files are replaced.
fn kill_points(full: Duration) -> Vec<Duration> {
    (0..=20).map(|k| full.mul_f64(f64::from(k) / 8.0)).collect()
}

fn kill_after(dir: &Path, args: &[&str], delay: Duration) {
    let run = Running::start(dir, args);
    let until = Instant::now() + delay;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    run.kill9();
}

#[test]
fn kill_9_during_a_lossless_restore_leaves_the_old_file_or_the_complete_new_one() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let old = container_of(1, 1 << 20);
    let new = container_of(2, 24 << 20);
    let source = d.join("source.snapshot");
    std::fs::write(&source, &new).unwrap();
    let dump = d.join("dump.json");
    let out = Running::start(
        d,
        &[
            "snapshot",
            "dump",
            s(&source),
            "--lossless",
            "--out",
            s(&dump),
        ],
    )
    .wait(Duration::from_secs(120));
    assert_eq!(out.code(), 0, "{}", out.stderr);

    let target = d.join("partition-0.snapshot");
    let args = [
        "--yes",
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&target),
    ];
    std::fs::write(&target, &old).unwrap();
    let full = full_run(d, &args);
    assert_eq!(std::fs::read(&target).unwrap(), new);

    let (mut saw_old, mut saw_new) = (0, 0);
    for delay in kill_points(full) {
        std::fs::write(&target, &old).unwrap();
        kill_after(d, &args, delay);
        let now = std::fs::read(&target).unwrap();
        if now == old {
            saw_old += 1;
        } else if now == new {
            saw_new += 1;
        } else {
            panic!("torn file after a kill at {delay:?}: {} bytes", now.len());
        }
    }
    assert!(saw_old > 0 && saw_new > 0, "old {saw_old}, new {saw_new}");
    stale_temp_files_are_reported_then_removed_by_the_next_write(d, &args);
}

/// Temp files of `partition-0.snapshot` in `dir`.
fn temp_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("partition-0.snapshot.") && n.ends_with(".tmp"))
        .collect();
    names.sort();
    names
}

fn stale_listed(dir: &Path) -> Vec<String> {
    let out = Running::start(dir, &["--output", "json", "snapshot", "list", s(dir)])
        .wait(Duration::from_secs(60));
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout_text()).unwrap();
    let mut files: Vec<String> = report["data"]["stale_temp_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    files.sort();
    files
}

/// What the kills above left: every temp file is named `<target>.krabka-<pid>.…tmp`;
/// `snapshot list` reports those of dead pids, and the next restore of the same file
/// removes them — but never the temp file of a live process (here: this test's own pid).
fn stale_temp_files_are_reported_then_removed_by_the_next_write(d: &Path, args: &[&str]) {
    let left = temp_files(d);
    for name in &left {
        assert!(
            name.contains(".krabka-"),
            "a temp file not named as ours: {name}"
        );
    }
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let forged_dead = format!("partition-0.snapshot.krabka-{dead}.AbC123.tmp");
    let live = format!(
        "partition-0.snapshot.krabka-{}.LiVe12.tmp",
        std::process::id()
    );
    std::fs::write(d.join(&forged_dead), b"half").unwrap();
    std::fs::write(d.join(&live), b"in progress").unwrap();
    let mut stale = left.clone();
    stale.push(forged_dead);
    stale.sort();
    assert_eq!(
        stale_listed(d),
        stale,
        "killed writers' temp files are reported"
    );
    full_run(d, args);
    assert_eq!(
        temp_files(d),
        std::slice::from_ref(&live),
        "only the live writer's temp file is kept"
    );
    assert!(stale_listed(d).is_empty());
    std::fs::remove_file(d.join(live)).unwrap();
}

#[test]
fn kill_9_during_an_epoch_copy_leaves_each_live_file_old_or_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let partitions = 12u64;
    let old: Vec<Vec<u8>> = (0..partitions)
        .map(|p| container_of(100 + p, 256 << 10))
        .collect();
    let new: Vec<Vec<u8>> = (0..partitions)
        .map(|p| container_of(200 + p, 3 << 20))
        .collect();
    for (p, bytes) in new.iter().enumerate() {
        std::fs::write(d.join(format!("partition-{p}-epoch-41.snapshot")), bytes).unwrap();
    }
    let reset = || {
        for (p, bytes) in old.iter().enumerate() {
            std::fs::write(d.join(format!("partition-{p}.snapshot")), bytes).unwrap();
        }
    };
    let args = [
        "--yes",
        "snapshot",
        "restore",
        s(d),
        "--partition",
        "0-11",
        "--from-epoch",
        "41",
        "--to-epoch",
        "live",
    ];
    reset();
    let full = full_run(d, &args);
    let (mut all_old, mut all_new, mut mixed) = (0, 0, 0);
    for delay in kill_points(full) {
        reset();
        kill_after(d, &args, delay);
        let mut state = Vec::new();
        for p in 0..partitions as usize {
            let now = std::fs::read(d.join(format!("partition-{p}.snapshot"))).unwrap();
            state.push(if now == old[p] {
                'o'
            } else if now == new[p] {
                'n'
            } else {
                panic!(
                    "partition {p} torn after a kill at {delay:?}: {} bytes",
                    now.len()
                )
            });
        }
        match (state.contains(&'o'), state.contains(&'n')) {
            (true, false) => all_old += 1,
            (false, true) => all_new += 1,
            _ => mixed += 1,
        }
    }
    // Mixed states are allowed (files are replaced one by one), torn files are not.
    assert!(
        all_old > 0 && all_new > 0,
        "old {all_old}, new {all_new}, mixed {mixed}"
    );
}

#[test]
fn kill_9_during_restore_cut_leaves_each_live_file_old_or_complete() {
    use crate::barrier::fixture::{Cluster, cut};

    let mut c = Cluster::start();
    c.create_barrier_state(3);
    let topic = crate::support::unique_name("cut");
    c.create_topic(&topic, 4, false);
    c.write_group("ledger", &[&topic], 1);
    c.write_cut(
        "ledger",
        1,
        &cut(&topic, &[(0, 0), (1, 0), (2, 0), (3, 0)], &[]),
    );
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let old: Vec<Vec<u8>> = (0..4).map(|p| container_of(300 + p, 128 << 10)).collect();
    let new: Vec<Vec<u8>> = (0..4).map(|p| container_of(400 + p, 6 << 20)).collect();
    for (p, bytes) in new.iter().enumerate() {
        std::fs::write(d.join(format!("partition-{p}-epoch-1.snapshot")), bytes).unwrap();
    }
    let reset = || {
        for (p, bytes) in old.iter().enumerate() {
            std::fs::write(d.join(format!("partition-{p}.snapshot")), bytes).unwrap();
        }
    };
    let bootstrap = c.bootstrap();
    let cg = crate::support::unique_name("ledger-app");
    let args = [
        "-b",
        &bootstrap,
        "--yes",
        "snapshot",
        "restore-cut",
        "--group",
        "ledger",
        "--epoch",
        "1",
        "--snapshot-dir",
        s(d),
        "--consumer-group",
        &cg,
    ];
    reset();
    let full = full_run(d, &args);
    for (p, bytes) in new.iter().enumerate() {
        let now = std::fs::read(d.join(format!("partition-{p}.snapshot"))).unwrap();
        assert!(&now == bytes, "partition {p} not restored by a full run");
    }
    let mut saw = (0, 0);
    for delay in kill_points(full) {
        reset();
        kill_after(d, &args, delay);
        for p in 0..4 {
            let now = std::fs::read(d.join(format!("partition-{p}.snapshot"))).unwrap();
            if now == old[p] {
                saw.0 += 1;
            } else if now == new[p] {
                saw.1 += 1;
            } else {
                panic!(
                    "partition {p} torn after a kill at {delay:?}: {} bytes",
                    now.len()
                );
            }
        }
    }
    assert!(saw.0 > 0 && saw.1 > 0, "old {}, new {}", saw.0, saw.1);
}
