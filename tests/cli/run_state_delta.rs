//! The Kafka state store's deltas end to end against Tansu (docs/topology.md
//! "State in Kafka", docs/formats.md §8.7): a group-by over many groups runs
//! rounds that touch a few of them; the state topic, read with confluent-kafka
//! (not our code), holds one full snapshot and small delta records, which the
//! test applies itself (zlib's CRC-32 checks each result) to get the container
//! `snapshot dump` decodes; a second member takes over with exact totals, and a
//! damaged delta after the last good one (a writer that died mid-save) leaves
//! it the previous state.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::run_online::{create_topic, produce, start_runner};
use crate::run_state_kafka::{await_truth, signal, wait_exit};
use crate::support::orders_totals::{
    dumped_totals, orders_to_totals, two_machines, write_topology,
};
use crate::support::tansu::Tansu;
use crate::support::{unique_name, venv_python};

const USERS: usize = 600;

fn topology(dir: &Path, group: &str, input: &str, output: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{group}.yaml"));
    write_topology(&path, group, input, output, &["state_store: kafka"])
}

/// Reads partition 0 of the state topic with confluent-kafka and rebuilds the
/// live state of `partition-0` from its latest full record and the deltas after
/// it, as docs/formats.md §8.7 says; writes the container to `argv[3]`.
const READ_STATE: &str = r#"
import json, struct, sys, zlib
from confluent_kafka import Consumer, TopicPartition
bootstrap, topic, out = sys.argv[1], sys.argv[2], sys.argv[3]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "delta-check", "enable.auto.commit": False})
low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
c.assign([TopicPartition(topic, 0, low)])
records = []
while high > low and (not records or records[-1]["offset"] < high - 1):
    m = c.poll(10)
    if m is None:
        raise SystemExit("state topic read timed out")
    if m.error():
        continue
    records.append({"offset": m.offset(), "key": m.key().decode(), "value": m.value(),
                    "headers": {k: v.decode() for k, v in (m.headers() or [])}})
c.close()
full = [r for r in records if r["key"] == "partition-0" and r["value"] is not None][-1]
version = full["headers"]["krabka.state.version"]
state, seq = bytes(full["value"]), 0
by_key = {r["key"]: r for r in records if r["value"] is not None}
while ("partition-0.delta-%s-%d" % (version, seq + 1)) in by_key:
    seq += 1
    d = by_key["partition-0.delta-%s-%d" % (version, seq)]
    fv, fseq, length, crc = d["headers"]["krabka.state.delta"].split("/")
    assert (fv, int(fseq)) == (version, seq)
    patch, at, new = d["value"], 1, bytearray()
    assert patch[0] == 1
    while at < len(patch):
        op = patch[at]
        if op == ord("C"):
            start, n = struct.unpack(">QQ", patch[at + 1:at + 17])
            new += state[start:start + n]
            at += 17
        elif op == ord("L"):
            (n,) = struct.unpack(">I", patch[at + 1:at + 5])
            new += patch[at + 5:at + 5 + n]
            at += 5 + n
        else:
            raise SystemExit("unknown op %r" % op)
    assert len(new) == int(length), (len(new), length)
    assert "%08x" % zlib.crc32(bytes(new)) == crc, "checksum of delta %d" % seq
    state = bytes(new)
open(out, "wb").write(state)
print(json.dumps({
    "records": [{"key": r["key"], "size": None if r["value"] is None else len(r["value"])} for r in records],
    "full_size": len(full["value"]), "version": version, "applied": seq,
    "last_delta_headers": by_key["partition-0.delta-%s-%d" % (version, seq)]["headers"] if seq else None,
}))
"#;

/// Produces a delta record after the last one whose result does not match the
/// length and checksum it names: what a reader must never take.
const INJECT_DAMAGED: &str = r#"
import json, struct, sys
from confluent_kafka import Producer
bootstrap, topic, headers, seq = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
version, _, length, crc = headers["krabka.state.delta"].split("/")
headers["krabka.state.delta"] = "%s/%d/%s/%08x" % (version, seq, length, int(crc, 16) ^ 0x5a5a)
# Copies all but the last 40 bytes of the base, then 40 bytes of junk: the right length.
patch = bytes([1]) + b"C" + struct.pack(">QQ", 0, int(length) - 40) + b"L" + struct.pack(">I", 40) + b"\xff" * 40
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
p.produce(topic, key="partition-0.delta-%s-%d" % (version, seq), value=patch, partition=0,
          headers=[(k, v.encode()) for k, v in headers.items()])
