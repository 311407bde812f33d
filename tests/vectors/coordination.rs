//! `coordination.json` (formats §9, semantics §9): every vector, dispatched on its `kind`.
//!
//! Each `check_*` function asserts one vector exactly and panics with its id on a mismatch;
//! the per-kind tests run them, and `every_coordination_vector_is_checked` proves that no
//! vector of the file (including new ones) goes unchecked.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::support::{assert_all_covered, i64_of, id, load, of_kind, str_of, unhex};
use krabka_streams::engine::coordination::{
    AcquireOptions, Action, CoordinationKey, Election, FencingToken, LeadershipStatus, LeaseConfig,
    LeaseSettings, LeaseTerm, LeaseValue, ManualClock, MemoryTransport, NO_EPOCH, RecordError,
    RegistrationValue, StateRecord, Succession, is_tombstone, role_partition,
};
use krabka_streams::engine::coordination::{Clock, RecordKind};

const AREA: &str = "coordination";
/// Role of vectors whose records carry none.
const DEFAULT_ROLE: &str = "controller";

// ---------------------------------------------------------------- JSON helpers

fn i16_of(v: &Value, what: &str) -> i16 {
    i16::try_from(i64_of(v, what)).unwrap_or_else(|_| panic!("{what} is not an i16: {v}"))
}

fn i32_of(v: &Value, what: &str) -> i32 {
    i32::try_from(i64_of(v, what)).unwrap_or_else(|_| panic!("{what} is not an i32: {v}"))
}

fn array_of<'a>(v: &'a Value, what: &str) -> &'a Vec<Value> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what} is not an array: {v}"))
}

/// `[producer_id, producer_epoch]`; `[-1, -1]` is NoEpoch.
fn token_of(v: &Value) -> FencingToken {
    let id = i64_of(&v[0], "producer id");
    let epoch = i16_of(&v[1], "producer epoch");
    if (id, epoch) == (-1, -1) {
        NO_EPOCH
    } else {
        FencingToken::new(id, epoch).unwrap_or_else(|e| panic!("token {v}: {e}"))
    }
}

fn config_of(v: &Value) -> LeaseConfig {
    LeaseSettings {
        lease_ms: i64_of(&v["lease_ms"], "lease_ms"),
        renew_ms: i64_of(&v["renew_ms"], "renew_ms"),
        stagger_ms: i64_of(&v["stagger_ms"], "stagger_ms"),
        ..LeaseSettings::default()
    }
    .validate()
    .unwrap_or_else(|e| panic!("config {v}: {e}"))
}

/// A record `{offset, kind, member, registered_at | producer_id, producer_epoch, granted_at,
/// deadline, tombstone?, role?}` encoded as it would be read from the topic.
fn state_record(r: &Value) -> StateRecord {
    let offset = i64_of(&r["offset"], "offset");
    let role = r["role"].as_str().unwrap_or(DEFAULT_ROLE);
    let tombstone = r["tombstone"].as_bool().unwrap_or(false);
    let (key, value) = match str_of(&r["kind"], "kind") {
        "registration" => {
            let member = str_of(&r["member"], "member");
            let key = CoordinationKey::registration(role, member).unwrap();
            let value = (!tombstone).then(|| {
                RegistrationValue::new(member, i64_of(&r["registered_at"], "registered_at"))
                    .unwrap()
                    .encode()
            });
            (key, value)
        }
        "lease" => {
            let key = CoordinationKey::lease(role).unwrap();
            let value = (!tombstone).then(|| {
                let token = token_fields_of(r);
                let term = term_of(r);
                LeaseValue::new(str_of(&r["member"], "member"), token, term)
                    .unwrap()
                    .encode()
            });
            (key, value)
        }
        other => panic!("unknown record kind {other}"),
    };
    StateRecord::new(offset, key.encode(), value)
}

fn records_of(v: &Value) -> Vec<StateRecord> {
    array_of(&v["inputs"]["records"], "records")
        .iter()
        .map(state_record)
        .collect()
}

/// The input order, reversed, and every rotation: the fold must not depend on order.
fn orders(records: &[StateRecord]) -> Vec<Vec<StateRecord>> {
    let mut out = vec![records.to_vec(), records.iter().rev().cloned().collect()];
    for shift in 1..records.len() {
        let mut rotated = records.to_vec();
        rotated.rotate_left(shift);
        out.push(rotated);
    }
    out
}

