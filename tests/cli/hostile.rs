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
use rdkafka::producer::BaseRecord;

use crate::support::checked_producer::CheckedProducer;

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
    let producer = CheckedProducer::new(
        ClientConfig::new()
            .set("bootstrap.servers", broker.bootstrap())
            .set("linger.ms", "0")
            .set("batch.num.messages", "1"),
    );
    let record: BaseRecord<'_, [u8], [u8]> = BaseRecord::to(&topic)
        .partition(0)
        .payload(b"v0".as_slice())
        .headers(headers_with_raw_key(b"k\xff"));
    producer.send(record);
    producer.flush();
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

// ---- Issue #23: hostile and unusual inputs, one test per class. ----

/// Orders as `tail` writes them (payload and the reserved columns), three rows.
fn orders_stream() -> Vec<u8> {
    use arrow_array::TimestampMillisecondArray;
    use arrow_array::{ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema, TimeUnit};
    use std::sync::Arc;
    let schema = Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("country", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
        Field::new("__key", DataType::Binary, true),
        Field::new("__timestamp", DataType::Int64, true),
        Field::new("__partition", DataType::Int32, true),
        Field::new("__offset", DataType::Int64, true),
        Field::new("__headers", DataType::Binary, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["ann", "bob", "ann"])),
        Arc::new(StringArray::from(vec!["NL"; 3])),
        Arc::new(Int64Array::from(vec![150, 200, 300])),
        Arc::new(TimestampMillisecondArray::from(vec![1, 2, 3]).with_timezone("UTC")),
        Arc::new(BinaryArray::from_opt_vec(vec![None; 3])),
        Arc::new(Int64Array::from(vec![1, 2, 3])),
        Arc::new(Int32Array::from(vec![0; 3])),
        Arc::new(Int64Array::from(vec![0, 1, 2])),
        Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(
            [0u8; 4], 3,
        ))),
    ];
    let batch = RecordBatch::try_new(Arc::new(schema), columns).unwrap();
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

/// Rows in an Arrow IPC stream.
fn stream_rows(bytes: &[u8]) -> usize {
    arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum()
}

/// A topology with two sinks and a dead-letter policy: `a` gets orders above
/// 100, `b` every order.
const TWO_SINKS: &str = "version: 1
settings:
  consumer_group: two
  error_policy: dead-letter
  dead_letter_topic: dlq
nodes:
  - source: orders
    topics: [orders]
    value: json
    columns:
      user: utf8
      amount: int64
  - filter: big
    parent: orders
    where: amount > 100
  - sink: a
    parent: big
    topic: a
    value: json
  - sink: b
    parent: orders
    topic: b
    value: json
";

/// A directory with `orders.arrows` and `two.yaml`, writable by every user (so the
/// unprivileged runs can write into it).
fn workdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("orders.arrows"), orders_stream()).unwrap();
    fs::write(dir.path().join("two.yaml"), TWO_SINKS).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// How to run as a plain user: `setpriv` to nobody when root, nothing when already
/// unprivileged; `None` (the caller prints why and skips) when root without setpriv.
fn unprivileged() -> Option<Vec<String>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(Vec::new());
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())?;
    Some(
        [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
            .map(String::from)
            .to_vec(),
    )
}

/// Runs the binary in `dir`, as root or (with `wrapper`) as a plain user; stdin empty.
fn run_as(wrapper: &[String], dir: &std::path::Path, args: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_krabka-streams");
    let mut cmd = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.current_dir(dir)
        .args(args)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_BOOTSTRAP_SERVER")
        .stdin(Stdio::null())
        .output()
        .expect("run krabka-streams")
}

/// The users every output class runs as: root (the test's own) and, when possible, nobody.
fn users() -> Vec<(&'static str, Vec<String>)> {
    let mut users = vec![("as this user", Vec::new())];
    match unprivileged() {
        Some(w) if !w.is_empty() => users.push(("as nobody", w)),
        Some(_) => {}
        None => eprintln!("skipping the unprivileged variant: root without setpriv"),
    }
    users
}

fn file_kind(path: &str) -> String {
    use std::os::unix::fs::FileTypeExt;
    let t = fs::symlink_metadata(path).unwrap().file_type();
    if t.is_symlink() {
        "link".into()
    } else if t.is_char_device() {
        "char".into()
    } else if t.is_fifo() {
        "fifo".into()
    } else {
        format!("{t:?}")
    }
}

