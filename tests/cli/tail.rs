//! `tail` end to end: a Tansu broker, Avro orders registered in the in-repo registry
//! server over HTTP, the real binary, and outputs read back by pyarrow and DuckDB.
//! Records are produced one per batch (Tansu's high watermark is wrong after
//! multi-record batches, docs/testing.md §b).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use apache_avro::types::Value as Avro;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use rdkafka::config::ClientConfig;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use serde_json::Value;

use crate::support::tansu::Tansu;
use crate::support::{unique_name, venv_python};

pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

pub const ORDER_SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"order_id","type":"string"},
 {"name":"user","type":"string"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"quantity","type":"int"},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
 {"name":"address","type":{"type":"record","name":"Address","fields":[{"name":"city","type":"string"},{"name":"zip","type":["null","string"],"default":null}]}},
 {"name":"note","type":["null","string"],"default":null}]}"#;

pub(crate) const BASE_TS: i64 = 1_732_870_800_000;

pub(crate) use crate::support::admin::create_topic;

/// One record to produce: partition, key, value, headers.
pub(crate) struct Rec {
    pub(crate) partition: i32,
    pub(crate) key: Option<Vec<u8>>,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) headers: Vec<(&'static str, &'static str)>,
    pub(crate) ts: i64,
}

/// `n` records with values `v0`, `v1`, …, no key and no headers, round-robin over
/// `partitions`, one second apart from [`BASE_TS`].
pub(crate) fn value_records(n: i64, partitions: i32) -> Vec<Rec> {
    (0..n)
        .map(|i| Rec {
            partition: (i % partitions as i64) as i32,
            key: None,
            value: Some(format!("v{i}").into_bytes()),
            headers: vec![],
            ts: BASE_TS + i * 1000,
        })
        .collect()
}

/// Produces one record per batch, flushing after each send.
pub(crate) fn produce(bootstrap: &str, topic: &str, records: &[Rec]) {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .create()
        .unwrap();
    for r in records {
        let mut headers = OwnedHeaders::new();
        for (k, v) in &r.headers {
            headers = headers.insert(Header {
                key: k,
                value: Some(v.as_bytes()),
            });
        }
        let mut rec: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(topic)
            .partition(r.partition)
            .timestamp(r.ts)
            .headers(headers);
        if let Some(k) = &r.key {
            rec = rec.key(k.as_slice());
        }
        if let Some(v) = &r.value {
            rec = rec.payload(v.as_slice());
        }
        producer.send(rec).map_err(|(e, _)| e).unwrap();
        producer.flush(TIMEOUT).unwrap();
    }
}

pub(crate) fn order_body(schema: &apache_avro::Schema, i: i64) -> Vec<u8> {
    let cents = 1000 + i * 25;
    let value = Avro::Record(vec![
        ("order_id".into(), Avro::String(format!("o-{i:04}"))),
        (
            "user".into(),
            Avro::String(["alice", "bob", "carol"][i as usize % 3].into()),
        ),
        (
            "amount".into(),
            Avro::Decimal(apache_avro::Decimal::from(cents.to_be_bytes().to_vec())),
        ),
        ("quantity".into(), Avro::Int(i as i32 + 1)),
        ("ts".into(), Avro::TimestampMillis(BASE_TS + i * 1000)),
        (
            "status".into(),
            Avro::Enum(
                (i % 3) as u32,
                ["NEW", "PAID", "SHIPPED"][i as usize % 3].into(),
            ),
        ),
        (
            "address".into(),
            Avro::Record(vec![
                ("city".into(), Avro::String("Ghent".into())),
                (
                    "zip".into(),
                    if i % 2 == 0 {
                        Avro::Union(1, Box::new(Avro::String("9000".into())))
                    } else {
                        Avro::Union(0, Box::new(Avro::Null))
                    },
                ),
            ]),
        ),
        ("note".into(), Avro::Union(0, Box::new(Avro::Null))),
    ]);
    apache_avro::writer::datum::GenericDatumWriter::builder(schema)
        .build()
        .and_then(|w| w.write_value_to_vec(value))
        .unwrap()
}