p.flush(10)
print(json.dumps({"key": "partition-0.delta-%s-%d" % (version, seq)}))
"#;

fn produce_users(
    bootstrap: &str,
    topic: &str,
    users: impl Iterator<Item = usize>,
    round: i64,
    truth: &mut BTreeMap<String, i64>,
) {
    let records: Vec<(i32, String, String)> = users
        .map(|u| {
            let user = format!("user-{u:05}");
            let amount = round * 7 + u as i64 % 13 + 1;
            *truth.entry(user.clone()).or_default() += amount;
            (
                0,
                user.clone(),
                json!({"user": user, "amount": amount}).to_string(),
            )
        })
        .collect();
    produce(bootstrap, topic, &records);
}

/// Waits for the sink to show the truth; otherwise stops `runner` and fails
/// with the users whose totals differ and the runner's stderr.
fn expect_truth(
    bootstrap: &str,
    output: &str,
    truth: &BTreeMap<String, i64>,
    runner: &mut Option<std::process::Child>,
    what: &str,
) {
    let seen = await_truth(bootstrap, output, truth);
    if &seen == truth {
        return;
    }
    let wrong: Vec<String> = truth
        .iter()
        .filter(|(u, t)| seen.get(*u) != Some(t))
        .take(10)
        .map(|(u, t)| format!("{u}: {:?}, truth {t}", seen.get(u)))
        .collect();
    let stderr = runner.take().map(|child| {
        signal(&child, "-TERM");
        String::from_utf8_lossy(&child.wait_with_output().unwrap().stderr).into_owned()
    });
    panic!(
        "{what}: {} wrong, e.g. {wrong:?}\nrunner stderr:\n{}",
        truth
            .iter()
            .filter(|(u, t)| seen.get(*u) != Some(t))
            .count(),
        stderr.unwrap_or_default()
    );
}

/// The length of the container the last applied delta results in: the state as
/// the runner last saved it (a full may have been written before the first
/// round had taken in every record, so the full's own size is no yardstick).
fn final_length(seen: &Value) -> usize {
    let header = seen["last_delta_headers"]["krabka.state.delta"]
        .as_str()
        .unwrap_or_else(|| panic!("no delta applied: {seen}"));
    header.split('/').nth(2).unwrap().parse().unwrap()
}

fn read_state(bootstrap: &str, topic: &str, out: &Path) -> Value {
    venv_python(READ_STATE, &[bootstrap, topic, out.to_str().unwrap()])
}