#[test]
fn outputs_go_where_the_user_points() {
    for (who, wrapper) in users() {
        let dir = workdir();
        let kinds = ["/dev/stdout", "/dev/null"].map(|p| (p, file_kind(p)));
        // A device, the stdout link, this process's descriptor: written in place.
        for (sink, to_stdout) in [
            ("/dev/null", false),
            ("/dev/stdout", true),
            ("/proc/self/fd/1", true),
            ("/dev/fd/1", true),
        ] {
            for (flag, value) in [
                ("--sink", format!("b={sink}")),
                ("--dead-letter", sink.to_string()),
            ] {
                let mut args = vec!["run", "two.yaml", "--input", "orders=orders.arrows"];
                let b_elsewhere = "b=b.arrows".to_string();
                if flag == "--sink" {
                    args.extend(["--sink", "a=a.arrows", "--sink", &value]);
                } else {
                    args.extend([
                        "--sink",
                        "a=a.arrows",
                        "--sink",
                        &b_elsewhere,
                        "--dead-letter",
                        &value,
                    ]);
                }
                let out = run_as(&wrapper, dir.path(), &args);
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{who} {flag} {sink}: {}",
                    stderr(&out)
                );
                if to_stdout && flag == "--sink" {
                    assert_eq!(stream_rows(&out.stdout), 3, "{who} {flag} {sink}");
                }
                assert_eq!(
                    stream_rows(&fs::read(dir.path().join("a.arrows")).unwrap()),
                    3
                );
            }
        }
        for (path, kind) in &kinds {
            assert_eq!(&file_kind(path), kind, "{who}: {path} was replaced");
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");

        // A FIFO is written in place, not replaced by a regular file.
        let fifo = dir.path().join("out.fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&fifo, fs::Permissions::from_mode(0o666)).unwrap();
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        let out = run_as(
            &wrapper,
            dir.path(),
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=orders.arrows",
                "--sink",
                "a=out.fifo",
                "--sink",
                "b=/dev/null",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{who} fifo: {}", stderr(&out));
        assert_eq!(stream_rows(&reader.join().unwrap()), 3, "{who} fifo");
        assert_eq!(file_kind(fifo.to_str().unwrap()), "fifo");

        // A link to a regular file: the file gets the output, the link stays a link
        // (also through a chain of two links); a dangling link is refused.
        fs::write(dir.path().join("real.arrows"), b"old").unwrap();
        std::os::unix::fs::symlink("real.arrows", dir.path().join("link.arrows")).unwrap();
        std::os::unix::fs::symlink("link.arrows", dir.path().join("chain.arrows")).unwrap();
        std::os::unix::fs::symlink("nowhere.arrows", dir.path().join("dangling.arrows")).unwrap();
        let out = run_as(
            &wrapper,
            dir.path(),
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=orders.arrows",
                "--sink",
                "a=link.arrows",
                "--sink",
                "b=chain.arrows",
            ],
        );
        // Both links reach one file: refused as two outputs on one path.
        assert_eq!(out.status.code(), Some(2), "{who}: {}", stderr(&out));
        let out = run_as(
            &wrapper,
            dir.path(),
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=orders.arrows",
                "--sink",
                "a=/dev/null",
                "--sink",
                "b=chain.arrows",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{who}: {}", stderr(&out));
        assert_eq!(
            stream_rows(&fs::read(dir.path().join("real.arrows")).unwrap()),
            3
        );
        assert_eq!(
            file_kind(dir.path().join("chain.arrows").to_str().unwrap()),
            "link"
        );
        assert_eq!(
            file_kind(dir.path().join("link.arrows").to_str().unwrap()),
            "link"
        );
        let out = run_as(
            &wrapper,
            dir.path(),
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=orders.arrows",
                "--sink",
                "a=/dev/null",
                "--sink",
                "b=dangling.arrows",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{who}: {}", stderr(&out));
        assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
        assert!(!dir.path().join("nowhere.arrows").exists());
    }
}

#[test]
fn tail_out_goes_to_the_device_or_descriptor_named() {
    let broker = Tansu::start();
    let topic = unique_name("hostile-out");
    create_topic(&broker.bootstrap(), &topic, 1);
    crate::support::admin::produce_bytes(
        &broker.bootstrap(),
        &topic,
        &[
            (0, "k".into(), b"v0".to_vec()),
            (0, "k".into(), b"v1".to_vec()),
        ],
    );
    for (who, wrapper) in users() {
        let dir = workdir();
        for out_path in ["/dev/stdout", "/proc/self/fd/1", "/dev/null"] {
            let bootstrap = broker.bootstrap();
            let out = run_as(
                &wrapper,
                dir.path(),
                &[
                    "tail",
                    &topic,
                    "-e",
                    "--value-format",
                    "string",
                    "--format",
                    "ndjson",
                    "--out",
                    out_path,
                    "-b",
                    &bootstrap,
                    "--timeout",
                    "20s",
                ],
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{who} {out_path}: {}",
                stderr(&out)
            );
            let lines = String::from_utf8_lossy(&out.stdout).lines().count();
            let expected = if out_path == "/dev/null" { 0 } else { 2 };
            assert_eq!(lines, expected, "{who} {out_path}");
        }
        assert_eq!(file_kind("/dev/stdout"), "link");
        assert_eq!(file_kind("/dev/null"), "char");
    }
}

#[test]
fn no_output_destroys_an_input_or_another_output() {
    let dir = workdir();
    let p = dir.path();
    std::os::unix::fs::symlink("orders.arrows", p.join("link.arrows")).unwrap();
    fs::hard_link(p.join("orders.arrows"), p.join("hard.arrows")).unwrap();
    fs::create_dir(p.join("sub")).unwrap();
    let original = fs::read(p.join("orders.arrows")).unwrap();
    let base = ["run", "two.yaml", "--input", "orders=orders.arrows"];
    let cases: &[(&[&str], &str, &str)] = &[
        // sink = input, by every spelling of the input
        (
            &["--sink", "a=orders.arrows", "--sink", "b=b.arrows"],
            "--input orders=orders.arrows",
            "--sink a=orders.arrows",
        ),
        (
            &["--sink", "a=./orders.arrows", "--sink", "b=b.arrows"],
            "--input",
            "--sink a=./orders.arrows",
        ),
        (
            &["--sink", "a=sub/../orders.arrows", "--sink", "b=b.arrows"],
            "--input",
            "--sink a=sub/../orders.arrows",
        ),
        (
            &["--sink", "a=link.arrows", "--sink", "b=b.arrows"],
            "--input",
            "--sink a=link.arrows",
        ),
        (
            &["--sink", "a=hard.arrows", "--sink", "b=b.arrows"],
            "--input",
            "--sink a=hard.arrows",
        ),
        (
            &["--sink", "a=orders.parquet", "--sink", "b=two.yaml"],
            "the topology file two.yaml",
            "--sink b=two.yaml",
        ),
        // two sinks on one (new) path
        (
            &["--sink", "a=x.arrows", "--sink", "b=./x.arrows"],
            "--sink a=x.arrows",
            "--sink b=./x.arrows",
        ),
        (
            &["--sink", "a=-", "--sink", "b=/dev/stdout"],
            "--sink a=-",
            "--sink b=/dev/stdout",
        ),
        // dead letters on a sink or on the input
        (
            &[
                "--sink",
                "a=a.arrows",
                "--sink",
                "b=b.arrows",
                "--dead-letter",
                "a.arrows",
            ],
            "--sink a=a.arrows",
            "--dead-letter a.arrows",
        ),
        (
            &[
                "--sink",
                "a=a.arrows",
                "--sink",
                "b=b.arrows",
                "--dead-letter",
                "hard.arrows",
            ],
            "--input",
            "--dead-letter hard.arrows",
        ),
    ];
    for (extra, first, second) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let out = run_as(&[], p, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(first) && err.contains(second),
            "{extra:?}: {err}"
        );
        assert!(err.contains("same file"), "{err}");
        assert_no_panic(&out);
        assert_eq!(
            fs::read(p.join("orders.arrows")).unwrap(),
            original,
            "{extra:?}"
        );
        assert!(
            !p.join("a.arrows").exists() && !p.join("x.arrows").exists(),
            "{extra:?}"
        );
    }
    // tail: --out equal to the dead-letter file, by two spellings; refused before connecting.
    for (out_path, dlq) in [
        ("dl.ndjson", "dl.ndjson"),
        ("dl.ndjson", "./sub/../dl.ndjson"),
        ("-", "/dev/stdout"),
    ] {
        let out = run_as(
            &[],
            p,
            &[
                "tail",
                "t",
                "--format",
                "ndjson",
                "--out",
                out_path,
                "--on-error",
                "dead-letter",
                dlq,
                "-b",
                "127.0.0.1:1",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{out_path} {dlq}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("--on-error dead-letter"),
            "{}",
            stderr(&out)
        );
    }
    // tail: a rotated output's files (`dl-000001.ndjson`, …) over the dead-letter file or
    // the schema cache, whether that file exists yet or not.
    fs::write(p.join("rot-000007.ndjson"), b"").unwrap();
    for (dlq, flag) in [
        ("rot-000001.ndjson", "--on-error"),
        ("./sub/../rot-000007.ndjson", "--on-error"),
        ("rot-000007.ndjson", "--schema-cache"),
    ] {
        let mut args = vec![
            "tail",
            "t",
            "--format",
            "ndjson",
            "--out",
            "rot.ndjson",
            "--rotate-rows",
            "10",
            "-b",
            "127.0.0.1:1",
        ];
        if flag == "--on-error" {
            args.extend(["--on-error", "dead-letter", dlq]);
        } else {
            args.extend(["--schema-cache", dlq]);
        }
        let out = run_as(&[], p, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{dlq}: {err}");
        assert!(
            err.contains("--out rot.ndjson") && err.contains(flag),
            "{err}"
        );
        assert!(err.contains("same file"), "{err}");
    }
    // produce: the dead-letter file over the input or the value schema it reads.
    fs::write(p.join("rows.ndjson"), b"{\"a\":1}\n").unwrap();
    fs::write(p.join("v.avsc"), br#"{"type":"string"}"#).unwrap();
    for (dlq, flag) in [
        ("./rows.ndjson", "--input rows.ndjson"),
        ("v.avsc", "--value-schema v.avsc"),
    ] {
        let out = run_as(
            &[],
            p,
            &[
                "produce",
                "t",
                "--input",
                "rows.ndjson",
                "--value-format",
                "avro",
                "--value-schema",
                "v.avsc",
                "--on-error",
                "dead-letter",
                dlq,
                "-b",
                "127.0.0.1:1",
            ],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{dlq}: {err}");
        assert!(
            err.contains(flag) && err.contains("--on-error dead-letter"),
            "{err}"
        );
    }
    assert_eq!(fs::read(p.join("rows.ndjson")).unwrap(), b"{\"a\":1}\n");
    // barrier list: the data file over the client settings it reads.
    fs::write(p.join("client.properties"), b"client.id=x\n").unwrap();
    let out = run_as(
        &[],
        p,
        &[
            "barrier",
            "list",
            "--format",
            "parquet",
            "--out",
            "./client.properties",
            "--command-config",
            "client.properties",
            "-b",
            "127.0.0.1:1",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--command-config client.properties") && err.contains("--out"),
        "{err}"
    );
    assert_eq!(
        fs::read(p.join("client.properties")).unwrap(),
        b"client.id=x\n"
    );
    // schema prewarm: the cache over the schema file or the manifest it reads.
    fs::write(p.join("order.avsc"), br#"{"type":"string"}"#).unwrap();
    fs::write(
        p.join("manifest.json"),
        br#"[{"subject":"s-value","schema_file":"order.avsc"}]"#,
    )
    .unwrap();
    for (extra, named) in [
        (
            vec![
                "--subject",
                "o-value",
                "--schema-file",
                "order.avsc",
                "--write-cache",
                "./order.avsc",
            ],
            "the schema file of o-value",
        ),
        (
            vec![
                "--manifest",
                "manifest.json",
                "--write-cache",
                "manifest.json",
            ],
            "--manifest manifest.json",
        ),
    ] {
        let mut args = vec!["schema", "prewarm", "--registry", "http://127.0.0.1:1"];
        args.extend(extra.iter().copied());
        let out = run_as(&[], p, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(named) && err.contains("--write-cache"),
            "{err}"
        );
    }
    assert_eq!(
        fs::read(p.join("order.avsc")).unwrap(),
        br#"{"type":"string"}"#
    );
    // tail: an output over the schema file it reads.
    fs::write(
        p.join("schema.json"),
        br#"{"type":"object","properties":{}}"#,
    )
    .unwrap();
    let out = run_as(
        &[],
        p,
        &[
            "tail",
            "t",
            "--value-format",
            "json:schema.json",
            "--format",
            "ndjson",
            "--out",
            "./schema.json",
            "-b",
            "127.0.0.1:1",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // snapshot restore and dump: the output over the input.
    fs::write(p.join("dump.json"), b"{}").unwrap();
    let out = run_as(
        &[],
        p,
        &[
            "snapshot",
            "restore",
            "--from-json",
            "dump.json",
            "--to",
            "./dump.json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(fs::read(p.join("dump.json")).unwrap(), b"{}");
    let out = run_as(
        &[],
        p,
        &[
            "snapshot",
            "dump",
            "hard.arrows",
            "--lossless",
            "--out",
            "orders.arrows",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(fs::read(p.join("orders.arrows")).unwrap(), original);
}

/// Runs `args` with `stdin` bytes fed by a thread (until the child stops reading),
/// killing the child after `limit`. Returns the output; `None` when it had to be killed.
fn run_fed(
    dir: &std::path::Path,
    args: &[&str],
    feed: Option<Box<dyn FnOnce(std::process::ChildStdin) + Send>>,
    limit: Duration,
) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .current_dir(dir)
        .args(args)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_SCHEMA_REGISTRY_URL")
        .env_remove("KRABKA_BOOTSTRAP_SERVER")
        .stdin(if feed.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(feed) = feed {
        let stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || feed(stdin));
    }
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A topology passing its source straight to one sink, columns from the input.
const PASS_THROUGH: &str = "version: 1
settings:
  consumer_group: pass
nodes:
  - source: in
    topics: [in]
    value: json
  - sink: out
    parent: in
    topic: out
    value: json
";

fn union_stream(nested: bool) -> Vec<u8> {
    use arrow_array::{ArrayRef, Int32Array, RecordBatch, StructArray, UnionArray};
    use arrow_schema::{DataType, Field, Schema, UnionFields};
    use std::sync::Arc;
    let fields = UnionFields::try_new(
        vec![0, 1],
        vec![
            Field::new("i", DataType::Int32, true),
            Field::new("j", DataType::Int32, true),
        ],
    )
    .unwrap();
    let union = UnionArray::try_new(
        fields.clone(),
        vec![0i8, 1].into(),
        None,
        vec![
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(Int32Array::from(vec![3, 4])),
        ],
    )
    .unwrap();
    let union: ArrayRef = Arc::new(union);
    let (name, column): (&str, ArrayRef) = if nested {
        let inner = Field::new("choice", union.data_type().clone(), true);
        (
            "wrapper",
            Arc::new(StructArray::from(vec![(Arc::new(inner), union)])),
        )
    } else {
        ("choice", union)
    };
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new(name, column.data_type().clone(), true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(Int32Array::from(vec![7, 8])), column],
    )
    .unwrap();
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

fn assert_not_a_crash(o: &Output, what: &str) {
    let code = o.status.code();
    assert!(
        code.is_some() && code != Some(101) && code != Some(134),
        "{what}: {code:?} {}",
        stderr(o)
    );
    assert_no_panic(o);
    assert!(
        !stderr(o).contains("memory allocation"),
        "{what}: {}",
        stderr(o)
    );
}

#[test]
fn no_panic_no_abort() {
    let dir = workdir();
    let p = dir.path();
    fs::write(p.join("pass.yaml"), PASS_THROUGH).unwrap();
    // A union (top level or inside a struct) to Parquet: refused naming the
    // column before the first write; as an IPC stream it passes.
    for (nested, column) in [(false, "`choice`"), (true, "`wrapper.choice`")] {
        fs::write(p.join("u.arrows"), union_stream(nested)).unwrap();
        for input in ["in=u.arrows", "in=-"] {
            let stdin = fs::read(p.join("u.arrows")).unwrap();
            let feed: Box<dyn FnOnce(std::process::ChildStdin) + Send> = Box::new(move |mut s| {
                use std::io::Write as _;
                let _ = s.write_all(&stdin);
            });
            let out = run_fed(
                p,
                &[
                    "run",
                    "pass.yaml",
                    "--input",
                    input,
                    "--sink",
                    "out=u.parquet",
                ],
                Some(feed),
                TIMEOUT,
            )
            .unwrap();
            assert_not_a_crash(&out, input);
            assert_ne!(out.status.code(), Some(0));
            assert!(
                stderr(&out).contains(column) && stderr(&out).contains("union"),
                "{}",
                stderr(&out)
            );
            assert!(!p.join("u.parquet").exists());
        }
        let out = run_as(
            &[],
            p,
            &[
                "run",
                "pass.yaml",
                "--input",
                "in=u.arrows",
                "--sink",
                "out=u.arrows.out.arrows",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // A file's size is never trusted for an allocation: a sparse 1 TiB snapshot
    // (and one of 3 GiB) is reported by list and verify, which go on to the others.
    let snaps = p.join("snaps");
    fs::create_dir(&snaps).unwrap();
    for (name, size) in [
        ("partition-0.snapshot", 1u64 << 40),
        ("partition-1.snapshot", 3 << 30),
    ] {
        fs::File::create(snaps.join(name))
            .unwrap()
            .set_len(size)
            .unwrap();
    }
    fs::write(snaps.join("partition-2.snapshot"), b"garbage!garbage!").unwrap();
    let list = run_as(&[], p, &["snapshot", "list", "snaps", "--output", "json"]);
    assert_not_a_crash(&list, "list");
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    let text = String::from_utf8_lossy(&list.stdout);
    for name in [
        "partition-0.snapshot",
        "partition-1.snapshot",
        "partition-2.snapshot",
    ] {
        assert!(text.contains(name), "{text}");
    }
    assert!(text.contains("the cap for a snapshot container"), "{text}");
    let verify = run_as(&[], p, &["snapshot", "verify", "snaps"]);
    assert_not_a_crash(&verify, "verify");
    assert_eq!(verify.status.code(), Some(3), "{}", stderr(&verify));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("partition-2.snapshot"));
    let dump = run_as(&[], p, &["snapshot", "dump", "snaps/partition-0.snapshot"]);
    assert_not_a_crash(&dump, "dump");
    assert!(stderr(&dump).contains("2 GiB"), "{}", stderr(&dump));
    // Deep YAML nesting: block sequences on one line, indented, flow and mappings.
    let n = 20_000;
    let cases = [
        format!("version: 1\nnodes:\n  {}x\n", "- ".repeat(n)),
        format!("version: 1\nnodes: {}{}\n", "[".repeat(n), "]".repeat(n)),
        format!(
            "version: 1\nnodes: {}1{}\n",
            "{a: ".repeat(n),
            "}".repeat(n)
        ),
        {
            let mut s = String::from("version: 1\nnodes:\n");
            for i in 1..200 {
                s.push_str(&" ".repeat(i));
                s.push_str("- \n");
            }
            s
        },
    ];
    for (i, text) in cases.iter().enumerate() {
        fs::write(p.join("deep.yaml"), text).unwrap();
        let out = run_as(&[], p, &["run", "--check", "deep.yaml"]);
        assert_not_a_crash(&out, &format!("case {i}"));
        assert_eq!(out.status.code(), Some(3), "case {i}: {}", stderr(&out));
        // The parser's own flow-nesting limit may come first; either names the line.
        let err = stderr(&out);
        let says_why = err.contains("nesting deeper than") || err.contains("recursion limit");
        assert!(err.contains("deep.yaml:") && says_why, "case {i}: {err}");
    }
    // A closed stderr (its reader gone): the command's own exit code, no panic.
    for (args, code) in [
        (&["run", "--check", "missing.yaml"][..], 3),
        (
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=orders.arrows",
                "--sink",
                "a=/dev/null",
                "--sink",
                "b=/dev/null",
            ][..],
            0,
        ),
        (&["tail", "t", "--bogus"][..], 2),
        (&["snapshot", "verify", "snaps"][..], 3),
    ] {
        let mut fds = [0; 2];
        // SAFETY: a two-element array for pipe(2).
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors were just created; the read end is closed at
        // once (the reader went away), the write end is owned by the Stdio.
        let write_end = unsafe {
            libc::close(fds[0]);
            <Stdio as std::os::fd::FromRawFd>::from_raw_fd(fds[1])
        };
        let out = Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
            .current_dir(p)
            .args(args)
            .env_remove("KRABKA_OUTPUT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(write_end)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
}

#[test]
fn every_read_is_bounded() {
    let dir = workdir();
    let p = dir.path();
    std::os::unix::fs::symlink("/dev/zero", p.join("zero.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", p.join("zero.avsc")).unwrap();
    fs::write(
        p.join("sink-schema.yaml"),
        TWO_SINKS.replace(
            "    topic: a\n    value: json",
            "    topic: a\n    value: avro:zero.avsc",
        ),
    )
    .unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--command-config",
                "/dev/zero",
                "tail",
                "t",
                "-b",
                "127.0.0.1:1",
            ],
            "1 MiB",
        ),
        (
            &[
                "--command-config",
                "zero.json",
                "run",
                "two.yaml",
                "-b",
                "127.0.0.1:1",
            ],
            "1 MiB",
        ),
        (
            &[
                "snapshot",
                "restore",
                "--from-json",
                "/dev/zero",
                "--to",
                "out.snapshot",
            ],
            "2 GiB",
        ),
        (&["barrier", "decode", "--key-file", "/dev/zero"], "128 MiB"),
        (&["schema", "decode", "--file", "/dev/zero"], "128 MiB"),
        (
            &[
                "run",
                "two.yaml",
                "--schema-cache",
                "/dev/zero",
                "--input",
                "orders=orders.arrows",
                "--sink",
                "a=/dev/null",
                "--sink",
                "b=/dev/null",
            ],
            "256 MiB",
        ),
        (
            &[
                "tail",
                "t",
                "--value-format",
                "json:zero.json",
                "-b",
                "127.0.0.1:1",
                "--format",
                "ndjson",
            ],
            "16 MiB",
        ),
        (&["run", "--check", "sink-schema.yaml"], "16 MiB"),
        (&["run", "--check", "/dev/zero"], "1 MiB"),
    ];
    for (args, cap) in cases {
        let out = run_fed(p, args, None, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{args:?} did not end"));
        assert_not_a_crash(&out, &format!("{args:?}"));
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(cap) && err.contains("the cap for"),
            "{args:?}: {err}"
        );
    }
    // An Arrow IPC file's magic on stdin, then zeros without end: cut at the cap.
    let feed: Box<dyn FnOnce(std::process::ChildStdin) + Send> = Box::new(|mut s| {
        use std::io::Write as _;
        let _ = s.write_all(b"ARROW1\0\0");
        let zeros = vec![0u8; 1 << 20];
        while s.write_all(&zeros).is_ok() {}
    });
    let out = run_fed(
        p,
        &[
            "run",
            "two.yaml",
            "--input",
            "orders=-",
            "--sink",
            "a=/dev/null",
            "--sink",
            "b=/dev/null",
        ],
        Some(feed),
        Duration::from_secs(120),
    )
    .expect("endless zeros on stdin did not end");
    assert_not_a_crash(&out, "zeros");
    assert!(
        stderr(&out).contains("the cap for an Arrow IPC file read from a pipe"),
        "{}",
        stderr(&out)
    );
}

/// Every command that reads a schema file reads it through `io::schema_file`: one cap
/// (16 MiB), and one refusal naming the file, whichever flag, manifest, topology sink or
/// `.proto` import names it (docs/formats.md §4). The files are sparse, one byte over.
#[test]
fn every_command_that_reads_a_schema_file_refuses_one_over_the_cap() {
    let dir = workdir();
    let p = dir.path();
    for name in ["big.avsc", "big.json", "big.proto"] {
        fs::File::create(p.join(name))
            .unwrap()
            .set_len((16 << 20) + 1)
            .unwrap();
    }
    fs::write(
        p.join("order.proto"),
        "syntax = \"proto3\";\npackage shop;\nimport \"big.proto\";\nmessage Order { string user = 1; }\n",
    )
    .unwrap();
    fs::write(
        p.join("manifest.json"),
        br#"[{"subject":"s-value","schema_file":"big.avsc"}]"#,
    )
    .unwrap();
    fs::write(p.join("rows.ndjson"), b"{\"a\":1}\n").unwrap();
    let sink = |value: &str| {
        TWO_SINKS.replace(
            "    topic: a\n    value: json",
            &format!("    topic: a\n    value: {value}"),
        )
    };
    fs::write(p.join("avro-sink.yaml"), sink("avro:big.avsc")).unwrap();
    fs::write(p.join("json-sink.yaml"), sink("json-schema:big.json")).unwrap();
    fs::write(
        p.join("proto-sink.yaml"),
        sink("protobuf:order.proto:shop.Order"),
    )
    .unwrap();
    let registry = "http://127.0.0.1:1";
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--registry",
                registry,
                "schema",
                "check",
                "--against",
                "s-value",
                "big.avsc",
            ],
            "big.avsc",
        ),
        (
            &[
                "--registry",
                registry,
                "schema",
                "prewarm",
                "--subject",
                "s-value",
                "--schema-file",
                "big.avsc",
            ],
            "big.avsc",
        ),
        (
            &[
                "--registry",
                registry,
                "schema",
                "prewarm",
                "--manifest",
                "manifest.json",
            ],
            "big.avsc",
        ),
        (
            &[
                "--registry",
                registry,
                "produce",
                "t",
                "--input",
                "rows.ndjson",
                "--value-format",
                "avro",
                "--value-schema",
                "big.avsc",
                "-b",
                "127.0.0.1:1",
            ],
            "big.avsc",
        ),
        (
            &[
                "--registry",
                registry,
                "produce",
                "t",
                "--input",
                "rows.ndjson",
                "--value-format",
                "protobuf",
                "--value-schema",
                "order.proto:shop.Order",
                "-b",
                "127.0.0.1:1",
            ],
            "big.proto",
        ),
        (
            &[
                "tail",
                "t",
                "--value-format",
                "json:big.json",
                "--format",
                "ndjson",
                "-b",
                "127.0.0.1:1",
            ],
            "big.json",
        ),
        (
            &[
                "--registry",
                registry,
                "tail",
                "t",
                "--value-format",
                "avro:big.avsc",
                "--format",
                "ndjson",
                "-b",
                "127.0.0.1:1",
            ],
            "big.avsc",
        ),
        (&["run", "--check", "avro-sink.yaml"], "big.avsc"),
        (&["run", "--check", "json-sink.yaml"], "big.json"),
        (&["run", "--check", "proto-sink.yaml"], "big.proto"),
    ];
    for (args, file) in cases {
        let out = run_fed(p, args, None, Duration::from_secs(60))
            .unwrap_or_else(|| panic!("{args:?} did not end"));
        assert_not_a_crash(&out, &format!("{args:?}"));
        let err = stderr(&out);
        assert!(
            matches!(out.status.code(), Some(2 | 3)),
            "{args:?}: {:?} {err}",
            out.status.code()
        );
        let refusal =
            format!("{file}: larger than 16 MiB (16777216 bytes), the cap for a schema file");
        assert!(
            err.contains("schema file ") && err.contains(&refusal),
            "{args:?}: {err}"
        );
    }
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn temp_files(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

fn spawn_in(dir: &std::path::Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_krabka-streams"))
        .current_dir(dir)
        .args(args)
        .env_remove("KRABKA_OUTPUT")
        .env_remove("KRABKA_BOOTSTRAP_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

/// Waits (bounded) until `ready` holds; false when it never did.
fn wait_until(mut ready: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn arrow_file_bytes() -> Vec<u8> {
    let batches: Vec<_> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(orders_stream()), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &batches[0].schema()).unwrap();
    for b in &batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

#[test]
fn pipes_work_everywhere_a_file_works() {
    let dir = workdir();
    let p = dir.path();
    fs::write(p.join("orders.arrow"), arrow_file_bytes()).unwrap();
    // Process substitution (a /dev/fd pipe), of a stream and of an IPC file.
    for input in ["orders.arrows", "orders.arrow"] {
        let script = format!(
            "exec {} run two.yaml --input orders=<(cat {input}) --sink a=a.arrows --sink b=-",
            env!("CARGO_BIN_EXE_krabka-streams")
        );
        let out = Command::new("bash")
            .current_dir(p)
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{input}: {}", stderr(&out));
        assert_eq!(stream_rows(&out.stdout), 3, "{input}");
    }
    // Named FIFOs: with the writer first, with the writer arriving later.
    for (input, delay) in [
        ("orders.arrows", 0),
        ("orders.arrow", 0),
        ("orders.arrows", 500),
    ] {
        let fifo = p.join("in.fifo");
        let _ = fs::remove_file(&fifo);
        mkfifo(&fifo);
        let bytes = fs::read(p.join(input)).unwrap();
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(delay));
                fs::write(fifo, bytes).unwrap();
            })
        };
        let out = run_as(
            &[],
            p,
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=in.fifo",
                "--sink",
                "a=a.arrows",
                "--sink",
                "b=b.arrows",
            ],
        );
        writer.join().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{input} {delay}: {}",
            stderr(&out)
        );
        assert_eq!(stream_rows(&fs::read(p.join("b.arrows")).unwrap()), 3);
    }
    // A FIFO nobody writes: the run waits, as cat does; SIGTERM and SIGINT end the
    // wait with 130, nothing half-written, the previous outputs kept.
    for sig in [libc::SIGTERM, libc::SIGINT] {
        fs::write(p.join("a.parquet"), b"previous").unwrap();
        let child = spawn_in(
            p,
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=in.fifo",
                "--sink",
                "a=a.parquet",
                "--sink",
                "b=b.arrows",
            ],
        );
        std::thread::sleep(Duration::from_millis(500));
        assert!(child_running(&child), "the run did not wait for a writer");
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{sig}: {}", stderr(&out));
        assert!(stderr(&out).contains("cancelled"), "{}", stderr(&out));
        // An offline run never spoke to a broker: no warning about requests in flight.
        assert!(!stderr(&out).contains("broker"), "{}", stderr(&out));
        assert_eq!(fs::read(p.join("a.parquet")).unwrap(), b"previous");
        assert!(temp_files(p).is_empty(), "{:?}", temp_files(p));
    }
}

fn child_running(child: &std::process::Child) -> bool {
    // SAFETY: kill with signal 0 only checks that the pid exists.
    unsafe { libc::kill(child.id() as libc::pid_t, 0) == 0 }
}

#[test]
fn signals_end_every_command_the_same_way() {
    let dir = workdir();
    let p = dir.path();
    let stream = orders_stream();
    // The stream without its end-of-stream marker: the run writes and then waits.
    let open_ended = stream[..stream.len() - 8].to_vec();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        fs::write(p.join("a.parquet"), b"previous a").unwrap();
        fs::write(p.join("b.parquet"), b"previous b").unwrap();
        let fifo = p.join("feed.fifo");
        let _ = fs::remove_file(&fifo);
        mkfifo(&fifo);
        let child = spawn_in(
            p,
            &[
                "run",
                "two.yaml",
                "--input",
                "orders=feed.fifo",
                "--sink",
                "a=a.parquet",
                "--sink",
                "b=b.parquet",
            ],
        );
        let mut feed = fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        {
            use std::io::Write as _;
            feed.write_all(&open_ended).unwrap();
        }
        // Both Parquet writers have their temp file once the first batch went through.
        assert!(
            wait_until(|| temp_files(p).len() == 2),
            "no temp files: {:?}",
            temp_files(p)
        );
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        drop(feed);
        assert_eq!(out.status.code(), Some(130), "{sig}: {}", stderr(&out));
        assert!(stderr(&out).contains("run: cancelled"), "{}", stderr(&out));
        assert_eq!(fs::read(p.join("a.parquet")).unwrap(), b"previous a");
        assert_eq!(fs::read(p.join("b.parquet")).unwrap(), b"previous b");
        assert!(temp_files(p).is_empty(), "{:?}", temp_files(p));
    }
    // tail before it has connected: a broker address that accepts and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let bootstrap = silent.local_addr().unwrap().to_string();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        fs::write(p.join("t.parquet"), b"previous t").unwrap();
        let child = spawn_in(
            p,
            &[
                "tail",
                "t",
                "-b",
                &bootstrap,
                "--out",
                "t.parquet",
                "--timeout",
                "60s",
            ],
        );
        std::thread::sleep(Duration::from_millis(700));
        assert!(child_running(&child));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "tail {sig}: {}", stderr(&out));
        assert!(stderr(&out).contains("cancelled"), "{}", stderr(&out));
        assert_eq!(fs::read(p.join("t.parquet")).unwrap(), b"previous t");
        assert!(temp_files(p).is_empty(), "{:?}", temp_files(p));
    }
}

/// A one-row orders stream whose `__timestamp` is `ts`.
fn orders_at(ts: i64) -> Vec<u8> {
    let batches: Vec<arrow_array::RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(orders_stream()), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let batch = batches[0].slice(0, 1);
    let at = batch.schema().index_of("__timestamp").unwrap();
    let mut columns = batch.columns().to_vec();
    columns[at] = std::sync::Arc::new(arrow_array::Int64Array::from(vec![ts]));
    let batch = arrow_array::RecordBatch::try_new(batch.schema(), columns).unwrap();
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

fn windowed(size: &str, retention: Option<&str>) -> String {
    let retention = retention
        .map(|r| format!("    retention: {r}\n"))
        .unwrap_or_default();
    format!(
        "version: 1
nodes:
  - source: orders
    topics: [orders]
    value: json
    columns:
      user: utf8
      amount: int64
  - windowed_group_by: per-window
    parent: orders
    keys: [user]
    window: {size}
{retention}    aggregates:
      - count(*) AS n
  - sink: out
    parent: per-window
    topic: out
    value: json
"
    )
}

#[test]
fn time_arithmetic_never_wraps() {
    let dir = workdir();
    let p = dir.path();
    // Window sizes and retentions beyond i64 milliseconds are refused by --check,
    // at the value's line.
    for (size, retention) in [
        ("213503982334d", None),
        ("9223372036854776s", None),
        ("1m", Some("213503982334d")),
    ] {
        fs::write(p.join("w.yaml"), windowed(size, retention)).unwrap();
        let out = run_as(&[], p, &["run", "--check", "w.yaml"]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{size} {retention:?}: {}",
            stderr(&out)
        );
        let line = if retention.is_some() {
            "w.yaml:13:"
        } else {
            "w.yaml:12:"
        };
        assert!(
            stderr(&out).contains(line) && stderr(&out).contains("64-bit millisecond range"),
            "{}",
            stderr(&out)
        );
    }
    // The largest representable size passes.
    fs::write(p.join("w.yaml"), windowed("106751991167d", None)).unwrap();
    let out = run_as(&[], p, &["run", "--check", "w.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Timestamps at the ends of i64 whose window does not fit: an error naming the
    // timestamp and row, no output; one that fits gives a window with end > start.
    for (size, ts, fits) in [
        ("7ms", i64::MIN, false),
        ("7ms", i64::MAX, false),
        ("1m", i64::MAX - 5, false),
        ("106751991167d", -1, true),
        ("1ms", i64::MIN, true),
        ("7ms", 0, true),
    ] {
        fs::write(p.join("w.yaml"), windowed(size, None)).unwrap();
        fs::write(p.join("at.arrows"), orders_at(ts)).unwrap();
        let _ = fs::remove_file(p.join("w.arrows"));
        let out = run_as(
            &[],
            p,
            &[
                "run",
                "w.yaml",
                "--input",
                "orders=at.arrows",
                "--sink",
                "out=w.arrows",
            ],
        );
        assert_not_a_crash(&out, &format!("{size} {ts}"));
        if fits {
            assert_eq!(out.status.code(), Some(0), "{size} {ts}: {}", stderr(&out));
            let bytes = fs::read(p.join("w.arrows")).unwrap();
            let batches: Vec<_> =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
                    .unwrap()
                    .map(|b| b.unwrap())
                    .collect();
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            assert_eq!(rows, 1, "{size} {ts}: the record was dropped");
            for b in &batches {
                let ints = |name: &str| {
                    let c = b
                        .column_by_name(name)
                        .unwrap_or_else(|| panic!("{name} in {:?}", b.schema()));
                    arrow_cast::cast(c, &arrow_schema::DataType::Int64).unwrap()
                };
                let (start, end) = (ints("__window_start"), ints("__window_end"));
                use arrow_array::cast::AsArray;
                let (s, e) = (
                    start.as_primitive::<arrow_array::types::Int64Type>(),
                    end.as_primitive::<arrow_array::types::Int64Type>(),
                );
                for i in 0..b.num_rows() {
                    assert!(
                        e.value(i) > s.value(i),
                        "{size} {ts}: window [{}, {})",
                        s.value(i),
                        e.value(i)
                    );
                    assert!(s.value(i) <= ts && ts < e.value(i), "{size} {ts}");
                }
            }
        } else {
            assert_eq!(out.status.code(), Some(1), "{size} {ts}: {}", stderr(&out));
            assert!(
                stderr(&out).contains(&format!("__timestamp {ts} at row 0")),
                "{}",
                stderr(&out)
            );
            assert!(!p.join("w.arrows").exists());
        }
    }
}

#[test]
fn validation_is_linear() {
    let dir = workdir();
    let p = dir.path();
    let wide = |n: usize| {
        let mut s = String::from(
            "version: 1\nnodes:\n  - source: orders\n    topics: [orders]\n    value: json\n    columns:\n",
        );
        for i in 0..n {
            s.push_str(&format!("      c{i}: int64\n"));
        }
        s.push_str("  - select: some\n    parent: orders\n    columns: [c0, c1]\n");
        s.push_str("  - sink: out\n    parent: some\n    topic: out\n    value: json\n");
        s
    };
    // 40,000 declared columns check in well under the seconds a quadratic pass took;
    // the bound is generous (a debug build on a loaded machine) and not a timing claim.
    fs::write(p.join("wide.yaml"), wide(40_000)).unwrap();
    let out = run_fed(
        p,
        &["run", "--check", "wide.yaml"],
        None,
        Duration::from_secs(60),
    )
    .expect("--check of 40,000 columns did not end within a minute");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid (3 nodes)"));
}

fn parquet_bytes() -> Vec<u8> {
    let batches: Vec<_> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(orders_stream()), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batches[0].schema(), None).unwrap();
    for b in &batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
    out
}

#[test]
fn exit_codes_and_messages_point_the_right_way() {
    let dir = workdir();
    let p = dir.path();
    let err_of = |args: &[&str]| {
        let out = run_as(&[], p, args);
        assert_not_a_crash(&out, &format!("{args:?}"));
        (out.status.code(), stderr(&out))
    };
    // --check of an unreadable or non-UTF-8 file is an invalid file (3).
    fs::write(p.join("bad-utf8.yaml"), b"version: 1\n# \xff\n").unwrap();
    for file in ["missing.yaml", "bad-utf8.yaml", "/dev/null/x.yaml"] {
        let (code, err) = err_of(&["run", "--check", file]);
        assert_eq!(code, Some(3), "{file}: {err}");
    }
    // A --from time before the epoch (or past i64) is a usage error naming --from,
    // found before any broker is asked (the address refuses: 4 would mean it tried).
    for from in [
        "@-99999999999d",
        "@-999999999999999d",
        "@1969-12-31T23:59:59Z",
    ] {
        let (code, err) = err_of(&["-b", "127.0.0.1:1", "tail", "t", "--from", from]);
        assert_eq!(code, Some(2), "{from}: {err}");
        assert!(err.contains("--from"), "{from}: {err}");
    }
    // schema errors name the schema subcommand that failed.
    let (code, err) = err_of(&["schema", "decode", "0000"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("schema decode:"), "{err}");
    // A sink directory that does not exist: 2 before any input is read, Parquet as IPC.
    for sink in ["a=nodir/a.parquet", "a=nodir/a.arrows", "a=nodir/a.arrow"] {
        let (code, err) = err_of(&[
            "run",
            "two.yaml",
            "--input",
            "orders=orders.arrows",
            "--sink",
            sink,
            "--sink",
            "b=/dev/null",
        ]);
        assert_eq!(code, Some(2), "{sink}: {err}");
        assert!(err.contains("nodir"), "{err}");
    }
    // Two inputs on stdin.
    fs::write(p.join("join2.yaml"), TWO_SINKS.replace("  - filter: big\n    parent: orders", "  - source: more\n    topics: [more]\n    value: json\n  - filter: big\n    parent: orders")).unwrap();
    let (code, err) = err_of(&[
        "run",
        "join2.yaml",
        "--input",
        "orders=-",
        "--input",
        "more=-",
        "--sink",
        "a=-",
        "--sink",
        "b=/dev/null",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("stdin"), "{err}");
    // `run --out` is pointed at --sink, not at --output.
    let (code, err) = err_of(&[
        "run",
        "two.yaml",
        "--input",
        "orders=orders.arrows",
        "--out",
        "x.arrows",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--sink NAME=FILE"), "{err}");
    // Parquet given as an IPC input, from a file and from a pipe.
    fs::write(p.join("orders.parquet"), parquet_bytes()).unwrap();
    let (code, err) = err_of(&[
        "run",
        "two.yaml",
        "--input",
        "orders=orders.parquet",
        "--sink",
        "a=/dev/null",
        "--sink",
        "b=/dev/null",
    ]);
    assert_ne!(code, Some(0));
    assert!(
        err.contains("orders.parquet is a Parquet file") && err.contains("Arrow IPC"),
        "{err}"
    );
    let bytes = parquet_bytes();
    let feed: Box<dyn FnOnce(std::process::ChildStdin) + Send> = Box::new(move |mut s| {
        use std::io::Write as _;
        let _ = s.write_all(&bytes);
    });
    let out = run_fed(
        p,
        &[
            "run",
            "two.yaml",
            "--input",
            "orders=-",
            "--sink",
            "a=/dev/null",
            "--sink",
            "b=/dev/null",
        ],
        Some(feed),
        TIMEOUT,
    )
    .unwrap();
    assert!(
        stderr(&out).contains("stdin is a Parquet file"),
        "{}",
        stderr(&out)
    );
    // An IPC file cut short (bad footer) names the file and what is wrong.
    let file = arrow_file_bytes();
    for cut in [file.len() - 3, file.len() / 2, 10] {
        fs::write(p.join("cut.arrow"), &file[..cut]).unwrap();
        let (code, err) = err_of(&[
            "run",
            "two.yaml",
            "--input",
            "orders=cut.arrow",
            "--sink",
            "a=/dev/null",
            "--sink",
            "b=/dev/null",
        ]);
        assert_eq!(code, Some(1), "{cut}: {err}");
        assert!(
            err.contains("cut.arrow") && err.contains("footer"),
            "{cut}: {err}"
        );
    }
    // Did you mean: columns in expressions, selects, keys, aggregates; parents.
    let variants = [
        (
            "where: amount > 100",
            "where: amont > 100",
            "did you mean `amount`?",
        ),
        (
            "where: amount > 100",
            "where: Amount > 100",
            "did you mean `amount`?",
        ),
        ("parent: big", "parent: bg", "did you mean `big`?"),
        (
            "parent: orders\n    topic: b",
            "parent: order\n    topic: b",
            "did you mean `orders`?",
        ),
        (
            "where: amount > 100",
            "where: amount > \"x\"",
            "write 'x' for a string",
        ),
    ];
    for (from, to, hint) in variants {
        fs::write(p.join("typo.yaml"), TWO_SINKS.replacen(from, to, 1)).unwrap();
        let (code, err) = err_of(&["run", "--check", "typo.yaml"]);
        assert_eq!(code, Some(3), "{to}: {err}");
        assert!(err.contains(hint), "{to}: {err}");
    }
    // The smallest i64 literal parses.
    for predicate in [
        "amount > -9223372036854775808",
        "amount >= -9223372036854775808 AND amount < 9223372036854775807",
    ] {
        fs::write(
            p.join("min.yaml"),
            TWO_SINKS.replace("amount > 100", predicate),
        )
        .unwrap();
        let (code, err) = err_of(&["run", "--check", "min.yaml"]);
        assert_eq!(code, Some(0), "{predicate}: {err}");
    }
    fs::write(
        p.join("min.yaml"),
        TWO_SINKS.replace("amount > 100", "amount > -9223372036854775809"),
    )
    .unwrap();
    let (code, err) = err_of(&["run", "--check", "min.yaml"]);
    assert_eq!(code, Some(3), "{err}");
    // Topic names are validated as Kafka does, in topologies and on tail.
    for topic in ["''", "a/../../b", "'x y'", "'..'", &"t".repeat(250)] {
        fs::write(
            p.join("topic.yaml"),
            TWO_SINKS.replace("topics: [orders]", &format!("topics: [{topic}]")),
        )
        .unwrap();
        let (code, err) = err_of(&["run", "--check", "topic.yaml"]);
        assert_eq!(code, Some(3), "{topic}: {err}");
        assert!(err.contains("topic.yaml:8:"), "{topic}: {err}");
        fs::write(
            p.join("topic.yaml"),
            TWO_SINKS.replace("topic: b", &format!("topic: {topic}")),
        )
        .unwrap();
        let (code, err) = err_of(&["run", "--check", "topic.yaml"]);
        assert_eq!(code, Some(3), "{topic}: {err}");
    }
    // … and in the settings that name topics the run writes to.
    for topic in ["''", "a/../../b", "'x y'", "'..'", &"t".repeat(250)] {
        for setting in ["dead_letter_topic", "state_topic"] {
            let settings = match setting {
                "dead_letter_topic" => format!("dead_letter_topic: {topic}"),
                _ => {
                    format!("dead_letter_topic: dlq\n  state_store: kafka\n  state_topic: {topic}")
                }
            };
            let yaml = TWO_SINKS.replace("dead_letter_topic: dlq", &settings);
            fs::write(p.join("settings.yaml"), yaml).unwrap();
            let (code, err) = err_of(&["run", "--check", "settings.yaml"]);
            assert_eq!(code, Some(3), "{setting} {topic}: {err}");
            assert!(err.contains("topic name"), "{setting} {topic}: {err}");
        }
    }
    for topic in ["", "a/b", "x y", ".."] {
        let (code, err) = err_of(&["tail", topic, "-b", "127.0.0.1:1"]);
        assert_eq!(code, Some(2), "{topic:?}: {err}");
        assert!(err.contains("topic name"), "{err}");
    }
    // A garbage snapshot is "not a snapshot container", not a version.
    let snaps = p.join("garbage");
    fs::create_dir(&snaps).unwrap();
    fs::write(snaps.join("partition-0.snapshot"), b"garbage garbage!").unwrap();
    fs::write(
        snaps.join("partition-1.snapshot"),
        [0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0],
    )
    .unwrap();
    for file in [
        "garbage/partition-0.snapshot",
        "garbage/partition-1.snapshot",
    ] {
        let (code, err) = err_of(&["snapshot", "dump", file]);
        assert_ne!(code, Some(0));
        assert!(err.contains("not a snapshot container"), "{file}: {err}");
    }
    let (_, err) = err_of(&["snapshot", "dump", "garbage/partition-0.snapshot"]);
    assert!(err.contains("\"garb\""), "{err}");
}

#[test]
fn confluent_framed_bytes_read_as_json_name_the_magic_byte_and_schema_id() {
    let broker = Tansu::start();
    let topic = unique_name("hostile-framed");
    create_topic(&broker.bootstrap(), &topic, 1);
    let mut framed = vec![0u8, 0, 0, 0, 42];
    framed.extend_from_slice(b"\x02\x06abc");
    crate::support::admin::produce_bytes(&broker.bootstrap(), &topic, &[(0, "k".into(), framed)]);
    let bootstrap = broker.bootstrap();
    let out = run(&[
        os("tail"),
        os(&topic),
        os("-e"),
        os("--value-format"),
        os("json"),
        os("--format"),
        os("ndjson"),
        os("-b"),
        os(&bootstrap),
        os("--timeout"),
        os("20s"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("magic byte 0 and schema id 42"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn snapshot_verify_reports_gen_b_names_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let gen_b = |names: &[&str]| {
        let mut out = Vec::new();
        out.extend_from_slice(&1u32.to_be_bytes());
        out.extend_from_slice(&(names.len() as u32).to_be_bytes());
        for n in names {
            out.extend_from_slice(&(n.len() as u32).to_be_bytes());
            out.extend_from_slice(n.as_bytes());
            out.extend_from_slice(&1u32.to_be_bytes());
            out.push(b'v');
        }
        out
    };
    fs::write(
        dir.path().join("partition-0.snapshot"),
        gen_b(&["a", "b", "c"]),
    )
    .unwrap();
    let out = run(&[os("snapshot"), os("verify"), dir.path().as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Unsorted at the start, in the middle, by byte value (uppercase sorts first).
    for (i, names) in [&["b", "a"][..], &["a", "c", "b"], &["a", "B"]]
        .iter()
        .enumerate()
    {
        fs::write(
            dir.path().join(format!("partition-{}.snapshot", i + 1)),
            gen_b(names),
        )
        .unwrap();
    }
    let out = run(&[
        os("snapshot"),
        os("verify"),
        dir.path().as_os_str(),
        os("--output"),
        os("json"),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("are not sorted").count(), 3, "{text}");
    assert!(!text.contains("partition-0.snapshot"), "{text}");
}

#[test]
fn a_tab_is_reported_at_its_own_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "version: 1\nnodes:\n  - source: orders\n    topics: [orders]\n    value: json\n\tcolumns: {a: int64}\n",
            "6:1",
        ),
        (
            "version: 1\nnodes:\n  - source: orders\n    topics: [orders]\n    value: json\n    columns:\n\t  a: int64\n",
            "7:1",
        ),
        (
            "version: 1\nnodes:\n  - source: orders\n    topics: [orders]\n  \t value: json\n",
            "5:3",
        ),
    ];
    for (text, at) in cases {
        fs::write(dir.path().join("tab.yaml"), text).unwrap();
        let out = run(&[
            os("run"),
            os("--check"),
            dir.path().join("tab.yaml").as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("tab.yaml:{at}:")),
            "{at}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn tail_refuses_a_union_column_for_parquet_naming_it() {
    let broker = Tansu::start();
    let topic = unique_name("hostile-union");
    create_topic(&broker.bootstrap(), &topic, 1);
    // Arrow blob values (docs/formats.md §5): each value one IPC stream, here with a union.
    crate::support::admin::produce_bytes(
        &broker.bootstrap(),
        &topic,
        &[(0, "k".into(), union_stream(false))],
    );
    let dir = tempfile::tempdir().unwrap();
    let bootstrap = broker.bootstrap();
    let out = run_as(
        &[],
        dir.path(),
        &[
            "tail",
            &topic,
            "-p",
            "0",
            "-e",
            "--value-format",
            "arrow",
            "--out",
            "u.parquet",
            "-b",
            &bootstrap,
            "--timeout",
            "20s",
        ],
    );
    assert_not_a_crash(&out, "tail union");
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`choice`") && stderr(&out).contains("union"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("u.parquet").exists());
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );
    // The same records as an Arrow IPC stream are fine.
    let out = run_as(
        &[],
        dir.path(),
        &[
            "tail",
            &topic,
            "-e",
            "--max-records",
            "1",
            "--value-format",
            "arrow",
            "--out",
            "u.arrows",
            "-b",
            &bootstrap,
            "--timeout",
            "20s",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
