//! The broker goes away under an online `run` (at-least-once: nothing is lost). Two kinds
//! of outage, each longer than `--timeout` and several request timeouts: a frozen broker
//! (SIGSTOP: connections stay open and stop answering) and a torn-down network path (a TCP
//! relay that resets every connection and refuses new ones, then listens on the same port
//! again). The runner keeps retrying through both and every input record reaches the sink
//! (duplicates allowed); Ctrl-C afterwards still stops it cleanly with exit 130.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::message::Message;
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;

use super::create_topic;
use crate::support::binary;
use crate::support::tansu::Tansu;
use crate::support::tcp_proxy::TcpProxy;
use crate::support::topic_read::TopicRead;
use crate::support::unique_name;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Produces `{"id": i}` for i in `ids`, one record per batch, spread over 2 partitions.
pub(super) fn produce_ids(bootstrap: &str, topic: &str, ids: std::ops::Range<i64>) {
    let producer = CheckedProducer::new(
        ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("linger.ms", "0")
            .set("batch.num.messages", "1"),
    );
    for id in ids {
        let value = format!("{{\"id\":{id}}}");
        producer.send(
            BaseRecord::<[u8], [u8]>::to(topic)
                .partition((id % 2) as i32)
                .payload(value.as_bytes()),
        );
        producer.flush();
    }
}

/// Reads the sink from the beginning until it holds every id of `want` (or the deadline);
/// returns the ids seen.
pub(super) fn read_ids(
    bootstrap: &str,
    topic: &str,
    want: i64,
    deadline: Duration,
) -> BTreeSet<i64> {
    let distinct = |ids: &[Option<i64>]| ids.iter().flatten().copied().collect::<BTreeSet<_>>();
    let ids = TopicRead::new(bootstrap, topic, 2)
        .deadline(deadline)
        .until(
            |m| {
                let v: serde_json::Value =
                    serde_json::from_slice(m.payload().unwrap_or(b"null")).unwrap_or_default();
                v["id"].as_i64()
            },
            |ids| distinct(ids).len() as i64 >= want,
        );
    distinct(&ids)
}

pub(super) fn start_runner(dir: &Path, bootstrap: &str, input: &str, output: &str) -> Child {
    start_runner_with(dir, bootstrap, input, output, "3s", "1000")
}

/// [`start_runner`] with other `--timeout` and `--request-timeout-ms` values.
pub(super) fn start_runner_with(
    dir: &Path,
    bootstrap: &str,
    input: &str,
    output: &str,
    timeout: &str,
    request_timeout_ms: &str,
) -> Child {
    let topology = dir.join("topology.yaml");
    std::fs::write(
        &topology,
        format!(
            "version: 1\nsettings:\n  consumer_group: {}\nnodes:\n  - source: in\n    topics: [{input}]\n    value: json\n  - sink: out\n    parent: in\n    topic: {output}\n    value: json\n",
            unique_name("group")
        ),
    )
    .unwrap();
    Command::new(binary())
        .args(["run", topology.to_str().unwrap(), "-b", bootstrap])
        // Short timeouts: the outages below are several times longer than each.
        .args([
            "--timeout",
            timeout,
            "--request-timeout-ms",
            request_timeout_ms,
        ])
        .args(["-X", "linger.ms=0", "-X", "batch.num.messages=1"])
        .args([
            "-X",
            "session.timeout.ms=30000",
            "-X",
            "heartbeat.interval.ms=500",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // A file, not a pipe: nobody reads while the runner logs the outage.
        .stderr(std::fs::File::create(dir.join("runner.log")).unwrap())
        .spawn()
        .unwrap()
}

/// Ctrl-C; the runner must stop within `TIMEOUT`. Returns (exit code, its log).
pub(super) fn interrupt(mut child: Child, dir: &Path) -> (Option<i32>, String) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let until = Instant::now() + TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            child.kill().unwrap();
            panic!("the runner did not stop within {TIMEOUT:?} of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let code = child.wait().unwrap().code();
    (
        code,
        std::fs::read_to_string(dir.join("runner.log")).unwrap_or_default(),
    )
}

pub(super) fn assert_all_delivered(
    seen: &BTreeSet<i64>,
    upto: i64,
    runner: &mut Child,
    dir: &Path,
    what: &str,
) {
    let missing: Vec<i64> = (0..upto).filter(|id| !seen.contains(id)).collect();
    if !missing.is_empty() {
        let _ = runner.kill();
        let _ = runner.wait();
        let stderr = std::fs::read_to_string(dir.join("runner.log")).unwrap_or_default();
        panic!("{what}: lost records {missing:?}\nrunner stderr:\n{stderr}");
    }
}

#[test]
fn run_loses_no_record_across_a_frozen_broker_and_a_reset_network_path() {
    let mut proxy = TcpProxy::bind();
    let broker = Tansu::start_with(Some(proxy.port()), &[]);
    proxy.serve(broker.addr());
    let bootstrap = proxy.bootstrap();
    let (input, output) = (unique_name("in"), unique_name("out"));
    create_topic(&bootstrap, &input, 2);
    create_topic(&bootstrap, &output, 2);
    let dir = tempfile::tempdir().unwrap();
    produce_ids(&bootstrap, &input, 0..20);
    let mut runner = start_runner(dir.path(), &bootstrap, &input, &output);
    let seen = read_ids(&bootstrap, &output, 20, TIMEOUT);
    assert_all_delivered(&seen, 20, &mut runner, dir.path(), "before any outage");

    // A frozen broker for 3 × --timeout.
    broker.pause();
    std::thread::sleep(Duration::from_secs(9));
    broker.resume();
    assert!(
        runner.try_wait().unwrap().is_none(),
        "the runner gave up during the freeze"
    );
    produce_ids(&bootstrap, &input, 20..40);
    let seen = read_ids(&bootstrap, &output, 40, Duration::from_secs(60));
    assert_all_delivered(&seen, 40, &mut runner, dir.path(), "after the freeze");

    // Records written, then the path torn down while the runner works on them.
    produce_ids(&bootstrap, &input, 40..60);
    proxy.down();
    let refused = std::net::TcpStream::connect(proxy.bootstrap()).is_err();
    std::thread::sleep(Duration::from_secs(9));
    proxy.up();
    assert!(
        refused,
        "the port still accepted connections during the outage"
    );
    assert!(
        runner.try_wait().unwrap().is_none(),
        "the runner gave up during the outage"
    );
    produce_ids(&bootstrap, &input, 60..80);
    let seen = read_ids(&bootstrap, &output, 80, Duration::from_secs(60));
    assert_all_delivered(&seen, 80, &mut runner, dir.path(), "after the reset path");

    let (code, stderr) = interrupt(runner, dir.path());
    assert_eq!(code, Some(130), "{stderr}");
}
