//! The broker goes away under a running command. Tansu keeps its data in memory only, so
//! an outage that comes back is a frozen process (SIGSTOP, then SIGCONT: open connections
//! stop answering and requests time out, exactly like a network partition), and an
//! outage that does not come back is SIGKILL.

use std::time::{Duration, Instant};

use super::{create_topic, ndjson_offsets, produce};
use crate::barrier::fixture::{Cluster, cut};
use crate::support::process::{Finished, Running};
use crate::support::tansu::Tansu;
use crate::support::unique_name;

/// Waits until the running tail printed `n` NDJSON lines.
pub(super) fn wait_for_lines(run: &Running, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = String::from_utf8_lossy(&run.stdout_so_far()).into_owned();
        if text.lines().count() >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the tail printed {} of {n} lines",
            text.lines().count()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(super) fn tail(dir: &std::path::Path, bootstrap: &str, topic: &str, extra: &[&str]) -> Running {
    let mut args = vec![
        "tail",
        topic,
        "--format",
        "ndjson",
        "-b",
        bootstrap,
        // Short request timeouts so a frozen broker is noticed quickly.
        "--request-timeout-ms",
        "1000",
    ];
    args.extend_from_slice(extra);
    Running::start(dir, &args)
}

pub(super) fn assert_unreachable(out: &Finished, bound: Duration) {
    assert_eq!(out.code(), 4, "exit code; stderr:\n{}", out.stderr);
    assert!(
        out.elapsed < bound,
        "took {:?}, more than {bound:?}",
        out.elapsed
    );
    let last = out.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("krabka-streams "),
        "no clear error as the last line: {}",
        out.stderr
    );
}

#[test]
fn a_bounded_tail_returns_exactly_the_requested_records_across_a_broker_outage_that_ends() {
    let broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let topic = unique_name("outage");
    create_topic(&broker.bootstrap(), &topic, 1);
    produce(&broker.bootstrap(), &topic, 0..40);
    let run = tail(
        dir.path(),
        &broker.bootstrap(),
        &topic,
        &["-n", "80", "--timeout", "20s"],
    );
    wait_for_lines(&run, 40);
    // Longer than three request timeouts: connections are torn down and re-made.
    broker.pause();
    std::thread::sleep(Duration::from_secs(4));
    broker.resume();
    produce(&broker.bootstrap(), &topic, 40..90);
    let out = run.wait(Duration::from_secs(60));
    assert_eq!(out.code(), 0, "stderr:\n{}", out.stderr);
    let offsets = ndjson_offsets(&out.stdout_text());
    assert_eq!(
        offsets,
        (0..80).collect::<Vec<i64>>(),
        "no gap, no duplicate"
    );
}

#[test]
fn a_bounded_tail_exits_4_within_its_timeout_when_the_broker_dies() {
    let mut broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let topic = unique_name("dies");
    create_topic(&broker.bootstrap(), &topic, 1);
    produce(&broker.bootstrap(), &topic, 0..10);
    let out_file = dir.path().join("out.ndjson");
    let run = tail(
        dir.path(),
        &broker.bootstrap(),
        &topic,
        &["-n", "100", "--timeout", "4s"],
    );
    wait_for_lines(&run, 10);
    broker.kill();
    let out = run.wait(Duration::from_secs(30));
    assert_unreachable(&out, Duration::from_secs(15));
    // What was printed before the outage is whole records, each once.
    assert_eq!(
        ndjson_offsets(&out.stdout_text()),
        (0..10).collect::<Vec<i64>>()
    );

    // Into a file: a failed tail publishes nothing under the final name.
    let broker = Tansu::start();
    create_topic(&broker.bootstrap(), &topic, 1);
    produce(&broker.bootstrap(), &topic, 0..10);
    let run = tail(
        dir.path(),
        &broker.bootstrap(),
        &topic,
        &[
            "-n",
            "100",
            "--timeout",
            "4s",
            "--out",
            out_file.to_str().unwrap(),
        ],
    );
    std::thread::sleep(Duration::from_secs(2));
    drop(broker);
    let out = run.wait(Duration::from_secs(30));
    assert_unreachable(&out, Duration::from_secs(15));
    assert!(!out_file.exists(), "a partial output was published");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("out.ndjson"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[test]
fn an_until_end_tail_against_a_frozen_broker_exits_4_within_its_timeout() {
    let broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let topic = unique_name("frozen");
    create_topic(&broker.bootstrap(), &topic, 1);
    produce(&broker.bootstrap(), &topic, 0..5);
    broker.pause();
    let run = tail(
        dir.path(),
        &broker.bootstrap(),
        &topic,
        &["-e", "--timeout", "3s"],
    );
    let out = run.wait(Duration::from_secs(30));
    broker.resume();
    assert_unreachable(&out, Duration::from_secs(15));
}

fn barrier_world() -> (Cluster, String) {
    let mut c = Cluster::start();
    c.create_barrier_state(3);
    let topic = unique_name("orders");
    c.create_topic(&topic, 2, false);
    c.send(&topic, 0, Some(b"k"), Some(b"v"));
    c.write_group("audit", &[&topic], 1);
    c.write_cut("audit", 1, &cut(&topic, &[(0, 1), (1, 0)], &[]));
    let cg = unique_name("app");
    c.commit_as_group_member(&cg, &topic, &[(0, 1), (1, 0)]);
    (c, cg)
}

pub(super) fn verify_args<'a>(bootstrap: &'a str, cg: &'a str) -> Vec<&'a str> {
    vec![
        "-b",
        bootstrap,
        "--timeout",
        "3s",
        "--request-timeout-ms",
        "1000",
        "barrier",
        "verify",
        "--group",
        "audit",
        "--epoch",
        "1",
        "--consumer-group",
        cg,
    ]
}

#[test]
fn barrier_verify_exits_4_never_0_or_3_when_the_broker_freezes_or_dies() {
    let (mut c, cg) = barrier_world();
    let dir = tempfile::tempdir().unwrap();
    let bootstrap = c.bootstrap();
    let healthy = Running::start(dir.path(), &verify_args(&bootstrap, &cg));
    assert_eq!(healthy.wait(Duration::from_secs(30)).code(), 0);

    c.broker.pause();
    let frozen = Running::start(dir.path(), &verify_args(&bootstrap, &cg));
    let out = frozen.wait(Duration::from_secs(30));
    assert_unreachable(&out, Duration::from_secs(15));

    // Killed while verify waits for its answers.
    let dying = Running::start(dir.path(), &verify_args(&bootstrap, &cg));
    std::thread::sleep(Duration::from_millis(700));
    c.broker.kill();
    let out = dying.wait(Duration::from_secs(30));
    assert_unreachable(&out, Duration::from_secs(15));

    let gone = Running::start(dir.path(), &verify_args(&bootstrap, &cg));
    let out = gone.wait(Duration::from_secs(30));
    assert_unreachable(&out, Duration::from_secs(15));
}
