//! `barrier.json` (formats §7, semantics §8): every vector is checked here by kind, except the
//! alignment/restore scenarios listed in `CHECKED_BY_RUNNER`, which need the runner's fakes.

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU32;

use serde_json::Value;

use crate::support::{assert_all_covered, i64_of, id, load, of_kind, str_of, unhex};
use krabka_streams::engine::columnar::barrier::in_memory::InMemoryConsumer;
use krabka_streams::engine::columnar::barrier::marker::{
    MARKER_BATCH_BASE_SEQUENCE, MARKER_BATCH_IS_CONTROL, MARKER_BATCH_IS_TRANSACTIONAL,
    MARKER_BATCH_PRODUCER_EPOCH, MARKER_BATCH_PRODUCER_ID,
};
use krabka_streams::engine::columnar::barrier::{
    BARRIER_MARKER_KEY, BARRIER_STATE_TOPIC, BarrierMarker, BarrierStateKey, BarrierStateValue,
    Cut, CutOffset, CutReadError, CutReader, CutReaderOptions, CutStatus, CutTopic,
    GroupDefinition, InjectionStart, InjectionTarget, NO_EPOCH, RecordKind, RecordPart,
    TopicPartition, decode_marker_key, decode_record, group_partition,
};

const AREA: &str = "barrier";

/// Kinds fully checked by this file.
const CHECKED_KINDS: [&str; 7] = [
    "barrier.record",
    "barrier.marker",
    "barrier.decode_error",
    "barrier.reader",
    "barrier.reached",
    "barrier.status_text",
    "barrier.group_partition",
];

/// `behaviour` vectors about the cut reader itself, checked here by id.
const CHECKED_BEHAVIOUR: [&str; 1] = ["BARRIER-READER-INCREMENTAL"];

/// `behaviour` vectors about barrier alignment and restore in the runner (semantics §8,
/// "Alignment per runner round" and "Restore"): read from this same file and checked by the
/// runner's unit tests in `src/engine/columnar/runner/group/tests/barrier.rs`, one test each.
const CHECKED_BY_RUNNER: [&str; 8] = [
    "BARRIER-ALIGN-HOLD",
    "BARRIER-ALIGN-WAIT-ALL",
    "BARRIER-ALIGN-IDLE-POSITIONS",
    "BARRIER-ALIGN-LOST",
    "BARRIER-ALIGN-PARTIAL-IGNORED",
    "BARRIER-RESTORE",
    "BARRIER-RESTORE-PARTIAL",
    "BARRIER-ALIGN-TRANSACTIONAL",
];

// ---- building values from vector fields -------------------------------------------------

fn i32_of(v: &Value, what: &str) -> i32 {
    i32::try_from(i64_of(v, what)).unwrap_or_else(|_| panic!("{what} is not an i32: {v}"))
}

fn array_of<'a>(v: &'a Value, what: &str) -> &'a Vec<Value> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what} is not an array: {v}"))
}

fn tp_of(text: &str) -> TopicPartition {
    let (topic, partition) = text
        .rsplit_once('/')
        .unwrap_or_else(|| panic!("not topic/partition: {text}"));
    TopicPartition::new(topic, partition.parse().unwrap())
}

fn key_of(v: &Value) -> BarrierStateKey {
    assert_eq!(i64_of(&v["version"], "key version"), 0, "key version");
    BarrierStateKey {
        kind: RecordKind::from_code(i64_of(&v["kind"], "kind") as i16),
        group: str_of(&v["group"], "group").to_owned(),
        epoch: i64_of(&v["epoch"], "epoch"),
    }
}

