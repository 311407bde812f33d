//! The embedded Kafka-protocol cluster: librdkafka's mock cluster, optionally
//! reachable on a fixed 127.0.0.1 port through a small TCP forwarder (the mock
//! itself always binds an ephemeral port), with Metadata advertising that port.

use std::ffi::{CStr, CString};
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::bindings as rdsys;
use rdkafka::producer::{BaseProducer, Producer};

/// Broker id of the single mock broker.
const BROKER_ID: i32 = 1;

/// A running embedded cluster. Dropping it stops the cluster and the forwarder.
pub struct EmbeddedCluster {
    // Field order matters: the mock cluster is destroyed before its owning client.
    mock: *mut rdsys::rd_kafka_mock_cluster_t,
    _client: BaseProducer,
    bootstrap: String,
    stop: Arc<AtomicBool>,
    forwarder: Option<thread::JoinHandle<()>>,
}

// The mock cluster handle is thread-safe in librdkafka (it runs its own thread
// and every mock API call takes the cluster lock).
unsafe impl Send for EmbeddedCluster {}
unsafe impl Sync for EmbeddedCluster {}

impl EmbeddedCluster {
    /// Starts a one-broker mock cluster. With `port`, it is served on `127.0.0.1:<port>`.
    pub fn start(port: Option<u16>) -> io::Result<Self> {
        let client: BaseProducer = ClientConfig::new()
            .set("log_level", "3")
            .create()
            .map_err(|e| io::Error::other(format!("cannot create the mock cluster client: {e}")))?;
        // SAFETY: the client outlives the mock cluster (destroyed first in Drop).
        let mock = unsafe { rdsys::rd_kafka_mock_cluster_new(client.client().native_ptr(), 1) };
        if mock.is_null() {
            return Err(io::Error::other(
                "librdkafka could not create a mock cluster",
            ));
        }
        // SAFETY: `mock` is a live cluster; the returned string is owned by it.
        let ephemeral = unsafe { CStr::from_ptr(rdsys::rd_kafka_mock_cluster_bootstraps(mock)) }
            .to_string_lossy()
            .into_owned();
        let mut cluster = EmbeddedCluster {
            mock,
            _client: client,
            bootstrap: ephemeral.clone(),
            stop: Arc::new(AtomicBool::new(false)),
            forwarder: None,
        };
        if let Some(port) = port {
            let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot listen on 127.0.0.1:{port}: {e}"))
            })?;
            let bound = listener.local_addr()?.port();
            let target: SocketAddr = ephemeral
                .parse()
                .map_err(|e| io::Error::other(format!("mock bootstrap {ephemeral}: {e}")))?;
            let host = CString::new("127.0.0.1").expect("no NUL");
            // SAFETY: live cluster, NUL-terminated host.
            unsafe {
                rdsys::rd_kafka_mock_broker_set_host_port(
                    mock,
                    BROKER_ID,
                    host.as_ptr(),
                    i32::from(bound),
                );
            }
            let stop = cluster.stop.clone();
            cluster.forwarder = Some(thread::spawn(move || forward(listener, target, stop)));
            cluster.bootstrap = format!("127.0.0.1:{bound}");
        }
        Ok(cluster)
    }

    /// The address clients bootstrap from.
    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// Creates a topic (the mock answers CreateTopics only after a timeout, so this is the way).
    pub fn create_topic(&self, name: &str, partitions: i32) -> io::Result<()> {
        let topic = CString::new(name).map_err(|_| io::Error::other("topic name contains NUL"))?;
        // SAFETY: live cluster, NUL-terminated name.
        let err =
            unsafe { rdsys::rd_kafka_mock_topic_create(self.mock, topic.as_ptr(), partitions, 1) };
        if err == rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "cannot create topic {name}: {err:?}"
            )))
        }
    }
}

impl EmbeddedCluster {
    /// Fault injection: the next `errors.len()` requests of `api_key` fail, one
    /// error each, in order (the mock's only way to show fencing and retries).
    pub fn push_request_errors(&self, api_key: i16, errors: &[rdsys::rd_kafka_resp_err_t]) {
        // SAFETY: live cluster; the array is read during the call only.
        unsafe {
            rdsys::rd_kafka_mock_push_request_errors_array(
                self.mock,
                api_key,
                errors.len(),
                errors.as_ptr(),
            );
        }
    }
}

impl Drop for EmbeddedCluster {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.forwarder.take() {
            // Wake the accept loop so it sees the stop flag.
            if let Some(port) = self
                .bootstrap
                .rsplit(':')
                .next()
                .and_then(|p| p.parse::<u16>().ok())
            {
                let _ = TcpStream::connect_timeout(
                    &SocketAddr::from(([127, 0, 0, 1], port)),
                    Duration::from_millis(200),
                );
            }
            let _ = handle.join();
        }
        // SAFETY: created by rd_kafka_mock_cluster_new and destroyed exactly once.
        unsafe { rdsys::rd_kafka_mock_cluster_destroy(self.mock) };
        let _ = self._client.flush(Duration::from_millis(0));
    }
}

fn forward(listener: TcpListener, target: SocketAddr, stop: Arc<AtomicBool>) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = conn else { continue };
        let Ok(server) = TcpStream::connect(target) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
            continue;
        };
        thread::spawn(move || pipe(client, server));
        thread::spawn(move || pipe(s2, c2));
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
