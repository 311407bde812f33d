//! `run FILE -b … --schema-cache FILE`: the online runner decodes Avro source
//! records with the writer schemas `schema prewarm --write-cache` stored, so a
//! prewarmed id costs no registry round trip and the registry may be stopped or
//! absent while the topology runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use krabka_streams::engine::schema::registry::Registry;
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::{Value, json};

use crate::support::{binary, unique_name};
use crate::tail::{ORDER_SCHEMA, Orders, create_topic, orders, stderr};

const TIMEOUT: Duration = Duration::from_secs(30);

/// `schema prewarm --write-cache` for the orders value subject; answers the file.
fn prewarm(o: &Orders, dir: &Path) -> std::path::PathBuf {
    let avsc = dir.join("order.avsc");
    std::fs::write(&avsc, ORDER_SCHEMA).unwrap();
    let cache = dir.join("schema-cache.json");
    let out = Command::new(binary())
        .args(["schema", "prewarm", "--registry", &o.registry.url()])
        .args(["--subject", &format!("{}-value", o.topic)])
        .args([
            "--schema-file",
            avsc.to_str().unwrap(),
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

/// Each order's id, user and quantity as JSON on `sink`, in a fresh consumer group.
fn topology(dir: &Path, source: &str, sink: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{sink}.yaml"));
    let text = format!(
        r#"version: 1
settings:
  consumer_group: {group}
nodes:
  - source: orders
    topics: [{source}]
    value: avro
  - select: slim
    parent: orders
    columns: [order_id, user, quantity]
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

/// Ctrl-C, then the runner's output.
fn interrupt(mut child: Child) -> Output {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let until = Instant::now() + TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            child.kill().unwrap();
            panic!("the runner did not stop within {TIMEOUT:?} of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The sink records of `topic` by order id, once all 6 orders are there or the
/// deadline passed.
fn sunk(bootstrap: &str, topic: &str) -> BTreeMap<String, Value> {
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
    while Instant::now() < until && by_id.len() < 6 {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let v: Value = serde_json::from_slice(m.payload().unwrap_or(b"null")).unwrap();
            by_id.insert(v["order_id"].as_str().unwrap_or("").to_owned(), v);
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
    let cache = prewarm(&o, dir.path());
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
        &topology(dir.path(), &o.topic, &sink),
        &["--registry", &url, "--schema-cache", cache],
    );
    let read = sunk(&bootstrap, &sink);
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
        let runner = start_runner(&bootstrap, &topology(dir.path(), &o.topic, &sink), &extra);
        let read = sunk(&bootstrap, &sink);
        let out = interrupt(runner);
        assert_eq!(read, expected(), "{registry:?}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    }
}
