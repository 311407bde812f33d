//! Locating and loading the golden vector files.

use serde_json::Value;
use std::path::PathBuf;

/// The vectors folder: the repository's own copy, `tests/vectors/data/` (docs/vectors.md).
/// No override: the tests check the contract this checkout carries, nothing beside it.
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/data")
}

/// Every vector object of `<area>.json`. Panics with the path when the file is missing:
/// the vectors are the compatibility contract, so a missing file must fail the suite.
pub fn load(area: &str) -> Vec<Value> {
    let path = vectors_dir().join(format!("{area}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read golden vectors {}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("cannot parse golden vectors {}: {e}", path.display()));
    value
        .as_array()
        .unwrap_or_else(|| panic!("{} is not a JSON array", path.display()))
        .clone()
}

/// The vectors of one `kind`, asserting there is at least one so a renamed kind cannot pass silently.
pub fn of_kind(area: &str, kind: &str) -> Vec<Value> {
    let out: Vec<Value> = load(area)
        .into_iter()
        .filter(|v| v["kind"] == kind)
        .collect();
    assert!(!out.is_empty(), "no vectors of kind {kind} in {area}.json");
    out
}

pub fn id(v: &Value) -> &str {
    v["id"].as_str().unwrap_or("<no id>")
}

pub fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).unwrap_or_else(|e| panic!("bad hex {s:?}: {e}"))
}

pub fn str_of<'a>(v: &'a Value, what: &str) -> &'a str {
    v.as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {v}"))
}

pub fn i64_of(v: &Value, what: &str) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{what} is not an i64: {v}"))
}

/// Every vector id in the area must be checked by some test; call with the ids a test file covered.
#[allow(dead_code)]
pub fn assert_all_covered(area: &str, covered: &std::collections::BTreeSet<String>) {
    let missing: Vec<String> = load(area)
        .iter()
        .map(|v| id(v).to_string())
        .filter(|i| !covered.contains(i))
        .collect();
    assert!(
        missing.is_empty(),
        "{area}.json vectors not checked: {missing:?}"
    );
}

/// A vector check: runs one vector (as read from its file) through the code it covers.
pub type Check = fn(&Value);

/// Checks by vector id, for a coverage test to run on the vectors it loads.
pub type Checks = &'static [(&'static str, Check)];
