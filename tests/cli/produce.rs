//! `produce` end to end: plain-text lines compared with kcat's own `-P` on the
//! dev cluster (kcat is the reference producer *and* reader there; Debian's kcat
//! cannot talk to Tansu), and per codec the round trip `tail T -e --out o.arrows` →
//! `produce T2 --input o.arrows` → `tail T2` against a Tansu broker and the in-repo
//! registry, row for row. Records are sent one per batch (`-X linger.ms=0
//! -X batch.num.messages=1`): Tansu's high watermark is wrong after multi-record
//! batches (docs/testing.md §b), and `tail -e` stops at it.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use serde_json::Value;

use crate::support::admin::create_topic;
use crate::support::dev_cluster::dev_cluster;
use crate::support::tansu::Tansu;
use crate::support::txn_log::TxnLog;
use crate::support::{binary, unique_name, venv_python};

const KCAT: &str = "/usr/bin/kcat";
const ONE_PER_BATCH: [&str; 4] = ["-X", "linger.ms=0", "-X", "batch.num.messages=1"];

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Every record of `topic` as kcat prints it: key and value lengths (-1 = null), bytes, headers.
fn kcat_lines(bootstrap: &str, topic: &str) -> Vec<String> {
    let out = Command::new(KCAT)
        .args([
            "-C",
            "-b",
            bootstrap,
            "-t",
            topic,
            "-o",
            "beginning",
            "-e",
            "-q",
        ])
        .args(["-f", "%K:%k|%S:%s|%h\\n"])
        .output()
        .expect("run /usr/bin/kcat");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[test]
fn plain_lines_give_the_records_kcat_p_gives_for_the_same_input() {
    let (theirs, ours) = (unique_name("kcat-p"), unique_name("produce-p"));
    let cluster = dev_cluster(&[&format!("{theirs}:3"), &format!("{ours}:3")]);
    // Keys, a line without the separator, an empty key, an empty value, a separator
    // inside the value, a carriage return, a blank line and a last line without \n.
    let input = b"a:1\n\nnokey\n:emptykey\nb::x\r\nc:\nd:caf\xc3\xa9\nlast:line";
    let mut kcat = Command::new(KCAT)
        .args(["-P", "-b", &cluster.bootstrap, "-t", &theirs, "-K:"])
        .args(["-H", "x=1", "-H", "nul", "-H", "empty=", "-H", "x=2"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    kcat.stdin.take().unwrap().write_all(input).unwrap();
    assert!(kcat.wait().unwrap().success());
    let o = ok(run(
        &[
            "-b",
            &cluster.bootstrap,
            "produce",
            &ours,
            "-K:",
            "-H",
            "x=1",
            "-H",
            "nul",
            "-H",
            "empty=",
            "-H",
            "x=2",
        ],
        Some(input),
    ));
    let summary = String::from_utf8_lossy(&o.stderr);
    assert!(summary.contains("sent 7 records"), "{summary}");
    let expected = kcat_lines(&cluster.bootstrap, &theirs);
    assert_eq!(expected.len(), 7, "{expected:?}");
    assert_eq!(kcat_lines(&cluster.bootstrap, &ours), expected);
}

#[test]
fn json_text_on_stdin_is_refused_rather_than_guessed_and_bad_flags_are_usage_errors() {
    let topic = unique_name("refuse");
    let cluster = dev_cluster(&[&format!("{topic}:1")]);
    let o = run(
        &["-b", &cluster.bootstrap, "produce", &topic],
        Some(b"{\"a\":1}\n"),
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format ndjson"));
    let o = run(
        &[
            "-b",
            &cluster.bootstrap,
            "produce",
            &topic,
            "--partition",
            "5",
        ],
        Some(b"a\n"),
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("has 1 partitions"));
    assert!(kcat_lines(&cluster.bootstrap, &topic).is_empty());
}

/// Source rows: NDJSON as `tail --format ndjson` writes it, with keys (one not
/// text), headers (a repeated name, a null value), timestamps and partitions.
fn source_rows(raw: bool) -> String {
    let mut out = String::new();
    for i in 0..6 {
        let payload = if raw {
            format!(r#""value":"v{i}""#)
        } else {
            format!(r#""id":{i},"name":"n{i}","score":{}.5"#, i * 3)
        };
        let key = if i == 4 {
            r#"{"base64":"AP8="}"#.to_owned()
        } else {
            format!(r#""k{i}""#)
        };
        out.push_str(&format!(
            r#"{{{payload},"__key":{key},"__timestamp":{},"__partition":{},"__headers":{{"h":["a{i}",null],"t":"x"}}}}"#,
            1_732_870_800_000i64 + i * 1000,
            i % 2
        ));
        out.push('\n');
    }
    out
}

fn tail_rows(bootstrap: &str, registry: &str, topic: &str, format: &str) -> Vec<Value> {
    let o = ok(run(
        &[
            "-b",
            bootstrap,
            "--registry",
            registry,
            "tail",
            topic,
            "-e",
            "-q",
            "--value-format",
            format,
            "--format",
            "ndjson",
        ],
        None,
    ));
    let mut rows: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    rows.sort_by_key(|r| (r["__partition"].as_i64(), r["__timestamp"].as_i64()));
    rows
}

/// tail T → o.arrows → produce T2 → tail T2 equals tail T, for one codec.
fn round_trip(servers: &Registered, format: &str, keep_offsets: bool) {
    let bootstrap = servers.bootstrap();
    let url = servers.url();
    let (source, copy) = (unique_name("rt-src"), unique_name("rt-copy"));
    create_topic(&bootstrap, &source, 2);
    create_topic(&bootstrap, &copy, 2);
    let dir = tempfile::tempdir().unwrap();
    let rows = source_rows(matches!(format, "raw" | "string"));
    let mut seed = vec!["-b", &bootstrap, "--registry", &url];
    seed.extend(ONE_PER_BATCH);
    seed.extend([
        "produce",
        &source,
        "--format",
        "ndjson",
        "--value-format",
        format,
        "--partition",
        "keep",
    ]);
    ok(run(&seed, Some(rows.as_bytes())));
    let capture = dir.path().join("o.arrows");
    let capture = capture.to_str().unwrap();
    ok(run(
        &[
            "-b",
            &bootstrap,
            "--registry",
            &url,
            "tail",
            &source,
            "-e",
            "-q",
            "--value-format",
            format,
            "--out",
            capture,
        ],
        None,
    ));
    let mut replay = vec!["-b", &bootstrap, "--registry", &url];
    replay.extend(ONE_PER_BATCH);
    replay.extend([
        "produce",
        &copy,
        "--input",
        capture,
        "--value-format",
        format,
        "--partition",
        "keep",
        "--output",
        "json",
    ]);
    let o = ok(run(&replay, None));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut expected = tail_rows(&bootstrap, &url, &source, format);
    let mut actual = tail_rows(&bootstrap, &url, &copy, format);
    assert_eq!(expected.len(), 6, "{format}: {expected:?}");
    if !keep_offsets {
        for r in expected.iter_mut().chain(actual.iter_mut()) {
            r.as_object_mut().unwrap().remove("__offset");
        }
    } else {
        assert_eq!(summary["data"]["records"], 6, "{format}: {summary}");
    }
    assert_eq!(actual, expected, "{format}");
    assert_eq!(
        expected[0]["__headers"]["h"],
        serde_json::json!(["a0", null])
    );
    assert_eq!(expected[2]["__key"], serde_json::json!({"base64": "AP8="}));
}

#[test]
fn every_codec_round_trips_tail_produce_tail_row_for_row() {
    let servers = Registered::start();
    for format in [
        "raw",
        "string",
        "json",
        "gzip+json",
        "avro",
        "protobuf",
        "json-sr",
    ] {
        round_trip(&servers, format, true);
    }
    // Arrow blobs hold many rows per record: rows equal, offsets not.
    round_trip(&servers, "arrow", false);
}

/// A Tansu broker and the in-repo registry, both stopped on drop.
struct Registered {
    broker: Tansu,
    registry: RegistryServer,
}

impl Registered {
    fn start() -> Self {
        Registered {
            broker: Tansu::start(),
            registry: RegistryServer::start(RegistryServerOptions::default()).unwrap(),
        }
    }

    fn bootstrap(&self) -> String {
        self.broker.bootstrap()
    }

    fn url(&self) -> String {
        self.registry.url()
    }

    /// A new one-partition topic holding `source_rows(false)` produced as `format`
    /// (`extra` flags after it), and every record's value bytes (base64, as `tail
    /// --binary base64` prints them) in order.
    fn produce_rows(&self, prefix: &str, format: &str, extra: &[&str]) -> (String, Vec<String>) {
        let (bootstrap, url) = (self.bootstrap(), self.url());
        let topic = unique_name(prefix);
        create_topic(&bootstrap, &topic, 1);
        let mut args = vec!["-b", &bootstrap, "--registry", &url];
        args.extend(ONE_PER_BATCH);
        args.extend([
            "produce",
            &topic,
            "--format",
            "ndjson",
            "--value-format",
            format,
            "--partition",
            "0",
        ]);
        args.extend(extra);
        ok(run(&args, Some(source_rows(false).as_bytes())));
        let o = ok(run(
            &[
                "-b",
                &bootstrap,
                "tail",
                &topic,
                "-e",
                "-q",
                "--value-format",
                "raw",
                "--format",
                "ndjson",
                "--binary",
                "base64",
            ],
            None,
        ));
        let frames = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["value"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        (topic, frames)
    }
}

/// The payload columns of `source_rows(false)`, as decoded records should hold them.
fn assert_source_payloads(decoded: &Value, what: &str) {
    let rows = decoded
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {decoded}"));
    assert_eq!(rows.len(), 6, "{what}: {decoded}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["id"].as_i64(), Some(i as i64), "{what} row {i}: {r}");
        assert_eq!(r["name"], format!("n{i}"), "{what} row {i}: {r}");
        assert_eq!(
            r["score"].as_f64(),
            Some(i as f64 * 3.0 + 0.5),
            "{what} row {i}: {r}"
        );
    }
}

#[test]
fn avro_values_are_registry_frames_fastavro_and_confluent_kafka_decode_with_the_registered_schema()
{
    let servers = Registered::start();
    let url = servers.url();
    let (topic, frames) = servers.produce_rows("avro-out", "avro", &[]);
    let decoded = venv_python(
        r#"
import base64, io, json, struct, sys, urllib.request, fastavro
url, frames = sys.argv[1], sys.argv[2:]
out = []
for f in frames:
    b = base64.b64decode(f)
    assert b[0] == 0
    sid = struct.unpack(">I", b[1:5])[0]
    schema = json.load(urllib.request.urlopen(f"{url}/schemas/ids/{sid}"))["schema"]
    rec = fastavro.schemaless_reader(io.BytesIO(b[5:]), fastavro.parse_schema(json.loads(schema)))
    out.append(rec)
print(json.dumps(out))
"#,
        &[&[url.clone()][..], &frames[..]].concat(),
    );
    // confluent-kafka's own deserializer, its registry client asking the in-repo registry.
    let confluent = venv_python(
        r#"
import base64, json, sys, warnings
warnings.simplefilter("ignore")
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import SerializationContext, MessageField
url, topic, frames = sys.argv[1], sys.argv[2], sys.argv[3:]
d = AvroDeserializer(SchemaRegistryClient({"url": url}))
ctx = SerializationContext(topic, MessageField.VALUE)
print(json.dumps([d(base64.b64decode(f), ctx) for f in frames]))
"#,
        &[&[url.clone(), topic.clone()][..], &frames[..]].concat(),
    );
    assert_eq!(confluent, decoded, "confluent-kafka and fastavro disagree");
    assert_source_payloads(&decoded, "avro");
}

/// The test's schema: `shop.Order` is the file's second message, so the frame's
/// message indexes (docs/formats.md §2) must say [1], not the one-byte [0] shortcut.
const ORDER_PROTO: &str = "syntax = \"proto3\";\npackage shop;\n\nmessage Note {\n  string text = 1;\n}\n\nmessage Order {\n  int64 id = 1;\n  string name = 2;\n  double score = 3;\n}\n";

#[test]
fn protobuf_values_are_registry_frames_confluent_kafkas_protobuf_deserializer_reads() {
    let servers = Registered::start();
    let dir = tempfile::tempdir().unwrap();
    let proto = dir.path().join("order.proto");
    std::fs::write(&proto, ORDER_PROTO).unwrap();
    let schema = format!("{}:shop.Order", proto.display());
    let (topic, frames) =
        servers.produce_rows("proto-out", "protobuf", &["--value-schema", &schema]);
    // No protoc here: the message class comes from a FileDescriptorProto written to
    // match ORDER_PROTO. The deserializer reads the framing (magic byte, schema id,
    // message indexes) itself; the registered schema is checked separately.
    let decoded = venv_python(
        r#"
import base64, json, struct, sys, urllib.request, warnings
warnings.simplefilter("ignore")
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, json_format
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import SerializationContext, MessageField
url, topic, frames = sys.argv[1], sys.argv[2], sys.argv[3:]
F = descriptor_pb2.FieldDescriptorProto
fdp = descriptor_pb2.FileDescriptorProto(name="order.proto", package="shop", syntax="proto3")
note = fdp.message_type.add(name="Note")
note.field.add(name="text", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
order = fdp.message_type.add(name="Order")
order.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
order.field.add(name="name", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
order.field.add(name="score", number=3, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
Order = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))
d = ProtobufDeserializer(Order, {"use.deprecated.format": False})
ctx = SerializationContext(topic, MessageField.VALUE)
rows, ids = [], set()
for f in frames:
    b = base64.b64decode(f)
    assert b[0] == 0, b[:8]
    ids.add(struct.unpack(">I", b[1:5])[0])
    # message indexes: count 1 (zigzag 2), index 1 (zigzag 2)
    assert b[5:7] == bytes([2, 2]), b[5:7]
    m = d(b, ctx)
    rows.append({"id": m.id, "name": m.name, "score": m.score})
(sid,) = ids
reg = json.load(urllib.request.urlopen(f"{url}/schemas/ids/{sid}"))
print(json.dumps({"rows": rows, "type": reg.get("schemaType"), "schema": reg["schema"]}))
"#,
        &[&[servers.url(), topic][..], &frames[..]].concat(),
    );
    assert_source_payloads(&decoded["rows"], "protobuf");
    assert_eq!(decoded["type"], "PROTOBUF", "{decoded}");
    let registered = decoded["schema"].as_str().unwrap();
    assert!(
        registered.contains("message Order") && registered.contains("double score = 3"),
        "{registered}"
    );
}

#[test]
fn json_sr_values_are_registry_frames_confluent_kafkas_json_deserializer_validates_and_reads() {
    let servers = Registered::start();
    let (topic, frames) = servers.produce_rows("jsonsr-out", "json-sr", &[]);
    // The deserializer fetches the writer schema by the frame's id from the in-repo
    // registry and validates every value against it (jsonschema) before returning it.
    let decoded = venv_python(
        r#"
import base64, json, sys, warnings
warnings.simplefilter("ignore")
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.serialization import SerializationContext, MessageField
url, topic, frames = sys.argv[1], sys.argv[2], sys.argv[3:]
d = JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": url}))
ctx = SerializationContext(topic, MessageField.VALUE)
print(json.dumps([d(base64.b64decode(f), ctx) for f in frames]))
"#,
        &[&[servers.url(), topic][..], &frames[..]].concat(),
    );
    assert_source_payloads(&decoded, "json-sr");
}

#[test]
fn an_encoding_error_names_the_row_and_skip_or_dead_letter_sets_it_aside() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("bad-row");
    create_topic(&bootstrap, &topic, 1);
    // Line 3's timestamp is negative: no Kafka timestamp, so the row is refused by name.
    let rows = "{\"value\":\"a\"}\n{\"value\":\"b\"}\n{\"value\":\"c\",\"__timestamp\":-5}\n{\"value\":\"d\"}\n";
    let mut args = vec!["-b", &bootstrap];
    args.extend(ONE_PER_BATCH);
    args.extend(["produce", &topic, "--format", "ndjson", "--partition", "0"]);
    let o = run(&args, Some(rows.as_bytes()));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 3") && err.contains("negative"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let dead = dir.path().join("dead.ndjson");
    let mut args2 = args.clone();
    args2.extend([
        "--on-error",
        "dead-letter",
        dead.to_str().unwrap(),
        "--output",
        "json",
    ]);
    let o = ok(run(&args2, Some(rows.as_bytes())));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["data"]["records"], 3);
    assert_eq!(summary["data"]["dead_lettered"], 1);
    let letter: Value =
        serde_json::from_str(std::fs::read_to_string(&dead).unwrap().trim()).unwrap();
    assert_eq!(letter["row"], "line 3");
    assert_eq!(letter["data"]["value"], "Yw==");
}

#[test]
fn a_transactional_produce_that_fails_is_aborted_and_a_good_one_committed() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("txn");
    create_topic(&bootstrap, &topic, 1);
    let good = "{\"value\":\"a\"}\n{\"value\":\"b\"}\n";
    let bad = "{\"value\":\"a\"}\n{\"value\":\"b\",\"__timestamp\":-1}\n";
    let mut args = vec!["-b", &bootstrap];
    args.extend(ONE_PER_BATCH);
    args.extend([
        "produce",
        &topic,
        "--format",
        "ndjson",
        "--partition",
        "0",
        "--transactional",
    ]);
    let o = run(&args, Some(bad.as_bytes()));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("aborted the transaction"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = ok(run(&args, Some(good.as_bytes())));
    assert!(String::from_utf8_lossy(&o.stderr).contains("committed in one transaction"));
}

#[test]
fn a_dry_run_encodes_everything_and_sends_nothing() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("dry");
    create_topic(&bootstrap, &topic, 2);
    let o = ok(run(
        &[
            "-b",
            &bootstrap,
            "--dry-run",
            "--output",
            "json",
            "produce",
            &topic,
            "--format",
            "ndjson",
            "--value-format",
            "json",
            "--partition",
            "keep",
        ],
        Some(source_rows(false).as_bytes()),
    ));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["dry_run"], true);
    assert_eq!(summary["data"]["records"], 6);
    assert_eq!(
        summary["data"]["partitions"],
        serde_json::json!([{"partition": 0, "records": 3}, {"partition": 1, "records": 3}])
    );
    let o = ok(run(
        &[
            "-b", &bootstrap, "tail", &topic, "-e", "-q", "--format", "ndjson",
        ],
        None,
    ));
    assert!(o.stdout.is_empty());
}

#[test]
fn tail_run_produce_is_a_pipe() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let (source, target) = (unique_name("pipe-src"), unique_name("pipe-dst"));
    create_topic(&bootstrap, &source, 2);
    create_topic(&bootstrap, &target, 2);
    let mut seed = vec!["-b", &bootstrap];
    seed.extend(ONE_PER_BATCH);
    seed.extend([
        "produce",
        &source,
        "--format",
        "ndjson",
        "--value-format",
        "json",
        "--partition",
        "keep",
    ]);
    ok(run(&seed, Some(source_rows(false).as_bytes())));
    let dir = tempfile::tempdir().unwrap();
    let topology = dir.path().join("big.yaml");
    std::fs::write(
        &topology,
        format!(
            "version: 1\nnodes:\n  - source: src\n    topics: [{source}]\n    value: json\n    columns: {{id: int64, name: utf8, score: float64}}\n  - filter: big\n    parent: src\n    where: id >= 3\n  - sink: out\n    parent: big\n    topic: {target}\n    value: json\n"
        ),
    )
    .unwrap();
    let bin = binary();
    let bin = bin.to_str().unwrap();
    let script = format!(
        "set -o pipefail; {bin} -b {bootstrap} tail {source} -e -q --value-format json \
         | {bin} run {topology} --input src=- --sink out=- \
         | {bin} -b {bootstrap} -X linger.ms=0 -X batch.num.messages=1 produce {target} --value-format json --partition keep",
        topology = topology.display()
    );
    ok(Command::new("bash").args(["-c", &script]).output().unwrap());
    let rows = tail_rows(&bootstrap, "http://127.0.0.1:1", &target, "json");
    let ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(sorted, [3, 4, 5], "{rows:?}");
    let row = rows.iter().find(|r| r["id"] == 3).unwrap();
    assert_eq!(row["name"], "n3");
    assert_eq!(row["__key"], "k3");
    assert_eq!(row["__partition"], 1);
    assert_eq!(row["__headers"]["h"], serde_json::json!(["a3", null]));
}

#[test]
fn parquet_ipc_files_and_fifos_replay_the_same_rows() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let source = unique_name("files-src");
    create_topic(&bootstrap, &source, 2);
    let mut seed = vec!["-b", &bootstrap];
    seed.extend(ONE_PER_BATCH);
    seed.extend([
        "produce",
        &source,
        "--format",
        "ndjson",
        "--value-format",
        "json",
        "--partition",
        "keep",
    ]);
    ok(run(&seed, Some(source_rows(false).as_bytes())));
    let expected = tail_rows(&bootstrap, "http://127.0.0.1:1", &source, "json");
    let dir = tempfile::tempdir().unwrap();
    for name in ["o.parquet", "o.arrow", "fifo"] {
        let path = dir.path().join(name);
        let target = unique_name("files-dst");
        create_topic(&bootstrap, &target, 2);
        let out = if name == "fifo" {
            dir.path().join("o.arrows")
        } else {
            path.clone()
        };
        ok(run(
            &[
                "-b",
                &bootstrap,
                "tail",
                &source,
                "-e",
                "-q",
                "--value-format",
                "json",
                "--out",
                out.to_str().unwrap(),
            ],
            None,
        ));
        let writer = (name == "fifo").then(|| {
            assert!(
                Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .unwrap()
                    .success()
            );
            let (fifo, bytes) = (path.clone(), std::fs::read(&out).unwrap());
            std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
        });
        let mut args = vec!["-b", &bootstrap];
        args.extend(ONE_PER_BATCH);
        args.extend([
            "produce",
            &target,
            "--input",
            path.to_str().unwrap(),
            "--value-format",
            "json",
            "--partition",
            "keep",
        ]);
        ok(run(&args, None));
        if let Some(w) = writer {
            w.join().unwrap();
        }
        assert_eq!(
            tail_rows(&bootstrap, "http://127.0.0.1:1", &target, "json"),
            expected,
            "{name}"
        );
    }
}

#[test]
fn the_demo_replays_a_capture_with_produce_and_tails_it_back() {
    let o = ok(run(&["--output", "json", "demo"], None));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let step = doc["data"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["step"]
                .as_str()
                .unwrap_or("")
                .contains("replay a capture")
        })
        .unwrap_or_else(|| panic!("no produce step: {doc}"))
        .clone();
    let r = &step["result"];
    assert!(r["captured"].as_u64().unwrap() > 0, "{step}");
    assert_eq!(r["replayed"], r["captured"], "{step}");
    assert_eq!(r["read_back"], r["captured"], "{step}");
}

#[test]
fn drop_columns_leaves_tails_decoded_key_out_of_the_values_and_refuses_unknown_names() {
    let topic = unique_name("drop");
    let cluster = dev_cluster(&[&format!("{topic}:1")]);
    let rows = "{\"key\":\"k\",\"id\":1,\"__key\":\"k\"}\n";
    let o = run(
        &[
            "-b",
            &cluster.bootstrap,
            "produce",
            &topic,
            "--format",
            "ndjson",
            "--value-format",
            "json",
            "--drop-columns",
            "kee",
        ],
        Some(rows.as_bytes()),
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    ok(run(
        &[
            "-b",
            &cluster.bootstrap,
            "produce",
            &topic,
            "--format",
            "ndjson",
            "--value-format",
            "json",
            "--drop-columns",
            "key",
        ],
        Some(rows.as_bytes()),
    ));
    assert_eq!(
        kcat_lines(&cluster.bootstrap, &topic),
        ["1:k|8:{\"id\":1}|"]
    );
}

/// Bytes written into a pipe and not yet read, asked on its write end (FIONREAD).
fn unread(pipe: &std::process::ChildStdin) -> i32 {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer; the descriptor is open.
    unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut n) };
    n
}

/// Ctrl-C while `produce` waits for more input ends it with 130, and the records it
/// had already handed to librdkafka (held there by a long linger) are delivered first,
/// not dropped with the process.
#[test]
fn a_signal_while_the_input_waits_delivers_what_was_handed_to_the_producer() {
    let topic = unique_name("signal");
    let cluster = dev_cluster(&[&format!("{topic}:1")]);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let mut child = Command::new(binary())
            .args(["-b", &cluster.bootstrap, "-X", "linger.ms=60000"])
            .args(["produce", &topic, "-K", ":"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(b"k1:v1\nk2:v2\nk3:v3\n").unwrap();
        input.flush().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while unread(&input) > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "produce never read its input"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The last line is read; it is handed to the producer right after.
        std::thread::sleep(std::time::Duration::from_millis(500));
        unsafe { libc::kill(child.id() as i32, sig) };
        let out = child.wait_with_output().unwrap();
        drop(input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{sig}: {err}");
        assert!(
            err.contains("every record handed to the producer before the signal was delivered"),
            "{err}"
        );
    }
    let lines = kcat_lines(&cluster.bootstrap, &topic);
    assert_eq!(
        lines,
        [
            "2:k1|2:v1|",
            "2:k1|2:v1|",
            "2:k2|2:v2|",
            "2:k2|2:v2|",
            "2:k3|2:v3|",
            "2:k3|2:v3|"
        ],
        "both runs delivered all three records"
    );
}

/// Ctrl-C or SIGTERM while a `--transactional` produce waits for more input ends it
/// with 130 after aborting the open transaction. Tansu does not hide aborted records
/// from read_committed readers, so the proof is in its log (support::txn_log): every
/// record the run sent is followed by its producer's ABORT marker, none by a COMMIT,
/// none left in an open transaction.
#[test]
fn a_signal_during_a_transactional_produce_aborts_the_open_transaction() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("txn-signal");
    create_topic(&bootstrap, &topic, 1);
    for (sig, name) in [(libc::SIGINT, "int"), (libc::SIGTERM, "term")] {
        let id = unique_name("txn-signal-id");
        let mut child = Command::new(binary())
            .args(["-b", &bootstrap])
            .args(ONE_PER_BATCH)
            .args(["produce", &topic, "--partition", "0", "--transactional"])
            .args(["--transactional-id", &id])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(format!("{name}1\n{name}2\n{name}3\n").as_bytes())
            .unwrap();
        input.flush().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while unread(&input) > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "produce never read its input"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(1000));
        unsafe { libc::kill(child.id() as i32, sig) };
        let out = child.wait_with_output().unwrap();
        drop(input);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{name}: {err}");
        assert!(
            err.contains("aborted the transaction (3 records sent in it"),
            "{name}: {err}"
        );
    }
    let log = TxnLog::read(&bootstrap, &topic, 0);
    let text = |vs: Vec<Vec<u8>>| -> Vec<String> {
        vs.into_iter()
            .map(|v| String::from_utf8(v).unwrap())
            .collect()
    };
    use crate::support::txn_log::Outcome;
    assert_eq!(
        text(log.values(Outcome::Aborted)),
        ["int1", "int2", "int3", "term1", "term2", "term3"]
    );
    assert!(log.values(Outcome::Open).is_empty(), "{log:?}");
    assert!(log.values(Outcome::Committed).is_empty(), "{log:?}");
    assert_eq!(log.markers.iter().filter(|m| !m.commit).count(), 2);
}

/// `__timestamp`: null is the time of sending, a positive value is kept, 0 and
/// negative values are refused by row (librdkafka would write 0 as "now").
#[test]
fn a_null_timestamp_is_now_a_given_one_is_kept_and_zero_or_negative_is_refused_by_row() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let topic = unique_name("stamps");
    create_topic(&bootstrap, &topic, 1);
    let rows = "{\"value\":\"a\",\"__timestamp\":null}\n{\"value\":\"b\",\"__timestamp\":0}\n{\"value\":\"c\",\"__timestamp\":5}\n{\"value\":\"d\",\"__timestamp\":-1}\n";
    let mut args = vec!["-b", &bootstrap];
    args.extend(ONE_PER_BATCH);
    args.extend(["produce", &topic, "--format", "ndjson", "--partition", "0"]);
    let o = run(&args, Some(rows.as_bytes()));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 2") && err.contains("__timestamp 0"),
        "{err}"
    );
    let mut skip = args.clone();
    skip.extend(["--on-error", "skip", "--output", "json"]);
    let o = ok(run(&skip, Some(rows.as_bytes())));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["data"]["skipped"], 2, "{summary}");
    let all = tail_rows(&bootstrap, "http://127.0.0.1:1", &topic, "raw");
    // The first run sent line 1 before failing at line 2: it stays (not transactional).
    let stamps: Vec<(String, i64)> = all
        .iter()
        .map(|r| {
            (
                r["value"].as_str().unwrap().to_owned(),
                r["__timestamp"].as_i64().unwrap(),
            )
        })
        .collect();
    let values: Vec<&str> = stamps.iter().map(|(v, _)| v.as_str()).collect();
    let mut sorted = values.clone();
    sorted.sort();
    assert_eq!(sorted, ["a", "a", "c"], "{stamps:?}");
    for (v, t) in &stamps {
        match v.as_str() {
            "c" => assert_eq!(*t, 5),
            _ => assert!(*t > 5, "a null __timestamp is the time of sending: {t}"),
        }
    }
}

