//! `snapshot list | dump | restore | verify | prune` end to end, running the binary on
//! real directories in all three layouts (Java/Go live + epoch, Rust) with every kind
//! of bad file, links and traversal attempts, and a non-interactive stdin.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::StreamWriter;
use krabka_streams::engine::columnar::snapshot::byte_store::{ByteStore, ByteStoreEntry};
use krabka_streams::engine::columnar::snapshot::container;
use krabka_streams::engine::columnar::snapshot::groupby::{GroupByState, GroupState};
use krabka_streams::engine::columnar::snapshot::join::{JoinState, TimedBatch};
use krabka_streams::engine::columnar::snapshot::tagged::TaggedValue;
use serde_json::Value;

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_krabka-streams"));
    // Tests never have a terminal on stdin: prompts must refuse, never hang.
    c.stdin(Stdio::null())
        .env_remove("KRABKA_ASSUME_YES")
        .env_remove("KRABKA_OUTPUT");
    c
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run krabka-streams")
}

pub fn code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn json_data(out: &Output) -> Value {
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    });
    doc
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Writes a snapshot holding one group-by state, `by_user`.
fn write_group_by(dir: &Path, name: &str) -> PathBuf {
    write(dir, name, &container_of(&[("by_user", group_by_payload())]))
}

/// `snapshot restore DIR --partition P --from-epoch FROM --to-epoch TO EXTRA…`.
fn restore_epochs(dir: &Path, partitions: &str, from: &str, to: &str, extra: &[&str]) -> Output {
    let mut args = vec!["snapshot", "restore", s(dir), "--partition", partitions];
    args.extend(["--from-epoch", from, "--to-epoch", to]);
    args.extend_from_slice(extra);
    run(&args)
}

pub fn container_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let map: BTreeMap<String, Vec<u8>> = entries
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    container::encode(&map)
}

pub fn group_by_payload() -> Vec<u8> {
    GroupByState {
        stream_time: 1_000,
        groups: vec![GroupState {
            parts: vec![
                TaggedValue::String("alice".into()),
                TaggedValue::Int(0),
                TaggedValue::Int(60_000),
            ],
            aggregates: vec![TaggedValue::BigInt("371".into()), TaggedValue::Int(3)],
        }],
    }
    .encode()
}

fn ipc_stream() -> Vec<u8> {
    let batch = RecordBatch::try_from_iter([
        (
            "user",
            Arc::new(StringArray::from(vec!["alice", "bob"])) as ArrayRef,
        ),
        (
            "__timestamp",
            Arc::new(Int64Array::from(vec![5, 7])) as ArrayRef,
        ),
    ])
    .unwrap();
    let mut out = Vec::new();
    let mut w = StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

fn join_payload(ipc: Vec<u8>) -> Vec<u8> {
    JoinState {
        stream_time: 7,
        left: vec![TimedBatch {
            max_timestamp: 7,
            ipc,
        }],
        right: vec![],
    }
    .encode()
}

fn byte_store_payload() -> Vec<u8> {
    ByteStore {
        entries: vec![ByteStoreEntry {
            key: b"user:alice".to_vec(),
            value: vec![0, 1, 2],
        }],
    }
    .encode()
}

/// Legacy gen A `{aggregate: 01 02 03}` (SNAP-A-AGGREGATE).
const GEN_A: &str = "0000000100000001000961676772656761746500000003010203";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// Every file name and its bytes: what "nothing was written" is checked against.
fn snapshot_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// A Java/Go directory with live state and epochs, plus a Rust file and clutter.
fn mixed_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_group_by(d, "partition-0.snapshot");
    write_group_by(d, "partition-0-epoch-3.snapshot");
    write(d, "partition-1-epoch-3.snapshot", &container_of(&[]));
    write(
        d,
        "app-0-1-epoch-3.snapshot",
        &container_of(&[("counts", byte_store_payload())]),
    );
    write(
        d,
        "partition-2-epoch-3.snapshot",
        &hex::decode(GEN_A).unwrap(),
    );
    write(d, "partition-3-epoch-3.snapshot", &[0, 0, 0, 1, 0, 0, 0, 1]);
    write(d, "partition-0-1234.tmp", b"temp");
    write(d, "notes.txt", b"hello");
    tmp
}

