//! `run FILE -b … --schema-cache FILE`: the online runner decodes registry-framed
//! source records (Avro, Protobuf) with the writer schemas `schema prewarm
//! --write-cache` stored, so a prewarmed id costs no registry round trip and the
//! registry may be stopped or absent while the topology runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec, SchemaType};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::{Value, json};

use crate::run_online::interrupt;

use crate::support::tansu::Tansu;
use crate::support::{binary, unique_name};
use crate::tail::{BASE_TS, ORDER_SCHEMA, Orders, Rec, create_topic, orders, produce, stderr};

const TIMEOUT: Duration = Duration::from_secs(30);

/// `schema prewarm --write-cache` of `subject` with the schema `file_name` holding
/// `text` (its extension tells the kind); answers the cache file.
fn prewarm(registry: &str, subject: &str, file_name: &str, text: &str, dir: &Path) -> PathBuf {
    let schema = dir.join(file_name);
    std::fs::write(&schema, text).unwrap();
    let cache = dir.join(format!("{file_name}.cache.json"));
    let out = Command::new(binary())
        .args(["schema", "prewarm", "--registry", registry])
        .args(["--subject", subject])
        .args([
            "--schema-file",
            schema.to_str().unwrap(),
            "--mode",
            "use-latest",
        ])
        .args(["--write-cache", cache.to_str().unwrap()])
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    cache
}

