//! Registry-framed and keyed sinks of `run FILE -b …`, end to end against a Tansu
//! broker and the in-repo registry over HTTP: an `avro` / `json-schema` sink
//! registers the schema derived from its batches under `<topic>-value` once, its
//! records read back with `tail --value-format avro|json-sr` and, independently,
//! with fastavro / plain JSON in the test venv; a `protobuf` sink's the same way,
//! with tail and Google's Python `protobuf` over the registered `.proto` compiled; `key: {column: user}` keys every
//! grouped record by its user and places it on the Java client's murmur2 partition.

use std::path::Path;
use std::process::{Command, Stdio};

use rdkafka::message::Message;
use serde_json::{Value, json};

use krabka_streams::engine::murmur2::{murmur2, to_positive};
use krabka_streams::engine::schema::avro::{AvroSchema, decode_body};
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::protobuf::{self as proto, ProtoSchema};
use krabka_streams::engine::schema::registry::Registry;
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::RegistryServer;

use crate::run_online::{ORDER_SCHEMA, avro_orders, interrupt, start_runner};
use crate::support::registered_orders::{RegisteredOrders, start_registered_orders};
use crate::support::tansu::{Tansu, test_venv};
use crate::support::topic_read::TopicRead;
use crate::support::{binary, unique_name};

pub(crate) const SINK_PARTITIONS: i32 = 3;

/// One sink record: partition, key, framed value.
#[derive(Debug, Clone)]
pub(crate) struct Raw {
    pub(crate) partition: i32,
    key: Option<String>,
    pub(crate) key_bytes: Option<Vec<u8>>,
    pub(crate) value: Vec<u8>,
}

fn read_raw(bootstrap: &str, topic: &str, done: impl Fn(&[Raw]) -> bool) -> Vec<Raw> {
    TopicRead::new(bootstrap, topic, SINK_PARTITIONS).until(
        |m| Raw {
            partition: m.partition(),
            key: m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
            key_bytes: m.key().map(<[u8]>::to_vec),
            value: m.payload().unwrap_or_default().to_vec(),
        },
        done,
    )
}

pub(crate) fn topology(format: &str) -> String {
    topology_keyed(format, "string")
}

pub(crate) fn topology_keyed(format: &str, key_codec: &str) -> String {
    format!(
        "\
version: 1
settings:
  consumer_group: {group}
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns: {{user: utf8, country: utf8, amount: int64, ts: timestamp}}
  - filter: large
    parent: orders
    where: amount > 100
  - group_by: by_user
    parent: large
    keys: [user]
    aggregates: [sum(amount) AS total, count(*) AS n, max(ts) AS last_ts]
  - with_columns: priced
    parent: by_user
    columns:
      - CAST(total AS DECIMAL(12,2)) AS total_eur
  - sink: out
    parent: priced
    topic: totals
    value: {format}
    key: {{column: user, codec: {key_codec}}}
",
        group = unique_name("sinks")
    )
}

/// The sink records, and the broker, registry, registry client and topology
/// directory of the run (kept alive).
pub(crate) type SinkRun = (
    Vec<Raw>,
    RegistryServer,
    HttpRegistry,
    Tansu,
    tempfile::TempDir,
);

/// Runs the orders topology with a `format` sink until alice's total of 270 is
/// written; returns the sink records, the registry and its URL (kept alive).
fn run_sink(format: &str) -> SinkRun {
    run_sink_keyed(format, "string")
}

fn run_sink_keyed(format: &str, key_codec: &str) -> SinkRun {
    run_sink_with(format, key_codec, &[])
}

