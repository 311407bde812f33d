//! The schema registry over HTTP (ureq, blocking): the Confluent REST contract
//! of semantics §1 with a default timeout (D7), basic auth or a bearer token,
//! HTTPS with a custom CA bundle and a client certificate, and `1 + max_retries`
//! attempts with exponential backoff and jitter on 429, 5xx and transport failures
//! (the Go client retries immediately; backoff only spaces the same attempts out).
//!
//! ureq and not reqwest: the registry needs a handful of blocking HTTP/1.1 requests,
//! and reqwest brought hyper, tower, a tokio runtime per client and the URL/IDNA tables
//! into the binary and the build (issue #16). Proxies come from the environment
//! (`HTTPS_PROXY`, `NO_PROXY`) as with reqwest; redirects are followed, with the
//! `Authorization` header only to the same host.
//!
//! Connecting over TLS loads the system CA bundle (~60 ms of CPU), so an agent's TLS
//! connector is built on the first `https://` request, once per process and TLS
//! configuration: commands that never reach the registry pay nothing, `http://` URLs
//! never pay it, and a second registry handle pays nothing more.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use ureq::Agent;
use ureq::http::{Method, Request, Uri};
use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsProvider};

use crate::engine::schema::registry::{
    RegisteredSchema, Registry, RegistryError, RegistryResult, SchemaReference, SchemaSpec,
    SchemaType, SubjectVersion, escape_segment,
};
use crate::io::bounded_read;

/// The registry media type, sent as `Accept` always and `Content-Type` with a body.
pub const REGISTRY_MEDIA_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// Connection options of [`HttpRegistry`].
#[derive(Clone)]
pub struct HttpRegistryOptions {
    pub base_url: String,
    pub user: Option<String>,
    pub password: Option<String>,
    /// Sent as `Authorization: Bearer <token>` when no basic-auth user is set.
    pub bearer_token: Option<String>,
    /// PEM bundle of CA certificates trusted in addition to the system roots.
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate chain and PKCS#8 private key, both PEM.
    pub client_identity_pem: Option<(Vec<u8>, Vec<u8>)>,
    /// Per-request timeout (connect, send and read).
    pub timeout: Duration,
    /// Attempts after the first (default 2).
    pub max_retries: u32,
    /// First backoff; doubles per attempt, with up to 50 % jitter.
    pub backoff: Duration,
    /// No attempt starts after this instant and none runs past it (a command's `--timeout`).
    pub deadline: Option<std::time::Instant>,
    /// Send `messageType` in register/lookup bodies (krabka extension, D5); off for strict
    /// Confluent registries that reject unknown fields.
    pub send_message_type: bool,
}

impl std::fmt::Debug for HttpRegistryOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpRegistryOptions")
            .field("base_url", &self.base_url)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "***"))
            .field("ca_pem", &self.ca_pem.as_ref().map(Vec::len))
            .field("client_identity", &self.client_identity_pem.is_some())
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

impl HttpRegistryOptions {
    pub fn new(base_url: impl Into<String>) -> Self {
        HttpRegistryOptions {
            base_url: base_url.into(),
            user: None,
            password: None,
            bearer_token: None,
            ca_pem: None,
            client_identity_pem: None,
            timeout: Duration::from_secs(30),
            max_retries: 2,
            backoff: Duration::from_millis(100),
            deadline: None,
            send_message_type: true,
        }
    }
}

/// What a built agent depends on: registries that differ in nothing else share one
/// agent, its idle connections and its TLS connector.
#[derive(Clone, PartialEq, Eq)]
struct TlsConfig {
    ca_pem: Option<Vec<u8>>,
    client_identity_pem: Option<(Vec<u8>, Vec<u8>)>,
    timeout: Duration,
}

impl TlsConfig {
    /// The CA bundle and client identity, parsed: called when the registry is created so
    /// that bad TLS material is a usage error before anything runs.
    fn parse(&self) -> RegistryResult<(Vec<Certificate<'static>>, Option<ClientCert>)> {
        let mut certs = Vec::new();
        if let Some(pem) = &self.ca_pem {
            certs = pem_certificates(pem).map_err(|e| {
                RegistryError::protocol(format!("cannot read the registry CA bundle: {e}"))
            })?;
            if certs.is_empty() {
                return Err(RegistryError::protocol(
                    "the registry CA bundle holds no PEM certificate",
                ));
            }
        }
        let identity = match &self.client_identity_pem {
            Some((cert, key)) => Some(client_cert(cert, key).map_err(|e| {
                RegistryError::protocol(format!(
                    "cannot read the registry client certificate and PKCS#8 key: {e}"
                ))
            })?),
            None => None,
        };
        Ok((certs, identity))
    }