/// `columns` of `source` records decoded by `codec`, as JSON on `sink`, in a fresh
/// consumer group.
fn topology(dir: &Path, source: &str, codec: &str, columns: &str, sink: &str) -> PathBuf {
    let path = dir.join(format!("{sink}.yaml"));
    let text = format!(
        r#"version: 1
settings:
  consumer_group: {group}
nodes:
  - source: orders
    topics: [{source}]
    value: {codec}
  - select: slim
    parent: orders
    columns: [{columns}]
  - sink: slim-orders
    parent: slim
    topic: {sink}
    value: json
"#,
        group = unique_name("group")
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn start_runner(bootstrap: &str, topology: &Path, extra: &[&str]) -> Child {
    Command::new(binary())
        .args(["run", topology.to_str().unwrap(), "-b", bootstrap])
        .args(["-X", "linger.ms=0", "-X", "batch.num.messages=1"])
        .args(extra)
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_SCHEMA_CACHE")
        .env_remove("KRABKA_OUTPUT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The sink records of `topic` by their `id` column, once `n` are there or the
/// deadline passed.
fn sunk(bootstrap: &str, topic: &str, id: &str, n: usize) -> BTreeMap<String, Value> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", unique_name("reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let mut by_id = BTreeMap::new();
    let until = Instant::now() + TIMEOUT;
    while Instant::now() < until && by_id.len() < n {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let v: Value = serde_json::from_slice(m.payload().unwrap_or(b"null")).unwrap();
            by_id.insert(v[id].as_str().unwrap_or("").to_owned(), v);
        }
    }
    by_id
}

/// What `tail::orders(6)` holds, as the topology writes it.
fn expected() -> BTreeMap<String, Value> {
    (0..6)
        .map(|i| {
            let id = format!("o-{i:04}");
            let user = ["alice", "bob", "carol"][i % 3];
            let v = json!({"order_id": id, "user": user, "quantity": i + 1});
            (id, v)
        })
        .collect()
}

const AVRO_COLUMNS: &str = "order_id, user, quantity";

fn schema_fetches(o: &Orders, id: i32) -> usize {
    let path = format!("/schemas/ids/{}", id as u32);
    o.registry
        .requests()
        .iter()
        .filter(|(method, p)| method == "GET" && *p == path)
        .count()
}

#[test]
fn a_prewarmed_cache_runs_avro_sources_online_with_no_fetch_and_with_the_registry_stopped_or_absent()
 {
    let mut o = orders(6);
    let bootstrap = o.broker.bootstrap();
    let dir = tempfile::tempdir().unwrap();
    let subject = format!("{}-value", o.topic);
    let cache = prewarm(
        &o.registry.url(),
        &subject,
        "order.avsc",
        ORDER_SCHEMA,
        dir.path(),
    );
    let cache = cache.to_str().unwrap();
    let id = HttpRegistry::new(HttpRegistryOptions::new(o.registry.url()))
        .unwrap()
        .latest(&format!("{}-value", o.topic))
        .unwrap()
        .id;

    // Registry up: the cached id is never asked for.
    o.registry.clear_requests();
    let sink = unique_name("slim");
    create_topic(&bootstrap, &sink, 1);
    let url = o.registry.url();
    let runner = start_runner(
        &bootstrap,
        &topology(dir.path(), &o.topic, "avro", AVRO_COLUMNS, &sink),
        &["--registry", &url, "--schema-cache", cache],
    );
    let read = sunk(&bootstrap, &sink, "order_id", 6);
    let out = interrupt(runner);
    assert_eq!(read, expected(), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(schema_fetches(&o, id), 0, "{:?}", o.registry.requests());

    // Registry stopped (its URL still given), then absent.
    o.registry.shutdown();
    for registry in [Some(url.as_str()), None] {
        let sink = unique_name("slim");
        create_topic(&bootstrap, &sink, 1);
        let mut extra = vec!["--schema-cache", cache];
        if let Some(url) = registry {
            extra.extend(["--registry", url]);
        }
        let runner = start_runner(
            &bootstrap,
            &topology(dir.path(), &o.topic, "avro", AVRO_COLUMNS, &sink),
            &extra,
        );
        let read = sunk(&bootstrap, &sink, "order_id", 6);
        let out = interrupt(runner);
        assert_eq!(read, expected(), "{registry:?}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    }
}

const PAYMENT_PROTO: &str = r#"syntax = "proto3";
package shop;
message Payment { string id = 1; int32 cents = 2; }
"#;

/// A `shop.Payment` body: field 1 (string) and field 2 (varint), hand-encoded.
fn payment_body(id: &str, cents: u8) -> Vec<u8> {
    let mut body = vec![0x0a, id.len() as u8];
    body.extend(id.as_bytes());
    body.extend([0x10, cents]);
    body
}

#[test]
fn a_protobuf_source_runs_online_from_a_prewarmed_cache_with_no_registry() {
    let broker = Tansu::start();
    let bootstrap = broker.bootstrap();
    let mut registry = RegistryServer::start(RegistryServerOptions::default()).unwrap();
    let (topic, sink) = (unique_name("payments"), unique_name("payments-json"));
    create_topic(&bootstrap, &topic, 1);
    create_topic(&bootstrap, &sink, 1);
    let subject = format!("{topic}-value");
    let id = HttpRegistry::new(HttpRegistryOptions::new(registry.url()))
        .unwrap()
        .register(
            &subject,
            &SchemaSpec {
                schema: PAYMENT_PROTO.into(),
                schema_type: SchemaType::Protobuf,
                ..Default::default()
            },
        )
        .unwrap();
    let records: Vec<Rec> = [("p1", 5u8), ("p2", 120)]
        .iter()
        .map(|(pid, cents)| Rec {
            partition: 0,
            key: Some(pid.as_bytes().to_vec()),
            value: Some(
                framing::encode_protobuf(id as u32, &[0], &payment_body(pid, *cents)).unwrap(),
            ),
            headers: vec![],
            ts: BASE_TS,
        })
        .collect();
    produce(&bootstrap, &topic, &records);
    let dir = tempfile::tempdir().unwrap();
    let cache = prewarm(
        &registry.url(),
        &subject,
        "payment.proto",
        PAYMENT_PROTO,
        dir.path(),
    );
    registry.shutdown();

    let topology = topology(dir.path(), &topic, "protobuf", "id, cents", &sink);
    let runner = start_runner(
        &bootstrap,
        &topology,
        &["--schema-cache", cache.to_str().unwrap()],
    );
    let read = sunk(&bootstrap, &sink, "id", 2);
    let out = interrupt(runner);
    assert_eq!(
        read.into_values().collect::<Vec<_>>(),
        [
            json!({"id": "p1", "cents": 5}),
            json!({"id": "p2", "cents": 120})
        ],
        "{}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
}
