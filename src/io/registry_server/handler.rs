//! The request workers: take a request from the `tiny_http` engine, log it, apply
//! delay / faults / Basic auth, route it, and write the JSON answer with the registry's
//! content type.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_http::{Header, Request, Response, Server};

use super::faults::{FaultAction, Faults, injected_error_code};
use super::relay::Relay;
use super::routes::{self, Reply};
use super::store::Store;

/// The media type of every answer.
pub const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";

/// How often an idle worker looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// One received request as the client sent it. `Debug` redacts the `Authorization` value.
#[derive(Clone, PartialEq, Eq)]
pub struct LoggedRequest {
    pub method: String,
    /// The raw (still percent-escaped) path, without the query string.
    pub path: String,
    /// The raw query string after `?`, if any.
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl std::fmt::Debug for LoggedRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let shown = if n.eq_ignore_ascii_case("Authorization") {
                    "<redacted>"
                } else {
                    v.as_str()
                };
                (n.as_str(), shown)
            })
            .collect();
        f.debug_struct("LoggedRequest")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("headers", &headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

impl LoggedRequest {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn body_json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// State shared by the server handle and its workers.
pub struct Shared {
    pub store: Mutex<Store>,
    pub faults: Mutex<Faults>,
    pub log: Mutex<Vec<LoggedRequest>>,
    /// The exact `Authorization` value required, if any.
    pub authorization: Option<String>,
    /// A context path such as `/registry` (empty for none), stripped before routing.
    pub context_path: String,
    pub stop: AtomicBool,
}

/// Locks, ignoring poisoning: a panicking test thread must not wedge the server.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Serves requests until the stop flag is set or the engine fails.
pub fn worker_loop(engine: Arc<Server>, shared: Arc<Shared>, relay: Arc<Relay>) {
    while !shared.stop.load(Ordering::SeqCst) {
        match engine.recv_timeout(POLL) {
            Ok(Some(rq)) => serve(rq, &shared, &relay),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!("registry server: engine stopped: {e}");
                return;
            }
        }
    }
}

fn serve(mut rq: Request, shared: &Shared, relay: &Relay) {
    let method = rq.method().as_str().to_string();
    let target = rq.url().to_string();
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), Some(q.to_string())),
        None => (target.clone(), None),
    };
    let headers: Vec<(String, String)> = rq
        .headers()
        .iter()
        .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_string()))
        .collect();
    let mut body = Vec::new();
    let _ = rq.as_reader().read_to_end(&mut body);
    let logged = LoggedRequest {
        method,
        path,
        query,
        headers,
        body,
    };
    lock(&shared.log).push(logged.clone());

    let delay = lock(&shared.faults).delay();
    if !delay.is_zero() && !sleep_unless_stopped(delay, &shared.stop) {
        // Shutting down: leave without a word rather than the engine's default 500.
        drop(rq.into_writer());
        return;
    }
    let reply = match lock(&shared.faults).take() {
        FaultAction::Drop => {
            if let Some(peer) = rq.remote_addr().copied() {
                relay.drop_connection(peer);
            }
            // Take the writer so that the engine does not try to answer on the closed socket.
            drop(rq.into_writer());
            return;
        }
        FaultAction::Raw(status, text) => {
            let response = Response::from_data(text.into_bytes())
                .with_status_code(status)
                .with_header(header("Content-Type", CONTENT_TYPE));
            let _ = rq.respond(response);
            return;
        }
        FaultAction::Fail(status) => Reply {
            status,
            body: routes::error_body(injected_error_code(status), "injected failure"),
        },
        FaultAction::Serve => answer(&logged, shared),
    };
    let mut response = json_response(&reply);
    if reply.status == 401 {
        response.add_header(header(
            "WWW-Authenticate",
            "Basic realm=\"schema-registry\"",
        ));
    }
    let _ = rq.respond(response);
}

/// Auth, context path, then the route table.
fn answer(rq: &LoggedRequest, shared: &Shared) -> Reply {
    if let Some(expected) = &shared.authorization
        && rq.header("Authorization") != Some(expected.as_str())
    {
        return Reply {
            status: 401,
            body: routes::error_body(40101, "unauthorized"),
        };
    }
    let Some(rest) = rq.path.strip_prefix(shared.context_path.as_str()) else {
        return not_found();
    };
    if !shared.context_path.is_empty() && !rest.is_empty() && !rest.starts_with('/') {
        return not_found();
    }
    let mut store = lock(&shared.store);
    routes::handle(&mut store, &rq.method, rest, &rq.body)
}

fn not_found() -> Reply {
    Reply {
        status: 404,
        body: routes::error_body(
            super::store::SUBJECT_NOT_FOUND,
            "subject or schema not found",
        ),
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("static header is valid")
}

fn json_response(reply: &Reply) -> Response<std::io::Cursor<Vec<u8>>> {
    let bytes = serde_json::to_vec(&reply.body).unwrap_or_default();
    Response::from_data(bytes)
        .with_status_code(reply.status)
        .with_header(header("Content-Type", CONTENT_TYPE))
}

/// Sleeps `total` in short slices; false when the server stopped meanwhile.
fn sleep_unless_stopped(total: Duration, stop: &AtomicBool) -> bool {
    let end = Instant::now() + total;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}