fn cut_of(v: &Value) -> Cut {
    assert_eq!(i64_of(&v["version"], "cut version"), 0, "cut version");
    Cut {
        triggered_at: i64_of(&v["triggered_at"], "triggered_at"),
        completed_at: i64_of(&v["completed_at"], "completed_at"),
        status: CutStatus::from_code(i64_of(&v["status"], "status") as i8),
        topics: array_of(&v["topics"], "topics")
            .iter()
            .map(|t| CutTopic {
                topic: str_of(&t["topic"], "topic").to_owned(),
                partitions: array_of(&t["partitions"], "partitions")
                    .iter()
                    .map(|p| CutOffset {
                        partition: i32_of(&p["partition"], "partition"),
                        offset: i64_of(&p["offset"], "offset"),
                    })
                    .collect(),
            })
            .collect(),
        missing: array_of(&v["missing"], "missing")
            .iter()
            .map(|m| {
                TopicPartition::new(
                    str_of(&m["topic"], "topic"),
                    i32_of(&m["partition"], "partition"),
                )
            })
            .collect(),
    }
}

fn group_of(v: &Value) -> GroupDefinition {
    assert_eq!(i64_of(&v["version"], "group version"), 0, "group version");
    GroupDefinition {
        topics: array_of(&v["topics"], "topics")
            .iter()
            .map(|t| str_of(t, "topic").to_owned())
            .collect(),
        interval_ms: i64_of(&v["interval_ms"], "interval_ms"),
        retained_cuts: i32_of(&v["retained_cuts"], "retained_cuts"),
        last_epoch: i64_of(&v["last_epoch"], "last_epoch"),
    }
}

fn injection_of(v: &Value) -> InjectionStart {
    assert_eq!(i64_of(&v["version"], "injection version"), 0);
    InjectionStart {
        coordinator_epoch: i32_of(&v["coordinator_epoch"], "coordinator_epoch"),
        triggered_at: i64_of(&v["triggered_at"], "triggered_at"),
        targets: array_of(&v["targets"], "targets")
            .iter()
            .map(|t| InjectionTarget {
                topic: str_of(&t["topic"], "topic").to_owned(),
                partition_count: i32_of(&t["partition_count"], "partition_count"),
            })
            .collect(),
    }
}

/// The decoded value a vector's `inputs.value` describes, by the key's kind.
fn value_of(kind: RecordKind, v: &Value) -> BarrierStateValue {
    if v.is_null() {
        return BarrierStateValue::Tombstone;
    }
    match kind {
        RecordKind::Group => BarrierStateValue::Group(group_of(v)),
        RecordKind::InjectionStart => BarrierStateValue::InjectionStart(injection_of(v)),
        RecordKind::Cut => BarrierStateValue::Cut(cut_of(v)),
        RecordKind::Unknown(k) => panic!("no value layout for kind {k}"),
    }
}

fn encode_value(value: &BarrierStateValue) -> Vec<u8> {
    match value {
        BarrierStateValue::Tombstone => Vec::new(),
        BarrierStateValue::Group(g) => g.encode().unwrap(),
        BarrierStateValue::InjectionStart(i) => i.encode().unwrap(),
        BarrierStateValue::Cut(c) => c.encode().unwrap(),
        BarrierStateValue::Skipped => panic!("nothing to encode"),
    }
}

fn part_name(part: RecordPart) -> &'static str {
    match part {
        RecordPart::Key => "key",
        RecordPart::CutValue => "cut value",
        RecordPart::GroupValue => "group value",
        RecordPart::InjectionValue => "injection value",
        RecordPart::MarkerKey => "marker key",
        RecordPart::MarkerValue => "marker value",
    }
}

/// A fake holding a vector's `inputs.records`.
fn consumer_with(records: &Value, report_ends: bool) -> InMemoryConsumer {
    let mut consumer = InMemoryConsumer::new(report_ends);
    for r in array_of(records, "records") {
        let key = key_of(&r["key"]);
        let value = if let Some(hex) = r.get("value_hex") {
            Some(unhex(str_of(hex, "value_hex")))
        } else {
            let value = value_of(key.kind, &r["value"]);
            (value != BarrierStateValue::Tombstone).then(|| encode_value(&value))
        };
        consumer.append(
            i32_of(&r["partition"], "partition"),
            key.encode().unwrap(),
            value,
        );
    }
    consumer
}

fn reader_over(consumer: InMemoryConsumer, partitions: i32) -> CutReader<InMemoryConsumer> {
    CutReader::new(consumer, partitions, CutReaderOptions::default()).unwrap()
}

