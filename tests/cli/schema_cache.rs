//! `tail --schema-cache` (and `run`, see run_schema_cache.rs): the file `schema prewarm --write-cache` writes, loaded at
//! startup so prewarmed ids need no registry round trip; ids the file lacks are
//! fetched once each in the background, or fail their record when the registry is
//! down; a broken file is refused by name before the broker is touched.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::{Registry, SchemaSpec};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use serde_json::Value;

use crate::support::binary;
use crate::tail::{BASE_TS, ORDER_SCHEMA, Orders, Rec, order_body, orders, produce, stderr};

/// `ORDER_SCHEMA` plus one optional field: its body is an order body and a 0 (null).
const ORDER_V2_SCHEMA_TAIL: &str =
    r#",{"name":"channel","type":["null","string"],"default":null}]}"#;

fn order_v2_schema() -> String {
    let trimmed = ORDER_SCHEMA.trim_end().strip_suffix("]}").unwrap();
    format!("{trimmed}{ORDER_V2_SCHEMA_TAIL}")
}

fn krabka(args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_SCHEMA_CACHE")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

/// `schema prewarm --mode use-latest --write-cache` for the orders value subject.
fn prewarm(o: &Orders, dir: &Path) -> std::path::PathBuf {
    let avsc = dir.join("order.avsc");
    std::fs::write(&avsc, ORDER_SCHEMA).unwrap();
    let cache = dir.join("schema-cache.json");
    let url = o.registry.url();
    let out = krabka(&[
        "schema",
        "prewarm",
        "--registry",
        &url,
        "--subject",
        &format!("{}-value", o.topic),
        "--schema-file",
        avsc.to_str().unwrap(),
        "--mode",
        "use-latest",
        "--write-cache",
        cache.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    cache
}

/// `tail -e` of the topic to NDJSON on stdout with Avro values, plus `extra` flags.
fn tail_ndjson(o: &Orders, extra: &[&str]) -> Output {
    let bootstrap = o.broker.bootstrap();
    let mut args = vec![
        "tail",
        o.topic.as_str(),
        "-e",
        "--value-format",
        "avro",
        "--format",
        "ndjson",
        "-b",
        bootstrap.as_str(),
    ];
    args.extend(extra);
    krabka(&args)
}

fn rows(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
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
fn a_prewarmed_cache_decodes_every_record_with_the_registry_stopped_or_absent() {
    let mut o = orders(6);
    let dir = tempfile::tempdir().unwrap();
    let cache = prewarm(&o, dir.path());
    let dead_url = o.registry.url();
    o.registry.shutdown();
    for registry in [Some(dead_url.as_str()), None] {
        let mut extra = vec!["--schema-cache", cache.to_str().unwrap()];
        if let Some(url) = registry {
            extra.extend(["--registry", url]);
        }
        let out = tail_ndjson(&o, &extra);
        assert!(out.status.success(), "{registry:?}: {}", stderr(&out));
        let mut ids: Vec<String> = rows(&out)
            .iter()
            .map(|r| r["order_id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        assert_eq!(
            ids,
            ["o-0000", "o-0001", "o-0002", "o-0003", "o-0004", "o-0005"]
        );
    }
    // The same file through the environment.
    let out = Command::new(binary())
        .args([
            "tail",
            &o.topic,
            "-e",
            "--value-format",
            "avro",
            "--format",
            "ndjson",
        ])
        .args(["-b", &o.broker.bootstrap()])
        .env("KRABKA_SCHEMA_CACHE", &cache)
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&out).len(), 6);
}

/// Registers the v2 schema under another subject and appends one v2 order at
/// partition 0 (offset 3 after `orders(6)`); answers its id.
fn append_v2_order(o: &Orders, i: i64) -> i32 {
    let client = HttpRegistry::new(HttpRegistryOptions::new(o.registry.url())).unwrap();
    let id = client
        .register(
            &format!("{}-v2", o.topic),
            &SchemaSpec {
                schema: order_v2_schema(),
                ..Default::default()
            },
        )
        .unwrap();
    let v1 = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let mut body = order_body(&v1, i);
    body.push(0); // channel: null
    produce(
        &o.broker.bootstrap(),
        &o.topic,
        &[Rec {
            partition: 0,
            key: None,
            value: Some(framing::encode(id as u32, &body)),
            headers: vec![],
            ts: BASE_TS,
        }],
    );
    id
}

#[test]
fn an_id_missing_from_the_cache_fails_with_its_position_and_id_when_the_registry_is_down() {
    let mut o = orders(6);
    let dir = tempfile::tempdir().unwrap();
    let cache = prewarm(&o, dir.path());
    let v2 = append_v2_order(&o, 6);
    let dead_url = o.registry.url();
    o.registry.shutdown();
    let cache = cache.to_str().unwrap();
    let position = format!("{}/0 offset 3", o.topic);

    let down = tail_ndjson(
        &o,
        &[
            "--schema-cache",
            cache,
            "--registry",
            &dead_url,
            "--timeout",
            "2s",
        ],
    );
    assert_eq!(down.status.code(), Some(4), "{}", stderr(&down));
    let message = stderr(&down);
    assert!(message.contains(&position), "{message}");
    assert!(
        message.contains(&format!("writer schema for id {v2} is pending fetch")),
        "{message}"
    );
    assert!(
        message.contains("schema registry is reachable"),
        "{message}"
    );

    let offline = tail_ndjson(&o, &["--schema-cache", cache]);
    assert_eq!(offline.status.code(), Some(1), "{}", stderr(&offline));
    let message = stderr(&offline);
    assert!(
        message.contains(&format!(
            "cannot decode the value of {position}: writer schema for id {v2} is not cached and no schema registry is configured"
        )),
        "{message}"
    );
}

#[test]
fn ids_missing_from_the_cache_are_fetched_once_each_and_cached_ids_never() {
    let o = orders(6);
    let dir = tempfile::tempdir().unwrap();
    let cache = prewarm(&o, dir.path());
    let v1 = HttpRegistry::new(HttpRegistryOptions::new(o.registry.url()))
        .unwrap()
        .latest(&format!("{}-value", o.topic))
        .unwrap()
        .id;
    let v2_ids: Vec<i32> = (6..10).map(|i| append_v2_order(&o, i)).collect();
    let v2 = v2_ids[0];
    assert!(
        v2_ids.iter().all(|id| *id == v2),
        "registering again keeps the id"
    );
    o.registry.clear_requests();
    let url = o.registry.url();
    let out = tail_ndjson(
        &o,
        &[
            "--schema-cache",
            cache.to_str().unwrap(),
            "--registry",
            &url,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&out).len(), 10);
    assert_eq!(schema_fetches(&o, v1), 0, "{:?}", o.registry.requests());
    assert_eq!(schema_fetches(&o, v2), 1, "{:?}", o.registry.requests());
}

#[test]
fn a_corrupt_or_truncated_cache_file_exits_2_naming_the_file_before_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(
        &truncated,
        r#"{"format":"krabka-streams-schema-cache","version":1,"schemas":{"1":{"sche"#,
    )
    .unwrap();
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"format":"something-else","version":1}"#).unwrap();
    let bad_id = dir.path().join("bad-id.json");
    std::fs::write(
        &bad_id,
        r#"{"format":"krabka-streams-schema-cache","version":1,"schemas":{"x":{"schema":"\"string\""}}}"#,
    )
    .unwrap();
    for (file, why) in [
        (&truncated, "not a schema cache file: EOF while parsing"),
        (&foreign, "format is \"something-else\""),
        (&bad_id, "schema id \"x\" is not an unsigned 32-bit integer"),
    ] {
        let topology = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/topologies/large-orders-by-user.yaml"
        );
        for command in [
            vec![
                "tail",
                "t",
                "--value-format",
                "avro",
                "--format",
                "ndjson",
                "-b",
                "127.0.0.1:1",
            ],
            vec!["run", "--check", topology],
            vec!["run", topology, "-b", "127.0.0.1:1"],
        ] {
            let mut args = command.clone();
            args.extend(["--schema-cache", file.to_str().unwrap()]);
            let out = krabka(&args);
            let message = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{message}");
            assert!(
                message.contains(&format!("schema cache {}: {why}", file.display())),
                "{message}"
            );
            assert!(!message.contains("panicked"), "{message}");
        }
    }
}
