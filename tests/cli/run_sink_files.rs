//! Sinks that write with a schema file of the user's, end to end against a Tansu
//! broker and the in-repo registry over HTTP: `json-schema:FILE.json` and
//! `protobuf:FILE.proto:pkg.Msg` register the file under `<topic>-value` (keys
//! derived under `<topic>-key`, or from their own file) and `tail` reads every
//! value back through the registry; a row the JSON Schema refuses follows the
//! topology's error policy (fail, skip, dead-letter); `run --check` names the
//! sink's line and the property, field or column at fault. A `.proto` file's
//! imports register first under their import paths and become its references.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use krabka_streams::engine::murmur2::{murmur2, to_positive};
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::protobuf::{self as proto, ProtoSchema};
use krabka_streams::engine::schema::registry::Registry;

use crate::run_online::{
    TIMEOUT, create_topic, interrupt, produce, read_until, start_runner, write_topology,
};
use crate::run_sinks::{
    Raw, SINK_PARTITIONS, check_with, decode, last_per_user, run_sink_with, tail_rows, topology,
    topology_keyed,
};
use crate::support::admin::committed_offsets;
use crate::support::tansu::Tansu;
use crate::support::unique_name;

/// A closed draft-07 schema: `last_ts` is left out of the rows.
const TOTALS_JSON: &str = r#"{"$schema":"http://json-schema.org/draft-07/schema#","title":"Total",
 "type":"object","additionalProperties":false,"required":["user","total","n"],
 "properties":{"user":{"type":"string"},"total":{"type":"integer","minimum":0},
  "n":{"type":"integer"},"total_eur":{"type":["string","null"]}}}"#;

/// `shop.Total` is the second message: its message-index path is `[1]`.
const TOTALS_PROTO: &str = r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Note { string text = 1; }

message Total {
  string user = 1;
  int64 total = 2;
  int64 n = 3;
  string total_eur = 4;
  google.protobuf.Timestamp last_ts = 5;
  optional string region = 6;
}
"#;

const USER_KEY_JSON: &str = r#"{"$schema":"http://json-schema.org/draft-07/schema#",
 "type":"object","required":["user"],"properties":{"user":{"type":"string","minLength":1}}}"#;

fn expected() -> Value {
    json!({
        "alice": {"total": 270, "n": 2, "total_eur": "270.00"},
        "carol": {"total": 300, "n": 1, "total_eur": "300.00"},
    })
}

/// Every record's framed key is on its murmur2 partition and was written under
/// `totals-key`'s only version; returns that version's schema text.
fn check_framed_keys(read: &[Raw], client: &impl Registry) -> String {
    assert_eq!(client.versions("totals-key").unwrap(), vec![1]);
    let key_schema = client.version("totals-key", 1).unwrap();
    for r in read {
        let key = r
            .key_bytes
            .as_deref()
            .expect("every grouped record is keyed");
        assert_eq!(r.partition, to_positive(murmur2(key)) % SINK_PARTITIONS);
        assert_eq!(framing::decode(key).unwrap().schema_id, key_schema.id);
    }
    key_schema.spec.schema
}