fn epochs_after(reader: &mut CutReader<InMemoryConsumer>, group: &str, after: i64) -> Vec<i64> {
    reader
        .complete_cuts_after(group, after)
        .unwrap()
        .iter()
        .map(|c| c.epoch)
        .collect()
}

// ---- the vectors -------------------------------------------------------------------------

#[test]
fn records_encode_to_their_frozen_bytes_and_decode_back_to_the_same_fields() {
    for v in of_kind(AREA, "barrier.record") {
        let (inputs, expected) = (&v["inputs"], &v["expected"]);
        let key = key_of(&inputs["key"]);
        let value = value_of(key.kind, &inputs["value"]);

        let key_bytes = key.encode().unwrap();
        assert_eq!(
            hex::encode(&key_bytes),
            str_of(&expected["key_hex"], "key_hex"),
            "{}",
            id(&v)
        );
        let value_bytes = encode_value(&value);
        assert_eq!(
            hex::encode(&value_bytes),
            str_of(&expected["value_hex"], "value_hex"),
            "{}",
            id(&v)
        );
        if let Some(len) = expected.get("key_len") {
            assert_eq!(key_bytes.len() as i64, i64_of(len, "key_len"), "{}", id(&v));
        }
        if let Some(len) = expected.get("value_len") {
            assert_eq!(
                value_bytes.len() as i64,
                i64_of(len, "value_len"),
                "{}",
                id(&v)
            );
        }

        let (decoded_key, decoded_value) = decode_record(&key_bytes, Some(&value_bytes))
            .unwrap_or_else(|e| panic!("{}: {e}", id(&v)));
        assert_eq!(decoded_key, key, "{}", id(&v));
        assert_eq!(decoded_value, value, "{}", id(&v));
        if value == BarrierStateValue::Tombstone {
            assert_eq!(
                decode_record(&key_bytes, None).unwrap().1,
                BarrierStateValue::Tombstone,
                "{}: a null value is a tombstone too",
                id(&v)
            );
        }

        match (&expected["cut"], &decoded_value) {
            (Value::Null, BarrierStateValue::Cut(_)) => panic!("{}: expected no cut", id(&v)),
            (Value::Null, _) => {}
            (want, BarrierStateValue::Cut(cut)) => {
                assert_eq!(
                    cut.is_complete(),
                    want["complete"].as_bool().unwrap(),
                    "{}",
                    id(&v)
                );
                let offsets: BTreeMap<String, i64> = cut
                    .offsets()
                    .map(|(tp, offset)| (tp.to_string(), offset))
                    .collect();
                let want_offsets: BTreeMap<String, i64> = want["offsets"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(tp, o)| (tp.clone(), i64_of(o, "offset")))
                    .collect();
                assert_eq!(offsets, want_offsets, "{}", id(&v));
                let missing: Vec<TopicPartition> = array_of(&want["missing"], "missing")
                    .iter()
                    .map(|m| tp_of(str_of(m, "missing")))
                    .collect();
                assert_eq!(cut.missing, missing, "{}", id(&v));
            }
            (_, other) => panic!("{}: expected a cut, decoded {other:?}", id(&v)),
        }
    }
}

#[test]
fn every_proper_prefix_of_a_golden_record_is_rejected_without_panic() {
    for v in of_kind(AREA, "barrier.record") {
        let key = unhex(str_of(&v["expected"]["key_hex"], "key_hex"));
        for n in 0..key.len() {
            assert!(
                BarrierStateKey::decode(&key[..n]).is_err(),
                "{}: key prefix {n}",
                id(&v)
            );
        }
        let value = unhex(str_of(&v["expected"]["value_hex"], "value_hex"));
        let kind = key_of(&v["inputs"]["key"]).kind;
        for n in 0..value.len() {
            let prefix = &value[..n];
            let rejected = match kind {
                RecordKind::Group => GroupDefinition::decode(prefix).is_err(),
                RecordKind::InjectionStart => InjectionStart::decode(prefix).is_err(),
                RecordKind::Cut => Cut::decode(prefix).is_err(),
                RecordKind::Unknown(_) => unreachable!(),
            };
            assert!(rejected, "{}: value prefix {n}", id(&v));
        }
    }
    for v in of_kind(AREA, "barrier.marker") {
        let value = unhex(str_of(&v["expected"]["value_hex"], "value_hex"));
        for n in 0..value.len() {
            assert!(
                BarrierMarker::decode(&value[..n]).is_err(),
                "{}: prefix {n}",
                id(&v)
            );
        }
    }
}