    /// The process's agent for this configuration, built on first use. Agents are
    /// never dropped: a process talks to one or two registries.
    fn agent(&self) -> RegistryResult<Agent> {
        static AGENTS: Mutex<Vec<(TlsConfig, Agent)>> = Mutex::new(Vec::new());
        let mut agents = AGENTS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, agent)) = agents.iter().find(|(config, _)| config == self) {
            return Ok(agent.clone());
        }
        let (extra, identity) = self.parse()?;
        // A CA bundle adds to the system roots (as reqwest's merge did); native-tls
        // replaces them when given any root, so the system bundle is listed with it.
        let roots = if extra.is_empty() {
            RootCerts::PlatformVerifier
        } else {
            let mut all = system_roots();
            all.extend(extra);
            RootCerts::Specific(Arc::new(all))
        };
        let tls = ureq::tls::TlsConfig::builder()
            .provider(TlsProvider::NativeTls)
            .root_certs(roots)
            .client_cert(identity)
            .build();
        let agent: Agent = Agent::config_builder()
            .tls_config(tls)
            .http_status_as_error(false)
            .redirect_auth_headers(ureq::config::RedirectAuthHeaders::SameHost)
            .user_agent(concat!("krabka-streams/", env!("CARGO_PKG_VERSION")))
            .timeout_global(Some(self.timeout))
            .build()
            .into();
        agents.push((self.clone(), agent.clone()));
        Ok(agent)
    }
}

/// Every certificate of a PEM bundle (other PEM items are skipped).
fn pem_certificates(pem: &[u8]) -> Result<Vec<Certificate<'static>>, ureq::Error> {
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        if let PemItem::Certificate(cert) = item? {
            certs.push(cert);
        }
    }
    Ok(certs)
}

/// A client certificate chain and its PKCS#8 key, checked by native-tls itself (it
/// takes PKCS#8 only), so that a bad pair is refused here, not at the first handshake.
fn client_cert(cert_pem: &[u8], key_pem: &[u8]) -> Result<ClientCert, String> {
    native_tls::Identity::from_pkcs8(cert_pem, key_pem).map_err(|e| e.to_string())?;
    let chain = pem_certificates(cert_pem).map_err(|e| e.to_string())?;
    let key = PrivateKey::from_pem(key_pem).map_err(|e| e.to_string())?;
    Ok(ClientCert::new_with_certs(&chain, key))
}

/// The system CA bundle file, as native-tls finds it (openssl-probe); empty when there
/// is none, so that a given CA bundle still works alone.
fn system_roots() -> Vec<Certificate<'static>> {
    let Some(file) = openssl_probe::probe().cert_file else {
        return Vec::new();
    };
    match bounded_read::read(&file, bounded_read::SYSTEM_CA_BUNDLE) {
        Ok(pem) => pem_certificates(&pem).unwrap_or_default(),
        Err(e) => {
            tracing::debug!("system CA bundle {}: {e}", file.display());
            Vec::new()
        }
    }
}

/// A Confluent-compatible registry reached over HTTP.
pub struct HttpRegistry {
    tls: TlsConfig,
    agent: OnceLock<Agent>,
    base: String,
    auth: Option<String>,
    max_retries: u32,
    backoff: Duration,
    timeout: Duration,
    deadline: Option<std::time::Instant>,
    send_message_type: bool,
}

