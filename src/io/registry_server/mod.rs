//! A Confluent-compatible schema-registry server over real HTTP on `127.0.0.1`, for the
//! test suites and the `demo` subcommand. It serves the route table of
//! `docs/testing.md` §c from memory, logs every request with its raw (still escaped)
//! path, and offers hooks: fault injection (error statuses, a delay, dropped
//! connections), an optional Basic-auth requirement, and seeding of subjects and ids.
//!
//! Layout: [`store`] holds the registry rules, `routes` the REST mapping, `faults` the
//! injected failures, `handler` the request workers on top of the `tiny_http` engine,
//! and `relay` the public TCP front that can drop a connection and closes all of them
//! at shutdown. Dropping a [`RegistryServer`] stops it and joins its threads.

mod faults;
mod handler;
mod relay;
mod routes;
pub mod store;

#[cfg(test)]
mod tests;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use base64::Engine as _;

pub use handler::{CONTENT_TYPE, LoggedRequest};
pub use store::{SchemaRecord, SchemaReference};

use faults::Faults;
use handler::{Shared, lock};
use relay::Relay;
use store::Store;

/// How to start a [`RegistryServer`].
#[derive(Clone)]
pub struct RegistryServerOptions {
    /// The loopback port to listen on; 0 picks a free one.
    pub port: u16,
    /// When set, every request must carry `Authorization: Basic base64(user:password)`.
    pub basic_auth: Option<(String, String)>,
    /// A context path such as `/registry` that every route lives under (empty for none).
    pub context_path: String,
    /// Requests served at the same time (at least 1).
    pub workers: usize,
}

impl Default for RegistryServerOptions {
    fn default() -> Self {
        RegistryServerOptions {
            port: 0,
            basic_auth: None,
            context_path: String::new(),
            workers: 4,
        }
    }
}

impl std::fmt::Debug for RegistryServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryServerOptions")
            .field("port", &self.port)
            .field(
                "basic_auth",
                &self.basic_auth.as_ref().map(|(u, _)| (u, "<redacted>")),
            )
            .field("context_path", &self.context_path)
            .field("workers", &self.workers)
            .finish()
    }
}

impl RegistryServerOptions {
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    pub fn basic_auth(mut self, user: &str, password: &str) -> Self {
        self.basic_auth = Some((user.to_string(), password.to_string()));
        self
    }

    pub fn context_path(mut self, path: &str) -> Self {
        self.context_path = path.trim_end_matches('/').to_string();
        self
    }
}

/// A running registry. Dropping it closes every connection and joins its threads.
pub struct RegistryServer {
    shared: Arc<Shared>,
    relay: Arc<Relay>,
    engine: Option<Arc<tiny_http::Server>>,
    workers: Vec<JoinHandle<()>>,
}

impl RegistryServer {
    /// Binds `127.0.0.1:<port>` and starts serving.
    pub fn start(options: RegistryServerOptions) -> io::Result<RegistryServer> {
        let engine = tiny_http::Server::http("127.0.0.1:0").map_err(io::Error::other)?;
        let engine_addr = engine
            .server_addr()
            .to_ip()
            .ok_or_else(|| io::Error::other("registry engine has no IP address"))?;
        let engine = Arc::new(engine);
        let relay = Arc::new(Relay::start(options.port, engine_addr)?);
        let authorization = options.basic_auth.as_ref().map(|(user, password)| {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            format!("Basic {token}")
        });
        let shared = Arc::new(Shared {
            store: Mutex::new(Store::default()),
            faults: Mutex::new(Faults::default()),
            log: Mutex::new(Vec::new()),
            authorization,
            context_path: options.context_path.trim_end_matches('/').to_string(),
            stop: AtomicBool::new(false),
        });
        let mut server = RegistryServer {
            shared,
            relay,
            engine: Some(engine.clone()),
            workers: Vec::new(),
        };
        for i in 0..options.workers.max(1) {
            let (engine, shared, relay) =
                (engine.clone(), server.shared.clone(), server.relay.clone());
            let handle = thread::Builder::new()
                .name(format!("registry-worker-{i}"))
                .spawn(move || handler::worker_loop(engine, shared, relay))?;
            server.workers.push(handle);
        }
        Ok(server)
    }

    /// Starts with default options on a free port.
    pub fn start_default() -> io::Result<RegistryServer> {
        Self::start(RegistryServerOptions::default())
    }

    /// The public address, `127.0.0.1:<port>`.
    pub fn addr(&self) -> SocketAddr {
        self.relay.addr()
    }

    /// The base URL, `http://127.0.0.1:<port>` plus the context path.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr(), self.shared.context_path)
    }

    /// Every request so far as (method, raw still-escaped path without query), oldest first.
    pub fn requests(&self) -> Vec<(String, String)> {
        lock(&self.shared.log)
            .iter()
            .map(|r| (r.method.clone(), r.path.clone()))
            .collect()
    }

    /// Every request so far with its query, headers and body.
    pub fn request_log(&self) -> Vec<LoggedRequest> {
        lock(&self.shared.log).clone()
    }

    /// Forgets the request log.
    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }

    /// The next `n` requests are answered `status` (e.g. 500 or 429) with
    /// `{"error_code": status*100+1, "message": "injected failure"}` and change nothing.
    pub fn fail_next(&self, n: u32, status: u16) {
        lock(&self.shared.faults).fail_next(n, status);
    }

    /// The next `n` requests are answered `status` with exactly `body` (which need not be
    /// JSON) and change nothing: error bodies of other registries, malformed 2xx answers.
    pub fn respond_next(&self, n: u32, status: u16, body: &str) {
        lock(&self.shared.faults).respond_next(n, status, body);
    }

    /// The connections of the next `n` requests are closed without an answer.
    pub fn drop_next(&self, n: u32) {
        lock(&self.shared.faults).drop_next(n);
    }

    /// Every later request waits `delay` before it is handled; `Duration::ZERO` turns it off.
    pub fn delay(&self, delay: Duration) {
        lock(&self.shared.faults).set_delay(delay);
    }

    /// Clears every pending fault and the delay.
    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }

    /// Registers `record` under `subject` as a client would, without checking its
    /// references; answers (id, version).
    pub fn seed(&self, subject: &str, record: SchemaRecord) -> (u32, i32) {
        lock(&self.shared.store).register_unchecked(subject, record)
    }

    /// Stores `record` under a chosen global id without a subject (later ids continue above it).
    pub fn seed_id(&self, id: u32, record: SchemaRecord) {
        lock(&self.shared.store).insert_with_id(id, record);
    }

    /// Stops serving and joins every thread; also done on drop.
    pub fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.relay.shutdown();
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
        // The last reference: tiny_http stops its accept thread on drop.
        self.engine.take();
    }
}

impl Drop for RegistryServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl std::fmt::Debug for RegistryServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryServer")
            .field("url", &self.url())
            .field(
                "auth",
                &self.shared.authorization.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}
