//! A refused SASL login ends every command that talks to Kafka at once: exit 1 with
//! `authentication failed: the broker refused the SASL <mech> login as user "alice": …`,
//! well before `--timeout` (20 s here, the bound 8 s), human and `--output json`, the
//! password nowhere. `tail` and `leader list` are in `security_sasl`; here the online
//! runner (at-least-once with its producer, exactly-once with its transactional
//! producer, `--restore-cut`), the barrier commands, `snapshot restore-cut`, and
//! `leader run` (the coordination client's writes).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::security_sasl::{
    ALICE_PW, BOB_PW, BOUND, SaslCluster, WRONG_PW, assert_no_password, properties, sasl_cluster,
};
use crate::support::admin::create_topic_with_values;
use crate::support::process::{Finished, Running};
use crate::support::unique_name;

/// Far longer than a refusal takes; a command that waited it out fails [`FAST`].
const TIMEOUT: &str = "20s";
const FAST: Duration = Duration::from_secs(8);
const MECHANISM: &str = "SCRAM-SHA-256";

/// The global arguments every command here connects with.
fn connection<'a>(c: &'a SaslCluster, config: &'a str) -> Vec<&'a str> {
    vec![
        "-b",
        &c.bootstrap,
        "--command-config",
        config,
        "--timeout",
        TIMEOUT,
        "--request-timeout-ms",
        "3000",
    ]
}

fn run(dir: &Path, c: &SaslCluster, config: &str, args: &[&str]) -> Finished {
    let mut all = connection(c, config);
    all.extend_from_slice(args);
    Running::start(dir, &all).wait(BOUND)
}

/// Exit 1 within [`FAST`], the refusal as the final line, no password.
fn assert_refused_at_once(out: &Finished, what: &str) {
    assert_eq!(out.code(), 1, "{what}: {}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!(
            "authentication failed: the broker refused the SASL {MECHANISM} login as user \"alice\""
        )) && last.contains("invalid credentials"),
        "{what}: {}",
        out.stderr
    );
    assert!(out.elapsed < FAST, "{what}: took {:?}", out.elapsed);
    assert_no_password(out, what);
}

/// The same with `--output json`: one `{"error":{"code":1,…}}` line naming the user.
fn assert_refused_as_json(out: &Finished, what: &str) {
    assert_json_refusal(out, what);
    assert!(out.elapsed < FAST, "{what}: took {:?}", out.elapsed);
}

/// Exit 1, the refusal as the final `{"error":…}` line, no password.
fn assert_json_refusal(out: &Finished, what: &str) {
    assert_eq!(out.code(), 1, "{what}: {}", out.stderr);
    let error: serde_json::Value =
        serde_json::from_str(out.stderr.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{what}: {e}: {}", out.stderr));
    assert_eq!(error["error"]["code"], 1, "{what}: {error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("authentication failed") && message.contains("\"alice\""),
        "{what}: {message}"
    );
    assert_no_password(out, what);
}

fn topology(dir: &Path, name: &str, settings: &str, input: &str, output: &str) -> PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    let text = format!(
        "version: 1
settings:
  consumer_group: {group}
{settings}nodes:
  - source: lines
    topics: [{input}]
    value: string
  - pass_through: copy
    parent: lines
    topic: {output}
",
        group = unique_name("cg"),
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn run_online_exits_1_at_once_on_a_refused_login_with_and_without_transactions() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let (input, output) = (c.topic_with(2), c.topic_with(0));
    let wrong = properties(d, MECHANISM, "alice", WRONG_PW);
    let before = c.front.logins().len();
    for (name, settings) in [
        ("at-least-once", ""),
        ("exactly-once", "  guarantee: exactly-once\n"),
    ] {
        let file = topology(d, name, settings, &input, &output);
        let file = file.to_str().unwrap();
        // librdkafka's debug lines share the queue the refusal arrives on.
        let out = run(
            d,
            &c,
            &wrong,
            &["-vv", "-X", "debug=security,broker", "run", file],
        );
        assert_refused_at_once(&out, name);
        let out = run(d, &c, &wrong, &["--output", "json", "run", file]);
        assert_refused_as_json(&out, name);
    }
    let attempts = &c.front.logins()[before..];
    assert!(
        !attempts.is_empty() && attempts.iter().all(|l| l.user == "alice" && !l.accepted),
        "{attempts:?}"
    );
}

