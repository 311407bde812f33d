//! The binary under test as a background process: output captured in files (no pipe can
//! fill up and block it), waited for with a bound, killed on drop.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running `krabka-streams` whose stdout and stderr go to files in `dir`.
pub struct Running {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
    started: Instant,
}

/// How a bounded run ended.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Finished {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

impl Running {
    /// Starts the binary with `args`, stdin closed, environment defaults removed.
    pub fn start(dir: &Path, args: &[&str]) -> Running {
        let name = super::unique_name("run");
        let stdout = dir.join(format!("{name}.out"));
        let stderr = dir.join(format!("{name}.err"));
        let child = Command::new(super::binary())
            .args(args)
            .env_remove("KRABKA_BOOTSTRAP_SERVER")
            .env_remove("KRABKA_OUTPUT")
            .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
            .env_remove("KRABKA_SCHEMA_REGISTRY_PASSWORD")
            .stdin(Stdio::null())
            .stdout(File::create(&stdout).expect("stdout file"))
            .stderr(File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("run krabka-streams");
        Running {
            child,
            stdout,
            stderr,
            started: Instant::now(),
        }
    }

    /// What the process wrote to stdout so far.
    pub fn stdout_so_far(&self) -> Vec<u8> {
        std::fs::read(&self.stdout).unwrap_or_default()
    }

    /// Waits at most `bound` for the exit; panics (after killing it) when it did not end.
    pub fn wait(mut self, bound: Duration) -> Finished {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for krabka-streams") {
                return Finished {
                    status,
                    stdout: std::fs::read(&self.stdout).unwrap_or_default(),
                    stderr: std::fs::read_to_string(&self.stderr).unwrap_or_default(),
                    elapsed: self.started.elapsed(),
                };
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "krabka-streams did not end within {bound:?}; stderr:\n{}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Ctrl-C (SIGINT), then [`Running::wait`] for the exit.
    pub fn interrupt_and_wait(self, bound: Duration) -> Finished {
        // SAFETY: a plain signal to our own child, which has not been reaped yet.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        self.wait(bound)
    }

    /// What the process wrote to stderr so far.
    pub fn stderr_so_far(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGKILL now; returns once the process is reaped.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
