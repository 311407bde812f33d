//! `schema check` end to end against the in-repo registry: Protobuf and JSON Schema
//! verdicts by the Confluent checker's rules, the subject's level deciding direction and
//! versions (`*_TRANSITIVE` against every version, `NONE` as no check), and a level that
//! cannot be read failing instead of defaulting to backward.

use std::path::{Path, PathBuf};
use std::time::Duration;

use krabka_streams::engine::schema::registry::Registry;
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, SchemaRecord};
use serde_json::Value;

use crate::support::process::{Finished, Running};

struct Check {
    code: i32,
    json: Value,
    stderr: String,
}

fn check(dir: &Path, url: &str, args: &[&str]) -> Check {
    let mut all = vec!["--registry", url, "--output", "json", "schema", "check"];
    all.extend_from_slice(args);
    let f: Finished = Running::start(dir, &all).wait(Duration::from_secs(60));
    let stdout = f.stdout_text();
    Check {
        code: f.code(),
        json: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stderr: f.stderr,
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn list(v: &Value) -> Vec<String> {
    v["data"]["incompatibilities"]
        .as_array()
        .unwrap_or_else(|| panic!("no incompatibilities in {v}"))
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

const PROTO_V1: &str = "syntax = \"proto3\";\npackage shop;\nmessage Order { int32 qty = 1; fixed32 code = 2; string note = 3; }\n";

#[test]
fn protobuf_check_compares_scalar_groups_not_wire_types() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempfile::tempdir().unwrap();
    server.seed("p-value", SchemaRecord::protobuf(PROTO_V1, "shop.Order"));
    // Each change keeps the wire type (varint, fixed32, length-delimited) and each is
    // refused by the registry's Protobuf checker.
    let broken = write(
        dir.path(),
        "broken.proto",
        "syntax = \"proto3\";\npackage shop;\nmessage Note { string text = 1; }\nmessage Order { sint32 qty = 1; float code = 2; Note note = 3; }\n",
    );
    let r = check(
        dir.path(),
        &server.url(),
        &["--against", "p-value", broken.to_str().unwrap()],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    let found = list(&r.json);
    assert_eq!(
        found,
        vec![
            "BACKWARD: shop.Order field 1 changed type from int32 to sint32 (FIELD_SCALAR_KIND_CHANGED)",
            "BACKWARD: shop.Order field 2 changed type from fixed32 to float (FIELD_SCALAR_KIND_CHANGED)",
            "BACKWARD: shop.Order field 3 changed kind from scalar to message (FIELD_KIND_CHANGED)",
        ]
    );
    let fine = write(
        dir.path(),
        "fine.proto",
        "syntax = \"proto3\";\npackage shop;\nmessage Order { int64 qty = 1; sfixed32 code = 2; bytes note = 3; string extra = 4; }\n",
    );
    let r = check(
        dir.path(),
        &server.url(),
        &["--against", "p-value", fine.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["compatible"], true);
    assert_eq!(r.json["data"]["level"], "BACKWARD");
    assert_eq!(r.json["data"]["level_source"], "subject");
}

// The subject's history: v2 changed qty's type while the subject was at NONE.
const JSON_V1: &str = r#"{"type":"object","properties":{"id":{"type":"string"},"qty":{"type":"integer"}},"additionalProperties":false}"#;
const JSON_V2: &str = r#"{"type":"object","properties":{"id":{"type":"string"},"qty":{"type":"string"}},"additionalProperties":false}"#;
// Adds an optional property to v2's closed model: compatible with v2, not with v1.
const JSON_CANDIDATE: &str = r#"{"type":"object","properties":{"id":{"type":"string"},"qty":{"type":"string"},"note":{"type":"string"}},"additionalProperties":false}"#;

#[test]
fn transitive_levels_check_every_version_and_none_checks_nothing() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let subject = "j-value";
    server.seed(subject, SchemaRecord::json(JSON_V1));
    server.seed(subject, SchemaRecord::json(JSON_V2));
    let candidate = write(dir.path(), "c.json", JSON_CANDIDATE);
    let file = candidate.to_str().unwrap();
    let client = HttpRegistry::new(HttpRegistryOptions::new(server.url())).unwrap();

    client.set_compatibility(Some(subject), "BACKWARD").unwrap();
    let r = check(dir.path(), &server.url(), &["--against", subject, file]);
    assert_eq!(r.code, 0, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["checked_versions"], serde_json::json!([2]));

    client
        .set_compatibility(Some(subject), "BACKWARD_TRANSITIVE")
        .unwrap();
    let r = check(dir.path(), &server.url(), &["--against", subject, file]);
    assert_eq!(r.code, 3, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["level"], "BACKWARD_TRANSITIVE");
    assert_eq!(
        r.json["data"]["checked_versions"],
        serde_json::json!([2, 1])
    );
    assert_eq!(
        list(&r.json),
        vec![
            "version 1: BACKWARD: #/properties/qty: the writer's integer is read as string (TYPE_CHANGED)"
        ]
    );
    assert_eq!(r.json["data"]["checked"][0]["compatible"], true);
    assert_eq!(r.json["data"]["checked"][1]["compatible"], false);

    // A pinned version is checked alone, whatever the level.
    let latest = format!("{subject}:latest");
    let r = check(dir.path(), &server.url(), &["--against", &latest, file]);
    assert_eq!(r.code, 0, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["checked_versions"], serde_json::json!([2]));
    let first = format!("{subject}:1");
    let r = check(dir.path(), &server.url(), &["--against", &first, file]);
    assert_eq!(r.code, 3, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["checked_versions"], serde_json::json!([1]));

    // FORWARD_TRANSITIVE from the flag: every old reader, closed, lacks `note`.
    let r = check(
        dir.path(),
        &server.url(),
        &["--against", subject, file, "--level", "forward-transitive"],
    );
    assert_eq!(r.code, 3, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["level_source"], "flag");
    let found = list(&r.json);
    for v in [1, 2] {
        assert!(
            found.iter().any(|m| m
                .starts_with(&format!("version {v}: FORWARD: #/properties/note:"))
                && m.ends_with("(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL)")),
            "{found:?}"
        );
    }

    // NONE: nothing is checked, but the candidate still has to parse.
    client.set_compatibility(Some(subject), "NONE").unwrap();
    let r = check(dir.path(), &server.url(), &["--against", subject, file]);
    assert_eq!(r.code, 0, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["level"], "NONE");
    assert_eq!(r.json["data"]["checked_versions"], serde_json::json!([]));
    let bad = write(dir.path(), "bad.json", r#"{"type":"wat"}"#);
    let r = check(
        dir.path(),
        &server.url(),
        &["--against", subject, bad.to_str().unwrap()],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
}

#[test]
fn a_level_that_cannot_be_read_is_an_error_not_backward() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempfile::tempdir().unwrap();
    server.seed("p-value", SchemaRecord::protobuf(PROTO_V1, "shop.Order"));
    let same = write(dir.path(), "same.proto", PROTO_V1);
    let file = same.to_str().unwrap();

    // The first call is the level lookup: every attempt (1 + 2 retries) fails.
    server.fail_next(3, 500);
    let r = check(dir.path(), &server.url(), &["--against", "p-value", file]);
    assert_eq!(r.code, 1, "{} {}", r.json, r.stderr);
    assert!(
        r.stderr.contains("compatibility level of p-value"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("500"), "{}", r.stderr);

    // An answer that is not a registry level.
    server.respond_next(1, 200, r#"{"compatibilityLevel":"SOMETIMES"}"#);
    let r = check(dir.path(), &server.url(), &["--against", "p-value", file]);
    assert_eq!(r.code, 1, "{} {}", r.json, r.stderr);
    assert!(
        r.stderr.contains("unknown compatibility level") && r.stderr.contains("SOMETIMES"),
        "{}",
        r.stderr
    );

    // A subject without a level of its own (Confluent answers 40408): the global level.
    server.respond_next(
        1,
        404,
        r#"{"error_code":40408,"message":"Subject 'p-value' does not have subject-level compatibility configured"}"#,
    );
    let r = check(dir.path(), &server.url(), &["--against", "p-value", file]);
    assert_eq!(r.code, 0, "{} {}", r.json, r.stderr);
    assert_eq!(r.json["data"]["level_source"], "global");
    assert_eq!(r.json["data"]["level"], "BACKWARD");
}