fn roster_of(s: &Succession) -> Vec<(String, i64)> {
    s.roster()
        .iter()
        .map(|e| (e.member.clone(), e.offset))
        .collect()
}

fn expected_roster(v: &Value) -> Vec<(String, i64)> {
    array_of(v, "roster")
        .iter()
        .map(|e| {
            (
                str_of(&e["member"], "member").to_string(),
                i64_of(&e["offset"], "offset"),
            )
        })
        .collect()
}

fn decision(action: Action) -> Value {
    match action {
        Action::Wait(until) => serde_json::json!([action.to_string(), until]),
        _ => serde_json::json!([action.to_string(), null]),
    }
}

fn decode(decoder: &str, bytes: &[u8]) -> Result<(), RecordError> {
    match decoder {
        "key" => CoordinationKey::decode(bytes).map(drop),
        "registration" => RegistrationValue::decode(bytes).map(drop),
        "lease" => LeaseValue::decode(bytes).map(drop),
        other => panic!("unknown decoder {other}"),
    }
}

// ---------------------------------------------------------------- checks, one per kind

fn check_records(v: &Value) {
    let (i, e) = (&v["inputs"], &v["expected"]);
    let role = str_of(&i["role"], "role");
    let member = str_of(&i["member"], "member");
    let token = token_fields_of(i);
    let term = term_of(i);
    let reg_key = CoordinationKey::registration(role, member).unwrap();
    let lease_key = CoordinationKey::lease(role).unwrap();
    let reg = RegistrationValue::new(member, i64_of(&i["registered_at"], "registered_at")).unwrap();
    let lease = LeaseValue::new(member, token, term).unwrap();
    let encoded = [
        reg_key.encode(),
        lease_key.encode(),
        reg.encode(),
        lease.encode(),
    ];
    let names = [
        "registration_key_hex",
        "lease_key_hex",
        "registration_value_hex",
        "lease_value_hex",
    ];
    for (bytes, name) in encoded.iter().zip(names) {
        assert_eq!(
            hex::encode(bytes),
            str_of(&e[name], name),
            "{} {name}",
            id(v)
        );
    }
    let lengths: Vec<i64> = encoded.iter().map(|b| b.len() as i64).collect();
    let expected: Vec<i64> = array_of(&e["lengths"], "lengths")
        .iter()
        .map(|n| i64_of(n, "length"))
        .collect();
    assert_eq!(lengths, expected, "{} lengths", id(v));
    assert_eq!(CoordinationKey::decode(&encoded[0]).as_ref(), Ok(&reg_key));
    assert_eq!(
        CoordinationKey::decode(&encoded[1]).as_ref(),
        Ok(&lease_key)
    );
    assert_eq!(RegistrationValue::decode(&encoded[2]).as_ref(), Ok(&reg));
    assert_eq!(LeaseValue::decode(&encoded[3]).as_ref(), Ok(&lease));
}

fn check_key(v: &Value) {
    let i = &v["inputs"];
    let role = str_of(&i["role"], "role");
    let key = match RecordKind::from_code(i16_of(&i["kind"], "kind")) {
        RecordKind::REGISTRATION => {
            CoordinationKey::registration(role, str_of(&i["member"], "member")).unwrap()
        }
        RecordKind::LEASE => CoordinationKey::lease(role).unwrap(),
        other => panic!("{}: unknown kind {other}", id(v)),
    };
    let bytes = key.encode();
    assert_eq!(
        hex::encode(&bytes),
        str_of(&v["expected"]["key_hex"], "key_hex"),
        "{}",
        id(v)
    );
    assert_eq!(CoordinationKey::decode(&bytes), Ok(key), "{}", id(v));
}

fn check_lease_value(v: &Value) {
    let i = &v["inputs"];
    let token = token_fields_of(i);
    let term = term_of(i);
    let lease = LeaseValue::new(str_of(&i["member"], "member"), token, term).unwrap();
    let bytes = lease.encode();
    assert_eq!(
        hex::encode(&bytes),
        str_of(&v["expected"]["hex"], "hex"),
        "{}",
        id(v)
    );
    assert_eq!(
        LeaseValue::decode(&bytes),
        Ok(lease),
        "{} round trip",
        id(v)
    );
}

