//! `snapshot.json`: the snapshot container, file names and entry payloads (formats §8).

use std::collections::{BTreeMap, BTreeSet};

use krabka_streams::engine::columnar::snapshot::byte_store::{ByteStore, ByteStoreEntry};
use krabka_streams::engine::columnar::snapshot::container::{
    self, Generation, SnapshotEntry, SnapshotError,
};
use krabka_streams::engine::columnar::snapshot::groupby::{GroupByState, GroupState};
use krabka_streams::engine::columnar::snapshot::join::{JoinState, TimedBatch};
use krabka_streams::engine::columnar::snapshot::naming::{
    self, SnapshotFileName, SnapshotKey, SnapshotLayout,
};
use krabka_streams::engine::columnar::snapshot::payload::{self, Payload};
use krabka_streams::engine::columnar::snapshot::tagged::TaggedValue;
use serde_json::Value;

use crate::support::{assert_all_covered, i64_of, id, load, str_of, unhex};

/// Every prefix of each golden input, each golden input with bytes overwritten
/// at pseudo-random places, and pseudo-random tails after golden prefixes. A
/// deterministic xorshift64 keeps failures reproducible.
pub(crate) fn adversarial_inputs(golden: &[Vec<u8>], seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    for input in golden {
        for len in 0..=input.len() {
            out.push(input[..len].to_vec());
        }
        for _ in 0..64 {
            if input.is_empty() {
                break;
            }
            let mut mutated = input.clone();
            for _ in 0..=(next() % 3) {
                let at = (next() % mutated.len() as u64) as usize;
                // Bias towards the bytes that make lengths and counts extreme.
                mutated[at] = match next() % 4 {
                    0 => 0xff,
                    1 => 0x80,
                    2 => 0x00,
                    _ => next() as u8,
                };
            }
            out.push(mutated);
        }
        for _ in 0..32 {
            let keep = (next() % (input.len() as u64 + 1)) as usize;
            let mut tail = input[..keep].to_vec();
            tail.extend((0..next() % 40).map(|_| next() as u8));
            out.push(tail);
        }
    }
    for _ in 0..512 {
        out.push((0..next() % 64).map(|_| next() as u8).collect());
    }
    out
}

fn entries_of(v: &Value) -> Vec<SnapshotEntry> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| SnapshotEntry {
            name: str_of(&e["name"], "name").to_owned(),
            value: unhex(str_of(&e["value_hex"], "value_hex")),
        })
        .collect()
}