/// `tail --format ndjson --binary base64` prints every raw byte string as base64
/// text, which nothing in the row tells apart from text: `produce --binary base64`
/// reads it back to the original bytes (keys, values, headers), row for row.
#[test]
fn ndjson_from_tail_binary_base64_produces_the_original_bytes() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let (source, copy, plain) = (
        unique_name("b64-src"),
        unique_name("b64-copy"),
        unique_name("b64-plain"),
    );
    for t in [&source, &copy, &plain] {
        create_topic(&bootstrap, t, 2);
    }
    let mut rows = source_rows(true);
    rows.push_str("{\"value\":{\"base64\":\"/wA=\"},\"__key\":null,\"__partition\":1,\"__timestamp\":1732870900000,\"__headers\":{\"bin\":{\"base64\":\"gA==\"}}}\n");
    let produce_to = |topic: &str, input: &[u8], binary: &str| {
        let mut args = vec!["-b", &bootstrap];
        args.extend(ONE_PER_BATCH);
        args.extend([
            "produce",
            topic,
            "--format",
            "ndjson",
            "--partition",
            "keep",
            "--binary",
            binary,
        ]);
        ok(run(&args, Some(input)))
    };
    produce_to(&source, rows.as_bytes(), "auto");
    let capture = ok(run(
        &[
            "-b", &bootstrap, "tail", &source, "-e", "-q", "--format", "ndjson", "--binary",
            "base64",
        ],
        None,
    ))
    .stdout;
    assert!(
        String::from_utf8_lossy(&capture).contains("\"value\":\"/wA=\""),
        "tail's base64 view: {}",
        String::from_utf8_lossy(&capture)
    );
    produce_to(&copy, &capture, "base64");
    let expected = tail_rows(&bootstrap, "http://127.0.0.1:1", &source, "raw");
    assert_eq!(expected.len(), 7);
    assert_eq!(
        tail_rows(&bootstrap, "http://127.0.0.1:1", &copy, "raw"),
        expected
    );
    // Read as text, the same capture writes the base64 letters: the flag is what decides.
    produce_to(&plain, &capture, "auto");
    let plain_rows = tail_rows(&bootstrap, "http://127.0.0.1:1", &plain, "raw");
    assert_eq!(plain_rows[0]["value"], "djA=", "{plain_rows:?}");
    // --binary base64 on anything but NDJSON is a usage error.
    let o = run(
        &[
            "-b", &bootstrap, "produce", &plain, "--format", "lines", "--binary", "base64",
        ],
        Some(b"a\n"),
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Keyless records with `--partition hash` go where librdkafka's partitioner puts a
/// null key (random; sticky for `sticky.partitioning.linger.ms`, 0 here so the spread
/// shows), as kcat -P does; the summary's partitions are where they were delivered.
#[test]
fn keyless_records_are_left_to_librdkafkas_partitioner_and_the_summary_says_where_they_went() {
    let topic = unique_name("keyless");
    let cluster = dev_cluster(&[&format!("{topic}:3")]);
    let input: String = (0..300).map(|i| format!("v{i}\n")).collect();
    let o = ok(run(
        &[
            "-b",
            &cluster.bootstrap,
            "-X",
            "sticky.partitioning.linger.ms=0",
            "--output",
            "json",
            "produce",
            &topic,
        ],
        Some(input.as_bytes()),
    ));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut said = std::collections::BTreeMap::new();
    for p in summary["data"]["partitions"].as_array().unwrap() {
        said.insert(
            p["partition"].as_i64().unwrap(),
            p["records"].as_u64().unwrap(),
        );
    }
    assert_eq!(said.values().sum::<u64>(), 300, "{summary}");
    assert!(
        said.len() > 1,
        "300 keyless records on one partition: {summary}"
    );
    let out = Command::new(KCAT)
        .args(["-C", "-b", &cluster.bootstrap, "-t", &topic])
        .args(["-o", "beginning", "-e", "-q", "-f", "%p\\n"])
        .output()
        .unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for p in String::from_utf8(out.stdout).unwrap().lines() {
        *seen.entry(p.parse::<i64>().unwrap()).or_insert(0u64) += 1;
    }
    assert_eq!(seen, said);
}

/// kcat's `-k KEY` (one key for every line) and `-p N` mean the same here; the records
/// equal kcat's own for the same input, partition included.
#[test]
fn a_fixed_key_and_partition_give_the_records_kcat_p_k_gives() {
    let (theirs, ours) = (unique_name("kcat-k"), unique_name("produce-k"));
    let cluster = dev_cluster(&[&format!("{theirs}:3"), &format!("{ours}:3")]);
    let input = b"a\nb\n\nc";
    let mut kcat = Command::new(KCAT)
        .args([
            "-P",
            "-b",
            &cluster.bootstrap,
            "-t",
            &theirs,
            "-k",
            "fixed",
            "-p",
            "2",
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    kcat.stdin.take().unwrap().write_all(input).unwrap();
    assert!(kcat.wait().unwrap().success());
    ok(run(
        &[
            "-b",
            &cluster.bootstrap,
            "produce",
            &ours,
            "-k",
            "fixed",
            "-p",
            "2",
        ],
        Some(input),
    ));
    let on = |topic: &str| {
        let out = Command::new(KCAT)
            .args([
                "-C",
                "-b",
                &cluster.bootstrap,
                "-t",
                topic,
                "-o",
                "beginning",
            ])
            .args(["-e", "-q", "-f", "%p|%k|%s\\n"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let expected = on(&theirs);
    assert_eq!(expected, "2|fixed|a\n2|fixed|b\n2|fixed|c\n");
    assert_eq!(on(&ours), expected);
    // -k with -K is refused: one key for all, or one per line.
    let o = run(
        &[
            "-b",
            &cluster.bootstrap,
            "produce",
            &ours,
            "-k",
            "x",
            "-K",
            ":",
        ],
        Some(b"a:b\n"),
    );
    assert_eq!(o.status.code(), Some(2));
}