fn check_decode_error(v: &Value) {
    let (i, e) = (&v["inputs"], &v["expected"]);
    let decoder = str_of(&i["decoder"], "decoder");
    let bytes = unhex(str_of(&i["hex"], "hex"));
    let err = decode(decoder, &bytes).expect_err(id(v));
    let message = err.to_string();
    assert_eq!(
        err.part().to_string(),
        str_of(&e["error_part"], "error_part"),
        "{}",
        id(v)
    );
    let contains = str_of(&e["message_contains"], "message_contains");
    assert!(
        message.contains(contains),
        "{}: {message:?} lacks {contains:?}",
        id(v)
    );
    if let Some(exact) = e["error_message"].as_str() {
        assert_eq!(message, exact, "{}", id(v));
    }
}

fn check_prefixes(v: &Value) {
    let bytes = unhex(str_of(&v["inputs"]["hex"], "hex"));
    let decoders = array_of(&v["expected"]["all_prefixes_rejected_by"], "decoders");
    for decoder in decoders {
        let decoder = str_of(decoder, "decoder");
        for len in 0..bytes.len() {
            assert!(
                decode(decoder, &bytes[..len]).is_err(),
                "{}: {decoder} accepted a prefix of {len} bytes",
                id(v)
            );
        }
    }
}

fn check_tombstone(v: &Value) {
    let values = array_of(&v["inputs"]["values"], "values");
    let expected = array_of(&v["expected"]["tombstone"], "tombstone");
    assert_eq!(values.len(), expected.len(), "{}", id(v));
    for (value, want) in values.iter().zip(expected) {
        let bytes = value.as_str().map(unhex);
        assert_eq!(
            is_tombstone(bytes.as_deref()),
            want.as_bool().unwrap(),
            "{} value {value}",
            id(v)
        );
    }
}

fn check_role_partition(v: &Value) {
    let (i, e) = (&v["inputs"], &v["expected"]);
    let got = role_partition(
        str_of(&i["role"], "role"),
        i32_of(&i["partitions"], "partitions"),
    );
    match e["error_message"].as_str() {
        Some(message) => assert_eq!(got.unwrap_err().to_string(), message, "{}", id(v)),
        None => assert_eq!(got, Ok(i32_of(&e["partition"], "partition")), "{}", id(v)),
    }
}

fn check_token_compare(v: &Value) {
    let pairs = array_of(&v["inputs"]["pairs"], "pairs");
    let expected = array_of(&v["expected"]["compare"], "compare");
    assert_eq!(pairs.len(), expected.len(), "{}", id(v));
    for (pair, want) in pairs.iter().zip(expected) {
        let (a, b) = (token_of(&pair[0]), token_of(&pair[1]));
        let got = match a.cmp(&b) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        };
        let want = i64_of(want, "compare");
        assert_eq!(got, want, "{} {a} vs {b}", id(v));
        assert_eq!(a.supersedes(b), want > 0, "{} {a} supersedes {b}", id(v));
    }
}

fn check_token_new(v: &Value) {
    let template = str_of(&v["expected"]["error_template"], "error_template");
    for token in array_of(&v["inputs"]["tokens"], "tokens") {
        let (pid, epoch) = (i64_of(&token[0], "id"), i16_of(&token[1], "epoch"));
        let err = FencingToken::new(pid, epoch).expect_err(id(v));
        let want = template
            .replace("<id>", &pid.to_string())
            .replace("<epoch>", &epoch.to_string());
        assert_eq!(err.to_string(), want, "{}", id(v));
    }
}

fn check_token_text(v: &Value) {
    let token = token_of(&v["inputs"]["token"]);
    let text = str_of(&v["expected"]["text"], "text");
    assert_eq!(token.to_string(), text, "{}", id(v));
    assert_eq!(
        text.parse::<FencingToken>(),
        Ok(token),
        "{} parses back",
        id(v)
    );
}

fn check_token_parse(v: &Value) {
    let template = str_of(&v["expected"]["error_template"], "error_template");
    for text in array_of(&v["inputs"]["texts"], "texts") {
        let text = str_of(text, "text");
        let err = text.parse::<FencingToken>().expect_err(id(v));
        assert_eq!(
            err.to_string(),
            template.replace("<text>", text),
            "{}",
            id(v)
        );
    }
}

fn check_fold(v: &Value) {
    let role = str_of(&v["inputs"]["role"], "role");
    let e = &v["expected"];
    for records in orders(&records_of(v)) {
        let s = Succession::fold(role, &records).unwrap_or_else(|err| panic!("{}: {err}", id(v)));
        assert_eq!(roster_of(&s), expected_roster(&e["roster"]), "{}", id(v));
        assert_eq!(s.holder(), e["lease_holder"].as_str(), "{}", id(v));
    }
}

