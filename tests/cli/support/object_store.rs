//! An S3-compatible object store on 127.0.0.1 for a Tansu broker that keeps its data
//! across `kill -9` and restart: moto's server (`moto[server]` from
//! `scripts/test-requirements.txt`, in the virtual environment at `$KRABKA_TEST_VENV`),
//! one process per test on a free port, with one bucket made for that test. The server
//! is killed on drop, and with it every object (moto keeps them in memory).
//!
//! Tansu reaches it through the `AWS_*` variables of [`ObjectStore::env`] and
//! `--storage-engine s3://<bucket>/` ([`ObjectStore::storage_url`]).

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tansu::{Tansu, free_port, log_dir, test_venv};

/// Importing moto's server pulls in Flask and every AWS backend: seconds on a busy machine.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Attempts with a new port when the chosen one was taken meanwhile.
const START_ATTEMPTS: u32 = 3;

/// A running moto S3 server with one bucket.
pub struct ObjectStore {
    child: Child,
    addr: SocketAddr,
    bucket: String,
    log: PathBuf,
}

impl ObjectStore {
    /// Starts moto on a free loopback port and creates a bucket no other test uses.
    /// Panics with moto's log when it cannot start, or with a hint to run `scripts/test`
    /// when moto is not installed.
    pub fn start() -> ObjectStore {
        let bin = moto_binary();
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(&bin) {
                Ok(store) => return store,
                Err(e) => failures.push(e),
            }
        }
        panic!(
            "cannot start moto ({}):\n{}",
            bin.display(),
            failures.join("\n---\n")
        );
    }

    fn try_start(bin: &PathBuf) -> Result<ObjectStore, String> {
        let port = free_port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let log = log_dir().join(format!("moto-{port}.log"));
        let out =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        // From here on, drop kills the process whatever happens.
        let mut store = ObjectStore {
            child,
            addr,
            bucket: bucket_name(),
            log,
        };
        store.wait_ready()?;
        store.create_bucket()?;
        Ok(store)
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("moto exited with {status}:\n{}", self.log_text()));
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "moto did not accept on {} within {READY_TIMEOUT:?}:\n{}",
                    self.addr,
                    self.log_text()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `PUT /<bucket>`: moto checks no signature, so a bare HTTP request does (no boto3).
    fn create_bucket(&self) -> Result<(), String> {
        let answer = self.http("PUT", &format!("/{}", self.bucket))?;
        if answer.starts_with("HTTP/1.1 200") {
            Ok(())
        } else {
            Err(format!(
                "moto refused to create bucket {}: {answer}\n{}",
                self.bucket,
                self.log_text()
            ))
        }
    }

    /// The keys in the bucket (at most 1000, enough for a test), for assertions on what
    /// the broker stored.
    pub fn keys(&self) -> Vec<String> {
        let answer = self
            .http("GET", &format!("/{}?list-type=2", self.bucket))
            .unwrap_or_else(|e| panic!("cannot list bucket {}: {e}", self.bucket));
        answer
            .split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_owned)
            .collect()
    }

    /// One HTTP/1.0-style exchange (the server closes after answering); the whole answer.
    fn http(&self, method: &str, path: &str) -> Result<String, String> {
        let mut conn = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5))
            .map_err(|e| format!("connect {}: {e}", self.addr))?;
        conn.set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        write!(
            conn,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.addr
        )
        .map_err(|e| format!("send to {}: {e}", self.addr))?;
        let mut answer = String::new();
        conn.read_to_string(&mut answer)
            .map_err(|e| format!("read from {}: {e}", self.addr))?;
        Ok(answer)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Tansu's `--storage-engine` value: `s3://<bucket>/`.
    pub fn storage_url(&self) -> String {
        format!("s3://{}/", self.bucket)
    }

    /// The environment an S3 client (Tansu's `object_store`) needs to use this server:
    /// any keys (moto checks none), plain HTTP allowed.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", "krabka-test".into()),
            ("AWS_SECRET_ACCESS_KEY", "krabka-test".into()),
            ("AWS_DEFAULT_REGION", "eu-west-2".into()),
            ("AWS_REGION", "eu-west-2".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// moto's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ObjectStore {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Tansu {
    /// Starts a broker that keeps its data in `store`'s bucket: it survives
    /// [`Tansu::kill_9`] and [`Tansu::restart`]. `store` must outlive the broker.
    pub fn start_persistent(store: &ObjectStore) -> Tansu {
        Self::start_persistent_with(store, None, &[])
    }

    /// [`Tansu::start_persistent`] with what [`Tansu::start_with`] takes.
    pub fn start_persistent_with(
        store: &ObjectStore,
        advertised: Option<u16>,
        extra: &[&str],
    ) -> Tansu {
        Tansu::start_on_storage(&store.storage_url(), store.env(), advertised, extra)
    }
}

/// S3 bucket names: 3–63 characters of lowercase letters, digits and hyphens.
fn bucket_name() -> String {
    let name = super::unique_name("krabka").to_ascii_lowercase();
    name.chars().take(63).collect()
}

/// `moto_server` from the test virtual environment.
fn moto_binary() -> PathBuf {
    let bin = test_venv().join("bin").join("moto_server");
    assert!(
        bin.is_file(),
        "{} is missing: moto[server] is not installed in the test virtual environment {} \
         (set KRABKA_TEST_VENV). Run scripts/test, which installs scripts/test-requirements.txt.",
        bin.display(),
        test_venv().display()
    );
    bin
}
