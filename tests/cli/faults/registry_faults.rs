//! A registry that fails under `schema prewarm`, `schema decode` and `tail`: 5xx, 429,
//! dropped connections, answers slower than the request timeout, and garbage bodies, from
//! the in-repo registry server over real HTTP. Retriable faults (429, ≥ 500, no answer)
//! are retried 1 + 2 times with exponential backoff (100 ms, then 200 ms, plus jitter);
//! the request log shows each attempt; anything else fails at once with a clear error.

use std::path::Path;
use std::time::Duration;

use krabka_streams::engine::schema::framing;
use krabka_streams::io::registry_server::{RegistryServer, SchemaRecord};
use rdkafka::config::ClientConfig;
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;

use super::create_topic;
use crate::support::process::{Finished, Running};
use crate::support::tansu::Tansu;
use crate::support::unique_name;

const BOUND: Duration = Duration::from_secs(60);

/// One injected fault and whether the command is expected to get through it.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// The next two requests answer this status; the third attempt succeeds.
    Transient(u16),
    /// The next two connections are closed without an answer.
    TwoDrops,
    /// Every request answers this status.
    Persistent(u16),
    /// Every answer comes later than the request timeout.
    Slow,
    /// A 200 whose body is not JSON.
    Garbage,
}

impl Fault {
    fn inject(self, server: &RegistryServer) {
        match self {
            Fault::Transient(status) => server.fail_next(2, status),
            Fault::TwoDrops => server.drop_next(2),
            Fault::Persistent(status) => server.fail_next(1000, status),
            Fault::Slow => server.delay(Duration::from_secs(2)),
            Fault::Garbage => server.respond_next(1000, 200, "<html>oops</html>"),
        }
    }
}

fn requests_to(server: &RegistryServer, method: &str, path: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|(m, p)| m == method && p == path)
        .count()
}

/// Runs the command with a 500 ms request timeout and a 20 s overall one.
fn run(dir: &Path, server: &RegistryServer, args: &[&str]) -> Finished {
    let url = server.url();
    let mut all = vec![
        "--registry",
        url.as_str(),
        "--request-timeout-ms",
        "500",
        "--timeout",
        "20s",
    ];
    all.extend_from_slice(args);
    Running::start(dir, &all).wait(BOUND)
}

/// Checks the outcome of `fault` on a command whose one registry call is `method path`.
fn check(fault: Fault, out: &Finished, server: &RegistryServer, method: &str, path: &str) {
    let attempts = requests_to(server, method, path);
    let context = format!("{fault:?}: exit {}, stderr:\n{}", out.code(), out.stderr);
    match fault {
        Fault::Transient(_) | Fault::TwoDrops => {
            assert_eq!(out.code(), 0, "{context}");
            assert_eq!(attempts, 3, "two failures then a success; {context}");
            // The backoff spaces the attempts: at least 100 ms + 200 ms.
            assert!(out.elapsed >= Duration::from_millis(300), "{context}");
        }
        Fault::Persistent(status) => {
            assert_eq!(out.code(), 1, "the registry answered: a failure; {context}");
            assert_eq!(attempts, 3, "1 + 2 attempts; {context}");
            assert!(
                out.stderr.contains(&format!("HTTP {status}")),
                "the last answer is named; {context}"
            );
        }
        Fault::Slow => {
            assert_eq!(out.code(), 4, "no answer: unreachable; {context}");
            assert_eq!(attempts, 3, "1 + 2 attempts; {context}");
            assert!(
                out.stderr.contains("timed out") || out.stderr.contains("timeout"),
                "{context}"
            );
        }
        Fault::Garbage => {
            assert_eq!(out.code(), 1, "{context}");
            assert_eq!(attempts, 1, "a garbage body is not retried; {context}");
            assert!(
                out.stderr.contains("cannot parse schema registry response"),
                "{context}"
            );
        }
    }
}

