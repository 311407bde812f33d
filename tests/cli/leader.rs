//! `leader` end to end against the real broker (Tansu): two `leader run`
//! members with short leases (3 s lease, 1 s renew, 1 s stagger, 1 s poll).
//! The holder killed with SIGKILL is replaced within lease + stagger + one
//! poll; a holder frozen past its lease (SIGSTOP) is fenced on resume and its
//! command stopped; a restarted member queues at the tail; the command's exit
//! code passes through; an operator resign fences the holder.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::tansu::Tansu;
use crate::support::{binary, unique_name};

const LEASE: Duration = Duration::from_secs(3);
const STAGGER: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_secs(1);
/// Process start, a shell and a commit on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(1500);
const WAIT: Duration = Duration::from_secs(30);

/// One election: a broker, a unique topic and role, and a scratch directory.
struct Election {
    broker: Tansu,
    topic: String,
    role: String,
    dir: tempfile::TempDir,
}

/// A `leader run` process in its own process group, killed on drop.
struct Member {
    name: String,
    child: Child,
    stderr: PathBuf,
    pidfile: PathBuf,
}

impl Election {
    fn new() -> Self {
        Election {
            broker: Tansu::start(),
            topic: unique_name("coord"),
            role: unique_name("role"),
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn tokens_file(&self) -> PathBuf {
        self.dir.path().join("tokens")
    }

    /// Starts a member whose command records "<member> <token>" and sleeps.
    fn start(&self, name: &str) -> Member {
        let pidfile = self.dir.path().join(format!("{name}.pid"));
        let script = format!(
            "echo $$ > {pid}; echo \"$KRABKA_LEADER_MEMBER $KRABKA_LEADER_TOKEN\" >> {tokens}; exec sleep 600",
            pid = pidfile.display(),
            tokens = self.tokens_file().display()
        );
        self.start_with(name, &["sh", "-c", &script], pidfile)
    }

    fn start_with(&self, name: &str, command: &[&str], pidfile: PathBuf) -> Member {
        let stderr = self
            .dir
            .path()
            .join(format!("{name}-{}.log", unique_name("run")));
        let mut cmd = Command::new(binary());
        cmd.args(["-b", &self.broker.bootstrap(), "leader", "run"])
            .args([
                "--role",
                &self.role,
                "--member",
                name,
                "--topic",
                &self.topic,
            ])
            .args(timing("1s"))
            .args(["--grace", "2s", "--create-topic", "--"])
            .args(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(&stderr).expect("log file"))
            .process_group(0);
        Member {
            name: name.to_string(),
            child: cmd.spawn().expect("start leader run"),
            stderr,
            pidfile,
        }
    }

    /// Runs a `leader` subcommand to completion (bounded by --timeout).
    fn leader(&self, args: &[&str]) -> std::process::Output {
        Command::new(binary())
            .args(["-b", &self.broker.bootstrap(), "--timeout", "20s", "leader"])
            .args(args)
            .args(["--topic", &self.topic])
            .stdin(Stdio::null())
            .output()
            .expect("run leader")
    }

    fn status(&self) -> Value {
        let out = self.leader(&[
            "status",
            "--role",
            &self.role,
            "--output",
            "json",
            "--lease",
            "3s",
            "--renew",
            "1s",
            "--stagger",
            "1s",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).expect("json")["data"].clone()
    }

    fn roster(&self) -> Vec<String> {
        let status = self.status();
        let mut roster: Vec<(i64, String)> = status["roster"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["offset"].as_i64().unwrap(),
                    e["member"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        roster.sort();
        roster.into_iter().map(|(_, m)| m).collect()
    }

    /// The "<member> <token>" lines the commands wrote so far.
    fn tokens(&self) -> Vec<(String, String)> {
        fs::read_to_string(self.tokens_file())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(m, t)| (m.to_string(), t.to_string()))
            .collect()
    }

    /// Waits until the command of `member` has started `n` times in all.
    fn wait_for_token(
        &self,
        member: &str,
        n: usize,
        members: &mut [&mut Member],
    ) -> (String, Instant) {
        let until = Instant::now() + WAIT;
        loop {
            let held: Vec<_> = self
                .tokens()
                .into_iter()
                .filter(|(m, _)| m == member)
                .collect();
            if held.len() >= n {
                return (held[n - 1].1.clone(), Instant::now());
            }
            for m in members.iter_mut() {
                if let Ok(Some(status)) = m.child.try_wait() {
                    panic!("{} exited early with {status}:\n{}", m.name, m.log());
                }
            }
            assert!(
                Instant::now() < until,
                "{member} never held the role; tokens {:?}",
                self.tokens()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// node-a holding the role (with its first token) and node-b registered behind it.
    fn holder_and_standby(&self) -> (Member, String, Member) {
        let mut a = self.start("node-a");
        let (first, _) = self.wait_for_token("node-a", 1, &mut [&mut a]);
        let b = self.start("node-b");
        self.wait_for_roster(&["node-a", "node-b"]);
        (a, first, b)
    }

    fn wait_for_roster(&self, want: &[&str]) {
        let until = Instant::now() + WAIT;
        loop {
            let roster = self.roster();
            if roster == want {
                return;
            }
            assert!(Instant::now() < until, "roster {roster:?}, wanted {want:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Member {
    fn log(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The pid (and process group) of the member's command.
    fn command_pid(&self) -> i32 {
        fs::read_to_string(&self.pidfile)
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid")
    }

    fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let until = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < until,
                "{} did not exit:\n{}",
                self.name,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        signal(-self.pid(), libc::SIGKILL);
        let _ = self.child.wait();
    }
}

/// The lease timing every member runs with (LEASE, a 1s renew, STAGGER), polling every `poll`.
fn timing(poll: &str) -> [&str; 8] {
    [
        "--lease",
        "3s",
        "--renew",
        "1s",
        "--stagger",
        "1s",
        "--poll",
        poll,
    ]
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: plain syscall on a pid or process group we started.
    unsafe {
        libc::kill(pid, sig);
    }
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0): look at its state instead.
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

fn wait_dead(pid: i32, within: Duration) {
    let until = Instant::now() + within;
    while alive(pid) {
        assert!(Instant::now() < until, "process {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn token_of(text: &str) -> (i64, i16) {
    let (id, epoch) = text.split_once(':').expect("token");
    (id.parse().unwrap(), epoch.parse().unwrap())
}

#[test]
fn kill_9_of_the_holder_hands_the_role_to_the_standby_within_lease_stagger_and_a_poll() {
    let e = Election::new();
    let (mut a, first, mut b) = e.holder_and_standby();
    let a_command = a.command_pid();

    let watch = Command::new(binary())
        .args([
            "-b",
            &e.broker.bootstrap(),
            "--output",
            "json",
            "leader",
            "watch",
        ])
        .args([
            "--role", &e.role, "--topic", &e.topic, "--poll", "200ms", "--for", "9s",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("watch");
    std::thread::sleep(Duration::from_millis(500));

    let killed = Instant::now();
    signal(a.pid(), libc::SIGKILL);
    let (second, took_over) = e.wait_for_token("node-b", 1, &mut [&mut b]);
    let failover = took_over - killed;
    assert!(
        failover <= LEASE + STAGGER + POLL + SLACK,
        "failover took {failover:?}\n{}",
        b.log()
    );
    assert!(
        token_of(&second) > token_of(&first),
        "{second} after {first}"
    );
    // The dead holder's command went with it (parent-death signal).
    wait_dead(a_command, Duration::from_secs(5));

    // `watch` saw node-a hold, then node-b with the newer token.
    let watched = watch.wait_with_output().expect("watch output");
    assert!(watched.status.success());
    let events: Vec<Value> = String::from_utf8_lossy(&watched.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(events.first().unwrap()["holder"], "node-a", "{events:?}");
    let last = events.last().unwrap();
    assert_eq!(
        (&last["holder"], &last["token"], &last["live"]),
        (&"node-b".into(), &second.as_str().into(), &true.into()),
        "{events:?}"
    );

    // `list` shows the role; the killed node-a is still registered until an operator removes it.
    let list = e.leader(&["list", "--output", "json"]);
    let list: Value = serde_json::from_slice(&list.stdout).expect("json");
    let roles = list["data"]["roles"].as_array().unwrap();
    assert_eq!(roles.len(), 1);
    assert_eq!(roles[0]["holder"]["member"], "node-b");
    assert_eq!(roles[0]["epoch"]["verified"], false);
    let _ = a.child.wait();
    let dry = e.leader(&[
        "deregister",
        "--role",
        &e.role,
        "--member",
        "node-a",
        "--dry-run",
    ]);
    assert!(dry.status.success());
    assert!(String::from_utf8_lossy(&dry.stdout).starts_with("DRY RUN: no change was made."));
    assert_eq!(e.roster(), ["node-a", "node-b"]);
    let out = e.leader(&[
        "deregister",
        "--role",
        &e.role,
        "--member",
        "node-a",
        "--yes",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    e.wait_for_roster(&["node-b"]);

    // A restarted node-a registers behind node-b: no failback.
    let mut a2 = e.start("node-a");
    e.wait_for_roster(&["node-b", "node-a"]);
    let status = e.status();
    assert_eq!(status["holder"]["member"], "node-b");
    assert_eq!(status["holder"]["token"], second.as_str());
    assert!(a2.child.try_wait().unwrap().is_none(), "{}", a2.log());
}

#[test]
fn a_holder_frozen_past_its_lease_is_fenced_on_resume_and_its_command_stopped() {
    let e = Election::new();
    let (mut a, first, mut b) = e.holder_and_standby();
    let a_command = a.command_pid();

    signal(-a.pid(), libc::SIGSTOP);
    signal(-a_command, libc::SIGSTOP);
    let (second, _) = e.wait_for_token("node-b", 1, &mut [&mut b]);
    assert!(token_of(&second) > token_of(&first));
    signal(-a_command, libc::SIGCONT);
    signal(-a.pid(), libc::SIGCONT);

    let status = a.wait_exit(LEASE + SLACK + Duration::from_secs(3));
    let log = a.log();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(
        log.contains("fenced: another member holds the role"),
        "{log}"
    );
    assert!(log.contains("the command was stopped (SIGTERM)"), "{log}");
    wait_dead(a_command, Duration::from_secs(5));
    // node-a never held the role again; node-b still does.
    assert_eq!(e.tokens().iter().filter(|(m, _)| m == "node-a").count(), 1);
    e.wait_for_roster(&["node-b"]);

    // node-a recovers and lands at the tail.
    let _a2 = e.start("node-a");
    e.wait_for_roster(&["node-b", "node-a"]);
    assert_eq!(e.status()["holder"]["member"], "node-b");
    assert!(b.child.try_wait().unwrap().is_none(), "{}", b.log());
}

#[test]
fn the_command_exit_code_passes_through_and_the_member_resigns_and_leaves() {
    let e = Election::new();
    let pidfile = e.dir.path().join("unused.pid");
    let mut m = e.start_with(
        "node-a",
        &[
            "sh",
            "-c",
            "test \"$KRABKA_LEADER_ROLE\" = \"$0\" && exit 7",
            &e.role,
        ],
        pidfile,
    );
    let status = m.wait_exit(WAIT);
    assert_eq!(status.code(), Some(7), "{}", m.log());
    let status = e.status();
    assert!(status["holder"].is_null(), "{status}");
    assert_eq!(status["roster"], serde_json::json!([]));
}

#[test]
fn an_operator_resign_fences_the_holder_which_stops_its_command() {
    let e = Election::new();
    let mut a = e.start("node-a");
    let (first, _) = e.wait_for_token("node-a", 1, &mut [&mut a]);
    let a_command = a.command_pid();

    let refused = e.leader(&["resign", "--role", &e.role, "--member", "node-a"]);
    assert_eq!(refused.status.code(), Some(2), "no --yes on a closed stdin");
    let wrong = e.leader(&["resign", "--role", &e.role, "--member", "node-z", "--yes"]);
    assert_eq!(wrong.status.code(), Some(1));

    let out = e.leader(&[
        "resign", "--role", &e.role, "--member", "node-a", "--yes", "--output", "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(data["data"]["fenced_token"], first.as_str());

    let status = a.wait_exit(LEASE + SLACK);
    assert_eq!(status.code(), Some(1), "{}", a.log());
    assert!(a.log().contains("fenced: another member holds the role"));
    wait_dead(a_command, Duration::from_secs(5));
}

#[test]
fn a_missing_topic_means_no_registrations_and_an_unverifiable_token_exits_4() {
    let e = Election::new();
    let out = e.leader(&["status", "--role", &e.role, "--output", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(data["data"]["roster"], serde_json::json!([]));
    assert_eq!(data["data"]["epoch"]["verified"], false);

    let out = e.leader(&["status", "--role", &e.role, "--expect-token", "1:0"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unverified"));
    let out = e.leader(&["status", "--role", &e.role, "--expect-token", "1-0"]);
    assert_eq!(out.status.code(), Some(2));

    let list = e.leader(&["list", "--output", "json"]);
    assert!(list.status.success());
    let data: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(data["data"]["exists"], false);

    let out = Command::new(binary())
        .args([
            "-b",
            &e.broker.bootstrap(),
            "leader",
            "run",
            "--role",
            &e.role,
            "--member",
            "m",
        ])
        .args(["--topic", &e.topic, "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --create-topic"));
}

#[test]
fn a_standby_takes_over_at_once_when_the_holder_resigns_and_ctrl_c_resigns_it() {
    let e = Election::new();
    let go = e.dir.path().join("go");
    let script = format!(
        "while [ ! -e {go} ]; do sleep 0.05; done; exit 0",
        go = go.display()
    );
    let mut a = e.start_with("node-a", &["sh", "-c", &script], e.dir.path().join("a.pid"));
    e.wait_for_roster(&["node-a"]);
    let until = Instant::now() + WAIT;
    while e.status()["holder"]["member"] != "node-a" {
        assert!(Instant::now() < until, "{}", a.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut standby = Command::new(binary());
    standby
        .args(["-b", &e.broker.bootstrap(), "leader", "run", "--standby"])
        .args(["--role", &e.role, "--member", "node-s", "--topic", &e.topic])
        .args(timing("200ms"))
        .stdin(Stdio::null())
        .stderr(fs::File::create(e.dir.path().join("standby.log")).unwrap())
        .process_group(0);
    let mut s = Member {
        name: "node-s".into(),
        child: standby.spawn().expect("standby"),
        stderr: e.dir.path().join("standby.log"),
        pidfile: e.dir.path().join("s.pid"),
    };
    e.wait_for_roster(&["node-a", "node-s"]);

    // node-a's command finishes: it resigns and leaves; the standby needs no lease expiry.
    fs::write(&go, b"").unwrap();
    let resigned = Instant::now();
    assert_eq!(a.wait_exit(WAIT).code(), Some(0), "{}", a.log());
    while e.status()["holder"]["member"] != "node-s" {
        assert!(
            resigned.elapsed() < LEASE,
            "standby waited for the lease:\n{}",
            s.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    e.wait_for_roster(&["node-s"]);

    // Ctrl-C: the standby resigns, leaves and exits 130.
    signal(s.pid(), libc::SIGINT);
    assert_eq!(s.wait_exit(WAIT).code(), Some(130), "{}", s.log());
    let status = e.status();
    assert!(status["holder"].is_null(), "{status}");
    assert_eq!(status["roster"], serde_json::json!([]));
}
