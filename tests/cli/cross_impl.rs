//! Cross-implementation checks against Python packages pinned in
//! `scripts/test-requirements.txt` (found at `$KRABKA_TEST_VENV/bin/python`, which
//! `scripts/test` exports): records framed and encoded by fastavro and by Google's
//! protobuf runtime decode to the same values here, and the Java parsing canonical
//! forms of the Avro conformance corpus agree with fastavro's.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use krabka_streams::engine::schema::avro::{AvroSchema, decode_body};
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::protobuf::{self, ProtoSchema};
use krabka_streams::io::registry_server::{RegistryServer, SchemaRecord};

/// The test venv's python, or `None` (with a loud message) when `KRABKA_TEST_VENV` is unset.
fn python() -> Option<PathBuf> {
    match std::env::var_os("KRABKA_TEST_VENV") {
        Some(venv) => {
            let py = PathBuf::from(venv).join("bin/python");
            assert!(
                py.exists(),
                "KRABKA_TEST_VENV is set but {} does not exist",
                py.display()
            );
            Some(py)
        }
        None => {
            eprintln!(
                "\n*** SKIPPED cross-implementation test: KRABKA_TEST_VENV is unset; run scripts/test (it installs fastavro and protobuf) ***\n"
            );
            None
        }
    }
}

fn run_python(py: &PathBuf, script: &str, input: &str) -> Value {
    let out = Command::new(py)
        .args(["-c", script, input])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "python printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

const CORPUS: &str = include_str!("../data/avro-canonical-corpus.json");

#[test]
fn fastavro_agrees_with_the_java_canonical_forms_of_the_corpus() {
    let Some(py) = python() else { return };
    let script = r#"
import json, sys
from fastavro.schema import parse_schema, to_parsing_canonical_form
corpus = json.loads(sys.argv[1])
print(json.dumps({e["id"]: to_parsing_canonical_form(parse_schema(json.loads(e["schema"])))
                  for e in corpus["entries"] if not e.get("fastavro_rejects")}))
"#;
    let got = run_python(&py, script, CORPUS);
    let corpus: Value = serde_json::from_str(CORPUS).unwrap();
    for e in corpus["entries"].as_array().unwrap() {
        if e.get("fastavro_rejects").is_some() {
            continue;
        }
        let id = e["id"].as_str().unwrap();
        assert_eq!(got[id], e["java"], "{id}");
    }
}

const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"demo","fields":[
 {"name":"id","type":"string"},
 {"name":"amount","type":"long"},
 {"name":"qty","type":"int"},
 {"name":"ratio","type":"double"},
 {"name":"paid","type":"boolean"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"ref","type":{"type":"string","logicalType":"uuid"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
 {"name":"digest","type":{"type":"fixed","name":"Digest","size":4}},
 {"name":"raw","type":"bytes"},
 {"name":"note","type":["null","string"]},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"long"}},
 {"name":"customer","type":{"type":"record","name":"Customer","fields":[{"name":"name","type":"string"},{"name":"vip","type":["null","boolean"]}]}}
]}"#;

/// fastavro writes Confluent frames; the expected JSON follows our display rules
/// (decimals as exact text, timestamps and dates as integers, bytes as base64).
const FASTAVRO_SCRIPT: &str = r#"
import base64, datetime, decimal, io, json, struct, sys, uuid
import fastavro
schema = fastavro.parse_schema(json.loads(sys.argv[1]))
epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
records = [
  dict(id="o-1", amount=120, qty=3, ratio=0.25, paid=True, price=decimal.Decimal("12.34"),
       ts=datetime.datetime(2024, 11, 29, 10, 0, 0, 123000, tzinfo=datetime.timezone.utc),
       day=datetime.date(2024, 11, 29), ref=uuid.UUID("12345678-1234-5678-1234-567812345678"),
       status="PAID", digest=b"\x00\x01\x02\xff", raw=b"hello", note=None, tags=["a", "b"],
       attrs={"x": 1, "y": -2}, customer=dict(name="ada", vip=True)),
  dict(id="o-2", amount=-9007199254740993, qty=-1, ratio=-1.5e10, paid=False, price=decimal.Decimal("-0.05"),
       ts=datetime.datetime(1969, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc),
       day=datetime.date(1969, 12, 31), ref=uuid.UUID("00000000-0000-0000-0000-000000000000"),
       status="NEW", digest=b"abcd", raw=b"", note="fragile \u00e9\u4e2d", tags=[],
       attrs={}, customer=dict(name="", vip=None)),
]
out = []
for r in records:
    buf = io.BytesIO()
    buf.write(b"\x00" + struct.pack(">I", 42))
    fastavro.schemaless_writer(buf, schema, r)
    expected = dict(r)
    expected["price"] = str(r["price"])
    expected["ts"] = (r["ts"] - epoch) // datetime.timedelta(milliseconds=1)
    expected["day"] = (r["day"] - datetime.date(1970, 1, 1)).days
    expected["ref"] = str(r["ref"])
    expected["digest"] = base64.b64encode(r["digest"]).decode()
    expected["raw"] = base64.b64encode(r["raw"]).decode()
    out.append({"frame": buf.getvalue().hex(), "expected": expected})