impl HttpRegistry {
    pub fn new(opts: HttpRegistryOptions) -> RegistryResult<Self> {
        crate::io::remote_contact::note();
        let base = opts.base_url.trim_end_matches('/').to_string();
        let no_host =
            || RegistryError::protocol(format!("registry base URL {base:?} has no scheme or host"));
        let parsed: Uri = base.parse().map_err(|_| no_host())?;
        if parsed.host().is_none_or(str::is_empty)
            || !matches!(parsed.scheme_str(), Some("http" | "https"))
        {
            return Err(no_host());
        }
        let tls = TlsConfig {
            ca_pem: opts.ca_pem.clone(),
            client_identity_pem: opts.client_identity_pem.clone(),
            timeout: opts.timeout,
        };
        tls.parse()?;
        let auth = match (&opts.user, &opts.bearer_token) {
            (Some(u), _) => {
                let pair = format!("{u}:{}", opts.password.as_deref().unwrap_or(""));
                Some(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                ))
            }
            (None, Some(token)) => Some(format!("Bearer {}", token.trim())),
            (None, None) => None,
        };
        Ok(HttpRegistry {
            tls,
            agent: OnceLock::new(),
            base,
            auth,
            max_retries: opts.max_retries,
            backoff: opts.backoff,
            timeout: opts.timeout,
            deadline: opts.deadline,
            send_message_type: opts.send_message_type,
        })
    }

    fn send(&self, method: Method, path: &str, body: Option<&Value>) -> RegistryResult<Value> {
        let url = format!("{}{path}", self.base);
        let agent = match self.agent.get() {
            Some(agent) => agent,
            None => {
                let agent = self.tls.agent()?;
                self.agent.get_or_init(|| agent)
            }
        };
        let body = body.map(Value::to_string);
        let mut last = RegistryError::new(-1, "schema registry request failed");
        for attempt in 0..=self.max_retries {
            if attempt > 0 {
                std::thread::sleep(backoff_delay(self.backoff, attempt));
            }
            let mut timeout = None;
            if let Some(deadline) = self.deadline {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    if attempt == 0 {
                        last = RegistryError::new(
                            -1,
                            "schema registry request failed: the command timeout expired",
                        );
                    }
                    break;
                }
                timeout = (left < self.timeout).then_some(left);
            }
            match self.attempt(agent, &method, &url, body.as_deref(), timeout) {
                Ok(v) => return Ok(v),
                Err(e) if e.is_retriable() => {
                    tracing::debug!(
                        "registry {method} {path} attempt {} failed: {e}",
                        attempt + 1
                    );
                    last = e;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// One request; `timeout` shortens the agent's when the command deadline is nearer.
    fn attempt(
        &self,
        agent: &Agent,
        method: &Method,
        url: &str,
        body: Option<&str>,
        timeout: Option<Duration>,
    ) -> RegistryResult<Value> {
        let mut req = Request::builder()
            .method(method.clone())
            .uri(url)
            .header("Accept", REGISTRY_MEDIA_TYPE);
        if let Some(auth) = &self.auth {
            req = req.header("Authorization", auth);
        }
        if body.is_some() {
            req = req.header("Content-Type", REGISTRY_MEDIA_TYPE);
        }
        let bytes = body.unwrap_or("").as_bytes().to_vec();
        let req = req
            .body(bytes)
            .map_err(|e| RegistryError::protocol(format!("invalid registry request {url}: {e}")))?;
        let req = match timeout {
            // A request-level configuration: the agent's otherwise.
            Some(left) => agent
                .configure_request(req)
                .timeout_global(Some(left))
                .build(),
            None => req,
        };
        let resp = if body.is_some() {
            agent.run(req)
        } else {
            // No body at all (not an empty one) for GET and DELETE.
            let (parts, _) = req.into_parts();
            agent.run(Request::from_parts(parts, ureq::SendBody::none()))
        }
        .map_err(|e| transport_error(url, &e))?;
        let status = i32::from(resp.status().as_u16());
        let text = read_body(resp.into_body())?;
        if !(200..300).contains(&status) {
            let error_code = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.get("error_code").and_then(Value::as_i64));
            return Err(RegistryError {
                error_code,
                ..RegistryError::new(
                    status,
                    format!("schema registry returned HTTP {status}: {}", shown(&text)),
                )
            });
        }
        serde_json::from_str(&text)
            .map_err(|_| RegistryError::protocol("cannot parse schema registry response"))
    }
}

/// An error body as shown in a message: its first 1000 characters.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(1000) {
        Some((cut, _)) => format!("{}… ({} bytes in all)", &text[..cut], text.len()).into(),
        None => text.into(),
    }
}