#[test]
fn barrier_commands_and_restore_cut_exit_1_at_once_on_a_refused_login() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let wrong = properties(d, MECHANISM, "alice", WRONG_PW);
    let snapshots = d.join("snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    let snapshots = snapshots.to_str().unwrap();
    let (input, output) = (c.topic_with(1), c.topic_with(0));
    let with_cuts = topology(
        d,
        "with-cuts",
        &format!(
            "  barrier_group: audit\n  state_dir: {}\n",
            d.join("state").display()
        ),
        &input,
        &output,
    );
    let commands: Vec<(&str, Vec<&str>)> = vec![
        ("barrier list", vec!["barrier", "list"]),
        (
            "barrier show",
            vec!["barrier", "show", "--group", "audit", "--epoch", "latest"],
        ),
        (
            "barrier verify",
            vec![
                "barrier",
                "verify",
                "--group",
                "audit",
                "--epoch",
                "latest",
                "--consumer-group",
                "cg",
            ],
        ),
        (
            "barrier watch",
            vec!["barrier", "watch", "--group", "audit", "--count", "1"],
        ),
        (
            "snapshot restore-cut",
            vec![
                "--yes",
                "snapshot",
                "restore-cut",
                "--group",
                "audit",
                "--epoch",
                "latest",
                "--snapshot-dir",
                snapshots,
                "--consumer-group",
                "cg",
            ],
        ),
        (
            "run --restore-cut",
            vec![
                "run",
                with_cuts.to_str().unwrap(),
                "--restore-cut",
                "latest",
            ],
        ),
    ];
    for (what, args) in commands {
        let out = run(d, &c, &wrong, &args);
        assert_refused_at_once(&out, what);
        let mut json = vec!["--output", "json"];
        json.extend_from_slice(&args);
        let out = run(d, &c, &wrong, &json);
        assert_refused_as_json(&out, what);
    }
    // Nothing was written where restore-cut would have put files.
    assert_eq!(std::fs::read_dir(snapshots).unwrap().count(), 0);
}

/// `leader run` writes (CreateTopics, InitProducerId, the transactional lease record)
/// through the coordination client; a refused login stops it before any of them and
/// before COMMAND runs.
#[test]
fn leader_run_exits_1_at_once_on_a_refused_login_and_never_runs_its_command() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let wrong = properties(d, MECHANISM, "alice", WRONG_PW);
    let marker = d.join("ran");
    let touch = format!("touch {}", marker.display());
    let (role, topic) = (unique_name("role"), unique_name("coordination"));
    for extra in [vec![], vec!["--output", "json"]] {
        let mut args = extra.clone();
        args.extend(super::leader_run_args(&role, &topic, &["sh", "-c", &touch]));
        let out = run(d, &c, &wrong, &args);
        assert_eq!(out.code(), 1, "{}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("SASL {MECHANISM} login as user \\\"alice\\\""))
                || out
                    .stderr
                    .contains(&format!("SASL {MECHANISM} login as user \"alice\"")),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("SASL_AUTHENTICATION_FAILED (58)"),
            "{}",
            out.stderr
        );
        assert!(out.elapsed < FAST, "took {:?}", out.elapsed);
        assert_no_password(&out, "leader run");
    }
    assert!(!marker.exists(), "the command ran without a lease");
}