#[test]
fn a_json_schema_sink_with_a_schema_file_registers_the_file_and_tail_reads_each_value_back() {
    let (read, registry, client, tansu, dir) = run_sink_with(
        "json-schema:totals.json",
        "json-schema",
        &[("totals.json", TOTALS_JSON)],
    );
    assert_eq!(client.versions("totals-value").unwrap(), vec![1]);
    let registered = client.version("totals-value", 1).unwrap();
    assert_eq!(registered.spec.schema, TOTALS_JSON);
    // The key's schema is derived from the key column.
    let key_schema = check_framed_keys(&read, &client);
    assert!(
        key_schema.contains(r#""title":"totals-key""#),
        "{key_schema}"
    );
    for r in &read {
        let frame = framing::decode(&r.value).unwrap();
        assert_eq!(frame.schema_id, registered.id);
        let value: Value = serde_json::from_slice(frame.body).unwrap();
        assert!(value.get("last_ts").is_none(), "{value}");
        let key = framing::decode(r.key_bytes.as_deref().unwrap()).unwrap();
        let key: Value = serde_json::from_slice(key.body).unwrap();
        assert_eq!(key, json!({"user": value["user"]}));
    }
    let columns = ["total", "n", "total_eur"];
    let tailed = tail_rows(&tansu.bootstrap(), "json-sr", &registry.url(), dir.path());
    assert_eq!(tailed.len(), read.len(), "{tailed:?}");
    assert_eq!(last_per_user(&tailed, &columns), expected(), "{tailed:?}");
    // Value by value (partitions interleave differently): tail reads what was written.
    let pick = |v: &Value| {
        ["user", "total", "n", "total_eur"]
            .map(|c| v[c].to_string())
            .join(" ")
    };
    let mut by_tail: Vec<String> = tailed.iter().map(pick).collect();
    let mut written: Vec<String> = read
        .iter()
        .map(|r| pick(&serde_json::from_slice(framing::decode(&r.value).unwrap().body).unwrap()))
        .collect();
    by_tail.sort();
    written.sort();
    assert_eq!(by_tail, written);
}

#[test]
fn a_protobuf_sink_with_a_schema_file_writes_the_named_message_and_tail_reads_each_value_back() {
    let (read, registry, client, tansu, dir) = run_sink_with(
        "protobuf:totals.proto:shop.Total",
        "protobuf",
        &[("totals.proto", TOTALS_PROTO)],
    );
    assert_eq!(client.versions("totals-value").unwrap(), vec![1]);
    let registered = client.version("totals-value", 1).unwrap();
    assert_eq!(registered.spec.schema, TOTALS_PROTO);
    let key_schema = check_framed_keys(&read, &client);
    assert!(key_schema.contains("message totals_key {"), "{key_schema}");
    let schema = ProtoSchema::parse(TOTALS_PROTO, &[]).unwrap();
    for r in &read {
        let frame = framing::decode_protobuf(&r.value).unwrap();
        assert_eq!(frame.schema_id, registered.id);
        assert_eq!(frame.message_indexes.as_deref(), Some(&[1][..]));
        let message = schema.message_at(&[1]).unwrap();
        let value = proto::decode_body(&message, frame.body).unwrap();
        assert!(value.get("region").is_none(), "unset: {value}");
        assert!(value["last_ts"].is_string(), "{value}");
    }
    let columns = ["total", "n", "total_eur"];
    let tailed = tail_rows(&tansu.bootstrap(), "protobuf", &registry.url(), dir.path());
    assert_eq!(tailed.len(), read.len(), "{tailed:?}");
    assert_eq!(last_per_user(&tailed, &columns), expected(), "{tailed:?}");
    // Value by value (partitions interleave differently), tail and the registry's
    // own decoding agree; the field no column holds reads as absent.
    let pick = |v: &Value| {
        ["user", "total", "n", "total_eur", "last_ts"]
            .map(|c| v[c].to_string())
            .join(" ")
    };
    let mut by_tail: Vec<String> = tailed.iter().map(pick).collect();
    let mut by_registry: Vec<String> = read
        .iter()
        .map(|r| pick(&decode(&client, "protobuf", &r.value).unwrap()))
        .collect();
    by_tail.sort();
    by_registry.sort();
    assert_eq!(by_tail, by_registry);
    assert!(tailed.iter().all(|r| r["region"].is_null()), "{tailed:?}");
}

#[test]
fn a_sink_key_with_its_own_schema_file_registers_that_file_under_the_key_subject() {
    let (read, _registry, client, _tansu, _dir) = run_sink_with(
        "protobuf:totals.proto:shop.Total",
        "json-schema:user_key.json",
        &[
            ("totals.proto", TOTALS_PROTO),
            ("user_key.json", USER_KEY_JSON),
        ],
    );
    assert_eq!(check_framed_keys(&read, &client), USER_KEY_JSON);
    for r in &read {
        let key = framing::decode(r.key_bytes.as_deref().unwrap()).unwrap();
        let key: Value = serde_json::from_slice(key.body).unwrap();
        let value = decode(&client, "protobuf", &r.value).unwrap();
        assert_eq!(key, json!({"user": value["user"]}));
    }
}

#[test]
fn check_refuses_schema_files_the_sink_columns_cannot_be_written_with_at_the_sinks_line() {
    let cases: [(&str, &str, &str, &str, &str); 6] = [
        (
            "json-schema:totals.json",
            "string",
            "totals.json",
            &TOTALS_JSON.replace(
                r#"["user","total","n"]"#,
                r#"["user","total","n","region"]"#,
            ),
            "t.yaml:23:12: totals.json: the sink's columns cannot be written with the schema file: property /region is required and no column of the sink holds it",
        ),
        (
            "json-schema:totals.json",
            "string",
            "totals.json",
            &TOTALS_JSON.replace(r#""n":{"type":"integer"}"#, r#""n":{"type":"string"}"#),
            "t.yaml:23:12: totals.json: the sink's columns cannot be written with the schema file: property /n has type string and column n (Int64) is written as integer",
        ),
        (
            "protobuf:totals.proto:shop.Total",
            "string",
            "totals.proto",
            &TOTALS_PROTO.replace("int64 total = 2", "bool total = 2"),
            "t.yaml:23:12: totals.proto: the sink's columns cannot be written as message shop.Total: field total (bool) cannot hold column total (Int64)",
        ),
        (
            "protobuf:totals.proto:shop.Nope",
            "string",
            "totals.proto",
            TOTALS_PROTO,
            "Protobuf message shop.Nope is not defined in the schema",
        ),
        (
            "protobuf:totals.proto",
            "string",
            "totals.proto",
            &TOTALS_PROTO.replace(
                "import \"google",
                "import \"common.proto\";\nimport \"google",
            ),
            "t.yaml:23:21: schema file ",
        ),
        (
            "json",
            "json-schema:totals.json",
            "totals.json",
            TOTALS_JSON,
            "t.yaml:24:32: totals.json: the sink's columns cannot be written with the schema file: property /total is required and no column of the sink holds it",
        ),
    ];
    for (value, key, name, text, error) in cases {
        let topology = topology_keyed(value, key);
        let (code, stderr) = check_with(&topology, &[(name, text)]);
        assert_eq!(code, Some(3), "{value} / {key}: {stderr}");
        assert!(stderr.contains(error), "{value} / {key}: {stderr}");
    }
    for (value, name, text) in [
        ("json-schema:totals.json", "totals.json", TOTALS_JSON),
        (
            "protobuf:totals.proto:shop.Total",
            "totals.proto",
            TOTALS_PROTO,
        ),
        ("protobuf:totals.proto", "totals.proto", TOTALS_PROTO),
    ] {
        let (code, stderr) = check_with(&topology(value), &[(name, text)]);
        assert_eq!(code, Some(0), "{value}: {stderr}");
    }
}

/// A pass-through topology whose sink writes `json-schema:amounts.json`, where
/// `amount` is at most 100, under `policy` (extra settings lines).
fn policy_topology(group: &str, input: &str, output: &str, policy: &str) -> String {
    format!(
        r#"version: 1
settings:
  consumer_group: {group}
{policy}
nodes:
  - source: in
    topics: [{input}]
    value: json
  - sink: out
    parent: in
    topic: {output}
    value: json-schema:amounts.json
"#
    )
}

const AMOUNTS_JSON: &str = r#"{"$schema":"http://json-schema.org/draft-07/schema#",
 "type":"object","required":["user","amount"],
 "properties":{"user":{"type":"string"},"amount":{"type":"integer","maximum":100}}}"#;

/// Topics `in` (two partitions; on partition 0 a good row, one over the
/// maximum, another good row — one fetched batch), `out` and `dlq`; the runner
/// started under `policy`.
struct PolicyRun {
    tansu: Tansu,
    _registry: krabka_streams::io::registry_server::RegistryServer,
    _dir: tempfile::TempDir,
    group: String,
    input: String,
    output: String,
    dlq: String,
    runner: std::process::Child,
}

fn start_policy_run(policy: &str) -> PolicyRun {
    use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
    let tansu = Tansu::start();
    let bootstrap = tansu.bootstrap();
    let (input, output, dlq) = (unique_name("in"), unique_name("out"), unique_name("dlq"));
    for t in [&input, &output, &dlq] {
        create_topic(&bootstrap, t, 2);
    }
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("amounts.json"), AMOUNTS_JSON).unwrap();
    let policy = policy.replace("DLQ", &dlq);
    let group = unique_name("policy");
    let file = write_topology(
        dir.path(),
        &policy_topology(&group, &input, &output, &policy),
    );
    produce(
        &bootstrap,
        &input,
        &[
            (
                0,
                "good".into(),
                json!({"user": "ann", "amount": 50}).to_string(),
            ),
            (
                0,
                "bad".into(),
                json!({"user": "bo", "amount": 500}).to_string(),
            ),
            (
                0,
                "good2".into(),
                json!({"user": "cy", "amount": 70}).to_string(),
            ),
        ],
    );
    let runner = start_runner(
        &bootstrap,
        &file,
        &["--registry", &registry.url(), "--output", "json"],
    );
    PolicyRun {
        tansu,
        _registry: registry,
        _dir: dir,
        group,
        input,
        output,
        dlq,
        runner,
    }
}

