//! `headers.json`: the `__headers` cell (formats §3) and dead-letter header names (§10).

use std::collections::BTreeSet;

use krabka_streams::engine::columnar::headers::{
    DEAD_LETTER_HEADER_NAMES, Header, decode_headers, encode_headers,
};
use serde_json::Value;

use crate::snapshot::adversarial_inputs;
use crate::support::{assert_all_covered, id, load, str_of, unhex};

fn headers_of(v: &Value) -> Vec<Header> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let value = h["value_hex"].as_str().map(unhex);
            Header::new(str_of(&h["key"], "key"), value)
        })
        .collect()
}

fn check_encode(v: &Value) {
    let headers = headers_of(&v["inputs"]["headers"]);
    let cell = encode_headers(&headers);
    assert_eq!(
        hex::encode(&cell),
        str_of(&v["expected"]["hex"], "hex"),
        "{}",
        id(v)
    );
    assert_eq!(decode_headers(&cell).unwrap(), headers, "{}", id(v));
}

fn check_decode_error(v: &Value) {
    let cell = unhex(str_of(&v["inputs"]["hex"], "hex"));
    let err = decode_headers(&cell).unwrap_err();
    assert_eq!(
        err.to_string(),
        str_of(&v["expected"]["error_message"], "error_message"),
        "{}",
        id(v)
    );
}

fn check_behaviour(v: &Value) {
    match id(v) {
        "HDR-DLQ-NAMES" => {
            let names: Vec<&str> = v["expected"]["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| str_of(n, "name"))
                .collect();
            assert_eq!(names, DEAD_LETTER_HEADER_NAMES, "{}", id(v));
        }
        other => panic!("{other}: behaviour vector without a check"),
    }
}

#[test]
fn every_headers_vector_is_checked() {
    let mut covered = BTreeSet::new();
    for v in load("headers") {
        match str_of(&v["kind"], "kind") {
            "headers.encode" => check_encode(&v),
            "headers.decode_error" => check_decode_error(&v),
            "behaviour" => check_behaviour(&v),
            other => panic!("{}: unhandled kind {other}", id(&v)),
        }
        covered.insert(id(&v).to_string());
    }
    assert_all_covered("headers", &covered);
}

#[test]
fn headers_decoder_never_panics() {
    let golden: Vec<Vec<u8>> = load("headers")
        .iter()
        .filter_map(|v| {
            v["expected"]["hex"]
                .as_str()
                .or(v["inputs"]["hex"].as_str())
                .map(unhex)
        })
        .collect();
    for input in adversarial_inputs(&golden, 0x4ead_e125) {
        if let Ok(headers) = decode_headers(&input) {
            // Whatever decodes re-encodes to the same bytes.
            assert_eq!(encode_headers(&headers), input);
        }
    }
}