#[test]
fn markers_have_key_000003e8_the_frozen_value_and_producerless_control_batches() {
    for v in of_kind(AREA, "barrier.marker") {
        let (inputs, expected) = (&v["inputs"], &v["expected"]);
        let marker = BarrierMarker {
            group: str_of(&inputs["group"], "group").to_owned(),
            epoch: i64_of(&inputs["epoch"], "epoch"),
            triggered_at: i64_of(&inputs["triggered_at"], "triggered_at"),
        };
        let key_hex = str_of(&expected["key_hex"], "key_hex");
        assert_eq!(hex::encode(marker.key()), key_hex, "{}", id(&v));
        assert_eq!(hex::encode(BARRIER_MARKER_KEY), key_hex, "{}", id(&v));
        assert_eq!(decode_marker_key(&unhex(key_hex)), Ok(()), "{}", id(&v));

        let value = marker.encode().unwrap();
        assert_eq!(
            hex::encode(&value),
            str_of(&expected["value_hex"], "value_hex"),
            "{}",
            id(&v)
        );
        assert_eq!(BarrierMarker::decode(&value), Ok(marker), "{}", id(&v));

        let batch = &expected["batch"];
        assert_eq!(batch["control"].as_bool(), Some(MARKER_BATCH_IS_CONTROL));
        assert_eq!(
            batch["transactional"].as_bool(),
            Some(MARKER_BATCH_IS_TRANSACTIONAL)
        );
        assert_eq!(
            i64_of(&batch["producer_id"], "producer_id"),
            MARKER_BATCH_PRODUCER_ID
        );
        assert_eq!(
            i64_of(&batch["producer_epoch"], "producer_epoch"),
            i64::from(MARKER_BATCH_PRODUCER_EPOCH)
        );
        assert_eq!(
            i64_of(&batch["base_sequence"], "base_sequence"),
            i64::from(MARKER_BATCH_BASE_SEQUENCE)
        );
    }
}

#[test]
fn malformed_records_fail_with_the_exact_frozen_message_and_part() {
    for v in of_kind(AREA, "barrier.decode_error") {
        let (inputs, expected) = (&v["inputs"], &v["expected"]);
        let key = unhex(str_of(&inputs["key_hex"], "key_hex"));
        let value = inputs
            .get("value_hex")
            .map(|h| unhex(str_of(h, "value_hex")));
        let error = decode_record(&key, value.as_deref())
            .expect_err(&format!("{} must not decode", id(&v)));
        assert_eq!(
            error.to_string(),
            str_of(&expected["error_message"], "error_message"),
            "{}",
            id(&v)
        );
        assert_eq!(
            part_name(error.part()),
            str_of(&expected["error_part"], "error_part"),
            "{}",
            id(&v)
        );
    }
}

#[test]
fn a_malformed_key_or_cut_value_fails_the_whole_read() {
    // Covers BARRIER-ERR-READER-TRUNCATED and runs every other decode error through the reader.
    for v in of_kind(AREA, "barrier.decode_error") {
        let inputs = &v["inputs"];
        let mut consumer = InMemoryConsumer::new(true);
        let value = inputs
            .get("value_hex")
            .map(|h| unhex(str_of(h, "value_hex")));
        consumer.append(0, unhex(str_of(&inputs["key_hex"], "key_hex")), value);
        let error = reader_over(consumer, 1)
            .read()
            .expect_err(&format!("{}: the read must fail", id(&v)));
        assert!(matches!(error, CutReadError::Malformed(_)), "{}", id(&v));
        let message = str_of(&v["expected"]["error_message"], "error_message");
        assert!(
            error.to_string().contains(message),
            "{}: {error} lacks {message}",
            id(&v)
        );
    }
}