const VIOLATION: &str = "500 is greater than the maximum of 100 at /amount";

#[test]
fn a_row_the_json_schema_refuses_stops_a_fail_policy_run_naming_the_sink_offset_and_pointer() {
    let mut run = start_policy_run("  error_policy: fail");
    let until = Instant::now() + TIMEOUT;
    while run.runner.try_wait().unwrap().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = if run.runner.try_wait().unwrap().is_none() {
        interrupt(run.runner)
    } else {
        run.runner.wait_with_output().unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for part in [
        "node `out`: cannot encode records for ",
        "(source partition 0 offset 1): JSON Schema validation failed",
        VIOLATION,
    ] {
        assert!(stderr.contains(part), "{part} not in {stderr}");
    }
}

/// The keys of records read, sorted.
fn keys(read: &[crate::run_online::Read]) -> Vec<String> {
    let mut keys: Vec<String> = read.iter().filter_map(|r| r.key.clone()).collect();
    keys.sort();
    keys
}

#[test]
fn a_row_the_json_schema_refuses_is_skipped_alone_under_skip_and_its_batchs_good_rows_are_written()
{
    let run = start_policy_run("  error_policy: skip");
    let bootstrap = run.tansu.bootstrap();
    let good = read_until(&bootstrap, &run.output, 2, TIMEOUT, |rs| rs.len() >= 2);
    // Skipping commits past the refused row.
    let until = Instant::now() + TIMEOUT;
    while committed_offsets(&bootstrap, &run.group, &run.input, 2).get(&0) != Some(&Some(3))
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = interrupt(run.runner);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(keys(&good), ["good", "good2"], "{good:?}\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["data"]["metrics"]["failures"], 1, "{stderr}");
    assert_eq!(report["data"]["metrics"]["dead_letter_records"], 0);
    assert_eq!(report["data"]["metrics"]["output_records"], 2);
    let all = read_until(&bootstrap, &run.output, 2, Duration::from_secs(2), |_| {
        false
    });
    assert_eq!(all.len(), 2, "the refused row is never written: {all:?}");
    let dead = read_until(&bootstrap, &run.dlq, 2, Duration::from_secs(1), |_| false);
    assert!(dead.is_empty(), "{dead:?}");
}

#[test]
fn a_row_the_json_schema_refuses_alone_goes_to_the_dead_letter_topic_with_the_pointer_in_its_headers()
 {
    let run = start_policy_run("  error_policy: dead-letter\n  dead_letter_topic: DLQ");
    let bootstrap = run.tansu.bootstrap();
    let dead = read_until(&bootstrap, &run.dlq, 2, TIMEOUT, |rs| !rs.is_empty());
    let good = read_until(&bootstrap, &run.output, 2, TIMEOUT, |rs| rs.len() >= 2);
    let out = interrupt(run.runner);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(dead.len(), 1, "{dead:?}\n{stderr}");
    let d = &dead[0];
    assert_eq!(d.key.as_deref(), Some("bad"));
    assert_eq!(d.value, json!({"user": "bo", "amount": 500}));
    assert_eq!(d.headers["krabka.source.topic"], run.input);
    assert_eq!(d.headers["krabka.source.partition"], "0");
    assert_eq!(d.headers["krabka.source.offset"], "1");
    assert_eq!(
        d.headers["krabka.error.class"],
        "krabka_streams::ProcessingError"
    );
    let message = &d.headers["krabka.error.message"];
    assert!(
        message.starts_with("node `out`: cannot encode records for ")
            && message.contains("(source partition 0 offset 1)")
            && message.contains(VIOLATION),
        "{message}"
    );
    assert_eq!(keys(&good), ["good", "good2"], "{good:?}\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["data"]["metrics"]["dead_letter_records"], 1);
    assert_eq!(report["data"]["metrics"]["failures"], 1);
}

/// An imported file whose message holds a message nested in it.
const MONEY_PROTO: &str = r#"syntax = "proto3";
package common;

message Money {
  string currency = 1;
  Amount amount = 2;
  message Amount { int64 units = 1; int32 cents = 2; }
}
"#;

/// Imports `common/money.proto` (relative to its own directory) and holds its message.
const ORDER_PROTO: &str = r#"syntax = "proto3";
package shop;
import "common/money.proto";
import "google/protobuf/timestamp.proto";

message Order {
  string user = 1;
  common.Money price = 2;
}
"#;

const PRICED_ORDER_AVRO: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"user","type":"string"},
 {"name":"price","type":{"type":"record","name":"Price","fields":[
  {"name":"currency","type":"string"},
  {"name":"amount","type":{"type":"record","name":"Amount","fields":[
   {"name":"units","type":"long"},{"name":"cents","type":"int"}]}}]}}]}"#;