/// Reads the response body as text, at most [`bounded_read::REGISTRY_RESPONSE`]:
/// a broken or hostile server streaming without end fails the request (not
/// retried) instead of filling memory until the command timeout.
fn read_body(body: ureq::Body) -> RegistryResult<String> {
    let body = bounded_read::read_stream(body.into_reader(), bounded_read::REGISTRY_RESPONSE)
        .map_err(|e| {
            if bounded_read::is_exceeded(&e) {
                RegistryError::protocol(format!("schema registry response is {e}; refused"))
            } else {
                RegistryError::new(
                    -1,
                    format!("schema registry request failed: reading the response: {e}"),
                )
            }
        })?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A failed request: transport failures are retried and mean unreachable (-1); a
/// request this client cannot even form is a protocol error. The URL is named, never
/// the `Authorization` header.
fn transport_error(url: &str, e: &ureq::Error) -> RegistryError {
    use ureq::Error as E;
    let mut message = format!("schema registry request failed: {url}: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(&format!(": {s}"));
        source = s.source();
    }
    match e {
        E::BadUri(_) | E::Http(_) | E::InvalidProxyUrl | E::RequireHttpsOnly(_) => {
            RegistryError::protocol(message)
        }
        _ => RegistryError::new(-1, message),
    }
}

/// Exponential backoff with up to 50 % jitter, from a cheap time-seeded value.
fn backoff_delay(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << (attempt - 1).min(10));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = exp.mul_f64(f64::from(nanos % 500) / 1000.0);
    exp + jitter
}

fn spec_body(spec: &SchemaSpec, send_message_type: bool) -> Value {
    let mut body = json!({ "schema": spec.schema });
    if let Some(t) = spec.schema_type.wire_name() {
        body["schemaType"] = json!(t);
    }
    if let Some(m) = spec
        .message_type
        .as_deref()
        .filter(|m| send_message_type && !m.is_empty())
    {
        body["messageType"] = json!(m);
    }
    if !spec.references.is_empty() {
        body["references"] = Value::Array(
            spec.references
                .iter()
                .map(|r| json!({"name": r.name, "subject": r.subject, "version": r.version}))
                .collect(),
        );
    }
    body
}

fn required_id(v: &Value) -> RegistryResult<i32> {
    v.get("id")
        .and_then(Value::as_i64)
        .map(|id| id as i32)
        .ok_or_else(|| RegistryError::protocol("schema registry response has no integer id"))
}

fn parse_references(v: &Value) -> RegistryResult<Vec<SchemaReference>> {
    let Some(Value::Array(items)) = v.get("references") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in items {
        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
        let subject = item.get("subject").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() || subject.is_empty() {
            return Err(RegistryError::protocol(
                "schema registry response has no text name",
            ));
        }
        out.push(SchemaReference {
            name: name.to_string(),
            subject: subject.to_string(),
            version: item.get("version").and_then(Value::as_i64).unwrap_or(-1) as i32,
        });
    }
    Ok(out)
}

fn parse_schema(v: &Value) -> RegistryResult<RegisteredSchema> {
    let schema = v
        .get("schema")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| RegistryError::protocol("schema registry response has no text schema"))?;
    let schema_type = SchemaType::from_wire(v.get("schemaType").and_then(Value::as_str))
        .map_err(RegistryError::protocol)?;
    Ok(RegisteredSchema {
        subject: v.get("subject").and_then(Value::as_str).map(str::to_string),
        id: v.get("id").and_then(Value::as_i64).unwrap_or(0) as i32,
        version: v.get("version").and_then(Value::as_i64).map(|x| x as i32),
        spec: SchemaSpec {
            schema: schema.to_string(),
            schema_type,
            message_type: v
                .get("messageType")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            references: parse_references(v)?,
        },
    })
}

fn array_of<T>(v: Value, f: impl Fn(&Value) -> Option<T>) -> RegistryResult<Vec<T>> {
    let Value::Array(items) = v else {
        return Err(RegistryError::protocol(
            "schema registry response is not an array",
        ));
    };
    items
        .iter()
        .map(|i| {
            f(i).ok_or_else(|| RegistryError::protocol("schema registry response is not an array"))
        })
        .collect()
}