fn check_rank(v: &Value) {
    let members = array_of(&v["inputs"]["members"], "members");
    let expected = array_of(&v["expected"]["ranks"], "ranks");
    assert_eq!(members.len(), expected.len(), "{}", id(v));
    for records in orders(&records_of(v)) {
        let s = Succession::fold(DEFAULT_ROLE, &records).unwrap();
        for (member, want) in members.iter().zip(expected) {
            let member = str_of(member, "member");
            let rank = s.rank_of(member);
            let got = (rank.unwrap_or(0), rank.is_some());
            let want = (i64_of(&want[0], "rank"), want[1].as_bool().unwrap());
            assert_eq!(got, want, "{} {member}", id(v));
        }
    }
}

fn check_evaluate(v: &Value) {
    let (i, e) = (&v["inputs"], &v["expected"]);
    let config = config_of(&i["config"]);
    let checks = array_of(&i["checks"], "checks");
    let decisions = array_of(&e["decisions"], "decisions");
    assert_eq!(checks.len(), decisions.len(), "{}", id(v));
    for records in orders(&records_of(v)) {
        let s = Succession::fold(DEFAULT_ROLE, &records).unwrap();
        for (check, want) in checks.iter().zip(decisions) {
            let member = str_of(&check[0], "member");
            let now = i64_of(&check[1], "now");
            let got = decision(s.evaluate(&config, member, now));
            assert_eq!(&got, want, "{} {member} @{now}", id(v));
        }
        if let Some(holder) = e.get("holder") {
            assert_eq!(s.holder(), holder.as_str(), "{} holder", id(v));
        }
        if let Some(roster) = e.get("roster") {
            assert_eq!(roster_of(&s), expected_roster(roster), "{} roster", id(v));
        }
        let obj = e.as_object().unwrap();
        for (name, rank) in obj.iter().filter(|(k, _)| k.starts_with("rank_")) {
            let member = name.trim_start_matches("rank_");
            assert_eq!(
                s.rank_of(member),
                Some(i64_of(rank, name)),
                "{} {name}",
                id(v)
            );
        }
    }
}

fn check_lease_clock(v: &Value) {
    let i = &v["inputs"];
    let config = config_of(&i["config"]);
    let now = i64_of(&i["grant_now"], "grant_now");
    let term = config.grant(now);
    assert_eq!(term.granted_at, now, "{}", id(v));
    assert_expected(v, "deadline", term.deadline);
    for (at, live) in expected_pairs(v, "live") {
        assert_eq!(
            term.is_live(at),
            live.as_bool().unwrap(),
            "{} live @{at}",
            id(v)
        );
    }
    for (at, ms) in expected_pairs(v, "remaining_ms") {
        assert_eq!(
            term.remaining_ms(at),
            i64_of(ms, "ms"),
            "{} remaining @{at}",
            id(v)
        );
    }
    assert_expected(v, "renew_at", term.renew_at(&config));
    for (at, due) in expected_pairs(v, "renew_due") {
        let got = term.is_renew_due(&config, at);
        assert_eq!(got, due.as_bool().unwrap(), "{} renew due @{at}", id(v));
    }
    for (rank, at) in expected_pairs(v, "challenge_at") {
        let got = term.challenge_at(&config, rank);
        assert_eq!(got, i64_of(at, "at"), "{} challenge at rank {rank}", id(v));
    }
    let short = LeaseTerm {
        granted_at: 1000,
        deadline: 5000,
    };
    let name = "renew_at_for_granted_1000_deadline_5000";
    assert_expected(v, name, short.renew_at(&config));
}

fn check_lease_saturation(v: &Value) {
    let i = &v["inputs"];
    let config = config_of(&i["config"]);
    let rank = i64_of(&i["challenge_delay_rank"], "challenge_delay_rank");
    assert_expected(v, "challenge_delay", config.challenge_delay(rank));
    let term = config.grant(i64_of(&i["grant_now"], "grant_now"));
    assert_expected(v, "deadline", term.deadline);
}

/// The fencing token in `v`'s `producer_id` and `producer_epoch`.
fn token_fields_of(v: &Value) -> FencingToken {
    let id = i64_of(&v["producer_id"], "producer_id");
    FencingToken::new(id, i16_of(&v["producer_epoch"], "producer_epoch")).unwrap()
}