#[test]
fn list_marks_live_state_legacy_files_and_undecodable_ones_and_counts_other_files() {
    let tmp = mixed_dir();
    let out = run(&["--output", "json", "snapshot", "list", s(tmp.path())]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let data = &json_data(&out)["data"];
    assert_eq!(data["ignored"], 2);
    let files = data["files"].as_array().unwrap();
    let by_name = |n: &str| files.iter().find(|f| f["file"] == n).unwrap().clone();
    let live = by_name("partition-0.snapshot");
    assert_eq!(
        (live["live"].clone(), live["epoch"].clone()),
        (true.into(), (-1).into())
    );
    assert_eq!(live["entries"], 1);
    assert_eq!(live["generation"], "B");
    assert_eq!(
        by_name("partition-1-epoch-3.snapshot")["generation"],
        "empty"
    );
    assert_eq!(
        by_name("partition-2-epoch-3.snapshot")["generation"],
        "legacy (Java ≤ 1.2)"
    );
    let bad = by_name("partition-3-epoch-3.snapshot");
    assert_eq!(bad["decodes"], false);
    assert_eq!(bad["error"], "truncated state snapshot");
    let rust = by_name("app-0-1-epoch-3.snapshot");
    assert_eq!(
        (
            rust["layout"].clone(),
            rust["group"].clone(),
            rust["task"].clone()
        ),
        ("rust".into(), "app".into(), "0-1".into())
    );
    assert!(
        by_name("partition-0-epoch-3.snapshot")["modified"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );

    let human = run(&["snapshot", "list", s(tmp.path())]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("live"), "{text}");
    assert!(text.contains("yes, legacy (Java ≤ 1.2)"), "{text}");
    assert!(text.contains("no: truncated state snapshot"), "{text}");
    assert!(text.contains("2 other files ignored"), "{text}");
}

#[test]
fn dump_decodes_every_known_payload_and_shows_the_rest_as_hex() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(
        tmp.path(),
        "partition-4-epoch-9.snapshot",
        &container_of(&[
            ("by_user", group_by_payload()),
            ("joined", join_payload(ipc_stream())),
            ("counts", byte_store_payload()),
            ("counter", 2u64.to_be_bytes().to_vec()),
            ("java_group_by", vec![0xac, 0xed, 0, 5, 0x77]),
            ("filter", vec![]),
        ]),
    );
    let out = run(&[
        "--output",
        "json",
        "snapshot",
        "dump",
        s(tmp.path()),
        "--partition",
        "4",
        "--epoch",
        "9",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let data = &json_data(&out)["data"];
    let entry = |n: &str| {
        data["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == n)
            .unwrap()
            .clone()
    };
    let group_by = entry("by_user");
    assert_eq!(group_by["kind"], "groupBy");
    assert_eq!(
        group_by["payload"]["groups"][0]["parts"][0],
        serde_json::json!({"t": "string", "v": "alice"})
    );
    assert_eq!(
        group_by["payload"]["groups"][0]["aggregates"][0],
        serde_json::json!({"t": "bigint", "v": "371"})
    );
    let join = entry("joined");
    assert_eq!(join["kind"], "join");
    assert_eq!(join["payload"]["left"][0]["schema"][0]["name"], "user");
    assert_eq!(
        join["payload"]["left"][0]["rows"],
        serde_json::json!([["alice", 5], ["bob", 7]])
    );
    assert_eq!(
        entry("counts")["payload"]["entries"][0]["key_text"],
        "user:alice"
    );
    assert_eq!(entry("counter")["payload"]["value"], 2);
    assert_eq!(entry("java_group_by")["payload"]["hex"], "aced000577");
    assert_eq!(entry("filter")["kind"], "empty");

    let human = run(&["snapshot", "dump", s(&file)]);
    let text = String::from_utf8_lossy(&human.stdout);
    for needle in [
        "\"alice\"",
        "371n",
        "user: Utf8",
        "bob",
        "\"user:alice\"",
        "u64 counter = 2",
        "hex aced000577",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
}

#[test]
fn lossless_dump_restores_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let every_byte: Vec<u8> = (0..=255).collect();
    let originals = [
        container_of(&[
            ("by_user", group_by_payload()),
            ("joined", join_payload(ipc_stream())),
            ("binary \u{0} \"name\" é", every_byte.clone()),
            ("empty", vec![]),
        ]),
        container_of(&[]),
        container_of(&[("z", every_byte.repeat(100)), ("a", vec![1])]),
    ];
    for (i, original) in originals.iter().enumerate() {
        let source = write(tmp.path(), &format!("partition-{i}.snapshot"), original);
        let dump = tmp.path().join(format!("dump-{i}.json"));
        // Once through --out, once through stdout.
        let out = run(&[
            "snapshot",
            "dump",
            s(&source),
            "--lossless",
            "--out",
            s(&dump),
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let piped = run(&["snapshot", "dump", s(&source), "--lossless"]);
        assert_eq!(
            piped.stdout,
            fs::read(&dump).unwrap(),
            "stdout and --out agree"
        );
        let restored = tmp.path().join(format!("restored-{i}.snapshot"));
        let out = run(&[
            "snapshot",
            "restore",
            "--from-json",
            s(&dump),
            "--to",
            s(&restored),
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(&fs::read(&restored).unwrap(), original, "container {i}");
    }
    // Into a directory by key, Rust layout, sanitised name.
    let dump = tmp.path().join("dump-0.json");
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(tmp.path()),
        "--layout",
        "rust",
        "--group",
        "../escape",
        "--task",
        "0/1",
        "--epoch",
        "3",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read(tmp.path().join(".._escape-0_1-epoch-3.snapshot")).unwrap(),
        originals[0]
    );
}

#[test]
fn a_legacy_dump_is_written_as_gen_b_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let source = write(
        tmp.path(),
        "partition-0.snapshot",
        &hex::decode(GEN_A).unwrap(),
    );
    let dump = tmp.path().join("dump.json");
    assert_eq!(
        code(&run(&[
            "snapshot",
            "dump",
            s(&source),
            "--lossless",
            "--out",
            s(&dump)
        ])),
        0
    );
    let target = tmp.path().join("out.snapshot");
    let refused = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&target),
    ]);
    assert_eq!(code(&refused), 1);
    assert!(
        stderr(&refused).contains("--convert-legacy"),
        "{}",
        stderr(&refused)
    );
    assert!(!target.exists());
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&target),
        "--convert-legacy",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read(&target).unwrap(),
        hex::decode("00000001000000010000000961676772656761746500000003010203").unwrap()
    );
}

#[test]
fn restore_refuses_to_overwrite_on_a_non_interactive_stdin_without_yes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_group_by(d, "partition-0-epoch-41.snapshot");
    write(d, "partition-0.snapshot", b"old live state");
    let before = snapshot_of(d);
    let out = restore_epochs(d, "0", "41", "live", &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains(
        "refusing to prompt for confirmation on a non-interactive stdin; pass --yes to proceed"
    ));
    assert_eq!(snapshot_of(d), before, "nothing was written");

    let out = run(&[
        "--output",
        "json",
        "snapshot",
        "restore",
        s(d),
        "--partition",
        "0",
        "--from-epoch",
        "41",
        "--to-epoch",
        "live",
        "--yes",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read(d.join("partition-0.snapshot")).unwrap(),
        before["partition-0-epoch-41.snapshot"]
    );
    let files = &json_data(&out)["data"]["files"];
    assert_eq!(files[0]["target"], "partition-0.snapshot");
    assert_eq!(files[0]["action"], "replace");
    assert_eq!(files[0]["written"], true);

    // The same refusal for a file target of --from-json.
    let dump = d.join("dump.json");
    assert_eq!(
        code(&run(&[
            "snapshot",
            "dump",
            s(&d.join("partition-0.snapshot")),
            "--lossless",
            "--out",
            s(&dump)
        ])),
        0
    );
    let before = snapshot_of(d);
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&d.join("partition-0-epoch-41.snapshot")),
    ]);
    assert_eq!(code(&out), 2);
    assert_eq!(snapshot_of(d), before);
}