print(json.dumps(out))
"#;

#[test]
fn records_encoded_by_fastavro_decode_to_the_same_values() {
    let Some(py) = python() else { return };
    let cases = run_python(&py, FASTAVRO_SCRIPT, ORDER_SCHEMA);
    let writer = AvroSchema::parse(ORDER_SCHEMA).unwrap();
    for case in cases.as_array().unwrap() {
        let bytes = hex::decode(case["frame"].as_str().unwrap()).unwrap();
        let frame = framing::decode(&bytes).unwrap();
        assert_eq!(frame.schema_id, 42);
        let got = decode_body(&writer, 42, None, frame.body).unwrap();
        assert_eq!(got, case["expected"], "frame {}", case["frame"]);
        // With a reader schema (identical here) resolution gives the same values.
        let resolved = decode_body(&writer, 42, Some(&writer), frame.body).unwrap();
        assert_eq!(resolved, case["expected"]);
    }
    // And end to end: the binary fetches writer schema 42 from the registry by id.
    let server = RegistryServer::start_default().unwrap();
    server.seed_id(42, SchemaRecord::avro(ORDER_SCHEMA));
    let first = &cases[0];
    let out = Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .args([
            "--registry",
            &server.url(),
            "--output",
            "json",
            "schema",
            "decode",
        ])
        .arg(first["frame"].as_str().unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["data"]["value"], first["expected"]);
}

const PROTO: &str = r#"syntax = "proto3";
package demo;
message Envelope {
  string id = 1;
  message Item {
    string sku = 1;
    uint32 qty = 2;
    repeated sint64 deltas = 3;
    enum Kind { KIND_UNSPECIFIED = 0; BOOK = 1; GAME = 2; }
    Kind kind = 4;
  }
  repeated Item items = 2;
  map<string, int64> totals = 3;
  double weight = 4;
  bytes blob = 5;
  optional bool gift = 6;
}
message Other { fixed32 a = 1; }
"#;

/// Google's protobuf runtime, messages built from a FileDescriptorProto at run time.
const PROTOBUF_SCRIPT: &str = r#"
import json, struct, sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, json_format
F = descriptor_pb2.FieldDescriptorProto
fd = descriptor_pb2.FileDescriptorProto(name="schema.proto", package="demo", syntax="proto3")
env = fd.message_type.add(name="Envelope")
item = env.nested_type.add(name="Item")
kind = item.enum_type.add(name="Kind")
for i, n in enumerate(["KIND_UNSPECIFIED", "BOOK", "GAME"]):
    kind.value.add(name=n, number=i)