/// The lease term in `v`'s `granted_at` and `deadline`.
fn term_of(v: &Value) -> LeaseTerm {
    LeaseTerm {
        granted_at: i64_of(&v["granted_at"], "granted_at"),
        deadline: i64_of(&v["deadline"], "deadline"),
    }
}

/// `got` is the vector's `expected[name]`.
fn assert_expected(v: &Value, name: &str, got: i64) {
    assert_eq!(got, i64_of(&v["expected"][name], name), "{} {name}", id(v));
}

/// The `[key, value]` pairs listed under the vector's `expected[name]`.
fn expected_pairs<'a>(v: &'a Value, name: &str) -> Vec<(i64, &'a Value)> {
    array_of(&v["expected"][name], name)
        .iter()
        .map(|pair| (i64_of(&pair[0], name), &pair[1]))
        .collect()
}

/// COORD-ACQUIRE-EMPTY-LOG: the real acquire loop over the in-memory transport (whose
/// first minted token is 1:0) with a manual clock, then the log it left is folded.
fn check_acquire_empty_log(v: &Value) {
    let (i, e) = (&v["inputs"], &v["expected"]);
    let config = config_of(&i["config"]);
    let member = str_of(&i["member"], "member");
    let clock = Arc::new(ManualClock::new(i64_of(&i["clock"], "clock")));
    let transport = Arc::new(MemoryTransport::new());
    let election = Election::new(transport.clone(), clock.clone(), config.clone());
    let leadership = election
        .acquire(DEFAULT_ROLE, member, &AcquireOptions::default())
        .unwrap_or_else(|err| panic!("{}: {err}", id(v)));
    let token = leadership.token();
    let partition = election.partition_of(DEFAULT_ROLE).unwrap();
    let log = transport.log(&partition);
    assert_eq!(
        clock.now_ms(),
        i64_of(&i["clock"], "clock"),
        "{}: no wait",
        id(v)
    );
    assert_eq!(
        &leadership.lease(),
        Succession::fold(DEFAULT_ROLE, &log)
            .unwrap()
            .lease()
            .unwrap()
    );

    let state = Succession::fold(DEFAULT_ROLE, &log).unwrap();
    assert_eq!(token, token_of(&e["token"]), "{}", id(v));
    let held = state.lease().expect("a lease after acquiring");
    let want = &e["lease"];
    assert_eq!(
        held.member(),
        str_of(&want["member"], "member"),
        "{}",
        id(v)
    );
    assert_eq!(
        held.token().to_string(),
        str_of(&want["token"], "token"),
        "{}",
        id(v)
    );
    assert_eq!(
        held.granted_at(),
        i64_of(&want["granted_at"], "granted_at"),
        "{}",
        id(v)
    );
    assert_eq!(
        held.deadline(),
        i64_of(&want["deadline"], "deadline"),
        "{}",
        id(v)
    );
    let roster: Vec<(String, i64, i64)> = state
        .roster()
        .iter()
        .map(|r| (r.member.clone(), r.offset, r.registered_at))
        .collect();
    let want: Vec<(String, i64, i64)> = array_of(&e["roster"], "roster")
        .iter()
        .map(|r| {
            (
                str_of(&r["member"], "member").to_string(),
                i64_of(&r["offset"], "offset"),
                i64_of(&r["registered_at"], "registered_at"),
            )
        })
        .collect();
    assert_eq!(roster, want, "{}", id(v));
    assert_eq!(
        state.evaluate(&config, member, clock.now_ms()),
        Action::Hold
    );
    // The holder renews at grantedAt + renew and loses the lease at the deadline.
    clock.advance(config.renew_ms());
    assert!(held.term().is_renew_due(&config, clock.now_ms()));
    clock.set(held.deadline());
    assert_eq!(
        state.evaluate(&config, member, clock.now_ms()),
        Action::Challenge
    );
}

fn check_describe_text(v: &Value) {
    let role = str_of(&v["inputs"]["role"], "role");
    let e = &v["expected"];
    let never = LeadershipStatus::never_taken(role);
    assert_eq!(
        never.to_string(),
        str_of(&e["never_taken"], "never_taken"),
        "{}",
        id(v)
    );
    let held = LeadershipStatus {
        role: role.to_string(),
        token: FencingToken::new(4242, 7).unwrap(),
        held: true,
    };
    assert_eq!(
        held.to_string(),
        str_of(&e["held_4242_7"], "held_4242_7"),
        "{}",
        id(v)
    );
}