impl Registry for HttpRegistry {
    fn register(&self, subject: &str, spec: &SchemaSpec) -> RegistryResult<i32> {
        let path = format!("/subjects/{}/versions", escape_segment(subject));
        required_id(&self.send(
            Method::POST,
            &path,
            Some(&spec_body(spec, self.send_message_type)),
        )?)
    }

    fn lookup(&self, subject: &str, spec: &SchemaSpec) -> RegistryResult<RegisteredSchema> {
        let path = format!("/subjects/{}", escape_segment(subject));
        let v = self.send(
            Method::POST,
            &path,
            Some(&spec_body(spec, self.send_message_type)),
        )?;
        let id = required_id(&v)?;
        let mut out = parse_schema(&v).unwrap_or_else(|_| RegisteredSchema {
            spec: spec.clone(),
            ..Default::default()
        });
        out.id = id;
        Ok(out)
    }

    fn latest(&self, subject: &str) -> RegistryResult<RegisteredSchema> {
        let path = format!("/subjects/{}/versions/latest", escape_segment(subject));
        let v = self.send(Method::GET, &path, None)?;
        required_id(&v)?;
        parse_schema(&v)
    }

    fn version(&self, subject: &str, version: i32) -> RegistryResult<RegisteredSchema> {
        let path = format!("/subjects/{}/versions/{version}", escape_segment(subject));
        let v = self.send(Method::GET, &path, None)?;
        required_id(&v)?;
        parse_schema(&v)
    }

    fn versions(&self, subject: &str) -> RegistryResult<Vec<i32>> {
        let path = format!("/subjects/{}/versions", escape_segment(subject));
        array_of(self.send(Method::GET, &path, None)?, |x| {
            x.as_i64().map(|n| n as i32)
        })
    }

    fn subjects(&self) -> RegistryResult<Vec<String>> {
        array_of(self.send(Method::GET, "/subjects", None)?, |x| {
            x.as_str().map(str::to_string)
        })
    }

    fn schema_by_id(&self, id: i32) -> RegistryResult<RegisteredSchema> {
        let path = format!("/schemas/ids/{}", id as u32);
        let mut out = parse_schema(&self.send(Method::GET, &path, None)?)?;
        out.id = id;
        Ok(out)
    }