item.field.add(name="sku", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
item.field.add(name="qty", number=2, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
item.field.add(name="deltas", number=3, type=F.TYPE_SINT64, label=F.LABEL_REPEATED)
item.field.add(name="kind", number=4, type=F.TYPE_ENUM, type_name=".demo.Envelope.Item.Kind", label=F.LABEL_OPTIONAL)
entry = env.nested_type.add(name="TotalsEntry")
entry.options.map_entry = True
entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
entry.field.add(name="value", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
env.field.add(name="id", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
env.field.add(name="items", number=2, type=F.TYPE_MESSAGE, type_name=".demo.Envelope.Item", label=F.LABEL_REPEATED)
env.field.add(name="totals", number=3, type=F.TYPE_MESSAGE, type_name=".demo.Envelope.TotalsEntry", label=F.LABEL_REPEATED)
env.field.add(name="weight", number=4, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
env.field.add(name="blob", number=5, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
env.oneof_decl.add(name="_gift")
env.field.add(name="gift", number=6, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL, oneof_index=0, proto3_optional=True)
other = fd.message_type.add(name="Other")
other.field.add(name="a", number=1, type=F.TYPE_FIXED32, label=F.LABEL_OPTIONAL)
pool = descriptor_pool.DescriptorPool()
pool.Add(fd)
Envelope = message_factory.GetMessageClass(pool.FindMessageTypeByName("demo.Envelope"))
Item = message_factory.GetMessageClass(pool.FindMessageTypeByName("demo.Envelope.Item"))
Other = message_factory.GetMessageClass(pool.FindMessageTypeByName("demo.Other"))
def zz(v):  # zigzag varint of a message-index element
    v = (v << 1) ^ (v >> 63)
    out = b""
    while True:
        b = v & 0x7f; v >>= 7
        if v: out += bytes([b | 0x80])
        else: return out + bytes([b])
def frame(path, msg):
    idx = b"\x00" if path == [0] else zz(len(path)) + b"".join(zz(i) for i in path)
    return (b"\x00" + struct.pack(">I", 9) + idx + msg.SerializeToString()).hex()
def js(msg):
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)
e = Envelope(id="e-1", weight=2.5, blob=b"\x00\xff", gift=False)
e.items.add(sku="book-1", qty=4294967295, deltas=[-1, 2, -9223372036854775808], kind=1)
e.items.add(sku="game-7", kind=2)
e.totals["eur"] = 12
i = Item(sku="solo", qty=1)
o = Other(a=7)
print(json.dumps([
  {"path": [0], "frame": frame([0], e), "expected": js(e)},
  {"path": [0, 0], "frame": frame([0, 0], i), "expected": js(i)},
  {"path": [1], "frame": frame([1], o), "expected": js(o)},
]))
"#;

#[test]
fn messages_encoded_by_google_protobuf_decode_to_the_same_values() {
    let Some(py) = python() else { return };
    let cases = run_python(&py, PROTOBUF_SCRIPT, "");
    let schema = ProtoSchema::parse(PROTO, &[]).unwrap();
    for case in cases.as_array().unwrap() {
        let bytes = hex::decode(case["frame"].as_str().unwrap()).unwrap();
        let frame = framing::decode_protobuf(&bytes).unwrap();
        assert_eq!(frame.schema_id, 9);
        let path = frame.message_indexes.clone().unwrap();
        assert_eq!(json!(path), case["path"]);
        let msg = schema.message_at(&path).unwrap();
        let got = protobuf::decode_body(&msg, frame.body).unwrap();
        assert_eq!(got, case["expected"], "path {path:?}");
    }
}

/// fastavro's verdict on every cut of each frame's body: `true` when it refused.
const FASTAVRO_CUTS_SCRIPT: &str = r#"
import io, json, sys
import fastavro
args = json.loads(sys.argv[1])
schema = fastavro.parse_schema(json.loads(args["schema"]))
out = []
for body_hex in args["bodies"]:
    body = bytes.fromhex(body_hex)
    verdicts = []
    for cut in range(len(body)):
        buf = io.BytesIO(body[:cut])
        try:
            fastavro.schemaless_reader(buf, schema)
            # A datum that stops before the end leaves bytes: refused as well.
            verdicts.append(buf.tell() != cut)
        except Exception:
            verdicts.append(True)
    out.append(verdicts)
print(json.dumps(out))
"#;

#[test]
fn fastavro_and_we_refuse_every_cut_of_records_it_encoded() {
    let Some(py) = python() else { return };
    let cases = run_python(&py, FASTAVRO_SCRIPT, ORDER_SCHEMA);
    let writer = AvroSchema::parse(ORDER_SCHEMA).unwrap();
    let bodies: Vec<String> = cases
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["frame"].as_str().unwrap()[2 * framing::FRAME_HEADER_LEN..].to_string())
        .collect();
    let verdicts = run_python(
        &py,
        FASTAVRO_CUTS_SCRIPT,
        &json!({"schema": ORDER_SCHEMA, "bodies": bodies}).to_string(),
    );
    let mut cuts = 0;
    for (body_hex, verdicts) in bodies.iter().zip(verdicts.as_array().unwrap()) {
        let body = hex::decode(body_hex).unwrap();
        for cut in 0..body.len() {
            assert_eq!(verdicts[cut], true, "fastavro accepted a cut to {cut}");
            let ours = decode_body(&writer, 42, None, &body[..cut]);
            assert!(ours.is_err(), "we accepted a cut to {cut}: {ours:?}");
            let resolved = decode_body(&writer, 42, Some(&writer), &body[..cut]);
            assert!(resolved.is_err(), "resolved: we accepted a cut to {cut}");
            cuts += 1;
        }
    }
    assert!(cuts > 100, "{cuts}");
}