fn priced_order(schema: &apache_avro::Schema, user: &str, units: i64) -> Vec<u8> {
    use apache_avro::types::Value as Avro;
    let amount = Avro::Record(vec![
        ("units".into(), Avro::Long(units)),
        ("cents".into(), Avro::Int(5)),
    ]);
    let value = Avro::Record(vec![
        ("user".into(), Avro::String(user.into())),
        (
            "price".into(),
            Avro::Record(vec![
                ("currency".into(), Avro::String("EUR".into())),
                ("amount".into(), amount),
            ]),
        ),
    ]);
    apache_avro::writer::datum::GenericDatumWriter::builder(schema)
        .build()
        .and_then(|w| w.write_value_to_vec(value))
        .unwrap()
}

/// A pass-through of Avro orders into `protobuf:order.proto:shop.Order`.
fn imports_topology(group: &str) -> String {
    format!(
        r#"version: 1
settings:
  consumer_group: {group}
nodes:
  - source: orders
    topics: [orders]
    value: avro
  - sink: out
    parent: orders
    topic: totals
    value: protobuf:order.proto:shop.Order
"#
    )
}

#[test]
fn a_protobuf_schema_file_registers_its_import_as_a_reference_first_and_tail_reads_the_values() {
    use crate::support::registered_orders::{RegisteredOrders, start_registered_orders};
    use krabka_streams::engine::schema::registry::SchemaReference;

    let RegisteredOrders {
        tansu: _tansu,
        bootstrap,
        registry,
        client,
    } = start_registered_orders(
        &[("orders", 1), ("totals", 1)],
        PRICED_ORDER_AVRO,
        |schema| {
            vec![
                priced_order(schema, "ann", 2),
                priced_order(schema, "bo", 7),
            ]
        },
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("common")).unwrap();
    std::fs::write(dir.path().join("common/money.proto"), MONEY_PROTO).unwrap();
    std::fs::write(dir.path().join("order.proto"), ORDER_PROTO).unwrap();
    let file = write_topology(dir.path(), &imports_topology(&unique_name("imports")));
    registry.clear_requests();
    let runner = start_runner(&bootstrap, &file, &["--registry", &registry.url()]);
    let read = read_until(&bootstrap, "totals", 1, TIMEOUT, |rs| rs.len() >= 2);
    let out = interrupt(runner);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(read.len(), 2, "{read:?}\n{stderr}");

    // The import under its own subject (its path), then the file with a reference to it.
    let import = client.version("common/money.proto", 1).unwrap();
    assert_eq!(import.spec.schema, MONEY_PROTO);
    let root = client.version("totals-value", 1).unwrap();
    assert_eq!(root.spec.schema, ORDER_PROTO);
    assert_eq!(
        root.spec.references,
        [SchemaReference {
            name: "common/money.proto".into(),
            subject: "common/money.proto".into(),
            version: 1,
        }]
    );
    let registers: Vec<String> = registry
        .requests()
        .into_iter()
        .filter(|(method, path)| method == "POST" && path.ends_with("/versions"))
        .map(|(_, path)| path)
        .collect();
    assert_eq!(
        registers,
        [
            "/subjects/common%2Fmoney.proto/versions",
            "/subjects/totals-value/versions"
        ],
        "{stderr}"
    );

    let tailed = tail_rows(&bootstrap, "protobuf", &registry.url(), dir.path());
    let mut got: Vec<(String, String, String, i64)> = tailed
        .iter()
        .map(|r| {
            let price = &r["price"];
            (
                r["user"].as_str().unwrap_or_default().to_owned(),
                price["currency"].to_string(),
                price["amount"]["units"].to_string(),
                price["amount"]["cents"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("ann".into(), "\"EUR\"".into(), "2".into(), 5),
            ("bo".into(), "\"EUR\"".into(), "7".into(), 5)
        ],
        "{tailed:?}"
    );
}

#[test]
fn check_names_an_import_file_that_is_missing_or_leaves_the_schema_files_directory() {
    let topology = imports_topology("g");
    let dir = tempfile::tempdir().unwrap();
    let file = write_topology(dir.path(), &topology);
    std::fs::write(dir.path().join("order.proto"), ORDER_PROTO).unwrap();
    let check = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
            .args(["run", "--check", file.to_str().unwrap()])
            .env_remove("KRABKA_OUTPUT")
            .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = check();
    assert_eq!(code, Some(3), "{stderr}");
    let missing = dir.path().join("common/money.proto");
    for part in [
        "topology.yaml:11:21: schema file ",
        "order.proto: imports common/money.proto: ",
        &format!("{}: ", missing.display()),
    ] {
        assert!(stderr.contains(part), "{part} not in {stderr}");
    }
    std::fs::create_dir(dir.path().join("common")).unwrap();
    std::fs::write(&missing, MONEY_PROTO).unwrap();
    let (code, stderr) = check();
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::write(
        dir.path().join("order.proto"),
        ORDER_PROTO.replace("common/money.proto", "../money.proto"),
    )
    .unwrap();
    let (code, stderr) = check();
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("imports ../money.proto: an import is a relative path inside the schema file's directory"),
        "{stderr}"
    );
}

#[test]
fn the_demo_writes_a_protobuf_schema_file_sink_with_an_import_and_tail_reads_every_value_back() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .args(["--output", "json", "demo"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = doc["data"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["step"]
                .as_str()
                .unwrap_or_default()
                .contains("schema files")
        })
        .unwrap_or_else(|| panic!("no schema-file step: {doc}"));
    let result = &step["result"];
    assert_eq!(result["subject"], "large-orders-proto-value", "{result}");
    assert_eq!(
        result["references"],
        json!([{"name": "common/country.proto", "subject": "common/country.proto", "version": 1}])
    );
    assert!(result["written"].as_u64().unwrap() > 0, "{result}");
    assert_eq!(result["rows"], result["written"], "{result}");
}

/// Totals of at most 200: carol's single order of 300 is always refused.
const CAPPED_TOTALS_JSON: &str = r#"{"$schema":"http://json-schema.org/draft-07/schema#",
 "type":"object","required":["user","total"],
 "properties":{"user":{"type":"string"},"total":{"type":"integer","maximum":200}}}"#;

