//! Hostile input end to end (issue #8): names that are not UTF-8 in arguments,
//! in snapshot directories and in record headers on a real Tansu broker, and
//! topology files built to exhaust the parser. Each is refused or survived
//! cleanly: a distinct exit code, a message, never a panic.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use rdkafka::bindings as rdsys;
use rdkafka::config::ClientConfig;
use rdkafka::message::{BorrowedHeaders, Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

use crate::support::admin::create_topic;
use crate::support::tansu::Tansu;
use crate::support::unique_name;

const TIMEOUT: Duration = Duration::from_secs(30);

fn run(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .args(args)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

fn os(text: &str) -> &OsStr {
    OsStr::new(text)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_no_panic(o: &Output) {
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
}

const NOT_UTF8: &[u8] = b"bad-\xff\xfe";

#[test]
fn names_that_are_not_utf8_are_usage_errors() {
    let bad = OsStr::from_bytes(NOT_UTF8);
    let cases: [Vec<&OsStr>; 3] = [
        vec![os("tail"), bad, os("-b"), os("127.0.0.1:1")],
        vec![
            os("tail"),
            os("t"),
            os("--group"),
            bad,
            os("-b"),
            os("127.0.0.1:1"),
        ],
        vec![
            os("snapshot"),
            os("dump"),
            os("/nonexistent"),
            os("--group"),
            bad,
            os("--task"),
            os("0_0"),
        ],
    ];
    for args in cases {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("UTF-8"), "{}", stderr(&out));
        assert_no_panic(&out);
    }
}

#[test]
fn a_snapshot_directory_entry_that_is_not_utf8_is_ignored_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path()
            .join(OsStr::from_bytes(b"partition-\xff.snapshot")),
        b"x",
    )
    .unwrap();
    fs::write(
        tmp.path().join("partition-0.snapshot"),
        // An empty gen B container: version 1, no entries.
        [0, 0, 0, 1, 0, 0, 0, 0],
    )
    .unwrap();
    let out = run(&[
        os("snapshot"),
        os("list"),
        tmp.path().as_os_str(),
        os("--output"),
        os("json"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = listed.to_string();
    assert!(text.contains("partition-0.snapshot"), "{text}");
    assert!(!text.contains('\u{fffd}'), "{text}");
    // A path argument that is not UTF-8 is a path like any other: here, missing.
    let missing = tmp.path().join(OsStr::from_bytes(NOT_UTF8));
    let out = run(&[os("snapshot"), os("list"), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_no_panic(&out);
}

/// Headers with one key that is not UTF-8: rdkafka's safe API only takes
/// `&str` keys, so that one is added to the native list directly (a
/// `BorrowedHeaders` reference is the native pointer, as rdkafka builds it).
fn headers_with_raw_key(raw_key: &[u8]) -> OwnedHeaders {
    let headers = OwnedHeaders::new().insert(Header {
        key: "ok",
        value: Some("v"),
    });
    let native = headers.as_borrowed() as *const BorrowedHeaders as *mut rdsys::rd_kafka_headers_t;
    let value = b"x";
    // SAFETY: a live header list; both sizes match their buffers.
    let err = unsafe {
        rdsys::rd_kafka_header_add(
            native,
            raw_key.as_ptr().cast(),
            raw_key.len() as isize,
            value.as_ptr().cast(),
            value.len() as isize,
        )
    };
    assert_eq!(err, rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR);
    headers
}

#[test]
fn tail_reads_a_record_whose_header_key_is_not_utf8() {
    let broker = Tansu::start();
    let topic = unique_name("hostile-headers");
    create_topic(&broker.bootstrap(), &topic, 1);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .create()
        .unwrap();
    let record: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(&topic)
        .partition(0)
        .payload(b"v0".as_slice())
        .headers(headers_with_raw_key(b"k\xff"));
    producer.send(record).map_err(|(e, _)| e).unwrap();
    producer.flush(TIMEOUT).unwrap();
    let bootstrap = broker.bootstrap();
    let tail = |filter: &str| {
        run(&[
            os("tail"),
            os(&topic),
            os("-e"),
            os("--value-format"),
            os("string"),
            os("--format"),
            os("ndjson"),
            os("--header"),
            os(filter),
            os("-b"),
            os(&bootstrap),
            os("--timeout"),
            os("20s"),
        ])
    };
    // The key is read as the Java client reads it: invalid bytes become U+FFFD.
    let out = tail("k\u{fffd}=x");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_no_panic(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\"v0\""), "{text}");
    let out = tail("ok=v");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
}