/// Credentials rotated under long-running commands: the broker hangs up, librdkafka logs
/// in again with the old password and is refused. A following `tail`, a `barrier
/// watch` and an online `run` end with the refusal (exit 1) within [`FAST`] of the
/// rotation, not an outage reported after `--timeout`.
#[test]
fn a_login_refused_after_a_credential_rotation_ends_tail_barrier_watch_and_run_at_once() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let topic = c.topic_with(3);
    create_topic_with_values(&c.client(), "__barrier_state", 0);
    let config = properties(d, MECHANISM, "alice", ALICE_PW);
    let connection = connection(&c, &config);
    let start = |args: &[&str]| Running::start(d, &[&connection[..], args].concat());
    let tail = start(&["tail", &topic, "--format", "ndjson"]);
    let watch = start(&[
        "barrier",
        "watch",
        "--group",
        "audit",
        "--poll-interval",
        "200ms",
    ]);
    let output = c.topic_with(0);
    let file = topology(d, "rotation", "", &topic, &output);
    let run = start(&[
        "--output",
        "json",
        "-X",
        "session.timeout.ms=6000",
        "run",
        file.to_str().unwrap(),
        "--metrics-interval",
        "200ms",
    ]);
    let deadline = Instant::now() + BOUND;
    while super::ndjson_offsets(&String::from_utf8_lossy(&tail.stdout_so_far())).len() < 3 {
        assert!(Instant::now() < deadline, "tail: {}", tail.stderr_so_far());
        std::thread::sleep(Duration::from_millis(50));
    }
    while !run.stderr_so_far().contains("\"input_records\":3") {
        assert!(Instant::now() < deadline, "run: {}", run.stderr_so_far());
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the watch get past its first read of __barrier_state.
    std::thread::sleep(Duration::from_secs(2));
    let rotated = Instant::now();
    c.front
        .rotate(&[("alice", "alice-ROTATED-pw-4"), ("bob", BOB_PW)]);
    for (what, running) in [("tail", tail), ("barrier watch", watch)] {
        let out = running.wait(BOUND);
        let took = rotated.elapsed();
        assert_eq!(out.code(), 1, "{what}: {}", out.stderr);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains(&format!(
                "authentication failed: the broker refused the SASL {MECHANISM} login as user \"alice\""
            )),
            "{what}: {}",
            out.stderr
        );
        assert!(took < FAST, "{what}: ended {took:?} after the rotation");
        assert_no_password(&out, what);
    }
    let out = run.wait(BOUND);
    let took = rotated.elapsed();
    assert_json_refusal(&out, "run");
    assert!(took < FAST, "run: ended {took:?} after the rotation");
}

/// Credentials rotated under `leader run`: its next renewal logs in again with the old
/// password and is refused. That ends the leadership at once (COMMAND gets SIGTERM, as
/// when the lease is lost) and `leader run` exits 1 naming the refused login, within
/// [`FAST`] of the rotation, not after retrying until the 30 s lease runs out.
#[test]
fn leader_run_stops_its_command_and_exits_1_at_once_when_a_rotation_refuses_its_login() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let c = sasl_cluster();
    let config = properties(d, MECHANISM, "alice", ALICE_PW);
    let (role, topic) = (unique_name("role"), unique_name("coordination"));
    let stopped = d.join("stopped");
    // Records SIGTERM, then exits 0 (a clean stop, not a kill after the grace).
    let child = format!(
        "trap 'touch {}; exit 0' TERM; echo holding; while :; do sleep 0.1; done",
        stopped.display()
    );
    let mut args = connection(&c, &config);
    let mut leader = super::leader_run_args(&role, &topic, &["sh", "-c", &child]);
    // Renewals every second under a 30 s lease: the refusal is met at once, and
    // retrying it until the lease expires would take far longer than FAST.
    leader.splice(2..2, ["--lease", "30s", "--renew", "1s"]);
    args.extend(leader);
    let running = Running::start(d, &args);
    let deadline = Instant::now() + BOUND;
    while !String::from_utf8_lossy(&running.stdout_so_far()).contains("holding") {
        assert!(Instant::now() < deadline, "{}", running.stderr_so_far());
        std::thread::sleep(Duration::from_millis(50));
    }
    // A renewal or two with the old credentials still succeeds.
    std::thread::sleep(Duration::from_millis(1500));
    let rotated = Instant::now();
    c.front
        .rotate(&[("alice", "alice-ROTATED-pw-4"), ("bob", BOB_PW)]);
    let out = running.wait(BOUND);
    let took = rotated.elapsed();
    assert_eq!(out.code(), 1, "{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!("SASL {MECHANISM} login as user \"alice\""))
            && last.contains("SASL_AUTHENTICATION_FAILED (58)")
            && last.contains("the command was stopped (SIGTERM)"),
        "{}",
        out.stderr
    );
    assert!(took < FAST, "ended {took:?} after the rotation");
    assert!(stopped.exists(), "the command was not stopped with SIGTERM");
    assert_no_password(&out, "leader run");
}