#[test]
fn an_aggregate_row_a_gzip_json_schema_sink_refuses_is_dead_lettered_as_plain_json() {
    use crate::run_online::{ORDER_SCHEMA, avro_orders};
    use crate::support::registered_orders::{RegisteredOrders, start_registered_orders};

    let dlq = unique_name("dlq");
    let RegisteredOrders {
        tansu: _tansu,
        bootstrap,
        registry,
        ..
    } = start_registered_orders(
        &[("orders", 1), ("totals", 1), (&dlq, 1)],
        ORDER_SCHEMA,
        |schema| avro_orders(schema, &[("alice", 150), ("carol", 300)]),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("totals.json"), CAPPED_TOTALS_JSON).unwrap();
    let topology = format!(
        r#"version: 1
settings:
  consumer_group: {group}
  error_policy: dead-letter
  dead_letter_topic: {dlq}
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns: {{user: utf8, country: utf8, amount: int64, ts: timestamp}}
  - group_by: by_user
    parent: orders
    keys: [user]
    aggregates: [sum(amount) AS total, count(*) AS n]
  - sink: out
    parent: by_user
    topic: totals
    value: gzip+json-schema:totals.json
"#,
        group = unique_name("capped")
    );
    let file = write_topology(dir.path(), &topology);
    let runner = start_runner(&bootstrap, &file, &["--registry", &registry.url()]);
    let dead = read_until(&bootstrap, &dlq, 1, TIMEOUT, |rs| !rs.is_empty());
    let good = read_until(&bootstrap, "totals", 1, TIMEOUT, |rs| !rs.is_empty());
    let out = interrupt(runner);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(dead.len(), 1, "{dead:?}\n{stderr}");
    // Read as JSON, not as gzip bytes: the row the sink refused, as it was.
    assert_eq!(
        dead[0].value,
        json!({"user": "carol", "total": 300, "n": 1}),
        "{stderr}"
    );
    let message = &dead[0].headers["krabka.error.message"];
    assert!(
        message.contains("300 is greater than the maximum of 200 at /total"),
        "{message}"
    );
    assert_eq!(dead[0].headers["krabka.source.topic"], "orders");
    // The sink's own records are still compressed.
    assert_eq!(good.len(), 1, "{good:?}");
    assert!(good[0].value.is_string(), "gzip bytes: {good:?}");
}
