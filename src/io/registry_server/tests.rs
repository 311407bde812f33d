//! The registry server over real HTTP, driven by a minimal HTTP/1.1 client written on
//! `std::net::TcpStream`, so the tests see exactly the bytes a registry client would.

use super::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// One parsed HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Asserts a registry error: status, `error_code`, and the registry content type.
    fn assert_error(&self, status: u16, code: u32) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.json()["error_code"], json!(code), "{self:?}");
        assert!(self.json()["message"].is_string(), "{self:?}");
        assert_eq!(self.header("Content-Type"), Some(CONTENT_TYPE));
    }
}

fn write_request(
    stream: &mut TcpStream,
    method: &str,
    target: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
    close: bool,
) -> std::io::Result<()> {
    let mut text =
        format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {CONTENT_TYPE}\r\n");
    for (n, v) in headers {
        text.push_str(&format!("{n}: {v}\r\n"));
    }
    if close {
        text.push_str("Connection: close\r\n");
    }
    if let Some(b) = body {
        text.push_str(&format!(
            "Content-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        ));
    } else {
        text.push_str("\r\n");
    }
    stream.write_all(text.as_bytes())
}

/// Reads one response framed by `Content-Length`; an EOF before the status line is an error.
fn read_answer(reader: &mut BufReader<TcpStream>) -> std::io::Result<Answer> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':').expect("header has a colon");
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
        .map(|(_, v)| v.parse().expect("numeric Content-Length"))
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(Answer {
        status,
        headers,
        body,
    })
}

fn connect(server: &RegistryServer) -> BufReader<TcpStream> {
    let stream = TcpStream::connect(server.addr()).expect("connect to the registry");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    BufReader::new(stream)
}

