//! `registry.json` (semantics §1–2): every vector against the in-repo registry server
//! over real HTTP, through the HTTP client, the schema cache and prewarm.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use krabka_streams::engine::schema::avro::AvroSerde;
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::error::SchemaError;
use krabka_streams::engine::schema::prewarm::{PrewarmMode, prewarm};
use krabka_streams::engine::schema::registry::{Registry, SchemaReference, SchemaSpec, SchemaType};
use krabka_streams::io::registry_client::{HttpRegistry, HttpRegistryOptions};
use krabka_streams::io::registry_server::{RegistryServer, RegistryServerOptions, SchemaRecord};

use crate::support::{id, load};

fn vector(name: &str) -> Value {
    load("registry")
        .into_iter()
        .find(|v| id(v) == name)
        .unwrap_or_else(|| panic!("vector {name} missing from registry.json"))
}

fn client(server: &RegistryServer) -> Arc<HttpRegistry> {
    let mut opts = HttpRegistryOptions::new(server.url());
    opts.backoff = Duration::from_millis(5);
    Arc::new(HttpRegistry::new(opts).unwrap())
}

fn avro(text: &str) -> SchemaSpec {
    SchemaSpec {
        schema: text.into(),
        ..Default::default()
    }
}

/// Methods and raw paths with the subject segment replaced by `{s}`.
fn shapes(server: &RegistryServer, subject_segment: &str) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .map(|(m, p)| format!("{m} {}", p.replace(subject_segment, "{s}")))
        .collect()
}

#[test]
fn reg_register_avro_body() {
    let v = vector("REG-REGISTER-AVRO-BODY");
    let server = RegistryServer::start_default().unwrap();
    let schema = v["inputs"]["schema"].as_str().unwrap();
    client(&server).register("s-value", &avro(schema)).unwrap();
    let log = server.request_log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].method, v["expected"]["method"]);
    assert_eq!(
        log[0].path.replace("s-value", "{s}"),
        v["expected"]["path"].as_str().unwrap()
    );
    let body = log[0].body_json().unwrap();
    for k in v["expected"]["body_keys"].as_array().unwrap() {
        assert!(body.get(k.as_str().unwrap()).is_some(), "{body}");
    }
    for k in v["expected"]["absent_keys"].as_array().unwrap() {
        assert!(body.get(k.as_str().unwrap()).is_none(), "{body}");
    }
    assert_eq!(
        log[0].header("Content-Type"),
        Some("application/vnd.schemaregistry.v1+json")
    );
    assert_eq!(
        log[0].header("Accept"),
        Some("application/vnd.schemaregistry.v1+json")
    );
}

#[test]
fn reg_register_proto_body() {
    let v = vector("REG-REGISTER-PROTO-BODY");
    let server = RegistryServer::start_default().unwrap();
    let spec = SchemaSpec {
        schema: "syntax = \"proto3\"; package demo; message Order { string id = 1; }".into(),
        schema_type: SchemaType::Protobuf,
        message_type: Some(v["inputs"]["message_type"].as_str().unwrap().into()),
        references: vec![],
    };
    client(&server).register("o-value", &spec).unwrap();
    let body = server.request_log()[0].body_json().unwrap();
    for (k, want) in v["expected"]["body_contains"].as_object().unwrap() {
        assert_eq!(&body[k], want, "{k}");
    }
}

#[test]
fn reg_latest_parse() {
    let v = vector("REG-LATEST-PARSE");
    let r = &v["inputs"]["response"];
    let e = &v["expected"];
    let server = RegistryServer::start_default().unwrap();
    let record = SchemaRecord::protobuf(
        r["schema"].as_str().unwrap(),
        r["messageType"].as_str().unwrap(),
    );
    // Version 1 is another schema, so the vector's schema becomes version 2 under id 43.
    server.seed_id(43, record.clone());
    server.seed("demo-value", SchemaRecord::avro("\"long\""));
    server.seed("demo-value", record);
    let got = client(&server).latest("demo-value").unwrap();
    assert_eq!(i64::from(got.id), e["id"].as_i64().unwrap());
    assert_eq!(got.version.map(i64::from), e["version"].as_i64());
    assert_eq!(got.spec.schema, e["schema"].as_str().unwrap());
    assert_eq!(
        got.spec.schema_type.to_string(),
        e["schemaType"].as_str().unwrap()
    );
    assert_eq!(got.spec.message_type.as_deref(), e["messageType"].as_str());
}