    fn compatibility(&self, subject: Option<&str>) -> RegistryResult<String> {
        let path = match subject {
            Some(s) => format!("/config/{}", escape_segment(s)),
            None => "/config".to_string(),
        };
        self.send(Method::GET, &path, None)?
            .get("compatibilityLevel")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                RegistryError::protocol("schema registry response has no text compatibilityLevel")
            })
    }

    fn set_compatibility(&self, subject: Option<&str>, level: &str) -> RegistryResult<String> {
        let path = match subject {
            Some(s) => format!("/config/{}", escape_segment(s)),
            None => "/config".to_string(),
        };
        let body = json!({ "compatibility": level });
        self.send(Method::PUT, &path, Some(&body))?
            .get("compatibility")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                RegistryError::protocol("schema registry response has no text compatibility")
            })
    }

    fn delete_subject(&self, subject: &str, permanent: bool) -> RegistryResult<Vec<i32>> {
        let mut path = format!("/subjects/{}", escape_segment(subject));
        if permanent {
            path.push_str("?permanent=true");
        }
        array_of(self.send(Method::DELETE, &path, None)?, |x| {
            x.as_i64().map(|n| n as i32)
        })
    }

    fn delete_version(&self, subject: &str, version: i32, permanent: bool) -> RegistryResult<i32> {
        let mut path = format!("/subjects/{}/versions/{version}", escape_segment(subject));
        if permanent {
            path.push_str("?permanent=true");
        }
        self.send(Method::DELETE, &path, None)?
            .as_i64()
            .map(|n| n as i32)
            .ok_or_else(|| {
                RegistryError::protocol("schema registry response has no integer version")
            })
    }

    fn id_versions(&self, id: i32) -> RegistryResult<Vec<SubjectVersion>> {
        let path = format!("/schemas/ids/{}/versions", id as u32);
        array_of(self.send(Method::GET, &path, None)?, |x| {
            Some(SubjectVersion {
                subject: x.get("subject")?.as_str()?.to_string(),
                version: x.get("version")?.as_i64()? as i32,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_bodies_omit_avro_type_and_empty_fields() {
        let avro = spec_body(
            &SchemaSpec {
                schema: "\"string\"".into(),
                ..Default::default()
            },
            true,
        );
        assert_eq!(avro, json!({"schema": "\"string\""}));
        let spec = SchemaSpec {
            schema: "syntax = \"proto3\";".into(),
            schema_type: SchemaType::Protobuf,
            message_type: Some("demo.Order".into()),
            references: vec![],
        };
        let pb = spec_body(&spec, true);
        assert_eq!(pb["schemaType"], "PROTOBUF");
        assert_eq!(pb["messageType"], "demo.Order");
        assert!(pb.get("references").is_none());
        // D5: strict Confluent registries get no messageType.
        assert!(spec_body(&spec, false).get("messageType").is_none());
    }

    #[test]
    fn latest_responses_map_all_five_fields() {
        let v: Value = serde_json::from_str(
            r#"{"id":43,"version":2,"schema":"syntax = \"proto3\";","schemaType":"PROTOBUF","messageType":"demo.Order"}"#,
        )
        .unwrap();
        let s = parse_schema(&v).unwrap();
        assert_eq!(s.id, 43);
        assert_eq!(s.version, Some(2));
        assert_eq!(s.spec.schema, "syntax = \"proto3\";");
        assert_eq!(s.spec.schema_type, SchemaType::Protobuf);
        assert_eq!(s.spec.message_type.as_deref(), Some("demo.Order"));
    }

    #[test]
    fn references_without_names_are_rejected() {
        let v = json!({"schema": "x", "references": [{"name": "", "subject": "s", "version": 1}]});
        assert_eq!(
            parse_schema(&v).unwrap_err().message,
            "schema registry response has no text name"
        );
    }

    #[test]
    fn an_endless_response_body_is_refused_at_the_cap_not_read_into_memory() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request);
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n[";
            if conn.write_all(head.as_bytes()).is_err() {
                return;
            }
            let chunk = vec![b' '; 1 << 16];
            // Until the client hangs up; 64 MiB at most, four times the cap.
            for _ in 0..1024 {
                if conn.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        let mut opts = HttpRegistryOptions::new(&url);
        opts.max_retries = 0;
        opts.timeout = Duration::from_secs(20);
        let e = HttpRegistry::new(opts).unwrap().subjects().unwrap_err();
        assert!(e.message.contains("larger than 16 MiB"), "{}", e.message);
        assert!(!e.is_retriable(), "{}", e.message);
        server.join().unwrap();
    }

    #[test]
    fn no_http_client_is_built_until_the_first_request() {
        let registry = HttpRegistry::new(HttpRegistryOptions::new("http://127.0.0.1:1")).unwrap();
        assert!(registry.agent.get().is_none());
        let mut opts = HttpRegistryOptions::new("http://127.0.0.1:1");
        opts.max_retries = 0;
        opts.timeout = Duration::from_secs(2);
        let registry = HttpRegistry::new(opts).unwrap();
        assert!(registry.subjects().unwrap_err().is_unreachable());
        assert!(registry.agent.get().is_some());
    }

    #[test]
    fn tls_material_is_checked_when_the_registry_is_created() {
        let mut opts = HttpRegistryOptions::new("https://registry:8081");
        opts.ca_pem = Some(b"not a certificate".to_vec());
        let e = HttpRegistry::new(opts).err().unwrap();
        assert!(!e.is_unreachable());
        assert!(e.message.contains("CA bundle"), "{}", e.message);
        let mut opts = HttpRegistryOptions::new("https://registry:8081");
        opts.client_identity_pem = Some((b"x".to_vec(), b"y".to_vec()));
        let e = HttpRegistry::new(opts).err().unwrap();
        assert!(e.message.contains("client certificate"), "{}", e.message);
    }

    #[test]
    fn base_urls_need_scheme_and_host() {
        assert!(HttpRegistry::new(HttpRegistryOptions::new("localhost")).is_err());
        assert!(HttpRegistry::new(HttpRegistryOptions::new("http://h:8081/registry/")).is_ok());
    }
}
