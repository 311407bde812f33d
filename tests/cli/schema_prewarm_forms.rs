//! `schema prewarm` and the two texts of an Avro schema: the file as written (what
//! Confluent serializers and REST users register) and its canonical form (what krabka
//! registers by default). lookup-only finds either and says which; auto-register says
//! what the canonical text lost and `--register-form written` sends the file verbatim.

use std::path::Path;
use std::time::Duration;

use krabka_streams::engine::schema::registry::{Registry, SchemaSpec, SchemaType};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::RegistryServer;
use serde_json::Value;

use crate::support::process::Running;

/// An Avro schema as people write it: namespace, doc, a default.
const WRITTEN: &str = r#"{
  "type": "record",
  "name": "Order",
  "namespace": "shop",
  "doc": "one order",
  "fields": [
    {"name": "id", "type": "string"},
    {"name": "qty", "type": "int", "default": 1, "doc": "items"}
  ]
}"#;

struct Prewarm {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Prewarm {
    fn row(&self) -> Value {
        let v: Value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", self.stdout, self.stderr));
        v["data"]["subjects"][0].clone()
    }
}

fn prewarm(dir: &Path, url: &str, json: bool, args: &[&str]) -> Prewarm {
    let mut all = vec!["--registry", url];
    if json {
        all.extend(["--output", "json"]);
    }
    all.extend(["schema", "prewarm"]);
    all.extend_from_slice(args);
    let f = Running::start(dir, &all).wait(Duration::from_secs(60));
    Prewarm {
        code: f.code(),
        stdout: f.stdout_text(),
        stderr: f.stderr,
    }
}

fn avro(text: &str) -> SchemaSpec {
    SchemaSpec {
        schema: text.to_string(),
        schema_type: SchemaType::Avro,
        message_type: None,
        references: Vec::new(),
    }
}

#[test]
fn lookup_only_finds_a_schema_another_client_registered_as_written() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.avsc");
    std::fs::write(&file, WRITTEN).unwrap();
    let file = file.to_str().unwrap();
    // Another client (a Confluent serializer, a REST call) registers the text verbatim.
    let client = HttpRegistry::new(HttpRegistryOptions::new(server.url())).unwrap();
    let id = client.register("orders-value", &avro(WRITTEN)).unwrap();

    server.clear_requests();
    let args = [
        "--subject",
        "orders-value",
        "--schema-file",
        file,
        "--mode",
        "lookup-only",
    ];
    let r = prewarm(dir.path(), &server.url(), true, &args);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    let row = r.row();
    assert_eq!(row["id"], id);
    assert_eq!(row["version"], 1);
    assert_eq!(row["form"], "written");
    let lookups: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|(m, p)| m == "POST" && p.starts_with("/subjects/orders-value"))
        .collect();
    assert_eq!(lookups.len(), 1, "found by the first lookup: {lookups:?}");

    // The same schema laid out differently is the same schema to the registry.
    let relaid = dir.path().join("relaid.avsc");
    let compact: Value = serde_json::from_str(WRITTEN).unwrap();
    std::fs::write(&relaid, compact.to_string()).unwrap();
    let args = [
        "--subject",
        "orders-value",
        "--schema-file",
        relaid.to_str().unwrap(),
        "--mode",
        "lookup-only",
    ];
    let r = prewarm(dir.path(), &server.url(), true, &args);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.row()["form"], "written");
    assert_eq!(r.row()["id"], id);
}

#[test]
fn lookup_only_falls_back_to_the_canonical_form_and_says_so() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.avsc");
    std::fs::write(&file, WRITTEN).unwrap();
    let file = file.to_str().unwrap();

    // krabka's default registration: the canonical form, and the report says what it lost.
    let r = prewarm(
        dir.path(),
        &server.url(),
        true,
        &["--subject", "o-value", "--schema-file", file],
    );
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    let row = r.row();
    assert_eq!(row["form"], "canonical");
    assert_eq!(row["registered_text_differs_from_file"], true);
    assert_eq!(
        row["dropped_attributes"],
        serde_json::json!(["default", "doc"])
    );
    let id = row["id"].clone();
    let text = prewarm(
        dir.path(),
        &server.url(),
        false,
        &["--subject", "o-value", "--schema-file", file],
    );
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .contains("note: o-value was registered in canonical form")
            && text.stdout.contains("no default, doc"),
        "{}",
        text.stdout
    );

    let args = [
        "--subject",
        "o-value",
        "--schema-file",
        file,
        "--mode",
        "lookup-only",
    ];
    let r = prewarm(dir.path(), &server.url(), true, &args);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.row()["form"], "canonical");
    assert_eq!(r.row()["id"], id);
    // --register-form only changes what registration sends: a lookup still falls back.
    let with_flag = [&args[..], &["--register-form", "written"]].concat();
    let r = prewarm(dir.path(), &server.url(), true, &with_flag);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.row()["form"], "canonical");

    // Neither form registered under the subject: 40403, naming both attempts.
    let args = [
        "--subject",
        "other-value",
        "--schema-file",
        file,
        "--mode",
        "lookup-only",
    ];
    server.seed(
        "other-value",
        krabka_streams::io::registry_server::SchemaRecord::avro("\"string\""),
    );
    let r = prewarm(dir.path(), &server.url(), true, &args);
    assert_eq!(r.code, 1, "{} {}", r.stdout, r.stderr);
    let message = r.row()["error"]["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("neither the schema as written nor its canonical form"),
        "{message}"
    );
}

#[test]
fn register_form_written_registers_the_file_verbatim() {
    let server = RegistryServer::start_default().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.avsc");
    std::fs::write(&file, WRITTEN).unwrap();
    let file = file.to_str().unwrap();
    let args = [
        "--subject",
        "w-value",
        "--schema-file",
        file,
        "--register-form",
        "written",
    ];
    let r = prewarm(dir.path(), &server.url(), true, &args);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    let row = r.row();
    assert_eq!(row["form"], "written");
    assert_eq!(row["registered_text_differs_from_file"], false);
    assert_eq!(row["dropped_attributes"], serde_json::json!([]));
    let client = HttpRegistry::new(HttpRegistryOptions::new(server.url())).unwrap();
    let latest = client.latest("w-value").unwrap();
    assert_eq!(
        latest.spec.schema, WRITTEN,
        "the registry holds the file as written"
    );
    assert_eq!(row["id"], latest.id);
    let args = [
        "--subject",
        "w-value",
        "--schema-file",
        file,
        "--mode",
        "lookup-only",
    ];
    let r = prewarm(dir.path(), &server.url(), true, &args);
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.row()["form"], "written");
}