/// [`run_sink_keyed`] with more files beside the topology (schema files it names).
pub(crate) fn run_sink_with(format: &str, key_codec: &str, files: &[(&str, &str)]) -> SinkRun {
    let orders = [("alice", 150), ("bob", 99), ("carol", 300), ("alice", 120)];
    let RegisteredOrders {
        tansu,
        bootstrap,
        registry,
        client,
    } = start_registered_orders(
        &[("orders", 1), ("totals", SINK_PARTITIONS)],
        ORDER_SCHEMA,
        |schema| avro_orders(schema, &orders),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("topology.yaml");
    std::fs::write(&file, topology_keyed(format, key_codec)).unwrap();
    // A schema file sits next to the topology, which names it relatively.
    std::fs::write(dir.path().join("totals.avsc"), TOTALS_AVSC).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let runner = start_runner(&bootstrap, &file, &["--registry", &registry.url()]);
    let format = format.split(':').next().unwrap_or(format);
    let decoded = |r: &Raw| decode(&client, format, &r.value);
    let done = |rs: &[Raw]| {
        let seen = |user: &str, n: i64| {
            rs.iter()
                .any(|r| decoded(r).is_some_and(|v| v["user"] == user && v["n"] == n))
        };
        seen("alice", 2) && seen("carol", 1)
    };
    let read = read_raw(&bootstrap, "totals", done);
    let out = interrupt(runner);
    assert!(
        done(&read),
        "{read:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (read, registry, client, tansu, dir)
}

/// A sink value decoded here: the registry's writer schema by the frame's id.
pub(crate) fn decode(client: &HttpRegistry, format: &str, value: &[u8]) -> Option<Value> {
    if format == "json" {
        return serde_json::from_slice(value).ok();
    }
    if format == "protobuf" {
        let frame = framing::decode_protobuf(value).ok()?;
        let writer = client.schema_by_id(frame.schema_id).ok()?;
        let schema = ProtoSchema::parse(&writer.spec.schema, &[]).ok()?;
        let path = frame.message_indexes.as_deref().unwrap_or(&[0]);
        let mut v = proto::decode_body(&schema.message_at(path).ok()?, frame.body).ok()?;
        // The Protobuf JSON mapping writes 64-bit integers as text.
        for x in v.as_object_mut()?.values_mut() {
            if let Some(n) = x.as_str().and_then(|s| s.parse::<i64>().ok()) {
                *x = json!(n);
            }
        }
        return Some(v);
    }
    let frame = framing::decode(value).ok()?;
    let body = frame.body;
    if format == "json-schema" {
        return serde_json::from_slice(body).ok();
    }
    let writer = client.schema_by_id(frame.schema_id).ok()?;
    let schema = AvroSchema::parse(&writer.spec.schema).ok()?;
    decode_body(&schema, frame.schema_id, None, body).ok()
}

fn check_keys_and_registration(read: &[Raw], client: &HttpRegistry) {
    for r in read {
        let key = r.key.as_deref().expect("every grouped record is keyed");
        let expected = to_positive(murmur2(key.as_bytes())) % SINK_PARTITIONS;
        assert_eq!(r.partition, expected, "key {key} on the murmur2 partition");
    }
    // Registered once, at startup, under the topic-name strategy's subject.
    let versions = client.versions("totals-value").unwrap();
    let texts: Vec<String> = versions
        .iter()
        .map(|v| client.version("totals-value", *v).unwrap().spec.schema)
        .collect();
    assert_eq!(versions, vec![1], "{texts:#?}");
    let ids: std::collections::BTreeSet<i32> = read
        .iter()
        .map(|r| framing::decode(&r.value).unwrap().schema_id)
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
}

/// `tail TOPIC -e --value-format FORMAT` as NDJSON rows.
pub(crate) fn tail_rows(bootstrap: &str, format: &str, registry: &str, dir: &Path) -> Vec<Value> {
    let out_file = dir.join("tail.ndjson");
    let out = Command::new(binary())
        .args(["tail", "totals", "-e", "--value-format", format])
        .args(["--registry", registry, "--out", out_file.to_str().unwrap()])
        .args(["-b", bootstrap, "--timeout", "20s"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_SCHEMA_CACHE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tail: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The last row per user, payload columns only.
pub(crate) fn last_per_user(rows: &[Value], columns: &[&str]) -> Value {
    let mut by_user = serde_json::Map::new();
    for r in rows {
        let picked: serde_json::Map<String, Value> = columns
            .iter()
            .map(|c| (c.to_string(), r[*c].clone()))
            .collect();
        by_user.insert(
            r["user"].as_str().unwrap().to_owned(),
            Value::Object(picked),
        );
    }
    Value::Object(by_user)
}

/// Decodes every frame in the test venv: fastavro with the registry's schema text, or plain JSON.
const PYTHON_DECODE: &str = r#"
import sys, json, io, urllib.request
cfg = json.load(open(sys.argv[1]))
out = []
for h in cfg["frames"]:
    b = bytes.fromhex(h)
    assert b[0] == 0, "magic byte"
    sid = int.from_bytes(b[1:5], "big")
    if cfg["format"] == "protobuf":
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, json_format
        from google.protobuf.descriptor import FieldDescriptor as FD
        fds = descriptor_pb2.FileDescriptorSet.FromString(bytes.fromhex(cfg["descriptors"][str(sid)]))
        pool = descriptor_pool.DescriptorPool()
        for f in fds.file:
            pool.Add(f)
        assert b[5] == 0, "message-index path [0]"
        cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(cfg["messages"][str(sid)]))
        rec = json_format.MessageToDict(cls.FromString(b[6:]), preserving_proto_field_name=True)
        wide = (FD.TYPE_INT64, FD.TYPE_UINT64, FD.TYPE_SINT64, FD.TYPE_FIXED64, FD.TYPE_SFIXED64)
        for k, v in list(rec.items()):
            if cls.DESCRIPTOR.fields_by_name[k].type in wide:
                rec[k] = int(v)
    elif cfg["format"] == "avro":
        import fastavro
        text = json.load(urllib.request.urlopen(cfg["registry"] + "/schemas/ids/%d" % sid))["schema"]
        schema = fastavro.parse_schema(json.loads(text))
        rec = fastavro.schemaless_reader(io.BytesIO(b[5:]), schema)
    else:
        rec = json.loads(b[5:])
    out.append({k: (str(v) if not isinstance(v, (int, float, str, type(None))) else v) for k, v in rec.items()})
print(json.dumps(out))
"#;

fn python_rows(format: &str, read: &[Raw], registry: &str, dir: &Path) -> Vec<Value> {
    let cfg = dir.join("frames.json");
    let frames: Vec<String> = read.iter().map(|r| hex::encode(&r.value)).collect();
    // Python's protobuf has no .proto compiler: it gets each writer schema compiled
    // (the registered text, by protox) as a FileDescriptorSet.
    let mut descriptors = serde_json::Map::new();
    let mut messages = serde_json::Map::new();
    if format == "protobuf" {
        let client = HttpRegistry::new(HttpRegistryOptions::new(registry.to_owned())).unwrap();
        for r in read {
            let id = framing::decode(&r.value).unwrap().schema_id;
            let writer = client.schema_by_id(id).unwrap();
            let schema = ProtoSchema::parse(&writer.spec.schema, &[]).unwrap();
            let pool = hex::encode(schema.pool.encode_to_vec());
            descriptors.insert((id as u32).to_string(), json!(pool));
            let name = schema.message_at(&[0]).unwrap().full_name().to_owned();
            messages.insert((id as u32).to_string(), json!(name));
        }
    }
    std::fs::write(
        &cfg,
        json!({"format": format, "registry": registry, "frames": frames,
               "descriptors": descriptors, "messages": messages})
        .to_string(),
    )
    .unwrap();
    let python = test_venv().join("bin").join("python");
    let out = Command::new(&python)
        .arg("-c")
        .arg(PYTHON_DECODE)
        .arg(&cfg)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; run scripts/test", python.display()));
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

fn round_trip(format: &str, tail_format: &str) {
    let (read, registry, client, tansu, dir) = run_sink(format);
    check_keys_and_registration(&read, &client);
    let expected = json!({
        "alice": {"total": 270, "n": 2, "total_eur": "270.00"},
        "carol": {"total": 300, "n": 1, "total_eur": "300.00"},
    });
    let columns = ["total", "n", "total_eur"];
    let tailed = tail_rows(&tansu.bootstrap(), tail_format, &registry.url(), dir.path());
    assert_eq!(last_per_user(&tailed, &columns), expected, "{tailed:?}");
    // Partitions interleave, so the last row per user is taken in each partition's order:
    // every user lives on one partition.
    let decoded = python_rows(format, &read, &registry.url(), dir.path());
    assert_eq!(last_per_user(&decoded, &columns), expected, "{decoded:?}");
}

#[test]
fn an_avro_sink_registers_its_derived_schema_once_and_tail_and_fastavro_read_it_back_keyed() {
    round_trip("avro", "avro");
}

#[test]
fn a_json_schema_sink_registers_its_derived_schema_once_and_tail_and_python_read_it_back_keyed() {
    round_trip("json-schema", "json-sr");
}

#[test]
fn a_protobuf_sink_registers_its_derived_schema_once_and_tail_and_python_protobuf_read_it_back_keyed()
 {
    round_trip("protobuf", "protobuf");
}

#[test]
fn a_json_sink_writes_decimals_as_exact_text_timestamps_as_rfc3339_and_keys_grouped_rows() {
    let (read, _registry, client, _tansu, _dir) = run_sink("json");
    for r in &read {
        let key = r.key.as_deref().expect("every grouped record is keyed");
        assert_eq!(
            r.partition,
            to_positive(murmur2(key.as_bytes())) % SINK_PARTITIONS
        );
    }
    // A plain JSON sink registers nothing.
    assert!(client.versions("totals-value").is_err());
    let rows: Vec<Value> = read
        .iter()
        .map(|r| serde_json::from_slice(&r.value).unwrap())
        .collect();
    assert_eq!(
        last_per_user(&rows, &["total", "n", "total_eur", "last_ts"]),
        json!({
            "alice": {"total": 270, "n": 2, "total_eur": "270.00", "last_ts": "2023-11-14T22:13:20.003Z"},
            "carol": {"total": 300, "n": 1, "total_eur": "300.00", "last_ts": "2023-11-14T22:13:20.002Z"},
        })
    );
}

/// The sink's writer schema as a file: fields in another order than the columns,
/// `last_ts` left out, `region` filled by its default.
const TOTALS_AVSC: &str = r#"{"type":"record","name":"Total","namespace":"shop","fields":[
  {"name":"n","type":["null","long"],"default":null},
  {"name":"user","type":["null","string"],"default":null},
  {"name":"total_eur","type":["null",{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}],"default":null},
  {"name":"total","type":["null","long"],"default":null},
  {"name":"region","type":"string","default":"eu"}]}"#;

#[test]
fn an_avro_sink_with_a_schema_file_registers_that_schema_and_writes_its_fields_in_its_order() {
    let (read, registry, client, tansu, dir) = run_sink("avro:totals.avsc");
    check_keys_and_registration(&read, &client);
    let registered = client.version("totals-value", 1).unwrap().spec.schema;
    assert!(
        registered.contains(r#""name":"shop.Total""#),
        "{registered}"
    );
    let expected = json!({
        "alice": {"total": 270, "n": 2, "total_eur": "270.00", "region": "eu"},
        "carol": {"total": 300, "n": 1, "total_eur": "300.00", "region": "eu"},
    });
    let columns = ["total", "n", "total_eur", "region"];
    let tailed = tail_rows(&tansu.bootstrap(), "avro", &registry.url(), dir.path());
    assert_eq!(last_per_user(&tailed, &columns), expected, "{tailed:?}");
    assert!(
        tailed.iter().all(|r| r.get("last_ts").is_none()),
        "{tailed:?}"
    );
    let decoded = python_rows("avro", &read, &registry.url(), dir.path());
    assert_eq!(last_per_user(&decoded, &columns), expected, "{decoded:?}");
}

#[test]
fn check_refuses_a_missing_schema_file_and_one_the_sink_columns_cannot_be_written_with() {
    let text = topology("avro:totals.avsc");
    let (code, stderr) = check_with(&text, &[("totals.avsc", TOTALS_AVSC)]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = check_with(&text, &[]);
    assert_eq!(code, Some(3));
    assert!(
        stderr.contains("t.yaml:23:17: schema file ") && stderr.contains("totals.avsc"),
        "{stderr}"
    );
    let no_default = TOTALS_AVSC.replace(r#""string","default":"eu""#, r#""string""#);
    let (code, stderr) = check_with(&text, &[("totals.avsc", &no_default)]);
    assert_eq!(code, Some(3));
    assert!(
        stderr.contains("t.yaml:23:12: totals.avsc: ")
            && stderr.contains("region has no default and no column of the sink holds it"),
        "{stderr}"
    );
    let mismatch = TOTALS_AVSC.replace(
        r#"["null","long"],"default":null},
  {"name":"user""#,
        r#"["null","string"],"default":null},
  {"name":"user""#,
    );
    let (code, stderr) = check_with(&text, &[("totals.avsc", &mismatch)]);
    assert_eq!(code, Some(3));
    assert!(stderr.contains("n: "), "{stderr}");
}

#[test]
fn an_avro_sink_key_registers_under_the_key_subject_and_each_key_decodes_to_its_rows_user() {
    let (read, _registry, client, _tansu, _dir) = run_sink_keyed("avro", "avro");
    assert_eq!(client.versions("totals-key").unwrap(), vec![1]);
    let key_schema = client.version("totals-key", 1).unwrap();
    assert!(
        key_schema.spec.schema.contains(r#""name":"totals_key""#),
        "{}",
        key_schema.spec.schema
    );
    let schema = AvroSchema::parse(&key_schema.spec.schema).unwrap();
    for r in &read {
        let key = r
            .key_bytes
            .as_deref()
            .expect("every grouped record is keyed");
        assert_eq!(
            r.partition,
            to_positive(murmur2(key)) % SINK_PARTITIONS,
            "the framed key's murmur2 partition"
        );
        let frame = framing::decode(key).unwrap();
        assert_eq!(frame.schema_id, key_schema.id);
        let decoded = decode_body(&schema, frame.schema_id, None, frame.body).unwrap();
        let value = decode(&client, "avro", &r.value).unwrap();
        assert_eq!(decoded, json!({"user": value["user"]}), "{value}");
    }
}

/// `run --check` on a topology text: exit code and stderr.
fn check(text: &str) -> (Option<i32>, String) {
    check_with(text, &[])
}

/// `run --check` on a topology text with files beside it.
pub(crate) fn check_with(text: &str, files: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.yaml");
    std::fs::write(&file, text).unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let out = Command::new(binary())
        .args(["run", "--check", file.to_str().unwrap()])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_refuses_an_unknown_sink_key_column_and_an_avro_sink_schema_with_their_lines() {
    let text = topology("avro");
    let (code, stderr) = check(&text);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = check(&text.replace("{column: user,", "{column: usr,"));
    assert_eq!(code, Some(3));
    assert!(
        stderr.contains("t.yaml:24:19: sink key column does not exist: usr"),
        "{stderr}"
    );
    let (code, stderr) = check(&text.replace("ts: timestamp}", "ts: 'timestamp[ns]'}"));
    assert_eq!(code, Some(3));
    assert!(
        stderr.contains("t.yaml:23:12:") && stderr.contains("timestamp[ns]"),
        "{stderr}"
    );
    let (code, stderr) = check(&topology("protobuf"));
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr) = check(&topology("protobuf3"));
    assert_eq!(code, Some(3));
    assert!(stderr.contains("unknown codec `protobuf3`"), "{stderr}");
}