/// A broker, a registry and an orders topic with `n` Avro orders over 2 partitions.
pub(crate) struct Orders {
    pub(crate) broker: Tansu,
    pub(crate) registry: RegistryServer,
    pub(crate) topic: String,
}

impl Orders {
    /// `tail TOPIC -e --value-format avro --registry URL ARGS…`: the orders decoded to the end.
    pub(crate) fn tail_to_end(&self, args: &[&str]) -> Output {
        let url = self.registry.url();
        let mut all = vec![self.topic.as_str(), "-e", "--value-format", "avro"];
        all.extend(["--registry", url.as_str()]);
        all.extend_from_slice(args);
        tail(&self.broker.bootstrap(), &all)
    }
}

pub(crate) fn orders(n: i64) -> Orders {
    let broker = Tansu::start();
    let registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let topic = unique_name("orders");
    create_topic(&broker.bootstrap(), &topic, 2);
    let client = HttpRegistry::new(HttpRegistryOptions::new(registry.url())).unwrap();
    let id = client
        .register(
            &format!("{topic}-value"),
            &SchemaSpec {
                schema: ORDER_SCHEMA.into(),
                ..Default::default()
            },
        )
        .unwrap();
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let records: Vec<Rec> = (0..n)
        .map(|i| Rec {
            partition: (i % 2) as i32,
            key: Some(
                ["alice", "bob", "carol"][i as usize % 3]
                    .as_bytes()
                    .to_vec(),
            ),
            value: Some(framing::encode(id as u32, &order_body(&schema, i))),
            headers: vec![("source", if i % 2 == 0 { "web" } else { "app" })],
            ts: BASE_TS + i * 1000,
        })
        .collect();
    produce(&broker.bootstrap(), &topic, &records);
    Orders {
        broker,
        registry,
        topic,
    }
}

