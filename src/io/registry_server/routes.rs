//! The route table of the Confluent REST contract (docs/testing.md §c): turns a method,
//! a raw request path and a body into a call on the [`Store`] and a JSON answer.
//! Subjects are percent-decoded from their path segment; query strings are ignored.

use serde_json::{Map, Value, json};

use super::store::{ApiError, INVALID_SCHEMA, SchemaRecord, SchemaReference, Store, VersionSel};

/// A JSON answer with its HTTP status.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    fn ok(body: Value) -> Self {
        Reply { status: 200, body }
    }
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Reply {
            status: e.status,
            body: error_body(e.code, &e.message),
        }
    }
}

/// `{"error_code":N,"message":"…"}`.
pub fn error_body(code: u32, message: &str) -> Value {
    json!({ "error_code": code, "message": message })
}

/// Answers one request. `path` is the raw request target below the context path.
pub fn handle(store: &mut Store, method: &str, path: &str, body: &[u8]) -> Reply {
    match dispatch(store, method, path, body) {
        Ok(reply) => reply,
        Err(e) => e.into(),
    }
}

fn dispatch(store: &mut Store, method: &str, path: &str, body: &[u8]) -> Result<Reply, ApiError> {
    let segments = segments(path);
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (method, segs.as_slice()) {
        ("GET", ["subjects"]) => Ok(Reply::ok(json!(store.subjects()))),
        ("POST", ["subjects", s]) => {
            let record = parse_schema_body(body)?;
            Ok(Reply::ok(subject_version_json(&store.lookup(s, &record)?)))
        }
        ("DELETE", ["subjects", s]) => Ok(Reply::ok(json!(store.delete_subject(s)?))),
        ("POST", ["subjects", s, "versions"]) => {
            let record = parse_schema_body(body)?;
            let (id, _) = store.register(s, record)?;
            Ok(Reply::ok(json!({ "id": id })))
        }
        ("GET", ["subjects", s, "versions"]) => Ok(Reply::ok(json!(store.versions(s)?))),
        ("GET", ["subjects", s, "versions", v]) => {
            let sel = VersionSel::parse(v)?;
            Ok(Reply::ok(subject_version_json(&store.version(s, sel)?)))
        }
        ("DELETE", ["subjects", s, "versions", v]) => {
            let sel = VersionSel::parse(v)?;
            Ok(Reply::ok(json!(store.delete_version(s, sel)?)))
        }
        ("GET", ["subjects", s, "versions", v, "referencedby"]) => {
            let sel = VersionSel::parse(v)?;
            Ok(Reply::ok(json!(store.referenced_by(s, sel)?)))
        }
        ("GET", ["schemas", "ids", id]) => {
            let record = store.schema_by_id(parse_id(id)?)?;
            Ok(Reply::ok(Value::Object(record_fields(record))))
        }
        ("GET", ["schemas", "ids", id, "versions"]) => {
            let pairs = store.versions_of_id(parse_id(id)?)?;
            let list: Vec<Value> = pairs
                .into_iter()
                .map(|(subject, version)| json!({ "subject": subject, "version": version }))
                .collect();
            Ok(Reply::ok(Value::Array(list)))
        }
        ("GET", ["config"]) => Ok(Reply::ok(
            json!({ "compatibilityLevel": store.compatibility(None) }),
        )),
        ("GET", ["config", s]) => Ok(Reply::ok(
            json!({ "compatibilityLevel": store.compatibility(Some(s)) }),
        )),
        ("PUT", ["config"]) => {
            let level = store.set_compatibility(None, &parse_compatibility(body))?;
            Ok(Reply::ok(json!({ "compatibility": level })))
        }
        ("PUT", ["config", s]) => {
            let level = store.set_compatibility(Some(s), &parse_compatibility(body))?;
            Ok(Reply::ok(json!({ "compatibility": level })))
        }
        _ => Err(ApiError::new(
            404,
            super::store::SUBJECT_NOT_FOUND,
            "subject or schema not found",
        )),
    }
}

/// The decoded path segments, without the query string and empty segments.
pub fn segments(path: &str) -> Vec<String> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect()
}

/// Decodes `%XX` escapes; a malformed escape is kept as written. `+` stays `+` (path rules).
pub fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex_val(bytes[i + 1]), hex_val(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_val(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn parse_id(raw: &str) -> Result<u32, ApiError> {
    raw.parse::<u32>()
        .map_err(|_| ApiError::new(422, INVALID_SCHEMA, format!("invalid schema id: {raw}")))
}

fn parse_compatibility(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("compatibility")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .unwrap_or_default()
}

/// A register / lookup body: non-empty `schema`, optional `schemaType`, `messageType`, `references`.
fn parse_schema_body(body: &[u8]) -> Result<SchemaRecord, ApiError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| ApiError::invalid_schema("body is not JSON"))?;
    let schema = match value.get("schema").and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => return Err(ApiError::invalid_schema("no schema")),
    };
    let schema_type = match value.get("schemaType") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => match t.to_ascii_uppercase().as_str() {
            "AVRO" => None,
            "PROTOBUF" | "JSON" => Some(t.to_ascii_uppercase()),
            _ => return Err(ApiError::invalid_schema(&format!("unknown schemaType {t}"))),
        },
        Some(_) => return Err(ApiError::invalid_schema("schemaType is not a string")),
    };
    let message_type = value
        .get("messageType")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(String::from);
    let mut references = Vec::new();
    if let Some(list) = value.get("references").and_then(Value::as_array) {
        for r in list {
            let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            let subject = r.get("subject").and_then(Value::as_str).unwrap_or_default();
            let version = r.get("version").and_then(Value::as_i64);
            match version {
                Some(v) if !name.is_empty() && !subject.is_empty() => {
                    references.push(SchemaReference {
                        name: name.into(),
                        subject: subject.into(),
                        version: i32::try_from(v).unwrap_or(-1),
                    })
                }
                _ => return Err(ApiError::invalid_schema("malformed reference")),
            }
        }
    }
    Ok(SchemaRecord {
        schema,
        schema_type,
        message_type,
        references,
    })
}

/// `schema`, `schemaType` (omitted for Avro), `messageType` and `references` when present.
fn record_fields(record: &SchemaRecord) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("schema".into(), json!(record.schema));
    if let Some(t) = &record.schema_type {
        m.insert("schemaType".into(), json!(t));
    }
    if let Some(t) = &record.message_type {
        m.insert("messageType".into(), json!(t));
    }
    if !record.references.is_empty() {
        let refs: Vec<Value> = record
            .references
            .iter()
            .map(|r| json!({ "name": r.name, "subject": r.subject, "version": r.version }))
            .collect();
        m.insert("references".into(), Value::Array(refs));
    }
    m
}

fn subject_version_json(sv: &super::store::SubjectVersion) -> Value {
    let mut m = Map::new();
    m.insert("subject".into(), json!(sv.subject));
    m.insert("id".into(), json!(sv.id));
    m.insert("version".into(), json!(sv.version));
    m.extend(record_fields(&sv.record));
    Value::Object(m)
}