#[test]
fn dry_run_reports_the_same_shape_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for p in 0..3 {
        write(
            d,
            &format!("partition-{p}-epoch-41.snapshot"),
            &container_of(&[("n", vec![p as u8])]),
        );
    }
    write(d, "partition-1.snapshot", b"old");
    let before = snapshot_of(d);
    let args = [
        "snapshot",
        "restore",
        s(d),
        "--partition",
        "0-2",
        "--from-epoch",
        "41",
        "--to-epoch",
        "live",
    ];
    let dry = bin()
        .args(["--output", "json", "--dry-run"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    assert_eq!(snapshot_of(d), before, "a dry run writes nothing");
    let dry_doc = json_data(&dry);
    assert_eq!(dry_doc["dry_run"], true);
    let human = bin().arg("--dry-run").args(args).output().unwrap();
    assert!(String::from_utf8_lossy(&human.stdout).starts_with("DRY RUN: no change was made.\n"));

    let real = bin()
        .args(["--output", "json", "--yes"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(code(&real), 0, "{}", stderr(&real));
    let real_doc = json_data(&real);
    let shape = |doc: &Value| {
        doc["data"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["target"].clone(),
                    f["source"].clone(),
                    f["action"].clone(),
                    f["bytes"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&dry_doc), shape(&real_doc));
    assert_eq!(real_doc["data"]["written"], 3);
    for p in 0..3 {
        assert_eq!(
            fs::read(d.join(format!("partition-{p}.snapshot"))).unwrap(),
            before[&format!("partition-{p}-epoch-41.snapshot")]
        );
    }
}

#[test]
fn a_missing_source_epoch_fails_with_the_java_message_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "partition-0-epoch-41.snapshot", &container_of(&[]));
    write(d, "partition-1-epoch-41.snapshot", &container_of(&[]));
    write(d, "partition-3-epoch-40.snapshot", &container_of(&[]));
    write(d, "partition-3-epoch-42.snapshot", &container_of(&[]));
    let before = snapshot_of(d);
    let out = restore_epochs(d, "0-1,3,7", "41", "live", &["--yes"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr(&out).trim(),
        "krabka-streams snapshot restore: snapshot epoch 41 is not retained; available epochs by partition: {3=[40, 42], 7=[]}"
    );
    assert_eq!(snapshot_of(d), before);
    // A bad source is found before anything is written, too.
    write(
        d,
        "partition-3-epoch-41.snapshot",
        &[0, 0, 0, 2, 0, 0, 0, 0],
    );
    write(d, "partition-7-epoch-41.snapshot", &container_of(&[]));
    let before = snapshot_of(d);
    let out = restore_epochs(d, "0-1,3,7", "41", "live", &["--yes"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("unsupported state snapshot version 2"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot_of(d), before);
    // And dump says the same for a missing epoch.
    let out = run(&["snapshot", "dump", s(d), "--partition", "3", "--epoch", "9"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains(
            "snapshot epoch 9 is not retained; available epochs by partition: {3=[40, 41, 42]}"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn rust_epochs_copy_between_epochs_by_group_and_task() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let bytes = container_of(&[("counts", byte_store_payload())]);
    write(d, "app-0-1-epoch-3.snapshot", &bytes);
    write(d, "app-0-2-epoch-3.snapshot", &bytes);
    let out = run(&[
        "snapshot",
        "restore",
        s(d),
        "--layout",
        "rust",
        "--group",
        "app",
        "--task",
        "0-1",
        "--task",
        "0-2",
        "--from-epoch",
        "3",
        "--to-epoch",
        "4",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(fs::read(d.join("app-0-2-epoch-4.snapshot")).unwrap(), bytes);
    let out = run(&[
        "snapshot",
        "restore",
        s(d),
        "--layout",
        "rust",
        "--group",
        "app",
        "--task",
        "0-1",
        "--from-epoch",
        "3",
        "--to-epoch",
        "live",
    ]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("no live state"), "{}", stderr(&out));
    let out = run(&[
        "--output",
        "json",
        "snapshot",
        "dump",
        s(d),
        "--group",
        "app",
        "--task",
        "0-1",
        "--epoch",
        "4",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_data(&out)["data"]["entries"][0]["kind"], "byte store");
}

#[test]
fn verify_reports_each_bad_file_with_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_group_by(d, "partition-0.snapshot");
    write(
        d,
        "partition-0-epoch-1.snapshot",
        &container_of(&[("j", join_payload(ipc_stream()))]),
    );
    let good = run(&["snapshot", "verify", s(d)]);
    assert_eq!(code(&good), 0, "{}", stderr(&good));

    let mut trailing = container_of(&[]);
    trailing.push(0);
    let mut broken_ipc = ipc_stream();
    let n = broken_ipc.len();
    broken_ipc.truncate(n - 20);
    let outside = tempfile::tempdir().unwrap();
    let target = write(outside.path(), "elsewhere.snapshot", &container_of(&[]));
    write(
        d,
        "partition-1-epoch-1.snapshot",
        &[0, 0, 0, 1, 0, 0, 0, 1, 0],
    );
    write(d, "partition-2-epoch-1.snapshot", &trailing);
    write(d, "partition-3-epoch-1.snapshot", &[0, 0, 0, 9, 0, 0, 0, 0]);
    write(
        d,
        "partition-4-epoch-1.snapshot",
        &hex::decode(GEN_A).unwrap(),
    );
    write(
        d,
        "partition-5-epoch-1.snapshot",
        &container_of(&[("j", join_payload(broken_ipc))]),
    );
    write(
        d,
        "partition-6-epoch-1.snapshot",
        &hex::decode("0000000100000002000000016100000000000000016100000000").unwrap(),
    );
    write(
        d,
        "partition-7-epoch-1.snapshot",
        &hex::decode("000000010000000100000001ff00000000").unwrap(),
    );
    symlink(&target, d.join("partition-8-epoch-1.snapshot")).unwrap();
    let out = run(&["--output", "json", "snapshot", "verify", s(d)]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let data = &json_data(&out)["data"];
    let problem = |file: &str| {
        data["bad"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["file"] == file)
            .unwrap_or_else(|| panic!("{file} not reported: {data}"))["problem"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        problem("partition-1-epoch-1.snapshot"),
        "truncated state snapshot"
    );
    assert_eq!(
        problem("partition-2-epoch-1.snapshot"),
        "trailing bytes in state snapshot"
    );
    assert_eq!(
        problem("partition-3-epoch-1.snapshot"),
        "unsupported state snapshot version 9"
    );
    assert!(problem("partition-4-epoch-1.snapshot").starts_with("legacy (Java ≤ 1.2) gen A"));
    assert!(problem("partition-5-epoch-1.snapshot").contains("does not decode as Arrow IPC"));
    assert_eq!(
        problem("partition-6-epoch-1.snapshot"),
        "duplicate store name a"
    );
    assert_eq!(
        problem("partition-7-epoch-1.snapshot"),
        "non-UTF-8 store name"
    );
    assert!(problem("partition-8-epoch-1.snapshot").contains("symbolic link"));
    assert_eq!(data["checked"], 10);
    assert_eq!(data["bad"].as_array().unwrap().len(), 8);
    let human = run(&["snapshot", "verify", s(d)]);
    assert_eq!(code(&human), 3);
    assert!(
        stderr(&human).contains("8 of 10 snapshot files are bad"),
        "{}",
        stderr(&human)
    );
}

#[test]
fn names_never_lead_outside_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("snapshots");
    fs::create_dir(&d).unwrap();
    // A file outside that a traversal would reach, and a link inside pointing at it.
    let secret = write(
        tmp.path(),
        "x-epoch-1.snapshot",
        &container_of(&[("secret", vec![1])]),
    );
    symlink(&secret, d.join("partition-0.snapshot")).unwrap();
    let out = run(&[
        "snapshot",
        "dump",
        s(&d),
        "--group",
        "..",
        "--task",
        "x",
        "--epoch",
        "1",
    ]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("not retained"), "{}", stderr(&out));
    let out = run(&[
        "snapshot",
        "dump",
        s(&d),
        "--partition",
        "0",
        "--epoch",
        "live",
    ]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    // Restoring over the link is refused; the link's target is untouched.
    write(&d, "partition-0-epoch-2.snapshot", &container_of(&[]));
    let out = restore_epochs(&d, "0", "2", "live", &["--yes"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("symbolic link; refusing to replace it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(&secret).unwrap(),
        container_of(&[("secret", vec![1])])
    );
    // A traversal in a Rust group is sanitised into a name inside the directory.
    let dump = tmp.path().join("dump.json");
    assert_eq!(
        code(&run(&[
            "snapshot",
            "dump",
            s(&d.join("partition-0-epoch-2.snapshot")),
            "--lossless",
            "--out",
            s(&dump)
        ])),
        0
    );
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&d),
        "--layout",
        "rust",
        "--group",
        "../..",
        "--task",
        "../x",
        "--epoch",
        "1",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        d.join(".._..-.._x-epoch-1.snapshot").is_file(),
        "{:?}",
        snapshot_of(&d).keys()
    );
    assert_eq!(
        fs::read(&secret).unwrap(),
        container_of(&[("secret", vec![1])])
    );
}

/// Outside a snapshot directory, `restore --to` follows the rule of every output: a
/// link to a regular file replaces the file it points to and stays a link; a device is
/// written in place; a dangling link is a usage error naming --to.
#[test]
fn restore_to_a_file_outside_a_directory_follows_links_like_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let source = write(d, "source.snapshot", &container_of(&[("k", vec![7])]));
    let dump = d.join("dump.json");
    let out = run(&[
        "snapshot",
        "dump",
        s(&source),
        "--lossless",
        "--out",
        s(&dump),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let real = write(d, "real.snapshot", b"previous");
    symlink("real.snapshot", d.join("link.snapshot")).unwrap();
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&d.join("link.snapshot")),
        "--yes",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(fs::read(&real).unwrap(), container_of(&[("k", vec![7])]));
    assert!(
        fs::symlink_metadata(d.join("link.snapshot"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        "/dev/null",
        "--yes",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    symlink("nowhere/x.snapshot", d.join("dangling.snapshot")).unwrap();
    let out = run(&[
        "snapshot",
        "restore",
        "--from-json",
        s(&dump),
        "--to",
        s(&d.join("dangling.snapshot")),
        "--yes",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--to"), "{}", stderr(&out));
}

#[test]
fn a_missing_directory_is_a_clear_failure_for_every_subcommand() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    for args in [
        vec!["snapshot", "list", s(&missing)],
        vec!["snapshot", "verify", s(&missing)],
        vec!["snapshot", "prune", s(&missing), "--keep", "1", "--yes"],
        vec![
            "snapshot",
            "restore",
            s(&missing),
            "--partition",
            "0",
            "--from-epoch",
            "1",
            "--to-epoch",
            "live",
        ],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 1, "{args:?}");
        assert!(
            stderr(&out).contains(&format!(
                "snapshot directory {} does not exist",
                missing.display()
            )),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&["snapshot", "dump", s(&missing)]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("no such file"), "{}", stderr(&out));
    let file = write(tmp.path(), "file", b"");
    let out = run(&["snapshot", "list", s(&file)]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("is not a directory"));
}

/// Runs the binary as `nobody` when the tests run as root (root ignores file
/// permissions). The binary is copied to a world-readable temp directory first:
/// CI's target directory lives under root's home, which nobody cannot enter.
struct AsNobody {
    _staging: Option<tempfile::TempDir>,
    bin: PathBuf,
    switch_user: bool,
}

impl AsNobody {
    fn new() -> Option<AsNobody> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Some(AsNobody {
                _staging: None,
                bin: PathBuf::from(env!("CARGO_BIN_EXE_krabka-streams")),
                switch_user: false,
            });
        }
        let staging = tempfile::tempdir().ok()?;
        fs::set_permissions(staging.path(), fs::Permissions::from_mode(0o755)).ok()?;
        let bin = staging.path().join("krabka-streams");
        fs::copy(env!("CARGO_BIN_EXE_krabka-streams"), &bin).ok()?;
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).ok()?;
        Some(AsNobody {
            _staging: Some(staging),
            bin,
            switch_user: true,
        })
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut c = Command::new(&self.bin);
        c.args(args).stdin(Stdio::null());
        if self.switch_user {
            c.uid(65534).gid(65534);
        }
        c.output().expect("run krabka-streams as nobody")
    }
}

#[test]
fn unreadable_and_unwritable_directories_fail_clearly_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    // The temp directory must be enterable by nobody.
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let locked = tmp.path().join("locked");
    fs::create_dir(&locked).unwrap();
    write(&locked, "partition-0-epoch-1.snapshot", &container_of(&[]));
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
    let Some(nobody) = AsNobody::new() else {
        eprintln!("skipped: cannot stage the binary for another user here");
        return;
    };
    let out = nobody.run(&["snapshot", "list", s(&locked)]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );

    let readonly = tmp.path().join("readonly");
    fs::create_dir(&readonly).unwrap();
    write(
        &readonly,
        "partition-0-epoch-1.snapshot",
        &container_of(&[("a", vec![1])]),
    );
    fs::set_permissions(&readonly, fs::Permissions::from_mode(0o555)).unwrap();
    let before = snapshot_of(&readonly);
    let out = nobody.run(&[
        "snapshot",
        "restore",
        s(&readonly),
        "--partition",
        "0",
        "--from-epoch",
        "1",
        "--to-epoch",
        "live",
        "--yes",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not written: [partition-0.snapshot]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot_of(&readonly), before);
    let out = nobody.run(&["snapshot", "prune", s(&readonly), "--keep", "0", "--yes"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot remove"), "{}", stderr(&out));
    assert_eq!(snapshot_of(&readonly), before);
}

#[test]
fn prune_keeps_the_newest_epochs_and_live_state() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(d, "partition-0.snapshot", &container_of(&[]));
    for e in 1..=4 {
        write(
            d,
            &format!("partition-0-epoch-{e}.snapshot"),
            &container_of(&[]),
        );
        write(
            d,
            &format!("partition-1-epoch-{e}.snapshot"),
            &container_of(&[]),
        );
    }
    write(d, "app-0-1-epoch-1.snapshot", &container_of(&[]));
    write(d, "app-0-1-epoch-2.snapshot", &container_of(&[]));
    let before = snapshot_of(d);
    let dry = run(&[
        "--dry-run",
        "--output",
        "json",
        "snapshot",
        "prune",
        s(d),
        "--keep",
        "2",
        "--partition",
        "0",
    ]);
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    assert_eq!(snapshot_of(d), before);
    let refused = run(&["snapshot", "prune", s(d), "--keep", "2", "--partition", "0"]);
    assert_eq!(code(&refused), 2);
    assert_eq!(snapshot_of(d), before);
    let out = run(&["snapshot", "prune", s(d), "--keep", "1", "--yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let left: Vec<String> = snapshot_of(d).into_keys().collect();
    assert_eq!(
        left,
        [
            "app-0-1-epoch-2.snapshot",
            "partition-0-epoch-4.snapshot",
            "partition-0.snapshot",
            "partition-1-epoch-4.snapshot"
        ]
    );
    // Everything is younger than a day.
    let out = run(&["snapshot", "prune", s(d), "--older-than", "1d", "--yes"]);
    assert_eq!(code(&out), 0);
    assert_eq!(snapshot_of(d).len(), 4);
    let out = run(&["snapshot", "prune", s(d), "--older-than", "soon"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn verify_of_a_directory_without_snapshot_files_fails_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Only files that are not snapshots: nothing to verify.
    write(d, "notes.txt", b"not a snapshot");
    let out = run(&["snapshot", "verify", s(d)]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds no snapshot file: nothing was verified"),
        "{}",
        stderr(&out)
    );
    let out = run(&["--output", "json", "snapshot", "verify", s(d)]);
    assert_eq!(code(&out), 3);
    assert_eq!(json_data(&out)["data"]["checked"], 0);
    assert_eq!(json_data(&out)["data"]["ok"], false);
    let allowed = run(&[
        "--output",
        "json",
        "snapshot",
        "verify",
        s(d),
        "--allow-empty",
    ]);
    assert_eq!(code(&allowed), 0, "{}", stderr(&allowed));
    assert_eq!(json_data(&allowed)["data"]["ok"], true);
    // One good file: verified, --allow-empty or not.
    write(d, "partition-0.snapshot", &container_of(&[("a", vec![1])]));
    assert_eq!(code(&run(&["snapshot", "verify", s(d)])), 0);
}
