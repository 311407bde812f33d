//! `tail` of registry-framed Protobuf and JSON Schema values into Arrow: records built
//! by Python (Google's `protobuf` runtime, `json`) are produced to a Tansu broker,
//! their schemas registered in the in-repo registry over HTTP, tailed to an Arrow
//! IPC stream and read back by pyarrow, which checks the mapped types and the values.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaReference, SchemaSpec, SchemaType};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use serde_json::{Value, json};

use crate::support::tansu::Tansu;
use crate::support::{binary, unique_name, venv_python};
use crate::tail::{BASE_TS, Rec, create_topic, produce, stderr};

const COMMON_PROTO: &str = r#"syntax = "proto3";
package common;
message Money {
  string currency = 1;
  int64 units = 2;
}
"#;

/// Must match the descriptors `PROTOBUF_RECORDS` builds field for field.
const ORDER_PROTO: &str = r#"syntax = "proto3";
package shop;
import "common.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";

message Header {
  string trace = 1;
}
message Order {
  enum Status {
    NEW = 0;
    PAID = 1;
  }
  message Line {
    string sku = 1;
    uint32 qty = 2;
  }
  string id = 1;
  sint32 small = 2;
  uint32 qty = 3;
  fixed64 big = 4;
  double ratio = 5;
  bool paid = 6;
  bytes raw = 7;
  Status status = 8;
  repeated Line lines = 9;
  map<string, int64> counts = 10;
  common.Money total = 11;
  google.protobuf.Timestamp at = 12;
  google.protobuf.StringValue note = 13;
  google.protobuf.Struct attrs = 14;
  oneof pay {
    string card = 15;
    int64 account = 16;
  }
}
"#;

/// Builds the schemas from descriptors at run time (no protoc) and prints the
/// Confluent frames (hex) of three `shop.Order` records, message-index path [1].
const PROTOBUF_RECORDS: &str = r#"
import json, struct, sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf import timestamp_pb2, wrappers_pb2, struct_pb2
F = descriptor_pb2.FieldDescriptorProto
schema_id = int(sys.argv[1])
pool = descriptor_pool.DescriptorPool()
for m in (timestamp_pb2, wrappers_pb2, struct_pb2):
    pool.AddSerializedFile(m.DESCRIPTOR.serialized_pb)