#[test]
fn rounds_touching_few_groups_write_small_deltas_and_the_next_owner_gets_the_exact_state() {
    let (_tansu, bootstrap, input, output) = orders_to_totals(1);
    let group = unique_name("delta-sums");
    let state_topic = format!("{group}-state");
    let (machines, files) = two_machines(|m| topology(m, &group, &input, &output));
    let mut truth = BTreeMap::new();

    // Every user once: the state has all the groups.
    produce_users(&bootstrap, &input, 0..USERS, 0, &mut truth);
    let mut a = Some(start_runner(&bootstrap, &files[0], &[]));
    expect_truth(&bootstrap, &output, &truth, &mut a, "all users");
    // Rounds that touch 6 of the 600 groups (1%), some sums growing a digit.
    for round in 1..=4i64 {
        let touched = (0..6).map(|i| (i * 97 + round as usize * 37) % USERS);
        produce_users(&bootstrap, &input, touched, round * 100, &mut truth);
        expect_truth(
            &bootstrap,
            &output,
            &truth,
            &mut a,
            &format!("round {round}"),
        );
    }
    let mut a = a.unwrap();
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));

    // The state topic as an independent reader sees it: one full, small deltas.
    let rebuilt = machines[0].path().join("rebuilt.snapshot");
    let seen = read_state(&bootstrap, &state_topic, &rebuilt);
    let full = seen["full_size"].as_u64().unwrap() as usize;
    let deltas: Vec<usize> = seen["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["key"].as_str().unwrap().contains(".delta-"))
        .filter_map(|r| r["size"].as_u64())
        .map(|s| s as usize)
        .collect();
    let state = final_length(&seen);
    assert!(state > 15_000 && full > 0, "{seen}");
    assert!(seen["applied"].as_u64().unwrap() >= 4, "{seen}");
    assert!(deltas.len() >= 4, "{seen}");
    // The rounds touching 6 users are the last saves (under load the first
    // rounds may take in the 600 users over several saves, the full among them).
    for size in &deltas[deltas.len() - 4..] {
        assert!(
            size * 20 < state,
            "a delta of {size} bytes against a state of {state}: {seen}"
        );
    }
    // The rebuilt container is the state: every user with its true total.
    let dump = dumped_totals(&rebuilt);
    for (user, total) in [
        ("user-00000", truth["user-00000"]),
        ("user-00599", truth["user-00599"]),
    ] {
        assert!(dump.contains(user), "{user} missing from the dump");
        assert!(
            dump.contains(&total.to_string()),
            "{user} {total} not in the dump"
        );
    }

    // A writer that died mid-save left a damaged delta after the last good one.
    let headers = seen["last_delta_headers"].to_string();
    let next = (seen["applied"].as_u64().unwrap() + 1).to_string();
    let injected = venv_python(
        INJECT_DAMAGED,
        &[
            bootstrap.as_str(),
            state_topic.as_str(),
            headers.as_str(),
            next.as_str(),
        ],
    );
    // The second machine takes over from the full and the good deltas only.
    let mut b = Some(start_runner(&bootstrap, &files[1], &[]));
    produce_users(&bootstrap, &input, [3, 500].into_iter(), 900, &mut truth);
    expect_truth(&bootstrap, &output, &truth, &mut b, "the second member");
    let b = b.unwrap();
    signal(&b, "-TERM");
    let out = b.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "partition 0 restored from the state before {} at offset",
            injected["key"].as_str().unwrap()
        )) && stderr.contains("state delta result has checksum"),
        "{stderr}"
    );
    // Its first save after the handoff was a full; its deltas follow that one.
    let after = read_state(&bootstrap, &state_topic, &rebuilt);
    assert_ne!(after["version"], seen["version"], "{after}");
    // And the deltas it found (the damaged one too) are tombstoned after it.
    let last_of = |key: &str| {
        after["records"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|r| r["key"] == key)
            .cloned()
    };
    assert_eq!(
        last_of(injected["key"].as_str().unwrap()).map(|r| r["size"].clone()),
        Some(Value::Null),
        "{after}"
    );
}

/// A join of `orders` and `payments` on the user within a long window: its
/// state is every row of both sides, as stored batches (formats §8.6).
fn join_topology(dir: &Path, group: &str, topics: [&str; 3]) -> std::path::PathBuf {
    let [orders, payments, output] = topics;
    let path = dir.join(format!("{group}.yaml"));
    std::fs::write(
        &path,
        format!(
            r#"version: 1
settings:
  consumer_group: {group}
  state_store: kafka
nodes:
  - source: orders
    topics: [{orders}]
    value: json
  - source: payments
    topics: [{payments}]
    value: json
  - join: paid
    left: orders
    right: payments
    on: user
    window: 1000h
  - sink: out
    parent: paid
    topic: {output}
    value: json
"#
        ),
    )
    .unwrap();
    path
}

/// One order and one payment per user of `users`, tagged with `round`; adds
/// to `counts` (orders, payments per user) and returns how many joined pairs
/// exist in all after it (each order meets each payment of its user).
fn produce_pairs(
    bootstrap: &str,
    [orders, payments]: [&str; 2],
    users: &[usize],
    round: i64,
    counts: &mut BTreeMap<usize, (u64, u64)>,
) -> u64 {
    for (topic, field) in [(orders, "order"), (payments, "payment")] {
        let records: Vec<(i32, String, String)> = users
            .iter()
            .map(|u| {
                let user = format!("user-{u:03}");
                (
                    0,
                    user.clone(),
                    json!({"user": user, field: round}).to_string(),
                )
            })
            .collect();
        produce(bootstrap, topic, &records);
    }
    for u in users {
        let c = counts.entry(*u).or_default();
        c.0 += 1;
        c.1 += 1;
    }
    counts.values().map(|(o, p)| o * p).sum()
}