fn check_behaviour(v: &Value) {
    match id(v) {
        "COORD-ACQUIRE-EMPTY-LOG" => check_acquire_empty_log(v),
        "COORD-DESCRIBE-TEXT" => check_describe_text(v),
        other => panic!("no offline check for behaviour vector {other}"),
    }
}

/// Runs the check of `v`'s kind; panics on a kind this file does not know.
fn check(v: &Value) {
    let kind = str_of(&v["kind"], "kind");
    let run: fn(&Value) = match kind {
        "coordination.records" => check_records,
        "coordination.key" => check_key,
        "coordination.lease_value" => check_lease_value,
        "coordination.decode_error" => check_decode_error,
        "coordination.prefixes" => check_prefixes,
        "coordination.tombstone" => check_tombstone,
        "coordination.role_partition" => check_role_partition,
        "coordination.token_compare" => check_token_compare,
        "coordination.token_new" => check_token_new,
        "coordination.token_text" => check_token_text,
        "coordination.token_parse" => check_token_parse,
        "coordination.fold" => check_fold,
        "coordination.rank" => check_rank,
        "coordination.evaluate" => check_evaluate,
        "coordination.lease_clock" => check_lease_clock,
        "coordination.lease_saturation" => check_lease_saturation,
        "behaviour" => check_behaviour,
        other => panic!("{}: unknown kind {other}", id(v)),
    };
    run(v);
}

fn check_kind(kind: &str) {
    for v in of_kind(AREA, kind) {
        check(&v);
    }
}

// ---------------------------------------------------------------- tests

#[test]
fn every_coordination_vector_is_checked() {
    let mut covered = BTreeSet::new();
    for v in load(AREA) {
        check(&v);
        covered.insert(id(&v).to_string());
    }
    assert_all_covered(AREA, &covered);
}

#[test]
fn golden_records_encode_to_the_frozen_bytes_and_round_trip() {
    check_kind("coordination.records");
    check_kind("coordination.key");
    check_kind("coordination.lease_value");
}

#[test]
fn decoders_reject_malformed_records_with_the_frozen_messages() {
    check_kind("coordination.decode_error");
}

#[test]
fn every_proper_prefix_of_a_key_is_rejected_by_every_decoder() {
    check_kind("coordination.prefixes");
}

#[test]
fn null_and_empty_values_are_tombstones() {
    check_kind("coordination.tombstone");
}

#[test]
fn role_partition_masks_the_sign_bit_and_rejects_zero_partitions() {
    check_kind("coordination.role_partition");
}

#[test]
fn tokens_order_by_producer_id_then_epoch() {
    check_kind("coordination.token_compare");
}

#[test]
fn negative_tokens_are_rejected() {
    check_kind("coordination.token_new");
}

#[test]
fn token_text_is_id_colon_epoch_and_strictly_parsed() {
    check_kind("coordination.token_text");
    check_kind("coordination.token_parse");
}

#[test]
fn fold_keeps_the_highest_offset_per_key_in_any_input_order() {
    check_kind("coordination.fold");
}

#[test]
fn holder_ranks_zero_and_others_rank_by_roster_without_the_holder() {
    check_kind("coordination.rank");
}

#[test]
fn evaluate_anchors_challenges_on_the_deadline_or_own_registration() {
    check_kind("coordination.evaluate");
}

#[test]
fn lease_timing_follows_grant_renew_and_challenge_rules() {
    check_kind("coordination.lease_clock");
}

#[test]
fn lease_timing_saturates_at_max_int64() {
    check_kind("coordination.lease_saturation");
}

#[test]
fn first_acquisition_on_an_empty_log_registers_then_challenges_then_holds() {
    let v = load(AREA)
        .into_iter()
        .find(|v| id(v) == "COORD-ACQUIRE-EMPTY-LOG")
        .expect("COORD-ACQUIRE-EMPTY-LOG");
    check_acquire_empty_log(&v);
}

#[test]
fn describe_shows_no_epoch_or_the_token() {
    let v = load(AREA)
        .into_iter()
        .find(|v| id(v) == "COORD-DESCRIBE-TEXT")
        .expect("COORD-DESCRIBE-TEXT");
    check_describe_text(&v);
}
