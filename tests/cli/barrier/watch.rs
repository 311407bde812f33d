//! `barrier watch` follows `__barrier_state` as cuts are published.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use super::fixture::{Cluster, binary, cut};

const WAIT: Duration = Duration::from_secs(30);

/// A running `barrier watch` whose stderr lines arrive on a channel.
struct Watch {
    child: Child,
    stderr: Receiver<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(c: &Cluster, extra: &[&str]) -> Watch {
        let mut child = Command::new(binary())
            .args([
                "-b",
                &c.bootstrap(),
                "--timeout",
                "10s",
                "barrier",
                "watch",
                "--group",
                "audit",
            ])
            .args(["--poll-interval", "100ms"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn watch");
        let (tx, rx) = channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watch {
            child,
            stderr: rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a stderr line containing `needle`.
    fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Ok(line) = self.stderr.recv_timeout(Duration::from_millis(100)) {
                let found = line.contains(needle);
                self.seen.push(line);
                if found {
                    return;
                }
            }
        }
        let _ = self.child.kill();
        panic!("no stderr line with {needle:?}; saw {:?}", self.seen);
    }

    /// Waits for the process to exit; returns (code, stdout, every stderr line).
    fn finish(mut self) -> (Option<i32>, String, Vec<String>) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut out = String::new();
                std::io::Read::read_to_string(&mut self.child.stdout.take().unwrap(), &mut out)
                    .unwrap();
                // The reader thread ends at EOF, which closes the channel.
                self.seen.extend(self.stderr.iter());
                return (status.code(), out, self.seen);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("watch did not exit; stderr {:?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn watch_prints_only_cuts_published_after_it_starts_and_exits_0_after_count() {
    let mut c = Cluster::start();
    c.create_barrier_state(7);
    c.write_cut("audit", 1, &cut("orders", &[(0, 10)], &[]));
    let mut watch = Watch::start(&c, &["--count", "2", "--output", "json"]);
    watch.wait_for(
        "following __barrier_state (7 partitions) for new cuts of group audit after epoch 1",
    );
    c.write_cut("other", 9, &cut("orders", &[(0, 90)], &[]));
    c.write_cut("audit", 2, &cut("orders", &[(0, 20)], &[]));
    c.write_cut("audit", 3, &cut("orders", &[(0, 25)], &[1]));
    c.write_cut("audit", 4, &cut("orders", &[(0, 40)], &[]));
    let (code, out, _) = watch.finish();
    assert_eq!(code, Some(0), "{out}");
    let epochs: Vec<i64> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["epoch"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(epochs, [2, 4], "partial 3 skipped without --all:\n{out}");
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["topics"][0]["partitions"][0]["offset"], 20);
}

#[test]
fn watch_all_includes_partial_cuts_and_waits_for_the_topic_to_exist() {
    let mut c = Cluster::start();
    let mut watch = Watch::start(&c, &["--count", "1", "--all"]);
    watch.wait_for("__barrier_state does not exist yet");
    c.create_barrier_state(3);
    watch.wait_for("following __barrier_state (3 partitions)");
    c.write_cut("audit", 1, &cut("orders", &[(0, 10)], &[1]));
    let (code, out, _) = watch.finish();
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.starts_with("audit epoch 1 partial: completed 2024-08-24T11:46:40.042Z, 1 partitions, missing orders/1"),
        "{out}"
    );
}

#[test]
fn ctrl_c_ends_a_watch_with_exit_130() {
    let mut c = Cluster::start();
    c.create_barrier_state(2);
    let mut watch = Watch::start(&c, &[]);
    watch.wait_for("following __barrier_state");
    let pid = watch.child.id().to_string();
    let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(killed.success());
    let (code, out, err) = watch.finish();
    assert_eq!(code, Some(130), "{out}");
    assert_eq!(
        err.last().map(String::as_str),
        Some(
            "krabka-streams barrier watch: cancelled; a request in flight may already have reached the broker"
        ),
        "{err:?}"
    );
}
