//! `schema` end to end: the binary against the in-repo registry server over real HTTP —
//! prewarm (flags, manifest, references, cache file), inspect, decode, check — and the
//! failure paths: auth, context paths, 5xx/429 retries, slow and malformed answers, an
//! unreachable registry, registry error codes, bad files and bad frames.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use krabka_streams::engine::schema::framing;
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions, SchemaRecord};

const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"demo","doc":"an order",
 "fields":[{"name":"id","type":"string"},{"name":"amount","type":"long"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"note","type":["null","string"],"default":null}]}"#;

const ORDER_CANONICAL: &str = r#"{"name":"demo.Order","type":"record","fields":[{"name":"id","type":"string"},{"name":"amount","type":"long"},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"tags","type":{"type":"array","items":"string"}},{"name":"note","type":["null","string"]}]}"#;

const PROTO: &str = r#"syntax = "proto3";
package demo;
message Order {
  string id = 1;
  int64 amount = 2;
  message Line { string sku = 1; int32 qty = 2; }
  repeated Line lines = 3;
}
"#;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}): {}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }
}

fn krabka(args: &[&str], envs: &[(&str, &str)], stdin: Option<&[u8]>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_krabka-streams"));
    cmd.args(args)
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_SCHEMA_REGISTRY_PASSWORD")
        .env_remove("KRABKA_SCHEMA_REGISTRY_TOKEN")
        .env_remove("KRABKA_OUTPUT")
        .env("RUST_LOG", "off")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run krabka-streams");
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// `krabka-streams --registry URL --output json <args>`.
fn schema(server_url: &str, args: &[&str]) -> Run {
    let mut all = vec!["--registry", server_url, "--output", "json", "schema"];
    all.extend_from_slice(args);
    krabka(&all, &[], None)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn prewarm_registers_the_canonical_text_and_reports_one_row_per_subject() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempdir();
    let avsc = write(dir.path(), "order.avsc", ORDER);
    let proto = write(dir.path(), "order.proto", PROTO);
    let manifest = write(
        dir.path(),
        "manifest.json",
        &json!({"subjects": [
            {"topic": "orders", "role": "value", "schema_file": "order.avsc"},
            {"topic": "orders", "role": "key", "schema_file": "order.proto", "message_type": "demo.Order.Line"},
        ]})
        .to_string(),
    );
    let cache_file = dir.path().join("cache.json");
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--manifest",
            manifest.to_str().unwrap(),
            "--write-cache",
            cache_file.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = r.json()["data"]["subjects"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["subject"], "orders-value");
    // Subjects resolve concurrently, so which one got id 1 is not fixed.
    let value_id = rows[0]["id"].as_u64().unwrap();
    let key_id = rows[1]["id"].as_u64().unwrap();
    assert_eq!(value_id + key_id, 3);
    assert_eq!(rows[0]["version"], 1);
    assert_eq!(rows[0]["mode"], "auto-register");
    assert_eq!(rows[1]["subject"], "orders-key");
    assert_eq!(rows[1]["error"], Value::Null);
    // D1: the registered text is the canonical form that keeps the decimal attributes.
    let registered = server
        .request_log()
        .into_iter()
        .find(|q| q.method == "POST" && q.path == "/subjects/orders-value/versions")
        .unwrap()
        .body_json()
        .unwrap();
    assert_eq!(registered["schema"], ORDER_CANONICAL);
    let key_body = server
        .request_log()
        .into_iter()
        .find(|q| q.method == "POST" && q.path == "/subjects/orders-key/versions")
        .unwrap()
        .body_json()
        .unwrap();
    assert_eq!(key_body["messageType"], "demo.Order.Line");
    assert_eq!(key_body["schemaType"], "PROTOBUF");
    // The cache file seeds subjects and writer schemas.
    let cache: Value =
        serde_json::from_str(&std::fs::read_to_string(&cache_file).unwrap()).unwrap();
    assert_eq!(cache["format"], "krabka-streams-schema-cache");
    assert_eq!(cache["subjects"]["orders-value"]["id"], value_id);
    assert_eq!(
        cache["schemas"][key_id.to_string()]["messageType"],
        "demo.Order.Line"
    );
    assert_eq!(
        cache["schemas"][value_id.to_string()]["schema"],
        ORDER_CANONICAL
    );

    // Prewarming again is idempotent: same ids, lookup-only finds them, use-latest agrees.
    for mode in ["auto-register", "lookup-only", "use-latest"] {
        let r = schema(
            &server.url(),
            &[
                "prewarm",
                "--manifest",
                manifest.to_str().unwrap(),
                "--mode",
                mode,
            ],
        );
        assert_eq!(r.code, 0, "{mode}: {}", r.stderr);
        let rows = r.json()["data"]["subjects"].clone();
        assert_eq!(rows[0]["id"], value_id, "{mode}");
        assert_eq!(rows[0]["version"], 1, "{mode}");
        if mode != "auto-register" {
            assert_eq!(rows[0]["texts_differ"], false, "{mode}");
        }
    }
    let _ = avsc;
    let _ = proto;
}

#[test]
fn prewarm_resolves_references_and_inspect_shows_them() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempdir();
    let customer = write(
        dir.path(),
        "customer.avsc",
        r#"{"type":"record","name":"Customer","namespace":"demo","fields":[{"name":"name","type":"string"}]}"#,
    );
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "customer",
            "--schema-file",
            customer.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let order = write(
        dir.path(),
        "order.avsc",
        r#"{"type":"record","name":"Order","namespace":"demo","fields":[{"name":"customer","type":"demo.Customer"}]}"#,
    );
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "orders-value",
            "--schema-file",
            order.to_str().unwrap(),
            "--reference",
            "demo.Customer=customer:1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = r.json()["data"]["subjects"][0]["id"].as_u64().unwrap();
    let r = schema(
        &server.url(),
        &["inspect", "id", &id.to_string(), "--arrow"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let data = &r.json()["data"];
    assert_eq!(data["references"][0]["name"], "demo.Customer");
    assert_eq!(data["references"][0]["subject"], "customer");
    assert!(
        data["references"][0]["schema"]
            .as_str()
            .unwrap()
            .contains("Customer")
    );
    assert_eq!(data["arrow"][0], "customer: Struct not null");
    let usage = schema(&server.url(), &["inspect", "id-usage", &id.to_string()]);
    assert_eq!(
        usage.json()["data"]["versions"],
        json!([{"subject": "orders-value", "version": 1}])
    );
    // Decoding a record written with the referencing schema resolves the reference by id.
    let body = [0x06, b'a', b'd', b'a'];
    let frame = framing::encode(id as u32, &body);
    let r = schema(&server.url(), &["decode", &hex::encode(&frame)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["data"]["value"],
        json!({"customer": {"name": "ada"}})
    );
}

#[test]
fn inspect_lists_subjects_versions_and_compatibility() {
    let server = RegistryServer::start_default().unwrap();
    server.seed("a-value", SchemaRecord::avro("\"string\""));
    server.seed("a-value", SchemaRecord::avro("\"long\""));
    let r = schema(&server.url(), &["inspect", "subjects"]);
    assert_eq!(r.json()["data"]["subjects"], json!(["a-value"]));
    let r = schema(&server.url(), &["inspect", "versions", "a-value"]);
    assert_eq!(r.json()["data"]["versions"], json!([1, 2]));
    let r = schema(
        &server.url(),
        &["inspect", "get", "a-value", "--version", "1"],
    );
    assert_eq!(r.json()["data"]["schema"], "\"string\"");
    let r = schema(&server.url(), &["inspect", "get", "a-value", "--arrow"]);
    assert_eq!(r.json()["data"]["arrow"], json!(["value: Int64 not null"]));
    let r = schema(&server.url(), &["inspect", "compatibility"]);
    assert_eq!(r.json()["data"]["compatibility"], "BACKWARD");
    let r = schema(&server.url(), &["inspect", "compatibility", "a-value"]);
    assert_eq!(r.json()["data"]["compatibility"], "BACKWARD");
}

#[test]
fn registry_error_codes_say_what_to_do() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempdir();
    let avsc = write(dir.path(), "s.avsc", "\"string\"");
    // 40401
    let r = schema(&server.url(), &["inspect", "versions", "nosuch"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("subject not found (40401)") && r.stderr.contains("inspect subjects"),
        "{}",
        r.stderr
    );
    // 40403
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "x-value",
            "--schema-file",
            avsc.to_str().unwrap(),
            "--mode",
            "lookup-only",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.json()["data"]["subjects"][0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("40403")
    );
    let r = schema(&server.url(), &["inspect", "id", "99"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("schema not found (40403)"),
        "{}",
        r.stderr
    );
    // 409 (the test registry does not enforce levels: answer as a strict one would)
    server.respond_next(
        1,
        409,
        r#"{"error_code":409,"message":"Schema being registered is incompatible"}"#,
    );
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "x-value",
            "--schema-file",
            avsc.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1);
    let msg = r.json()["data"]["subjects"][0]["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.contains("incompatible") && msg.contains("schema check"),
        "{msg}"
    );
    // 42201: a reference the registry does not hold
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "y-value",
            "--schema-file",
            avsc.to_str().unwrap(),
            "--reference",
            "n=nosuch:1",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("40401"), "{}", r.stderr);
    server.respond_next(1, 422, r#"{"error_code":42201,"message":"invalid schema"}"#);
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "y-value",
            "--schema-file",
            avsc.to_str().unwrap(),
        ],
    );
    assert!(
        r.json()["data"]["subjects"][0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(42201)")
    );
}

#[test]
fn basic_auth_and_context_paths_are_honoured() {
    let server = RegistryServer::start(
        RegistryServerOptions::default()
            .basic_auth("alice", "s3cret")
            .context_path("/registry"),
    )
    .unwrap();
    server.seed("a-value", SchemaRecord::avro("\"string\""));
    let url = server.url();
    assert!(url.ends_with("/registry"));
    let ok = krabka(
        &[
            "--registry",
            &url,
            "--schema-registry-user",
            "alice",
            "--output",
            "json",
            "schema",
            "inspect",
            "subjects",
        ],
        &[("KRABKA_SCHEMA_REGISTRY_PASSWORD", "s3cret")],
        None,
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(ok.json()["data"]["subjects"], json!(["a-value"]));
    assert!(
        server
            .requests()
            .iter()
            .all(|(_, p)| p.starts_with("/registry/"))
    );
    let bad = krabka(
        &[
            "--registry",
            &url,
            "--schema-registry-user",
            "alice",
            "schema",
            "inspect",
            "subjects",
        ],
        &[("KRABKA_SCHEMA_REGISTRY_PASSWORD", "wrong")],
        None,
    );
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("credentials") && !bad.stderr.contains("wrong"),
        "{}",
        bad.stderr
    );
}

#[test]
fn bearer_tokens_are_sent() {
    let server = RegistryServer::start_default().unwrap();
    let r = krabka(
        &["--registry", &server.url(), "schema", "inspect", "subjects"],
        &[("KRABKA_SCHEMA_REGISTRY_TOKEN", "tok-1")],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        server.request_log()[0].header("Authorization"),
        Some("Bearer tok-1")
    );
}

#[test]
fn transient_5xx_and_429_answers_are_retried_twice() {
    let server = RegistryServer::start_default().unwrap();
    server.fail_next(2, 503);
    let r = schema(&server.url(), &["inspect", "subjects"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(server.requests().len(), 3);
    server.clear_requests();
    server.fail_next(10, 429);
    let r = schema(&server.url(), &["inspect", "subjects"]);
    assert_eq!(r.code, 1);
    assert_eq!(server.requests().len(), 3);
    assert!(r.stderr.contains("HTTP 429"), "{}", r.stderr);
}

#[test]
fn slow_answers_time_out_as_unreachable() {
    let server = RegistryServer::start_default().unwrap();
    server.delay(Duration::from_secs(3));
    let r = krabka(
        &[
            "--registry",
            &server.url(),
            "--request-timeout-ms",
            "200",
            "schema",
            "inspect",
            "subjects",
        ],
        &[],
        None,
    );
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("request-timeout-ms"), "{}", r.stderr);
    let r = krabka(
        &[
            "--registry",
            &server.url(),
            "--timeout",
            "300ms",
            "schema",
            "inspect",
            "subjects",
        ],
        &[],
        None,
    );
    assert_eq!(r.code, 4, "{}", r.stderr);
}

#[test]
fn malformed_answers_and_dropped_connections_fail_cleanly() {
    let server = RegistryServer::start_default().unwrap();
    server.respond_next(1, 200, "<html>not json</html>");
    let r = schema(&server.url(), &["inspect", "subjects"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("cannot parse schema registry response"),
        "{}",
        r.stderr
    );
    assert_eq!(
        server.requests().len(),
        1,
        "a malformed 2xx answer is not retried"
    );
    server.respond_next(1, 200, r#"{"not":"an array"}"#);
    let r = schema(&server.url(), &["inspect", "subjects"]);
    assert!(r.stderr.contains("is not an array"), "{}", r.stderr);
    server.clear_requests();
    server.drop_next(1);
    let r = schema(&server.url(), &["inspect", "subjects"]);
    assert_eq!(r.code, 0, "a dropped connection is retried: {}", r.stderr);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_unreachable_registry_exits_4() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let r = schema(&url, &["inspect", "subjects"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    let err: Value = serde_json::from_str(r.stderr.trim()).unwrap();
    assert_eq!(err["error"]["code"], 4);
    let dir = tempdir();
    let avsc = write(dir.path(), "s.avsc", "\"string\"");
    let r = schema(
        &url,
        &[
            "prewarm",
            "--subject",
            "s",
            "--schema-file",
            avsc.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 4, "{}", r.stderr);
    let r = krabka(&["schema", "inspect", "subjects"], &[], None);
    assert_eq!(
        r.code, 2,
        "no registry given is a usage error: {}",
        r.stderr
    );
}

#[test]
fn malformed_schema_files_are_usage_errors_naming_the_file() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempdir();
    for (name, text, kind) in [
        (
            "bad.avsc",
            r#"{"type":"record","name":"X","fields":[{"name":"a","type":"nosuch"}]}"#,
            "avro",
        ),
        ("bad.proto", "syntax = \"proto3\"; message {", "protobuf"),
        ("bad.json", r#"{"type": 5}"#, "json"),
    ] {
        let p = write(dir.path(), name, text);
        let r = schema(
            &server.url(),
            &[
                "prewarm",
                "--subject",
                "s",
                "--schema-file",
                p.to_str().unwrap(),
                "--type",
                kind,
            ],
        );
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(r.stderr.contains(name), "{name}: {}", r.stderr);
    }
    assert!(
        server.requests().is_empty(),
        "bad files never reach the registry"
    );
    let r = schema(
        &server.url(),
        &[
            "prewarm",
            "--subject",
            "s",
            "--schema-file",
            "/nonexistent.avsc",
        ],
    );
    assert_eq!(r.code, 2);
}

#[test]
fn decode_reads_hex_files_and_stdin_and_refuses_a_wrong_magic_byte() {
    let server = RegistryServer::start_default().unwrap();
    let (id, _) = server.seed("o-value", SchemaRecord::avro(ORDER));
    // id "o-1", amount 120 (zigzag 240 = f0 01), price 12.34 (04 d2), tags ["x"], note null
    let body = hex::decode("066f2d31f001".to_string() + "0404d2" + "020278" + "00" + "00").unwrap();
    let frame = framing::encode(id, &body);
    let want = json!({"id": "o-1", "amount": 120, "price": "12.34", "tags": ["x"], "note": null});
    let r = schema(&server.url(), &["decode", &hex::encode(&frame)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["data"]["value"], want);
    assert_eq!(r.json()["data"]["schema_id"], id);
    let dir = tempdir();
    let f = dir.path().join("frame.bin");
    std::fs::write(&f, &frame).unwrap();
    let r = schema(&server.url(), &["decode", "--file", f.to_str().unwrap()]);
    assert_eq!(r.json()["data"]["value"], want);
    let r = krabka(
        &[
            "--registry",
            &server.url(),
            "--output",
            "json",
            "schema",
            "decode",
        ],
        &[],
        Some(&frame),
    );
    assert_eq!(r.json()["data"]["value"], want, "{}", r.stderr);
    let mut bad = frame.clone();
    bad[0] = 1;
    let r = schema(&server.url(), &["decode", &hex::encode(&bad)]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("invalid schema frame magic byte 0x01")
            && r.stderr.contains("not a Confluent-framed"),
        "{}",
        r.stderr
    );
    let r = schema(&server.url(), &["decode", "zz"]);
    assert_eq!(r.code, 2);
}

#[test]
fn decode_follows_protobuf_message_index_paths() {
    let server = RegistryServer::start_default().unwrap();
    let (id, _) = server.seed("p-value", SchemaRecord::protobuf(PROTO, "demo.Order"));
    // Line {sku: "a", qty: 2} at path [0, 0]
    let body = [0x0a, 0x01, b'a', 0x10, 0x02];
    let frame = framing::encode_protobuf(id, &[0, 0], &body).unwrap();
    let r = schema(&server.url(), &["decode", &hex::encode(&frame)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = &r.json()["data"];
    assert_eq!(d["message_indexes"], json!([0, 0]));
    assert_eq!(d["message_type"], "demo.Order.Line");
    assert_eq!(d["value"], json!({"sku": "a", "qty": 2}));
}

#[test]
fn check_lists_every_incompatibility_and_exits_3() {
    let server = RegistryServer::start_default().unwrap();
    server.seed("o-value", SchemaRecord::avro(ORDER));
    let dir = tempdir();
    let added_with_default = write(
        dir.path(),
        "ok.avsc",
        &ORDER.replace(
            r#"{"name":"id","type":"string"},"#,
            r#"{"name":"id","type":"string"},{"name":"extra","type":"int","default":0},"#,
        ),
    );
    let r = schema(
        &server.url(),
        &[
            "check",
            "--against",
            "o-value",
            added_with_default.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["data"]["compatible"], true);
    let broken = write(
        dir.path(),
        "broken.avsc",
        &ORDER
            .replace(
                r#"{"name":"amount","type":"long"}"#,
                r#"{"name":"amount","type":"int"}"#,
            )
            .replace(
                r#"{"name":"id","type":"string"},"#,
                r#"{"name":"id","type":"string"},{"name":"extra","type":"int"},"#,
            ),
    );
    let r = schema(
        &server.url(),
        &[
            "check",
            "--against",
            "o-value:1",
            broken.to_str().unwrap(),
            "--level",
            "full",
        ],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    let list: Vec<String> = r.json()["data"]["incompatibilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert!(
        list.contains(&"BACKWARD: amount: type changed from long to int".to_string()),
        "{list:?}"
    );
    assert!(
        list.contains(&"BACKWARD: extra has no default and is absent from the writer".to_string()),
        "{list:?}"
    );
    assert!(
        list.iter()
            .all(|m| m.starts_with("BACKWARD: ") || m.starts_with("FORWARD: ")),
        "{list:?}"
    );
    assert_eq!(list.len(), 2, "forward reads long as... {list:?}");
    let r = schema(
        &server.url(),
        &["check", "--against", "nosuch", broken.to_str().unwrap()],
    );
    assert_eq!(r.code, 1);
}

#[test]
fn omit_message_type_leaves_the_extension_out_for_strict_registries() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempdir();
    let proto = write(dir.path(), "o.proto", PROTO);
    let r = schema(
        &server.url(),
        &[
            "--omit-message-type",
            "prewarm",
            "--subject",
            "p-value",
            "--schema-file",
            proto.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body = server.request_log()[0].body_json().unwrap();
    assert_eq!(body["schemaType"], "PROTOBUF");
    assert!(body.get("messageType").is_none(), "{body}");
}

#[test]
fn dry_run_prewarm_only_looks_up_and_writes_no_cache() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempdir();
    let avsc = write(dir.path(), "s.avsc", "\"string\"");
    let cache = dir.path().join("c.json");
    let r = schema(
        &server.url(),
        &[
            "--dry-run",
            "prewarm",
            "--subject",
            "s",
            "--schema-file",
            avsc.to_str().unwrap(),
            "--write-cache",
            cache.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1, "not registered yet: {}", r.stdout);
    assert_eq!(r.json()["dry_run"], true);
    assert!(
        server
            .requests()
            .iter()
            .all(|(m, p)| m == "POST" && p == "/subjects/s")
    );
    assert!(!cache.exists());
}

#[test]
fn decode_refuses_every_cut_of_a_framed_record_and_a_trailing_byte() {
    let server = RegistryServer::start_default().unwrap();
    let (id, _) = server.seed("o-value", SchemaRecord::avro(ORDER));
    // id "o-1", amount 120, price 12.34, tags ["x"], note "hello": the last field is the
    // optional string apache-avro alone read back as null when the body was cut.
    let body =
        hex::decode("066f2d31f001".to_string() + "0404d2" + "020278" + "00" + "020a68656c6c6f")
            .unwrap();
    let frame = framing::encode(id, &body);
    let r = schema(&server.url(), &["decode", &hex::encode(&frame)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["data"]["value"]["note"], "hello");
    for cut in 0..body.len() {
        let short = &frame[..framing::FRAME_HEADER_LEN + cut];
        let r = schema(&server.url(), &["decode", &hex::encode(short)]);
        assert_eq!(r.code, 1, "cut to {cut} bytes: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.is_empty(), "cut to {cut}: {}", r.stdout);
        assert!(
            r.stderr
                .contains(&format!("decode the body with writer schema {id}"))
                && r.stderr.contains(&format!(
                    "the Avro body ends early: {cut} bytes do not hold a whole datum"
                )),
            "cut to {cut}: {}",
            r.stderr
        );
    }
    let mut long = frame.clone();
    long.push(0);
    let r = schema(&server.url(), &["decode", &hex::encode(&long)]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("1 trailing bytes after the Avro datum"),
        "{}",
        r.stderr
    );
}