common = descriptor_pb2.FileDescriptorProto(name="common.proto", package="common", syntax="proto3")
money = common.message_type.add(name="Money")
money.field.add(name="currency", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
money.field.add(name="units", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
pool.Add(common)
fd = descriptor_pb2.FileDescriptorProto(name="schema.proto", package="shop", syntax="proto3",
    dependency=["common.proto", "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto",
                "google/protobuf/struct.proto"])
fd.message_type.add(name="Header").field.add(name="trace", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
order = fd.message_type.add(name="Order")
status = order.enum_type.add(name="Status")
status.value.add(name="NEW", number=0)
status.value.add(name="PAID", number=1)
line = order.nested_type.add(name="Line")
line.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
line.field.add(name="qty", number=2, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
entry = order.nested_type.add(name="CountsEntry")
entry.options.map_entry = True
entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
entry.field.add(name="value", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
order.oneof_decl.add(name="pay")
O = F.LABEL_OPTIONAL
for name, number, typ, type_name, label, oneof in [
    ("id", 1, F.TYPE_STRING, None, O, None), ("small", 2, F.TYPE_SINT32, None, O, None),
    ("qty", 3, F.TYPE_UINT32, None, O, None), ("big", 4, F.TYPE_FIXED64, None, O, None),
    ("ratio", 5, F.TYPE_DOUBLE, None, O, None), ("paid", 6, F.TYPE_BOOL, None, O, None),
    ("raw", 7, F.TYPE_BYTES, None, O, None), ("status", 8, F.TYPE_ENUM, ".shop.Order.Status", O, None),
    ("lines", 9, F.TYPE_MESSAGE, ".shop.Order.Line", F.LABEL_REPEATED, None),
    ("counts", 10, F.TYPE_MESSAGE, ".shop.Order.CountsEntry", F.LABEL_REPEATED, None),
    ("total", 11, F.TYPE_MESSAGE, ".common.Money", O, None),
    ("at", 12, F.TYPE_MESSAGE, ".google.protobuf.Timestamp", O, None),
    ("note", 13, F.TYPE_MESSAGE, ".google.protobuf.StringValue", O, None),
    ("attrs", 14, F.TYPE_MESSAGE, ".google.protobuf.Struct", O, None),
    ("card", 15, F.TYPE_STRING, None, O, 0), ("account", 16, F.TYPE_INT64, None, O, 0),
]:
    f = order.field.add(name=name, number=number, type=typ, label=label)
    if type_name: f.type_name = type_name
    if oneof is not None: f.oneof_index = oneof
pool.Add(fd)
Order = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))
a = Order(id="o-1", small=-3, qty=4294967295, big=18446744073709551615, ratio=0.25, paid=True,
          raw=b"\x00\xff", status=1, card="visa")
a.lines.add(sku="book", qty=2)
a.lines.add(sku="game", qty=1)
a.counts["z"] = 1
a.counts["a"] = -2
a.total.currency = "EUR"
a.total.units = 12
a.at.seconds = 1732874400
a.at.nanos = 123456789
a.note.value = "fragile"
a.attrs.update({"k": [1, "x", None]})
b = Order(id="o-2", status=7, account=42)
c = Order(id="o-3")
frames = [(b"\x00" + struct.pack(">I", schema_id) + b"\x02\x02" + m.SerializeToString()).hex()
          for m in (a, b, c)]
print(json.dumps(frames))
"#;

/// Reads an Arrow IPC stream and prints the types, nullability, metadata and rows.
const PYARROW_READ: &str = r#"
import base64, json, sys, pyarrow.ipc as ipc
t = ipc.open_stream(open(sys.argv[1], 'rb')).read_all().sort_by('id')
def plain(v):
    if isinstance(v, bytes): return base64.b64encode(v).decode()
    if isinstance(v, list): return [plain(x) for x in v]
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    if isinstance(v, tuple): return [plain(x) for x in v]
    if hasattr(v, 'isoformat'): return v.isoformat()
    return v
print(json.dumps({
  "types": {f.name: str(f.type) for f in t.schema},
  "nullable": {f.name: f.nullable for f in t.schema},
  "metadata": {f.name: {k.decode(): v.decode() for k, v in (f.metadata or {}).items()} for f in t.schema},
  "rows": [{k: plain(v) for k, v in r.items() if not k.startswith('__')} for r in t.to_pylist()],
}))
"#;

/// Produces the hex `frames`, tails them as `format` into an Arrow stream and returns what
/// pyarrow reads from it.
fn produce_and_tail(
    broker: &Tansu,
    registry: &RegistryServer,
    topic: &str,
    frames: &Value,
    format: &str,
) -> Value {
    produce_hex(&broker.bootstrap(), topic, frames);
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("orders.arrows");
    let out = tail_to(
        &broker.bootstrap(),
        topic,
        format,
        &registry.url(),
        &out_file,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    venv_python(PYARROW_READ, &[out_file.to_str().unwrap()])
}

fn tail_to(bootstrap: &str, topic: &str, format: &str, registry: &str, out: &Path) -> Output {
    Command::new(binary())
        .args(["tail", topic, "-e", "--value-format", format])
        .args(["--registry", registry, "--out", out.to_str().unwrap()])
        .args(["-b", bootstrap, "--timeout", "20s"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_SCHEMA_CACHE")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

fn produce_hex(bootstrap: &str, topic: &str, frames: &Value) {
    let records: Vec<Rec> = frames
        .as_array()
        .unwrap()
        .iter()
        .map(|h| Rec {
            partition: 0,
            key: None,
            value: Some(hex::decode(h.as_str().unwrap()).unwrap()),
            headers: vec![],
            ts: BASE_TS,
        })
        .collect();
    produce(bootstrap, topic, &records);
}

#[test]
fn protobuf_records_from_google_protobuf_tail_to_arrow_with_the_mapped_types_and_values() {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let topic = unique_name("proto-orders");
    create_topic(&broker.bootstrap(), &topic, 1);
    let common = format!("{topic}-common");
    client
        .register(
            &common,
            &SchemaSpec {
                schema: COMMON_PROTO.into(),
                schema_type: SchemaType::Protobuf,
                ..Default::default()
            },
        )
        .unwrap();
    let id = client
        .register(
            &format!("{topic}-value"),
            &SchemaSpec {
                schema: ORDER_PROTO.into(),
                schema_type: SchemaType::Protobuf,
                message_type: Some("shop.Order".into()),
                references: vec![SchemaReference {
                    name: "common.proto".into(),
                    subject: common.clone(),
                    version: 1,
                }],
            },
        )
        .unwrap();
    let frames = venv_python(PROTOBUF_RECORDS, &[&id.to_string()]);
    let got = produce_and_tail(&broker, &registry, &topic, &frames, "protobuf");
    let types = &got["types"];
    for (column, ty) in [
        ("id", "string"),
        ("small", "int32"),
        ("qty", "int64"),
        ("big", "uint64"),
        ("ratio", "double"),
        ("paid", "bool"),
        ("raw", "binary"),
        ("status", "string"),
        (
            "lines",
            "list<item: struct<sku: string not null, qty: int64 not null> not null>",
        ),
        ("counts", "map<string, int64>"),
        (
            "total",
            "struct<currency: string not null, units: int64 not null>",
        ),
        ("at", "timestamp[us, tz=UTC]"),
        ("note", "string"),
        ("attrs", "string"),
        ("card", "string"),
        ("account", "int64"),
        ("__offset", "int64"),
    ] {
        assert_eq!(types[column], ty, "{column}: {types}");
    }
    assert_eq!(got["nullable"]["id"], false);
    assert_eq!(got["nullable"]["total"], true);
    assert_eq!(got["nullable"]["card"], true);
    assert_eq!(
        got["metadata"]["status"],
        json!({"krabka.proto.enum": "shop.Order.Status"})
    );
    assert_eq!(
        got["metadata"]["note"],
        json!({"krabka.proto.wrapper": "google.protobuf.StringValue"})
    );
    assert_eq!(got["metadata"]["attrs"]["krabka.json"], "true");
    assert_eq!(
        got["metadata"]["card"],
        json!({"krabka.proto.oneof": "pay"})
    );
    let rows = got["rows"].as_array().unwrap();
    assert_eq!(
        rows[0],
        json!({
            "id": "o-1", "small": -3, "qty": 4294967295u64, "big": 18446744073709551615u64,
            "ratio": 0.25, "paid": true, "raw": "AP8=", "status": "PAID",
            "lines": [{"sku": "book", "qty": 2}, {"sku": "game", "qty": 1}],
            "counts": [["a", -2], ["z", 1]],
            "total": {"currency": "EUR", "units": 12},
            "at": "2024-11-29T10:00:00.123456+00:00",
            "note": "fragile", "attrs": r#"{"k":[1.0,"x",null]}"#,
            "card": "visa", "account": null,
        })
    );
    assert_eq!(
        rows[1]["status"], "7",
        "an unknown enum number keeps its number"
    );
    assert_eq!(rows[1]["account"], 42);
    assert_eq!(rows[1]["card"], Value::Null);
    assert_eq!(
        rows[2],
        json!({
            "id": "o-3", "small": 0, "qty": 0, "big": 0, "ratio": 0.0, "paid": false, "raw": "",
            "status": "NEW", "lines": [], "counts": [], "total": null, "at": null, "note": null,
            "attrs": null, "card": null, "account": null,
        })
    );
}

#[test]
fn a_malformed_protobuf_body_fails_naming_topic_partition_and_offset() {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let topic = unique_name("proto-bad");
    create_topic(&broker.bootstrap(), &topic, 1);
    let id = client
        .register(
            &format!("{topic}-value"),
            &SchemaSpec {
                schema: COMMON_PROTO.into(),
                schema_type: SchemaType::Protobuf,
                ..Default::default()
            },
        )
        .unwrap();
    let mut good = vec![0u8];
    good.extend((id as u32).to_be_bytes());
    good.push(0); // message-index path [0]
    let mut bad = good.clone();
    good.extend(b"\x0a\x03EUR\x10\x05");
    bad.extend(b"\x0a\x09EU"); // a string field whose bytes run out
    let frames = json!([hex::encode(&good), hex::encode(&bad)]);
    produce_hex(&broker.bootstrap(), &topic, &frames);
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("x.arrows");
    let out = tail_to(
        &broker.bootstrap(),
        &topic,
        "protobuf",
        &registry.url(),
        &out_file,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains(&format!(
            "cannot decode the value of {topic}/0 offset 1: cannot deserialize schema value: Protobuf message common.Money of writer schema {id}:"
        )),
        "{message}"
    );
    assert!(!out_file.exists(), "a failed tail publishes no file");
}

const ORDER_JSON_SCHEMA: &str = r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["id", "qty"],
  "properties": {
    "id": {"type": "string"},
    "qty": {"type": "integer"},
    "price": {"type": ["null", "number"]},
    "paid": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "customer": {"$ref": "#/$defs/customer"},
    "blob": {"type": "string", "contentEncoding": "base64"}
  },
  "$defs": {"customer": {"type": "object", "properties": {"name": {"type": "string"}}}}
}"##;

/// Confluent frames of JSON documents, as any JSON Schema serialiser writes them.
const JSON_RECORDS: &str = r#"
import json, struct, sys
schema_id = int(sys.argv[1])
docs = [
  {"id": "j-1", "qty": 3, "price": 9.5, "paid": True, "tags": ["a", "b"],
   "customer": {"name": "ada"}, "blob": "AAH/"},
  {"qty": 1, "id": "j-2", "price": None},
]
print(json.dumps([(b"\x00" + struct.pack(">I", schema_id) + json.dumps(d).encode()).hex() for d in docs]))
"#;

#[test]
fn json_schema_records_tail_to_arrow_with_their_schema_declared_types() {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let topic = unique_name("json-orders");
    create_topic(&broker.bootstrap(), &topic, 1);
    let id = client
        .register(
            &format!("{topic}-value"),
            &SchemaSpec {
                schema: ORDER_JSON_SCHEMA.into(),
                schema_type: SchemaType::Json,
                ..Default::default()
            },
        )
        .unwrap();
    let frames = venv_python(JSON_RECORDS, &[&id.to_string()]);
    let got = produce_and_tail(&broker, &registry, &topic, &frames, "json-sr");
    let names: Vec<&str> = got["types"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|n| !n.starts_with("__"))
        .collect();
    assert_eq!(names.len(), 7, "{names:?}");
    for (column, ty) in [
        ("id", "string"),
        ("qty", "int64"),
        ("price", "double"),
        ("paid", "bool"),
        ("tags", "string"),
        ("customer", "string"),
        ("blob", "binary"),
    ] {
        assert_eq!(got["types"][column], ty, "{column}: {}", got["types"]);
    }
    assert_eq!(got["nullable"]["id"], false);
    assert_eq!(got["nullable"]["qty"], false);
    assert_eq!(got["nullable"]["price"], true);
    assert_eq!(got["metadata"]["tags"]["krabka.json"], "true");
    let rows = got["rows"].as_array().unwrap();
    assert_eq!(
        rows[0],
        json!({"id": "j-1", "qty": 3, "price": 9.5, "paid": true, "tags": r#"["a","b"]"#,
               "customer": r#"{"name":"ada"}"#, "blob": "AAH/"})
    );
    assert_eq!(
        rows[1],
        json!({"id": "j-2", "qty": 1, "price": null, "paid": null, "tags": null,
               "customer": null, "blob": null})
    );
}

/// An Avro order whose last field is an optional string: apache-avro alone reads a body
/// cut inside it as `null`.
const NOTE_AVRO: &str = r#"{"type":"record","name":"Note","namespace":"demo","fields":[
 {"name":"id","type":"string"},{"name":"note","type":["null","string"],"default":null}]}"#;

/// The reader adds a defaulted field, so records go through schema resolution.
const NOTE_AVRO_READER: &str = r#"{"type":"record","name":"Note","namespace":"demo","fields":[
 {"name":"id","type":"string"},{"name":"note","type":["null","string"],"default":null},
 {"name":"qty","type":"long","default":1}]}"#;

#[test]
fn a_cut_avro_body_fails_naming_topic_partition_and_offset_on_both_decoding_paths() {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let reader = dir.path().join("reader.avsc");
    std::fs::write(&reader, NOTE_AVRO_READER).unwrap();
    for (n, format) in ["avro".to_string(), format!("avro:{}", reader.display())]
        .iter()
        .enumerate()
    {
        let topic = unique_name("avro-cut");
        create_topic(&broker.bootstrap(), &topic, 1);
        let id = client
            .register(
                &format!("{topic}-value"),
                &SchemaSpec {
                    schema: NOTE_AVRO.into(),
                    ..Default::default()
                },
            )
            .unwrap();
        // id "o-1", note "hello"; the second record loses the last 3 bytes of the note.
        let good = framing::encode(id as u32, &hex::decode("066f2d31020a68656c6c6f").unwrap());
        let cut = good[..good.len() - 3].to_vec();
        produce_hex(
            &broker.bootstrap(),
            &topic,
            &json!([hex::encode(&good), hex::encode(&cut)]),
        );
        let out_file = dir.path().join(format!("x{n}.arrows"));
        let out = tail_to(
            &broker.bootstrap(),
            &topic,
            format,
            &registry.url(),
            &out_file,
        );
        assert_eq!(out.status.code(), Some(1), "{format}: {}", stderr(&out));
        let message = stderr(&out);
        assert!(
            message.contains(&format!(
                "cannot decode the value of {topic}/0 offset 1: cannot deserialize schema value:"
            )) && (message.contains("ends early") || message.contains("truncated Avro value")),
            "{format}: {message}"
        );
        assert!(!out_file.exists(), "a failed tail publishes no file");
    }
}