#[test]
fn reg_404_error() {
    let v = vector("REG-404-ERROR");
    let server = RegistryServer::start_default().unwrap();
    let status = v["inputs"]["status"].as_u64().unwrap() as u16;
    server.respond_next(1, status, v["inputs"]["body"].as_str().unwrap());
    let e = client(&server).schema_by_id(7).unwrap_err();
    assert_eq!(
        i64::from(e.status),
        v["expected"]["status_code"].as_i64().unwrap()
    );
    assert!(
        e.message
            .contains(v["expected"]["message_contains"].as_str().unwrap())
    );
    assert_eq!(
        e.message,
        v["expected"]["message_template"].as_str().unwrap()
    );
    assert!(!e.is_retriable());
    assert_eq!(
        server.requests(),
        vec![("GET".into(), "/schemas/ids/7".into())]
    );
}

#[test]
fn reg_context_path() {
    let v = vector("REG-CONTEXT-PATH");
    let prefix = v["expected"]["path_prefix"].as_str().unwrap();
    let context = v["inputs"]["base_url"]
        .as_str()
        .unwrap()
        .parse::<ureq::http::Uri>()
        .unwrap()
        .path()
        .to_string();
    let server =
        RegistryServer::start(RegistryServerOptions::default().context_path(&context)).unwrap();
    let c = client(&server);
    c.register("ctx-value", &avro("\"string\"")).unwrap();
    assert_eq!(c.subjects().unwrap(), vec!["ctx-value".to_string()]);
    c.latest("ctx-value").unwrap();
    for (_, path) in server.requests() {
        assert!(path.starts_with(prefix), "{path} lacks {prefix}");
    }
}

#[test]
fn reg_retries_500() {
    let v = vector("REG-RETRIES-500");
    let server = RegistryServer::start_default().unwrap();
    let status = v["inputs"]["status"].as_u64().unwrap() as u16;
    server.fail_next(100, status);
    let mut opts = HttpRegistryOptions::new(server.url());
    opts.max_retries = v["inputs"]["max_retries"].as_u64().unwrap() as u32;
    opts.backoff = Duration::from_millis(5);
    let e = HttpRegistry::new(opts).unwrap().subjects().unwrap_err();
    assert_eq!(
        i64::from(e.status),
        v["expected"]["status_code"].as_i64().unwrap()
    );
    assert_eq!(
        server.requests().len() as i64,
        v["expected"]["requests"].as_i64().unwrap()
    );
}

fn prewarm_one(
    server: &RegistryServer,
    subject: &str,
    spec: SchemaSpec,
    mode: PrewarmMode,
) -> (SchemaCache, i32) {
    let cache = SchemaCache::new(client(server));
    cache.intern(subject, spec);
    server.clear_requests();
    let report = prewarm(&cache, mode).unwrap();
    assert!(report.successful(), "{:?}", report.failures);
    (cache.clone(), report.resolved_ids()[subject])
}

#[test]
fn reg_cache_auto() {
    let v = vector("REG-CACHE-AUTO");
    let server = RegistryServer::start_default().unwrap();
    let want = v["inputs"]["registry_id"].as_u64().unwrap() as u32;
    server.seed_id(want - 1, SchemaRecord::avro("\"boolean\""));
    let (cache, got) = prewarm_one(
        &server,
        "auto-value",
        avro("\"string\""),
        PrewarmMode::AutoRegister,
    );
    assert_eq!(got as u32, want);
    assert_eq!(i64::from(got), v["expected"]["id"].as_i64().unwrap());
    assert_eq!(
        shapes(&server, "auto-value"),
        str_list(&v["expected"]["requests"])
    );
    assert_eq!(cache.writer_schema(got).unwrap().text, "\"string\"");
}

fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn reg_cache_lookup() {
    let v = vector("REG-CACHE-LOOKUP");
    let server = RegistryServer::start_default().unwrap();
    let want = v["inputs"]["registry_id"].as_u64().unwrap() as u32;
    server.seed_id(want, SchemaRecord::avro("\"string\""));
    server.seed("look-value", SchemaRecord::avro("\"string\""));
    let (_, got) = prewarm_one(
        &server,
        "look-value",
        avro("\"string\""),
        PrewarmMode::LookupOnly,
    );
    assert_eq!(got as u32, want);
    assert_eq!(
        shapes(&server, "look-value"),
        str_list(&v["expected"]["requests"])
    );
}

#[test]
fn reg_cache_latest() {
    let v = vector("REG-CACHE-LATEST");
    let i = &v["inputs"];
    let server = RegistryServer::start_default().unwrap();
    let want = i["registry_id"].as_u64().unwrap() as u32;
    let text = "syntax = \"proto3\"; package demo; message Latest { string id = 1; }";
    let record = SchemaRecord::protobuf(text, i["registry_message_type"].as_str().unwrap());
    server.seed_id(want, record.clone());
    server.seed("latest-value", record);
    let local = SchemaSpec {
        schema: "syntax = \"proto3\"; package demo; message Local { string id = 1; }".into(),
        schema_type: SchemaType::Protobuf,
        message_type: Some(i["local_message_type"].as_str().unwrap().into()),
        references: vec![],
    };
    let (cache, got) = prewarm_one(
        &server,
        "latest-value",
        local.clone(),
        PrewarmMode::UseLatest,
    );
    assert_eq!(got as u32, want);
    assert_eq!(
        shapes(&server, "latest-value"),
        str_list(&v["expected"]["requests"])
    );
    let w = cache.writer_schema(got).unwrap();
    assert_eq!(
        w.message_type.as_deref(),
        v["expected"]["message_type"].as_str()
    );
    // D6: the local text is cached under the registry's id for serialising.
    assert_eq!(w.text, local.schema);
}