/// One request on a fresh connection with `Connection: close`.
fn try_call(
    server: &RegistryServer,
    method: &str,
    target: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> std::io::Result<Answer> {
    let mut reader = connect(server);
    write_request(reader.get_mut(), method, target, body, headers, true)?;
    read_answer(&mut reader)
}

fn call(server: &RegistryServer, method: &str, target: &str, body: Option<&str>) -> Answer {
    try_call(server, method, target, body, &[]).expect("an HTTP answer")
}

fn ok_json(server: &RegistryServer, method: &str, target: &str, body: Option<&str>) -> Value {
    let a = call(server, method, target, body);
    assert_eq!(a.status, 200, "{method} {target}: {a:?}");
    assert_eq!(a.header("Content-Type"), Some(CONTENT_TYPE));
    a.json()
}

fn register(server: &RegistryServer, subject_path: &str, body: Value) -> u64 {
    let v = ok_json(
        server,
        "POST",
        &format!("/subjects/{subject_path}/versions"),
        Some(&body.to_string()),
    );
    v["id"].as_u64().expect("integer id")
}

fn server() -> RegistryServer {
    RegistryServer::start_default().expect("registry server starts")
}

const AVRO_A: &str = r#"{"type":"record","name":"A","fields":[]}"#;
const AVRO_B: &str = r#"{"type":"record","name":"B","fields":[]}"#;

#[test]
fn register_assigns_global_ids_from_one_per_identity_and_is_idempotent() {
    let s = server();
    assert_eq!(register(&s, "s1", json!({ "schema": AVRO_A })), 1);
    assert_eq!(register(&s, "s1", json!({ "schema": AVRO_A })), 1);
    assert_eq!(
        ok_json(&s, "GET", "/subjects/s1/versions", None),
        json!([1])
    );
    // Same identity under another subject reuses the id; explicit AVRO is the same identity.
    assert_eq!(
        register(&s, "s2", json!({ "schema": AVRO_A, "schemaType": "AVRO" })),
        1
    );
    assert_eq!(
        ok_json(&s, "GET", "/subjects/s2/versions", None),
        json!([1])
    );
    assert_eq!(register(&s, "s1", json!({ "schema": AVRO_B })), 2);
    assert_eq!(
        ok_json(&s, "GET", "/subjects/s1/versions", None),
        json!([1, 2])
    );
    // schemaType and messageType are part of the identity.
    let proto = "syntax = \"proto3\"; message M {}";
    let p1 = json!({ "schema": proto, "schemaType": "PROTOBUF", "messageType": "M" });
    let p2 = json!({ "schema": proto, "schemaType": "PROTOBUF", "messageType": "N" });
    assert_eq!(register(&s, "p", p1.clone()), 3);
    assert_eq!(register(&s, "p", p2), 4);
    assert_eq!(register(&s, "p", p1), 3);
    assert_eq!(
        register(&s, "j", json!({ "schema": AVRO_A, "schemaType": "JSON" })),
        5
    );
    assert_eq!(
        ok_json(&s, "GET", "/subjects/p/versions", None),
        json!([1, 2])
    );
}

#[test]
fn register_and_lookup_reject_bodies_without_a_schema() {
    let s = server();
    for path in ["/subjects/x/versions", "/subjects/x"] {
        for body in ["not json", "{}", r#"{"schema":""}"#, r#"{"schema":5}"#] {
            call(&s, "POST", path, Some(body)).assert_error(422, 42201);
        }
        call(
            &s,
            "POST",
            path,
            Some(r#"{"schema":"x","schemaType":"XML"}"#),
        )
        .assert_error(422, 42201);
    }
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
}

#[test]
fn register_checks_that_references_exist() {
    let s = server();
    let body = json!({ "schema": AVRO_A, "references": [{ "name": "b.avsc", "subject": "b", "version": 1 }] });
    call(&s, "POST", "/subjects/a/versions", Some(&body.to_string())).assert_error(422, 42201);
    register(&s, "b", json!({ "schema": AVRO_B }));
    assert_eq!(register(&s, "a", body), 2);
}

#[test]
fn lookup_and_register_compare_parsed_documents_like_confluent() {
    // Confluent parses the text on register and lookup: layout, key order and Avro `doc`
    // do not make another schema; a default does; Protobuf text is compared as text here.
    let s = server();
    let written = r#"{"type":"record","name":"R","doc":"an order","fields":[{"name":"n","type":"int","default":0}]}"#;
    assert_eq!(register(&s, "s", json!({ "schema": written })), 1);
    let relaid = "{ \"fields\": [ {\"default\": 0, \"type\": \"int\", \"name\": \"n\"} ],\n  \"name\": \"R\", \"type\": \"record\" }";
    let found = ok_json(
        &s,
        "POST",
        "/subjects/s",
        Some(&json!({ "schema": relaid }).to_string()),
    );
    assert_eq!(found["id"], 1);
    assert_eq!(found["schema"], written, "the registered text is answered");
    assert_eq!(register(&s, "s", json!({ "schema": relaid })), 1);
    let other_default = written.replace("\"default\":0", "\"default\":1");
    call(
        &s,
        "POST",
        "/subjects/s",
        Some(&json!({ "schema": other_default }).to_string()),
    )
    .assert_error(404, 40403);
    let canonical = r#"{"name":"R","type":"record","fields":[{"name":"n","type":"int"}]}"#;
    call(
        &s,
        "POST",
        "/subjects/s",
        Some(&json!({ "schema": canonical }).to_string()),
    )
    .assert_error(404, 40403);
    let js = json!({ "schema": r#"{"type":"object","title":"t"}"#, "schemaType": "JSON" });
    let id = register(&s, "j", js);
    let js2 = json!({ "schema": r#"{ "title": "t", "type": "object" }"#, "schemaType": "JSON" });
    assert_eq!(
        ok_json(&s, "POST", "/subjects/j", Some(&js2.to_string()))["id"],
        id
    );
    let p = json!({ "schema": "syntax = \"proto3\";", "schemaType": "PROTOBUF" });
    register(&s, "p", p);
    let p2 = json!({ "schema": "syntax  =  \"proto3\";", "schemaType": "PROTOBUF" });
    call(&s, "POST", "/subjects/p", Some(&p2.to_string())).assert_error(404, 40403);
}

#[test]
fn lookup_finds_the_identity_only_under_its_subject() {
    let s = server();
    let body = json!({ "schema": AVRO_A }).to_string();
    call(&s, "POST", "/subjects/s", Some(&body)).assert_error(404, 40403);
    register(&s, "s", json!({ "schema": AVRO_B }));
    register(&s, "s", json!({ "schema": AVRO_A }));
    register(&s, "other", json!({ "schema": AVRO_B }));
    assert_eq!(
        ok_json(&s, "POST", "/subjects/s?normalize=false", Some(&body)),
        json!({ "subject": "s", "id": 2, "version": 2, "schema": AVRO_A })
    );
    call(&s, "POST", "/subjects/other", Some(&body)).assert_error(404, 40403);
    let proto =
        json!({ "schema": "syntax = \"proto3\";", "schemaType": "PROTOBUF", "messageType": "a.M" });
    register(&s, "p", proto.clone());
    assert_eq!(
        ok_json(&s, "POST", "/subjects/p", Some(&proto.to_string())),
        json!({ "subject": "p", "id": 3, "version": 1, "schema": "syntax = \"proto3\";",
                "schemaType": "PROTOBUF", "messageType": "a.M" })
    );
}

#[test]
fn versions_answer_latest_and_numbers_with_contract_errors() {
    let s = server();
    call(&s, "GET", "/subjects/s/versions/latest", None).assert_error(404, 40401);
    call(&s, "GET", "/subjects/s/versions/1", None).assert_error(404, 40401);
    call(&s, "GET", "/subjects/s/versions", None).assert_error(404, 40401);
    register(&s, "dep", json!({ "schema": AVRO_B }));
    register(
        &s,
        "s",
        json!({ "schema": AVRO_A, "references": [{ "name": "B", "subject": "dep", "version": 1 }] }),
    );
    register(
        &s,
        "s",
        json!({ "schema": "{\"type\":\"string\"}", "schemaType": "JSON" }),
    );
    let latest = ok_json(&s, "GET", "/subjects/s/versions/latest", None);
    assert_eq!(
        latest,
        json!({ "subject": "s", "id": 3, "version": 2, "schema": "{\"type\":\"string\"}", "schemaType": "JSON" })
    );
    assert_eq!(ok_json(&s, "GET", "/subjects/s/versions/-1", None), latest);
    assert_eq!(
        ok_json(&s, "GET", "/subjects/s/versions/1", None),
        json!({ "subject": "s", "id": 2, "version": 1, "schema": AVRO_A,
                "references": [{ "name": "B", "subject": "dep", "version": 1 }] })
    );
    call(&s, "GET", "/subjects/s/versions/3", None).assert_error(404, 40402);
    for bad in ["abc", "0", "-2", "1.5"] {
        call(&s, "GET", &format!("/subjects/s/versions/{bad}"), None).assert_error(422, 42202);
    }
    assert_eq!(
        ok_json(&s, "GET", "/subjects/s/versions", None),
        json!([1, 2])
    );
}

#[test]
fn subjects_lists_every_live_subject_sorted() {
    let s = server();
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
    register(&s, "b", json!({ "schema": AVRO_A }));
    register(&s, "a", json!({ "schema": AVRO_A }));
    assert_eq!(
        ok_json(&s, "GET", "/subjects?deleted=true", None),
        json!(["a", "b"])
    );
}

#[test]
fn schemas_by_id_answers_the_schema_and_its_users() {
    let s = server();
    call(&s, "GET", "/schemas/ids/x", None).assert_error(422, 42201);
    call(&s, "GET", "/schemas/ids/-1", None).assert_error(422, 42201);
    call(&s, "GET", "/schemas/ids/99", None).assert_error(404, 40403);
    call(&s, "GET", "/schemas/ids/99/versions", None).assert_error(404, 40403);
    register(&s, "dep", json!({ "schema": AVRO_B }));
    register(
        &s,
        "s",
        json!({ "schema": "m", "schemaType": "PROTOBUF", "messageType": "p.M",
                "references": [{ "name": "dep.proto", "subject": "dep", "version": 1 }] }),
    );
    register(&s, "t", json!({ "schema": AVRO_B }));
    assert_eq!(
        ok_json(&s, "GET", "/schemas/ids/1", None),
        json!({ "schema": AVRO_B })
    );
    assert_eq!(
        ok_json(&s, "GET", "/schemas/ids/2?fetchMaxId=false", None),
        json!({ "schema": "m", "schemaType": "PROTOBUF", "messageType": "p.M",
                "references": [{ "name": "dep.proto", "subject": "dep", "version": 1 }] })
    );
    assert_eq!(
        ok_json(&s, "GET", "/schemas/ids/1/versions", None),
        json!([{ "subject": "dep", "version": 1 }, { "subject": "t", "version": 1 }])
    );
    assert_eq!(
        ok_json(&s, "GET", "/subjects/dep/versions/1/referencedby", None),
        json!([2])
    );
    assert_eq!(
        ok_json(&s, "GET", "/subjects/t/versions/latest/referencedby", None),
        json!([])
    );
    call(&s, "GET", "/subjects/t/versions/2/referencedby", None).assert_error(404, 40402);
}

#[test]
fn config_reads_and_sets_global_and_subject_levels() {
    let s = server();
    assert_eq!(
        ok_json(&s, "GET", "/config", None),
        json!({ "compatibilityLevel": "BACKWARD" })
    );
    assert_eq!(
        ok_json(&s, "PUT", "/config", Some(r#"{"compatibility":"full"}"#)),
        json!({ "compatibility": "FULL" })
    );
    assert_eq!(
        ok_json(&s, "GET", "/config/a%2Fb", None),
        json!({ "compatibilityLevel": "FULL" })
    );
    assert_eq!(
        ok_json(
            &s,
            "PUT",
            "/config/a%2Fb",
            Some(r#"{"compatibility":"NONE"}"#)
        ),
        json!({ "compatibility": "NONE" })
    );
    assert_eq!(
        ok_json(&s, "GET", "/config/a%2Fb?defaultToGlobal=true", None),
        json!({ "compatibilityLevel": "NONE" })
    );
    assert_eq!(
        ok_json(&s, "GET", "/config", None),
        json!({ "compatibilityLevel": "FULL" })
    );
    call(
        &s,
        "PUT",
        "/config",
        Some(r#"{"compatibility":"SOMETIMES"}"#),
    )
    .assert_error(422, 42203);
    call(&s, "PUT", "/config/x", Some("{}")).assert_error(422, 42203);
}

#[test]
fn delete_removes_subjects_and_versions() {
    let s = server();
    call(&s, "DELETE", "/subjects/s", None).assert_error(404, 40401);
    register(&s, "s", json!({ "schema": AVRO_A }));
    register(&s, "s", json!({ "schema": AVRO_B }));
    register(&s, "t", json!({ "schema": AVRO_A }));
    register(&s, "t", json!({ "schema": AVRO_B }));
    assert_eq!(
        ok_json(&s, "DELETE", "/subjects/s?permanent=true", None),
        json!([1, 2])
    );
    call(&s, "GET", "/subjects/s/versions", None).assert_error(404, 40401);
    assert_eq!(
        ok_json(&s, "DELETE", "/subjects/t/versions/1", None),
        json!(1)
    );
    call(&s, "DELETE", "/subjects/t/versions/1", None).assert_error(404, 40402);
    call(&s, "DELETE", "/subjects/t/versions/x", None).assert_error(422, 42202);
    assert_eq!(
        ok_json(&s, "DELETE", "/subjects/t/versions/latest", None),
        json!(2)
    );
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
    // Ids survive deletion, so the identity keeps its id.
    assert_eq!(
        ok_json(&s, "GET", "/schemas/ids/2", None),
        json!({ "schema": AVRO_B })
    );
    assert_eq!(register(&s, "s", json!({ "schema": AVRO_B })), 2);
}

#[test]
fn anything_else_is_404_subject_or_schema_not_found() {
    let s = server();
    for (m, p) in [
        ("GET", "/"),
        ("GET", "/nope"),
        ("PUT", "/subjects"),
        ("PATCH", "/subjects/s/versions"),
        ("GET", "/schemas/ids"),
        ("GET", "/subjects/s/versions/1/x/y"),
    ] {
        let a = call(&s, m, p, None);
        a.assert_error(404, 40401);
        assert_eq!(a.json()["message"], json!("subject or schema not found"));
    }
}

#[test]
fn subjects_are_decoded_from_the_path_and_logged_raw() {
    let s = server();
    let target = "/subjects/a%2Fb%20c/versions?normalize=False";
    let id = ok_json(
        &s,
        "POST",
        target,
        Some(&json!({ "schema": AVRO_A }).to_string()),
    )["id"]
        .clone();
    assert_eq!(id, json!(1));
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!(["a/b c"]));
    assert_eq!(
        ok_json(&s, "GET", "/subjects/a%2fb%20c/versions/latest", None)["subject"],
        json!("a/b c")
    );
    // `+` is a literal plus in a path.
    register(&s, "x+y", json!({ "schema": AVRO_A }));
    assert_eq!(
        ok_json(&s, "GET", "/subjects", None),
        json!(["a/b c", "x+y"])
    );
    let log = s.requests();
    assert_eq!(
        log[0],
        (
            "POST".to_string(),
            "/subjects/a%2Fb%20c/versions".to_string()
        )
    );
    assert_eq!(log[2].1, "/subjects/a%2fb%20c/versions/latest");
    let first = &s.request_log()[0];
    assert_eq!(first.query.as_deref(), Some("normalize=False"));
    assert_eq!(first.header("accept"), Some(CONTENT_TYPE));
    assert_eq!(first.body_json(), Some(json!({ "schema": AVRO_A })));
    s.clear_requests();
    assert!(s.requests().is_empty());
}

#[test]
fn fail_next_answers_the_status_then_recovers_without_side_effects() {
    let s = server();
    s.fail_next(2, 500);
    let body = json!({ "schema": AVRO_A }).to_string();
    for _ in 0..2 {
        call(&s, "POST", "/subjects/s/versions", Some(&body)).assert_error(500, 50001);
    }
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
    s.fail_next(1, 429);
    call(&s, "GET", "/subjects", None).assert_error(429, 42901);
    assert_eq!(register(&s, "s", json!({ "schema": AVRO_A })), 1);
    s.fail_next(5, 503);
    s.clear_faults();
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!(["s"]));
    assert_eq!(s.requests().len(), 6);
}

#[test]
fn drop_next_closes_the_connection_without_an_answer() {
    let s = server();
    s.drop_next(2);
    for _ in 0..2 {
        let err = try_call(&s, "GET", "/subjects", None, &[]).expect_err("no answer");
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
    }
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
    assert_eq!(s.requests().len(), 3, "dropped requests are logged too");
}

#[test]
fn drop_next_hits_a_kept_alive_connection_mid_stream() {
    let s = server();
    let mut conn = connect(&s);
    write_request(conn.get_mut(), "GET", "/subjects", None, &[], false).unwrap();
    assert_eq!(read_answer(&mut conn).unwrap().status, 200);
    s.drop_next(1);
    write_request(conn.get_mut(), "GET", "/config", None, &[], false).unwrap();
    let err = read_answer(&mut conn).expect_err("the connection is dropped");
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
}

#[test]
fn delay_holds_every_answer_and_workers_overlap() {
    let s = server();
    s.delay(Duration::from_millis(500));
    let started = Instant::now();
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
    assert!(started.elapsed() >= Duration::from_millis(500));
    let started = Instant::now();
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                assert_eq!(
                    ok_json(&s, "GET", "/config", None)["compatibilityLevel"],
                    "BACKWARD"
                )
            });
        }
    });
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    s.delay(Duration::ZERO);
    let started = Instant::now();
    ok_json(&s, "GET", "/subjects", None);
    assert!(started.elapsed() < Duration::from_millis(300));
}

#[test]
fn basic_auth_is_required_when_configured() {
    let s = RegistryServer::start(RegistryServerOptions::default().basic_auth("user", "p@ss:word"))
        .unwrap();
    let a = call(&s, "GET", "/subjects", None);
    a.assert_error(401, 40101);
    assert!(
        a.header("WWW-Authenticate")
            .is_some_and(|v| v.starts_with("Basic"))
    );
    let wrong = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("user:nope")
    );
    try_call(&s, "GET", "/subjects", None, &[("Authorization", &wrong)])
        .unwrap()
        .assert_error(401, 40101);
    let right = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("user:p@ss:word")
    );
    let a = try_call(&s, "GET", "/subjects", None, &[("Authorization", &right)]).unwrap();
    assert_eq!((a.status, a.json()), (200, json!([])));
    assert!(!format!("{s:?}").contains("p@ss"));
    let logged = format!("{:?}", s.request_log());
    assert!(
        logged.contains("<redacted>") && !logged.contains(&right[6..]),
        "{logged}"
    );
}

#[test]
fn a_context_path_prefixes_every_route() {
    let s =
        RegistryServer::start(RegistryServerOptions::default().context_path("/registry/")).unwrap();
    assert!(s.url().ends_with("/registry"), "{}", s.url());
    assert_eq!(ok_json(&s, "GET", "/registry/subjects", None), json!([]));
    call(&s, "GET", "/subjects", None).assert_error(404, 40401);
    call(&s, "GET", "/registryx/subjects", None).assert_error(404, 40401);
}

#[test]
fn seeding_fills_subjects_and_ids_without_http() {
    let s = server();
    s.seed_id(7, SchemaRecord::protobuf("syntax = \"proto3\";", "a.B"));
    assert_eq!(
        ok_json(&s, "GET", "/schemas/ids/7", None),
        json!({ "schema": "syntax = \"proto3\";", "schemaType": "PROTOBUF", "messageType": "a.B" })
    );
    assert_eq!(s.seed("v", SchemaRecord::avro(AVRO_A)), (8, 1));
    assert_eq!(
        s.seed(
            "w",
            SchemaRecord::json("{}").with_reference("x", "missing", 3)
        ),
        (9, 1)
    );
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!(["v", "w"]));
    assert_eq!(s.requests().len(), 2);
}

#[test]
fn a_given_port_is_used_and_url_names_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let s = RegistryServer::start(RegistryServerOptions::default().port(port)).unwrap();
    assert_eq!(s.url(), format!("http://127.0.0.1:{port}"));
    assert_eq!(ok_json(&s, "GET", "/subjects", None), json!([]));
}

#[test]
fn dropping_the_server_closes_open_connections_and_returns_promptly() {
    let s = server();
    s.delay(Duration::from_secs(30));
    let mut idle = connect(&s);
    let mut waiting = connect(&s);
    s.clear_faults();
    write_request(idle.get_mut(), "GET", "/subjects", None, &[], false).unwrap();
    assert_eq!(read_answer(&mut idle).unwrap().status, 200);
    s.delay(Duration::from_secs(30));
    write_request(waiting.get_mut(), "GET", "/subjects", None, &[], false).unwrap();
    thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    drop(s);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(read_answer(&mut idle).is_err());
    assert!(read_answer(&mut waiting).is_err());
}