#[test]
fn reader_folds_cuts_last_writer_wins_and_returns_only_complete_ones() {
    for v in of_kind(AREA, "barrier.reader") {
        let (inputs, expected) = (&v["inputs"], &v["expected"]);
        let partitions = i32_of(&inputs["partitions"], "partitions");
        // Both ways a read can end must give the same answer.
        for report_ends in [true, false] {
            let what = format!("{} (end offsets reported: {report_ends})", id(&v));
            let consumer = consumer_with(&inputs["records"], report_ends);
            let mut reader = reader_over(consumer, partitions);

            for (group, want) in expected["latest_complete"].as_object().unwrap() {
                let latest = reader.latest_complete_cut(group).unwrap().map(|c| c.epoch);
                assert_eq!(latest, want.as_i64(), "{what}: latest {group}");
            }
            for query in array_of(&expected["complete_after"], "complete_after") {
                let group = str_of(&query["group"], "group");
                let after = i64_of(&query["after"], "after");
                let want: Vec<i64> = array_of(&query["epochs"], "epochs")
                    .iter()
                    .map(|e| i64_of(e, "epoch"))
                    .collect();
                assert_eq!(
                    epochs_after(&mut reader, group, after),
                    want,
                    "{what}: {group} after {after}"
                );
            }

            let consumer = reader.consumer();
            let all: Vec<TopicPartition> = (0..partitions)
                .map(|p| TopicPartition::new(BARRIER_STATE_TOPIC, p))
                .collect();
            assert_eq!(consumer.assigned, all, "{what}: assignment");
            if let Some(names) = expected.get("assigned") {
                let named: Vec<TopicPartition> = array_of(names, "assigned")
                    .iter()
                    .map(|n| tp_of(str_of(n, "assigned")))
                    .collect();
                assert_eq!(consumer.assigned, named, "{what}: assigned");
            }
            let seek_to = expected.get("seek_to").map_or(0, |s| i64_of(s, "seek_to"));
            let seeks: Vec<(TopicPartition, i64)> =
                all.into_iter().map(|tp| (tp, seek_to)).collect();
            assert_eq!(consumer.seeks, seeks, "{what}: each partition sought once");
        }
    }
}

#[test]
fn a_second_read_seeks_nothing_more_and_picks_up_appended_cuts() {
    let v = vector("BARRIER-READER-INCREMENTAL");
    assert_eq!(
        str_of(&v["inputs"]["first_read"], "first_read"),
        "cut audit e1"
    );
    assert_eq!(str_of(&v["inputs"]["appended"], "appended"), "cut audit e2");
    let append_cut = |consumer: &mut InMemoryConsumer, epoch: i64| {
        let cut = Cut {
            triggered_at: 10 * epoch,
            completed_at: 10 * epoch + 1,
            status: CutStatus::Complete,
            topics: vec![CutTopic {
                topic: "in".into(),
                partitions: vec![CutOffset {
                    partition: 0,
                    offset: 10 * epoch,
                }],
            }],
            missing: vec![],
        };
        let key = BarrierStateKey::cut("audit", epoch).encode().unwrap();
        consumer.append(0, key, Some(cut.encode().unwrap()));
    };
    for report_ends in [true, false] {
        let mut consumer = InMemoryConsumer::new(report_ends);
        append_cut(&mut consumer, 1);
        let mut reader = reader_over(consumer, 1);
        assert_eq!(epochs_after(&mut reader, "audit", NO_EPOCH), [1]);
        let seeks_after_first = reader.consumer().seeks.len();

        append_cut(reader.consumer_mut(), 2);
        let want: Vec<i64> = array_of(&v["expected"]["second_read_epochs_after_-1"], "epochs")
            .iter()
            .map(|e| i64_of(e, "epoch"))
            .collect();
        assert_eq!(epochs_after(&mut reader, "audit", NO_EPOCH), want);
        let additional = (reader.consumer().seeks.len() - seeks_after_first) as i64;
        assert_eq!(
            additional,
            i64_of(&v["expected"]["additional_seeks"], "additional_seeks")
        );
    }
}