#[test]
fn reg_cache_pending() {
    let v = vector("REG-CACHE-PENDING");
    let e = &v["expected"];
    let server = RegistryServer::start_default().unwrap();
    let (wid, reg) = v["inputs"]["registry"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let wid: u32 = wid.parse().unwrap();
    server.seed_id(
        wid,
        SchemaRecord {
            schema: reg["schema"].as_str().unwrap().into(),
            schema_type: None,
            message_type: Some(reg["messageType"].as_str().unwrap().into()),
            references: vec![],
        },
    );
    // A slow registry keeps the first fetch in flight while the second call arrives.
    server.delay(Duration::from_millis(300));
    let cache = SchemaCache::new(client(&server));
    for want in e["results"].as_array().unwrap() {
        assert_eq!(want, "pending");
        let err = cache.writer_schema(wid as i32).unwrap_err();
        assert!(matches!(err, SchemaError::FetchPending(_)), "{err:?}");
        assert!(err.is_retriable(), "{}", e["retriable"]);
        assert_eq!(err.to_string(), e["error_message"].as_str().unwrap());
    }
    let w = cache
        .writer_schema_wait(wid as i32, Duration::from_secs(10))
        .unwrap();
    assert_eq!(w.text, e["then_cached"]["schema"].as_str().unwrap());
    assert_eq!(
        w.message_type.as_deref(),
        e["then_cached"]["messageType"].as_str()
    );
    assert!(!cache.is_fetching(wid as i32));
    // A hit after the fetch makes no request.
    cache.writer_schema(wid as i32).unwrap();
    let reqs: Vec<String> = server
        .requests()
        .into_iter()
        .map(|(m, p)| format!("{m} {p}"))
        .collect();
    assert_eq!(reqs.len() as i64, e["request_count"].as_i64().unwrap());
    assert_eq!(reqs, str_list(&e["requests"]));
}

#[test]
fn reg_prewarm_partial() {
    let v = vector("REG-PREWARM-PARTIAL");
    let e = &v["expected"];
    let server = RegistryServer::start_default().unwrap();
    let (good, want) = e["resolved"].as_object().unwrap().iter().next().unwrap();
    server.seed_id(
        want.as_u64().unwrap() as u32 - 1,
        SchemaRecord::avro("\"boolean\""),
    );
    let cache = SchemaCache::new(client(&server));
    let subjects = str_list(&v["inputs"]["subjects"]);
    for s in &subjects {
        let mut spec = avro("\"string\"");
        if s != good {
            // A reference to a subject the registry does not hold: 42201.
            spec.schema = "\"bytes\"".into();
            spec.references = vec![SchemaReference {
                name: "missing".into(),
                subject: "missing".into(),
                version: 1,
            }];
        }
        cache.intern(s, spec);
    }
    let report = prewarm(&cache, PrewarmMode::AutoRegister).unwrap();
    assert_eq!(report.successful(), e["successful"].as_bool().unwrap());
    assert_eq!(
        i64::from(report.resolved_ids()[good]),
        want.as_i64().unwrap()
    );
    for f in str_list(&e["failures_contain"]) {
        assert!(report.failures.contains_key(&f));
        assert!(report.joined_error().unwrap().contains(&format!("{f}: ")));
    }
    // The success stays cached although the other subject failed.
    assert_eq!(cache.subject_id(good), Some(want.as_i64().unwrap() as i32));
}

#[test]
fn reg_stub_ids() {
    let v = vector("REG-STUB-IDS");
    let server = RegistryServer::start_default().unwrap();
    let c = client(&server);
    let spec = avro("\"string\"");
    for (subject, key) in [("A", "first"), ("B", "second")] {
        let id = c.register(subject, &spec).unwrap();
        let version = c.lookup(subject, &spec).unwrap().version.unwrap();
        assert_eq!(i64::from(id), v["expected"][key]["id"].as_i64().unwrap());
        assert_eq!(
            i64::from(version),
            v["expected"][key]["version"].as_i64().unwrap()
        );
    }
}

#[test]
fn reg_escape() {
    let v = vector("REG-ESCAPE");
    let server = RegistryServer::start_default().unwrap();
    let subject = v["inputs"]["subject"].as_str().unwrap();
    let c = client(&server);
    c.register(subject, &avro("\"string\"")).unwrap();
    let (_, path) = &server.requests()[0];
    let segment = v["expected"]["path_segment"].as_str().unwrap();
    assert_eq!(path, &format!("/subjects/{segment}/versions"));
    // The server decodes it back to the same subject.
    assert_eq!(c.subjects().unwrap(), vec![subject.to_string()]);
}

#[test]
fn reg_unresolved_subject() {
    let v = vector("REG-UNRESOLVED-SUBJECT");
    let cache = SchemaCache::offline();
    let subject = v["inputs"]["subject"].as_str().unwrap();
    let serde = AvroSerde::new(&cache, subject, "\"string\"").unwrap();
    let e = serde.serialize(Some(&json!("x"))).unwrap_err();
    assert_eq!(
        e.to_string(),
        v["expected"]["error_message"].as_str().unwrap()
    );
    // A tombstone needs no id.
    assert_eq!(serde.serialize(None).unwrap(), None);
}

#[test]
fn every_registry_vector_is_checked() {
    let covered: BTreeSet<String> = [
        "REG-REGISTER-AVRO-BODY",
        "REG-REGISTER-PROTO-BODY",
        "REG-LATEST-PARSE",
        "REG-404-ERROR",
        "REG-CONTEXT-PATH",
        "REG-RETRIES-500",
        "REG-CACHE-AUTO",
        "REG-CACHE-LOOKUP",
        "REG-CACHE-LATEST",
        "REG-CACHE-PENDING",
        "REG-PREWARM-PARTIAL",
        "REG-STUB-IDS",
        "REG-ESCAPE",
        "REG-UNRESOLVED-SUBJECT",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    crate::support::assert_all_covered("registry", &covered);
}