const ALL: [Fault; 7] = [
    Fault::Transient(503),
    Fault::Transient(429),
    Fault::TwoDrops,
    Fault::Persistent(500),
    Fault::Persistent(429),
    Fault::Slow,
    Fault::Garbage,
];

#[test]
fn prewarm_retries_429_5xx_and_lost_connections_with_backoff_then_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let avsc = dir.path().join("s.avsc");
    std::fs::write(&avsc, "\"string\"").unwrap();
    for fault in ALL {
        let server = RegistryServer::start_default().unwrap();
        fault.inject(&server);
        let out = run(
            dir.path(),
            &server,
            &[
                "schema",
                "prewarm",
                "--subject",
                "x-value",
                "--schema-file",
                avsc.to_str().unwrap(),
            ],
        );
        // prewarm reports per subject on stdout and sums up on stderr.
        let both = Finished {
            stderr: format!("{}{}", out.stdout_text(), out.stderr),
            ..out
        };
        check(fault, &both, &server, "POST", "/subjects/x-value/versions");
    }
}

#[test]
fn decode_retries_429_5xx_and_lost_connections_with_backoff_then_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    for fault in ALL {
        let server = RegistryServer::start_default().unwrap();
        let (id, _) = server.seed("x-value", SchemaRecord::avro("\"string\""));
        let frame = framing::encode(id, &[0x06, b'a', b'd', b'a']);
        fault.inject(&server);
        let out = run(
            dir.path(),
            &server,
            &["schema", "decode", &hex::encode(&frame)],
        );
        check(fault, &out, &server, "GET", &format!("/schemas/ids/{id}"));
        if out.code() == 0 {
            assert!(out.stdout_text().contains("ada"), "{}", out.stdout_text());
        }
    }
}

#[test]
fn tail_retries_429_5xx_and_lost_connections_with_backoff_then_fails_clearly() {
    let broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    for fault in ALL {
        let server = RegistryServer::start_default().unwrap();
        let (id, _) = server.seed("x-value", SchemaRecord::avro("\"string\""));
        let topic = unique_name("reg");
        create_topic(&broker.bootstrap(), &topic, 1);
        let producer =
            CheckedProducer::new(ClientConfig::new().set("bootstrap.servers", broker.bootstrap()));
        let frame = framing::encode(id, &[0x06, b'a', b'd', b'a']);
        producer.send(
            BaseRecord::<[u8], [u8]>::to(&topic)
                .partition(0)
                .payload(&frame),
        );
        producer.flush();
        fault.inject(&server);
        let bootstrap = broker.bootstrap();
        let out = run(
            dir.path(),
            &server,
            &[
                "-b",
                &bootstrap,
                "tail",
                &topic,
                "-e",
                "--value-format",
                "avro",
                "--format",
                "ndjson",
                "--timeout",
                "5s",
            ],
        );
        let path = format!("/schemas/ids/{id}");
        match fault {
            // A tail outlives registry hiccups: it keeps the record back and fetches again
            // in rounds spaced 0.5 s, 1 s, 2 s … until --timeout, then exits 4 naming the
            // last answer.
            Fault::Persistent(_) | Fault::Slow => {
                let context = format!("{fault:?}: stderr:\n{}", out.stderr);
                assert_eq!(out.code(), 4, "{context}");
                let last = out.stderr.lines().last().unwrap_or_default();
                assert!(
                    last.contains("still pending after 5s")
                        && last.contains("last attempt: schema registry"),
                    "{context}"
                );
                if let Fault::Persistent(status) = fault {
                    assert!(last.contains(&format!("HTTP {status}")), "{context}");
                }
                let attempts = requests_to(&server, "GET", &path);
                assert!(
                    (3..=12).contains(&attempts),
                    "rounds of 1 + 2 attempts, spaced out: {attempts}; {context}"
                );
            }
            _ => check(fault, &out, &server, "GET", &path),
        }
        if out.code() == 0 {
            assert!(
                out.stdout_text().contains("\"ada\""),
                "{}",
                out.stdout_text()
            );
        }
    }
}