#[test]
fn reached_means_position_at_or_after_the_cut_offset_and_unnamed_partitions_are_reached() {
    for v in of_kind(AREA, "barrier.reached") {
        let (inputs, expected) = (&v["inputs"], &v["expected"]);
        let mut topics: Vec<CutTopic> = Vec::new();
        for (name, offset) in inputs["cut_offsets"].as_object().unwrap() {
            let tp = tp_of(name);
            let offset = CutOffset {
                partition: tp.partition,
                offset: i64_of(offset, "offset"),
            };
            match topics.iter_mut().find(|t| t.topic == tp.topic) {
                Some(t) => t.partitions.push(offset),
                None => topics.push(CutTopic {
                    topic: tp.topic,
                    partitions: vec![offset],
                }),
            }
        }
        let cut = Cut {
            triggered_at: 0,
            completed_at: 0,
            status: CutStatus::Complete,
            topics,
            missing: vec![],
        };
        let got: Vec<bool> = array_of(&inputs["checks"], "checks")
            .iter()
            .map(|c| {
                let tp = tp_of(str_of(&c["tp"], "tp"));
                cut.reached(&tp.topic, tp.partition, i64_of(&c["position"], "position"))
            })
            .collect();
        let want: Vec<bool> = array_of(&expected["reached"], "reached")
            .iter()
            .map(|b| b.as_bool().unwrap())
            .collect();
        assert_eq!(got, want, "{}", id(&v));
    }
}

#[test]
fn cut_status_displays_complete_partial_or_cut_status_n() {
    for v in of_kind(AREA, "barrier.status_text") {
        let got: Vec<String> = array_of(&v["inputs"]["statuses"], "statuses")
            .iter()
            .map(|s| CutStatus::from_code(i64_of(s, "status") as i8).to_string())
            .collect();
        let want: Vec<&str> = array_of(&v["expected"]["texts"], "texts")
            .iter()
            .map(|t| str_of(t, "text"))
            .collect();
        assert_eq!(got, want, "{}", id(&v));
    }
}

#[test]
fn group_partition_is_abs_murmur2_modulo_the_partition_count() {
    for v in of_kind(AREA, "barrier.group_partition") {
        let (inputs, expected) = (&v["inputs"], &v["expected"]);
        let partitions = u32::try_from(i64_of(&inputs["partitions"], "partitions")).unwrap();
        let got = group_partition(
            str_of(&inputs["group"], "group"),
            NonZeroU32::new(partitions).unwrap(),
        );
        assert_eq!(
            i64::from(got),
            i64_of(&expected["partition"], "partition"),
            "{}",
            id(&v)
        );
    }
}

fn vector(wanted: &str) -> Value {
    load(AREA)
        .into_iter()
        .find(|v| id(v) == wanted)
        .unwrap_or_else(|| panic!("no vector {wanted} in {AREA}.json"))
}

#[test]
fn every_barrier_vector_is_checked_here_or_by_the_runner() {
    let vectors = load(AREA);
    let mut covered = BTreeSet::new();
    for v in &vectors {
        let kind = str_of(&v["kind"], "kind");
        let vid = id(v);
        if CHECKED_KINDS.contains(&kind) {
            covered.insert(vid.to_owned());
        } else {
            assert_eq!(kind, "behaviour", "{vid}: unknown kind {kind}");
            assert!(
                CHECKED_BEHAVIOUR.contains(&vid) || CHECKED_BY_RUNNER.contains(&vid),
                "{vid}: behaviour vector checked neither here nor by the runner"
            );
            if CHECKED_BEHAVIOUR.contains(&vid) {
                covered.insert(vid.to_owned());
            }
        }
    }
    // The runner's entries must be real behaviour vectors not also checked here.
    for by_runner in CHECKED_BY_RUNNER {
        let v = vector(by_runner);
        assert_eq!(v["kind"], "behaviour", "{by_runner}");
        assert!(!covered.contains(by_runner), "{by_runner} is checked twice");
        covered.insert(by_runner.to_owned());
    }
    for checked in CHECKED_BEHAVIOUR {
        assert!(
            covered.contains(checked),
            "{checked} missing from {AREA}.json"
        );
    }
    assert_all_covered(AREA, &covered);
}