fn tagged_of(v: &Value) -> TaggedValue {
    let payload = &v["v"];
    match str_of(&v["t"], "t") {
        "null" => TaggedValue::Null,
        "bool" => TaggedValue::Bool(payload.as_bool().unwrap()),
        "string" => TaggedValue::String(str_of(payload, "v").to_owned()),
        "bytes" => TaggedValue::Bytes(unhex(str_of(payload, "v"))),
        "int" => TaggedValue::Int(i64_of(payload, "v")),
        "uint64" => TaggedValue::Uint64(payload.as_u64().unwrap()),
        "float32" => TaggedValue::Float32(payload.as_f64().unwrap() as f32),
        "float64" => TaggedValue::Float64(payload.as_f64().unwrap()),
        "bigint" => TaggedValue::BigInt(str_of(payload, "v").to_owned()),
        "rational" => TaggedValue::rational(
            i128::from(i64_of(&v["num"], "num")),
            i128::from(i64_of(&v["den"], "den")),
        )
        .unwrap(),
        "list" => TaggedValue::List(
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(tagged_of)
                .collect(),
        ),
        "map" => TaggedValue::Map(
            v["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|pair| (str_of(&pair[0], "key").to_owned(), tagged_of(&pair[1])))
                .collect(),
        ),
        other => panic!("unknown typed value {other}"),
    }
}

/// Maps keep insertion order in the vectors; decoding yields the sorted order.
fn sorted(value: TaggedValue) -> TaggedValue {
    match value {
        TaggedValue::List(items) => TaggedValue::List(items.into_iter().map(sorted).collect()),
        TaggedValue::Map(mut entries) => {
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            TaggedValue::Map(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        other => other,
    }
}

fn expected_hex(v: &Value) -> Vec<u8> {
    unhex(str_of(&v["expected"]["hex"], "hex"))
}

fn check_container(v: &Value) {
    let entries = entries_of(&v["inputs"]["entries"]);
    let bytes = container::encode_entries(&entries).unwrap();
    assert_eq!(bytes, expected_hex(v), "{}", id(v));
    let map: BTreeMap<String, Vec<u8>> = entries
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect();
    assert_eq!(container::encode(&map), bytes, "{}", id(v));
    assert_eq!(container::decode(&bytes).unwrap(), map, "{}", id(v));
    let read = container::read(&bytes).unwrap();
    let expected_generation = if entries.is_empty() {
        Generation::Empty
    } else {
        Generation::B
    };
    assert_eq!(read.generation, expected_generation, "{}", id(v));
    assert_eq!(read.into_map(), map, "{}", id(v));
}

fn check_container_gen_a(v: &Value) {
    let entries = entries_of(&v["inputs"]["entries"]);
    let bytes = expected_hex(v);
    assert_eq!(
        container::decode_gen_a(&bytes).unwrap(),
        entries,
        "{}",
        id(v)
    );
    // Real gen A files fail the gen B parse as truncated …
    assert_eq!(
        container::decode(&bytes),
        Err(SnapshotError::Truncated),
        "{}",
        id(v)
    );
    // … and are then recognised as legacy.
    let read = container::read(&bytes).unwrap();
    assert_eq!(read.generation, Generation::A, "{}", id(v));
    assert_eq!(read.generation.label(), "legacy (Java ≤ 1.2)");
    assert_eq!(read.entries, entries, "{}", id(v));
    // Converting writes gen B, never gen A.
    let map = container::read(&bytes).unwrap().into_map();
    assert_eq!(
        container::read(&container::encode(&map))
            .unwrap()
            .generation,
        Generation::B
    );
}

fn check_detect(v: &Value) {
    let hexes = v["inputs"]["hexes"].as_array().unwrap();
    let generations = v["expected"]["generations"].as_array().unwrap();
    assert_eq!(hexes.len(), generations.len(), "{}", id(v));
    for (hex, expected) in hexes.iter().zip(generations) {
        let detected = container::detect(&unhex(str_of(hex, "hex"))).unwrap();
        let expected = match str_of(expected, "generation") {
            "B" => Generation::B,
            "A" => Generation::A,
            "empty" => Generation::Empty,
            other => panic!("unknown generation {other}"),
        };
        assert_eq!(detected, expected, "{}", id(v));
    }
}

fn check_decode_error(v: &Value) {
    let bytes = unhex(str_of(&v["inputs"]["hex"], "hex"));
    let expected = str_of(&v["expected"]["error_message"], "error_message");
    assert_eq!(
        container::decode(&bytes).unwrap_err().to_string(),
        expected,
        "{}",
        id(v)
    );
    assert_eq!(
        container::read(&bytes).unwrap_err().to_string(),
        expected,
        "{}",
        id(v)
    );
    assert!(container::detect(&bytes).is_err(), "{}", id(v));
}

fn check_file_name(v: &Value) {
    let inputs = &v["inputs"];
    let epoch = i64_of(&inputs["epoch"], "epoch");
    let key = match str_of(&inputs["layout"], "layout") {
        "java-go" => SnapshotKey::JavaGo {
            partition: i32::try_from(i64_of(&inputs["partition"], "partition")).unwrap(),
            epoch,
        },
        "rust" => SnapshotKey::Rust {
            group: str_of(&inputs["group"], "group").to_owned(),
            task: str_of(&inputs["task"], "task").to_owned(),
            epoch,
        },
        other => panic!("unknown layout {other}"),
    };
    let layout: SnapshotLayout = str_of(&inputs["layout"], "layout").parse().unwrap();
    assert_eq!(key.layout(), layout, "{}", id(v));
    let name = key.file_name().unwrap();
    assert_eq!(
        name,
        str_of(&v["expected"]["file_name"], "file_name"),
        "{}",
        id(v)
    );
    // And back: the listing recognises the layout and the epoch.
    let parsed = naming::parse_file_name(&name).unwrap();
    assert_eq!(parsed.layout(), layout, "{}", id(v));
    assert_eq!(parsed.epoch(), epoch, "{}", id(v));
    match (&key, &parsed) {
        (SnapshotKey::JavaGo { partition, .. }, SnapshotFileName::JavaGo { partition: p, .. }) => {
            assert_eq!(partition, p, "{}", id(v));
        }
        (SnapshotKey::Rust { group, task, .. }, SnapshotFileName::Rust(rust)) => {
            assert_eq!(
                rust.stem,
                format!("{}-{}", naming::sanitise(group), naming::sanitise(task)),
                "{}",
                id(v)
            );
        }
        _ => panic!("{}: layout mismatch", id(v)),
    }
}

fn check_tagged_value(v: &Value) {
    let value = tagged_of(&v["inputs"]["value"]);
    let bytes = value.encode();
    assert_eq!(bytes, expected_hex(v), "{}", id(v));
    assert_eq!(
        TaggedValue::decode(&bytes).unwrap(),
        sorted(value),
        "{}",
        id(v)
    );
}

fn check_groupby(v: &Value) {
    let inputs = &v["inputs"];
    let values =
        |g: &Value, what: &str| g[what].as_array().unwrap().iter().map(tagged_of).collect();
    let state = GroupByState {
        stream_time: i64_of(&inputs["stream_time"], "stream_time"),
        groups: inputs["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| GroupState {
                parts: values(g, "parts"),
                aggregates: values(g, "aggregates"),
            })
            .collect(),
    };
    let bytes = state.encode();
    assert_eq!(bytes, expected_hex(v), "{}", id(v));
    assert_eq!(GroupByState::decode(&bytes).unwrap(), state, "{}", id(v));
    assert_eq!(
        payload::classify(&bytes),
        Payload::GroupBy(state),
        "{}",
        id(v)
    );
}

fn check_u64(v: &Value) {
    let count = v["inputs"]["count"].as_u64().unwrap();
    let bytes = count.to_be_bytes();
    assert_eq!(bytes.to_vec(), expected_hex(v), "{}", id(v));
    assert_eq!(
        payload::classify(&bytes),
        Payload::Counter(count),
        "{}",
        id(v)
    );
}

fn check_rust_byte_store(v: &Value) {
    let store = ByteStore {
        entries: v["inputs"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| ByteStoreEntry {
                key: unhex(str_of(&e["key_hex"], "key_hex")),
                value: unhex(str_of(&e["value_hex"], "value_hex")),
            })
            .collect(),
    };
    let bytes = store.encode();
    assert_eq!(bytes, expected_hex(v), "{}", id(v));
    assert_eq!(ByteStore::decode(&bytes).unwrap(), store, "{}", id(v));
    assert_eq!(
        payload::classify(&bytes),
        Payload::ByteStore(store),
        "{}",
        id(v)
    );
}

#[test]
fn every_snapshot_vector_is_checked() {
    let mut covered = BTreeSet::new();
    for v in load("snapshot") {
        match str_of(&v["kind"], "kind") {
            "snapshot.container" => check_container(&v),
            "snapshot.container_gen_a" => check_container_gen_a(&v),
            "snapshot.detect" => check_detect(&v),
            "snapshot.decode_error" => check_decode_error(&v),
            "snapshot.file_name" => check_file_name(&v),
            "snapshot.tagged_value" => check_tagged_value(&v),
            "snapshot.groupby" => check_groupby(&v),
            "snapshot.u64" => check_u64(&v),
            "snapshot.rust_byte_store" => check_rust_byte_store(&v),
            other => panic!("{}: unhandled kind {other}", id(&v)),
        }
        covered.insert(id(&v).to_string());
    }
    assert_all_covered("snapshot", &covered);
}

#[test]
fn a_go_join_payload_with_a_real_ipc_stream_decodes_for_display() {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let batch =
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).unwrap();
    let ipc = crate::framing::ipc_stream(&batch);
    let state = JoinState {
        stream_time: 42,
        left: vec![TimedBatch {
            max_timestamp: 40,
            ipc,
        }],
        right: vec![],
    };
    let bytes = state.encode();
    let Payload::Join(decoded) = payload::classify(&bytes) else {
        panic!("not classified as a join");
    };
    let (_, batches) = decoded.left[0].record_batches().unwrap();
    assert_eq!(batches, vec![batch]);
}

fn golden_payloads() -> Vec<Vec<u8>> {
    let mut golden: Vec<Vec<u8>> = load("snapshot")
        .iter()
        .flat_map(|v| {
            let mut hexes = vec![&v["inputs"]["hex"], &v["expected"]["hex"]];
            if let Some(all) = v["inputs"]["hexes"].as_array() {
                hexes.extend(all);
            }
            hexes
                .into_iter()
                .filter_map(|h| h.as_str().map(unhex))
                .collect::<Vec<_>>()
        })
        .collect();
    golden.push(
        JoinState {
            stream_time: 1,
            left: vec![TimedBatch {
                max_timestamp: 1,
                ipc: vec![0xff; 8],
            }],
            right: vec![TimedBatch {
                max_timestamp: 2,
                ipc: vec![],
            }],
        }
        .encode(),
    );
    golden
}

#[test]
fn snapshot_decoders_never_panic() {
    for input in adversarial_inputs(&golden_payloads(), 0x5a_b5_07) {
        if let Ok(map) = container::decode(&input) {
            assert_eq!(container::encode(&map).len(), input.len());
        }
        let _ = container::decode_gen_a(&input);
        let _ = container::read(&input);
        if let Ok(value) = TaggedValue::decode(&input) {
            assert_eq!(value.encode(), input, "tagged decoding is canonical");
        }
        if let Ok(state) = GroupByState::decode(&input) {
            assert_eq!(state.encode(), input);
        }
        if let Ok(state) = JoinState::decode(&input) {
            assert_eq!(state.encode(), input);
        }
        if let Ok(store) = ByteStore::decode(&input) {
            assert_eq!(store.encode(), input);
        }
        let _ = payload::classify(&input).kind();
        if let Ok(text) = std::str::from_utf8(&input) {
            let _ = naming::parse_file_name(text);
        }
    }
}

#[test]
fn huge_length_prefixes_fail_fast() {
    // Counts and lengths of u32::MAX with nothing behind them: errors, not allocations.
    let max = [0xff; 4];
    let container = [&[0, 0, 0, 1][..], &max, &max].concat();
    assert_eq!(container::decode(&container), Err(SnapshotError::Truncated));
    assert!(TaggedValue::decode(&[&b"L"[..], &max].concat()).is_err());
    assert!(TaggedValue::decode(&[&b"s"[..], &max].concat()).is_err());
    assert!(GroupByState::decode(&[&[1u8][..], &[0; 8], &max].concat()).is_err());
    assert!(JoinState::decode(&[&[0, 0, 0, 1][..], &[0; 8], &max].concat()).is_err());
    assert!(ByteStore::decode(&[&[0, 0, 0, 1][..], &max].concat()).is_err());
}