fn tail(bootstrap: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .arg("tail")
        .args(args)
        .args(["-b", bootstrap, "--timeout", "20s"])
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a Python check on one file in the test venv.
fn python(script: &str, file: &Path) -> Value {
    venv_python(script, &[file])
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

const PYARROW_STREAM: &str = r#"
import sys, json, pyarrow.ipc as ipc
t = ipc.open_stream(open(sys.argv[1], 'rb')).read_all().sort_by('order_id')
s = t.schema
print(json.dumps({
  "names": s.names,
  "types": {f.name: str(f.type) for f in s},
  "nullable": {f.name: f.nullable for f in s},
  "status_meta": {k.decode(): v.decode() for k, v in (s.field('status').metadata or {}).items()},
  "rows": t.num_rows,
  "first": {"order_id": t['order_id'][0].as_py(), "amount": str(t['amount'][0].as_py()),
            "ts": t['ts'][0].as_py().isoformat(), "city": t['address'][0].as_py()['city'],
            "zip": t['address'][0].as_py()['zip'], "status": t['status'][1].as_py(),
            "key": t['__key'][0].as_py().decode(), "partition": t['__partition'][0].as_py(),
            "timestamp": t['__timestamp'][0].as_py().isoformat()},
}))
"#;

#[test]
fn tail_until_end_writes_avro_orders_as_an_arrow_stream_that_pyarrow_reads_with_types() {
    let o = orders(6);
    let out = o.tail_to_end(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Processed a total of 6 records"),
        "{}",
        stderr(&out)
    );
    let dir = temp_dir();
    let file = dir.path().join("orders.arrows");
    std::fs::write(&file, &out.stdout).unwrap();
    let v = python(PYARROW_STREAM, &file);
    assert_eq!(
        v["names"],
        serde_json::json!([
            "order_id",
            "user",
            "amount",
            "quantity",
            "ts",
            "status",
            "address",
            "note",
            "__key",
            "__timestamp",
            "__partition",
            "__offset",
            "__headers"
        ])
    );
    assert_eq!(v["types"]["amount"], "decimal128(10, 2)");
    assert_eq!(v["types"]["ts"], "timestamp[ms, tz=UTC]");
    assert_eq!(v["types"]["quantity"], "int32");
    assert_eq!(
        v["types"]["address"],
        "struct<city: string not null, zip: string>"
    );
    assert_eq!(v["types"]["__key"], "binary");
    assert_eq!(v["nullable"]["order_id"], false);
    assert_eq!(v["nullable"]["note"], true);
    assert_eq!(v["status_meta"]["krabka.avro.enum"], "shop.Status");
    assert_eq!(
        v["status_meta"]["krabka.avro.enum.symbols"],
        "NEW,PAID,SHIPPED"
    );
    assert_eq!(v["rows"], 6);
    assert_eq!(v["first"]["order_id"], "o-0000");
    assert_eq!(v["first"]["amount"], "10.00");
    assert_eq!(v["first"]["ts"], "2024-11-29T09:00:00+00:00");
    assert_eq!(v["first"]["city"], "Ghent");
    assert_eq!(v["first"]["zip"], "9000");
    assert_eq!(v["first"]["status"], "PAID");
    assert_eq!(v["first"]["key"], "alice");
    assert_eq!(v["first"]["partition"], 0);
    // Typed by default: timestamp[ms, UTC] (BASE_TS), headers a list of structs.
    assert_eq!(v["first"]["timestamp"], "2024-11-29T09:00:00+00:00");
    assert_eq!(v["types"]["__timestamp"], "timestamp[ms, tz=UTC]");
    assert_eq!(
        v["types"]["__headers"],
        "list<item: struct<key: string not null, value: binary> not null>"
    );
}

const DUCKDB_PARQUET: &str = r#"
import sys, json, duckdb, glob
path = sys.argv[1]
con = duckdb.connect()
rows = con.execute(f"SELECT count(*), sum(amount), min(ts), typeof(min(ts)), typeof(any_value(amount)), count(DISTINCT __partition) FROM read_parquet('{path}')").fetchall()[0]
first = con.execute(f"SELECT order_id, address.city, status FROM read_parquet('{path}') ORDER BY order_id LIMIT 1").fetchall()[0]
import pyarrow.parquet as pq
files = sorted(glob.glob(path))
meta = pq.ParquetFile(files[0]).metadata
print(json.dumps({"count": rows[0], "sum": str(rows[1]), "min_ts": str(rows[2]), "ts_type": rows[3],
  "amount_type": rows[4], "partitions": rows[5], "first": list(first),
  "compression": meta.row_group(0).column(0).compression, "files": len(files),
  "row_groups": meta.num_row_groups}))
"#;

#[test]
fn tail_to_parquet_is_read_by_duckdb_with_zstd_decimals_and_typed_timestamps() {
    let o = orders(5);
    let dir = temp_dir();
    let file = dir.path().join("orders.parquet");
    let out = o.tail_to_end(&["--out", file.to_str().unwrap(), "--row-group-size", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "no data on stdout with --out");
    let v = python(DUCKDB_PARQUET, &file);
    assert_eq!(v["count"], 5);
    // 10.00 + 10.25 + 10.50 + 10.75 + 11.00
    assert_eq!(v["sum"], "52.50");
    assert_eq!(v["ts_type"], "TIMESTAMP WITH TIME ZONE");
    assert_eq!(v["amount_type"], "DECIMAL(10,2)");
    assert_eq!(v["partitions"], 2);
    assert_eq!(v["first"], serde_json::json!(["o-0000", "Ghent", "NEW"]));
    assert_eq!(v["compression"], "ZSTD");
    assert!(v["row_groups"].as_i64().unwrap() >= 2, "{v}");
    let leftovers: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn tail_threads_encodes_the_same_parquet_bytes_at_every_count_and_needs_parquet() {
    // One partition: how two partitions' fetches interleave is the broker's choice,
    // so byte identity across thread counts is only defined for one (12 records of 24).
    let o = orders(24);
    let dir = temp_dir();
    let files: Vec<Vec<u8>> = ["1", "2", "4"]
        .iter()
        .map(|threads| {
            let file = dir.path().join(format!("orders-{threads}.parquet"));
            let out = o.tail_to_end(&[
                "--out",
                file.to_str().unwrap(),
                "--row-group-size",
                "3",
                "--threads",
                threads,
                "-p",
                "0",
            ]);
            assert!(
                out.status.success(),
                "--threads {threads}: {}",
                stderr(&out)
            );
            std::fs::read(&file).unwrap()
        })
        .collect();
    assert!(
        files[1] == files[0],
        "--threads 2 Parquet differs from --threads 1"
    );
    assert!(
        files[2] == files[0],
        "--threads 4 Parquet differs from --threads 1"
    );
    let v = python(DUCKDB_PARQUET, &dir.path().join("orders-4.parquet"));
    assert_eq!(v["count"], 12);
    assert!(v["row_groups"].as_i64().unwrap() >= 4, "{v}");
    // The same flag as run's: a count of 0 is refused; a format with no
    // Parquet encoding has no use for it and is refused, not ignored.
    for (args, needle) in [
        (
            &[
                "--format",
                "parquet",
                "--out",
                "x.parquet",
                "--threads",
                "0",
            ][..],
            "thread count",
        ),
        (
            &["--format", "ndjson", "--threads", "2"][..],
            "--threads sets the threads Parquet",
        ),
    ] {
        let out = o.tail_to_end(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn parquet_rotates_by_rows_into_numbered_complete_files() {
    let o = orders(5);
    let dir = temp_dir();
    let file = dir.path().join("orders.parquet");
    let out = o.tail_to_end(&[
        "--out",
        file.to_str().unwrap(),
        "--rotate-rows",
        "2",
        "--batch-records",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pattern = dir.path().join("orders-*.parquet");
    let v = python(DUCKDB_PARQUET, &pattern);
    assert_eq!(v["count"], 5);
    assert!(v["files"].as_i64().unwrap() >= 3, "{v}");
}

#[test]
fn ndjson_carries_utf8_keys_as_text_and_nested_values_as_json_objects() {
    let o = orders(2);
    let out = o.tail_to_end(&["--format", "ndjson", "-p", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    let row = &lines[0];
    assert_eq!(
        row["address"],
        serde_json::json!({"city": "Ghent", "zip": "9000"})
    );
    // A raw key that is valid UTF-8 is its text, as kcat prints it.
    assert_eq!(row["__key"], "alice");
    assert_eq!(row["__headers"], serde_json::json!({"source": "web"}));
    assert_eq!(row["amount"], "10.00");
    assert_eq!(row["ts"], "2024-11-29T09:00:00Z");
    assert_eq!(row["__partition"], 0);
    let first_key = text.lines().next().unwrap().split(':').next().unwrap();
    assert_eq!(first_key, "{\"order_id\"", "columns keep the schema order");
}

#[test]
fn positions_filters_and_projection_select_records_and_columns() {
    let broker = Tansu::start();
    let topic = unique_name("plain");
    create_topic(&broker.bootstrap(), &topic, 1);
    let records: Vec<Rec> = (0..6)
        .map(|i| Rec {
            partition: 0,
            key: Some(format!("user-{}", i % 3).into_bytes()),
            value: Some(format!("v{i}").into_bytes()),
            headers: vec![("kind", if i % 2 == 0 { "even" } else { "odd" })],
            ts: BASE_TS + i * 1000,
        })
        .collect();
    produce(&broker.bootstrap(), &topic, &records);
    let run = |args: &[&str]| -> Vec<Value> {
        let mut all = vec![
            topic.as_str(),
            "--value-format",
            "string",
            "--format",
            "ndjson",
        ];
        all.extend_from_slice(args);
        let out = tail(&broker.bootstrap(), &all);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let values = |rows: &[Value]| {
        rows.iter()
            .map(|r| r["value"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&run(&["--from", "1:3"])), ["v1", "v2"]);
    assert_eq!(values(&run(&["--from", "-2", "-e"])), ["v4", "v5"]);
    assert_eq!(values(&run(&["--from", "+4", "-e"])), ["v4", "v5"]);
    assert_eq!(values(&run(&["-e", "-n", "2"])), ["v0", "v1"]);
    // Tansu answers ListOffsets by timestamp with the log start, so a time start is only checked
    // to parse and read to the end here (the grammar itself is unit-tested).
    assert_eq!(
        run(&["--from", &format!("@{}:end", BASE_TS + 3000)]).len(),
        6
    );
    assert_eq!(
        values(&run(&[
            "-e",
            "--key-glob",
            "user-[12]",
            "--header",
            "kind=odd"
        ])),
        ["v1", "v5"]
    );
    let projected = run(&["-e", "-n", "1", "--columns", "__offset,value"]);
    assert_eq!(
        projected[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["__offset", "value"]
    );
    let out = tail(
        &broker.bootstrap(),
        &[&topic, "-e", "--columns", "nope", "--format", "ndjson"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("Arrow column does not exist: nope"));
}

#[test]
fn an_undecodable_record_fails_naming_topic_partition_and_offset_unless_skipped_or_dead_lettered() {
    let o = orders(3);
    // A record that is not Confluent-framed at offset 2 of partition 0.
    produce(
        &o.broker.bootstrap(),
        &o.topic,
        &[Rec {
            partition: 0,
            key: None,
            value: Some(b"not avro".to_vec()),
            headers: vec![],
            ts: BASE_TS,
        }],
    );
    let reg = o.registry.url();
    let dir = temp_dir();
    let out_file = dir.path().join("x.arrows");
    let base = [
        o.topic.as_str(),
        "-e",
        "--value-format",
        "avro",
        "--registry",
        reg.as_str(),
    ];
    let mut args = base.to_vec();
    args.extend(["--out", out_file.to_str().unwrap()]);
    let failed = tail(&o.broker.bootstrap(), &args);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains(&format!("{}/0 offset 2", o.topic)),
        "{}",
        stderr(&failed)
    );
    assert!(
        stderr(&failed).contains("invalid schema frame magic byte 0x6e"),
        "{}",
        stderr(&failed)
    );
    assert!(!out_file.exists(), "a failed tail publishes no file");

    let mut args = base.to_vec();
    args.extend(["--on-error", "skip", "--format", "ndjson"]);
    let skipped = tail(&o.broker.bootstrap(), &args);
    assert!(skipped.status.success(), "{}", stderr(&skipped));
    assert_eq!(String::from_utf8_lossy(&skipped.stdout).lines().count(), 3);
    assert!(
        stderr(&skipped).contains("1 undecodable skipped"),
        "{}",
        stderr(&skipped)
    );

    let dlq = dir.path().join("dlq.ndjson");
    let mut args = base.to_vec();
    args.extend([
        "--on-error",
        "dead-letter",
        dlq.to_str().unwrap(),
        "--format",
        "ndjson",
    ]);
    let dead = tail(&o.broker.bootstrap(), &args);
    assert!(dead.status.success(), "{}", stderr(&dead));
    let line: Value = serde_json::from_str(std::fs::read_to_string(&dlq).unwrap().trim()).unwrap();
    assert_eq!(line["offset"], 2);
    assert_eq!(line["value"], "bm90IGF2cm8="); // base64("not avro")
    let names: Vec<&str> = line["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "krabka.error.class",
            "krabka.error.message",
            "krabka.source.topic",
            "krabka.source.partition",
            "krabka.source.offset"
        ]
    );
}

#[test]
fn group_mode_until_end_exits_and_a_second_run_starts_after_the_commits() {
    let broker = Tansu::start();
    let topic = unique_name("grouped");
    create_topic(&broker.bootstrap(), &topic, 2);
    produce(&broker.bootstrap(), &topic, &value_records(4, 2));
    let group = unique_name("tail-group");
    let args = [
        topic.as_str(),
        "-g",
        group.as_str(),
        "-e",
        "--format",
        "ndjson",
    ];
    let first = tail(&broker.bootstrap(), &args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(String::from_utf8_lossy(&first.stdout).lines().count(), 4);
    let second = tail(&broker.bootstrap(), &args);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(
        String::from_utf8_lossy(&second.stdout).lines().count(),
        0,
        "{}",
        stderr(&second)
    );
    assert!(stderr(&second).contains("Processed a total of 0 records"));
}

#[test]
fn where_keeps_the_rows_a_sql_predicate_over_payload_and_metadata_columns_selects() {
    let o = orders(6);
    let registry = o.registry.url();
    let run = |predicate: &str| {
        tail(
            &o.broker.bootstrap(),
            &[
                &o.topic,
                "-e",
                "--value-format",
                "avro",
                "--registry",
                &registry,
                "--format",
                "ndjson",
                "--where",
                predicate,
            ],
        )
    };
    let ids = |out: &Output| {
        let mut ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["order_id"].to_string())
            .collect();
        ids.sort();
        ids
    };
    // Order i: quantity i + 1, partition i % 2, user alice/bob/carol by i % 3, status by i % 3.
    let out = run("quantity > 2 AND __partition = 1 AND user <> 'carol'");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ids(&out), ["\"o-0003\""]);
    assert!(stderr(&out).contains("Processed a total of 1 records"));
    let out = run("status = 'PAID' OR (quantity > 5 AND __offset >= 0)");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ids(&out), ["\"o-0001\"", "\"o-0004\"", "\"o-0005\""]);
    // amount is decimal(10, 2): 10.00 + 0.25 i.
    let out = run("amount >= 11.0 AND __partition = 0");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ids(&out), ["\"o-0004\""]);

    // Columns learned from the writer schema are checked before the first batch is written.
    for (predicate, message) in [
        ("nope > 1", "Arrow column does not exist: nope"),
        ("quantity + 1", "a filter predicate must be boolean"),
        ("user > 5", "invalid --where `user > 5`"),
    ] {
        let out = run(predicate);
        assert_eq!(out.status.code(), Some(2), "{predicate}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(message),
            "{predicate}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{predicate}: nothing is written");
    }
}

#[test]
fn usage_errors_exit_2_before_touching_the_broker() {
    let out = tail("127.0.0.1:1", &["t", "--from", "yesterday"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = tail("127.0.0.1:1", &["t", "--value-format", "avro"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs a schema registry"));
    let out = tail("127.0.0.1:1", &["t", "--key-format", "arrow"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = tail("127.0.0.1:1", &["t", "--where", "value = "]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("invalid --where"), "{}", stderr(&out));
    // Columns fixed by the formats (here `value` of the string codec) are checked at once.
    let out = tail(
        "127.0.0.1:1",
        &["t", "--value-format", "string", "--where", "nope = 'x'"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Arrow column does not exist: nope"),
        "{}",
        stderr(&out)
    );
}

const PYARROW_PARQUET_ROWS: &str = r#"
import sys, json, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(json.dumps({"rows": t.num_rows, "ts": str(t.schema.field('ts').type)}))
"#;

#[test]
fn ctrl_c_closes_the_parquet_writer_so_the_file_is_readable() {
    let o = orders(4);
    let dir = temp_dir();
    let file = dir.path().join("follow.parquet");
    let child = Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .args([
            "tail",
            &o.topic,
            "--value-format",
            "avro",
            "--registry",
            &o.registry.url(),
        ])
        .args(["--out", file.to_str().unwrap(), "-b", &o.broker.bootstrap()])
        .env_remove("KRABKA_OUTPUT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Following forever: give it time to read the four records, then interrupt.
    std::thread::sleep(Duration::from_secs(6));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Processed a total of 4 records"),
        "{}",
        stderr(&out)
    );
    let v = python(PYARROW_PARQUET_ROWS, &file);
    assert_eq!(v["rows"], 4);
    assert_eq!(v["ts"], "timestamp[us, tz=UTC]");
}