/// Waits until the sink holds `pairs` joined records (or the deadline), then
/// returns them as (user, order round, payment round).
fn joined_pairs(bootstrap: &str, output: &str, pairs: u64) -> Vec<(String, i64, i64)> {
    let reads = crate::run_online::read_until(
        bootstrap,
        output,
        1,
        std::time::Duration::from_secs(90),
        |rs| rs.len() as u64 >= pairs,
    );
    reads
        .iter()
        .map(|r| {
            (
                r.value["left_user"].as_str().unwrap_or("").to_owned(),
                r.value["left_order"].as_i64().unwrap_or(-1),
                r.value["right_payment"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

/// Issue 19 said a join's saves are all fulls (no dirty tracking, unlike the
/// group-by). They are not: a round that appends a batch to each side saves a
/// delta record a small part of the full, an independent reader rebuilds the
/// container from the full and its deltas (zlib's CRC-32 on each), `snapshot
/// dump` decodes it as a join, and the next owner continues with every pair
/// exactly once.
#[test]
fn a_join_round_writes_a_small_delta_and_the_next_owner_joins_every_pair_once() {
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (orders, payments, output) = (
        unique_name("orders"),
        unique_name("payments"),
        unique_name("paid"),
    );
    for topic in [&orders, &payments, &output] {
        create_topic(&bootstrap, topic, 1);
    }
    let group = unique_name("delta-join");
    let state_topic = format!("{group}-state");
    let machines: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let files: Vec<_> = machines
        .iter()
        .map(|m| join_topology(m.path(), &group, [&orders, &payments, &output]))
        .collect();
    let sides = [orders.as_str(), payments.as_str()];
    let mut counts = BTreeMap::new();

    // Every user once: the state holds 200 rows a side.
    let all: Vec<usize> = (0..200).collect();
    let mut pairs = produce_pairs(&bootstrap, sides, &all, 0, &mut counts);
    let mut a = start_runner(&bootstrap, &files[0], &[]);
    assert_eq!(joined_pairs(&bootstrap, &output, pairs).len() as u64, pairs);
    // Rounds of three users: each appends a small batch to each side.
    for round in 1..=5i64 {
        let touched: Vec<usize> = (0..3)
            .map(|i| (i * 61 + round as usize * 7) % 200)
            .collect();
        pairs = produce_pairs(&bootstrap, sides, &touched, round, &mut counts);
        assert_eq!(
            joined_pairs(&bootstrap, &output, pairs).len() as u64,
            pairs,
            "round {round}"
        );
    }
    signal(&a, "-TERM");
    assert_eq!(wait_exit(&mut a).code(), Some(130));

    let rebuilt = machines[0].path().join("rebuilt.snapshot");
    let seen = read_state(&bootstrap, &state_topic, &rebuilt);
    let full = seen["full_size"].as_u64().unwrap() as usize;
    let deltas: Vec<usize> = seen["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["key"].as_str().unwrap().contains(".delta-"))
        .filter_map(|r| r["size"].as_u64())
        .map(|s| s as usize)
        .collect();
    assert!(seen["applied"].as_u64().unwrap() >= 4, "{seen}");
    assert!(deltas.len() >= 4, "{seen}");
    let state = final_length(&seen);
    assert!(full > 0 && state >= full / 2, "{seen}");
    // The rounds of three users are the last saves (under load the 200 users
    // may come in over several saves after the full).
    for size in &deltas[deltas.len() - 4..] {
        assert!(
            size * 8 < state,
            "a join delta of {size} bytes against a state of {state}: {seen}"
        );
    }
    let dump = dumped_totals(&rebuilt);
    assert!(dump.contains("paid"), "{dump}");

    // The next owner restores the full and its deltas and joins on from there.
    let mut b = start_runner(&bootstrap, &files[1], &[]);
    pairs = produce_pairs(&bootstrap, sides, &[5, 150], 9, &mut counts);
    let got = joined_pairs(&bootstrap, &output, pairs);
    // A moment for duplicates to show, should there be any.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let got_all = joined_pairs(&bootstrap, &output, got.len() as u64);
    signal(&b, "-TERM");
    let status = wait_exit(&mut b);
    let mut unique = got_all.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), got_all.len(), "a pair was joined twice");
    assert_eq!(
        got_all.len() as u64,
        pairs,
        "pairs missing after the handoff"
    );
    assert_eq!(status.code(), Some(130));
}
