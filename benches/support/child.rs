//! The child processes the broker benches time: the `tail` command that
//! `tail_broker` and `run_broker` both run, and waiting for a child while sampling
//! its peak RSS from /proc. Shared by `tail_broker` and `run_broker`.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `bin tail TOPIC -e --value-format avro --format arrow -q` against `bootstrap` and
/// `registry`, its Arrow IPC to /dev/null and its stderr piped (for the failure
/// message); callers add their own options (a consumer group) before spawning.
pub fn tail_command(bin: &str, topic: &str, bootstrap: &str, registry: &str) -> Command {
    let mut command = Command::new(bin);
    command
        .args(["tail", topic, "-e", "--value-format", "avro"])
        .args(["--format", "arrow", "-q"])
        .args(["-b", bootstrap, "--registry", registry])
        .stdout(std::fs::File::create("/dev/null").unwrap())
        .stderr(Stdio::piped());
    command
}

/// Waits for the child, sampling its peak RSS, until it exits or `until()` holds;
/// (exit success, or true when `until` ended the wait; peak KiB).
pub fn wait_sampling(child: &mut Child, until: impl Fn() -> bool) -> (bool, u64) {
    let mut rss = 0;
    loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            rss = rss.max(kib);
        }
        if until() {
            return (true, rss);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status.success(), rss);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The peak resident set of a live process, from /proc.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
