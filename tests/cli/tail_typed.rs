//! `tail`'s machine formats keep types: `__timestamp` a timestamp and `__headers` a
//! list of `{key, value}` structs in Arrow IPC and Parquet (the library byte layout on
//! request), every Parquet timestamp in microseconds, each checked with pyarrow and
//! DuckDB; and what `tail` writes by default feeds `run --input` through a pipe.

use std::io::Write;
use std::process::{Command, Stdio};

use krabka_streams::engine::columnar::headers::{Header, encode_headers};
use serde_json::json;

use crate::support::{binary, venv_python};
use crate::tail::{BASE_TS, orders, stderr};

const PARQUET_TYPES: &str = r#"
import sys, json, duckdb, pyarrow.parquet as pq
path = sys.argv[1]
pf = pq.ParquetFile(path)
physical = {}
for i in range(len(pf.schema)):
    c = pf.schema.column(i)
    physical[c.path] = {"physical": c.physical_type, "logical": str(c.logical_type)}
t = pq.read_table(path).sort_by([('__partition', 'ascending'), ('__offset', 'ascending')])
con = duckdb.connect()
d = con.execute(f"""SELECT typeof(__timestamp), typeof(__headers), epoch_ms(__timestamp),
    __headers[1].key, decode(__headers[1].value), len(__headers), typeof(ts)
  FROM read_parquet('{path}') ORDER BY __partition, __offset LIMIT 1""").fetchall()[0]
print(json.dumps({
  "physical": physical,
  "arrow": {f.name: str(f.type) for f in t.schema},
  "headers0": [{"key": h["key"], "value": h["value"].decode()} for h in t['__headers'][0].as_py()],
  "ts0": t['__timestamp'][0].as_py().isoformat(),
  "duckdb": list(d),
}))
"#;

#[test]
fn parquet_holds_typed_headers_and_every_timestamp_in_microseconds() {
    let o = orders(4);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("orders.parquet");
    let out = o.tail_to_end(&["--out", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = venv_python(PARQUET_TYPES, &[&file]);
    for column in ["__timestamp", "ts"] {
        assert_eq!(v["physical"][column]["physical"], "INT64", "{v}");
        let logical = v["physical"][column]["logical"].as_str().unwrap();
        assert!(
            logical.contains("timeUnit=microseconds") && logical.contains("isAdjustedToUTC=true"),
            "{column}: {logical}"
        );
    }
    assert_eq!(v["arrow"]["__timestamp"], "timestamp[us, tz=UTC]");
    assert_eq!(
        v["arrow"]["__headers"],
        "list<item: struct<key: string not null, value: binary> not null>"
    );
    assert_eq!(v["headers0"], json!([{"key": "source", "value": "web"}]));
    assert_eq!(v["ts0"], "2024-11-29T09:00:00+00:00");
    assert_eq!(
        v["duckdb"],
        json!([
            "TIMESTAMP WITH TIME ZONE",
            "STRUCT(\"key\" VARCHAR, \"value\" BLOB)[]",
            BASE_TS,
            "source",
            "web",
            1,
            "TIMESTAMP WITH TIME ZONE"
        ])
    );
}

const ARROW_TYPES: &str = r#"
import sys, json, duckdb, pyarrow.ipc as ipc
t = ipc.open_stream(open(sys.argv[1], 'rb')).read_all()
con = duckdb.connect()
d = con.execute("SELECT typeof(__timestamp), typeof(__headers) FROM t LIMIT 1").fetchall()[0]
print(json.dumps({"arrow": {f.name: str(f.type) for f in t.schema}, "duckdb": list(d),
  "headers": sorted(str(h) for h in t['__headers'].to_pylist())}))
"#;

#[test]
fn arrow_ipc_is_typed_by_default_and_keeps_the_library_layout_on_request() {
    let o = orders(2);
    let dir = tempfile::tempdir().unwrap();
    let typed = dir.path().join("typed.arrows");
    let out = o.tail_to_end(&["--format", "arrow"]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&typed, &out.stdout).unwrap();
    let v = venv_python(ARROW_TYPES, &[&typed]);
    assert_eq!(v["arrow"]["__timestamp"], "timestamp[ms, tz=UTC]");
    assert_eq!(
        v["arrow"]["__headers"],
        "list<item: struct<key: string not null, value: binary> not null>"
    );
    assert_eq!(
        v["duckdb"],
        json!([
            "TIMESTAMP WITH TIME ZONE",
            "STRUCT(\"key\" VARCHAR, \"value\" BLOB)[]"
        ])
    );

    let library = dir.path().join("library.arrows");
    let out = o.tail_to_end(&["--format", "arrow", "--headers-encoding", "library"]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&library, &out.stdout).unwrap();
    let v = venv_python(ARROW_TYPES, &[&library]);
    assert_eq!(v["arrow"]["__timestamp"], "int64");
    assert_eq!(v["arrow"]["__headers"], "binary");

    let refused = o.tail_to_end(&["--format", "ndjson", "--headers-encoding", "library"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let refused = o.tail_to_end(&["--format", "arrow", "--binary", "base64"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

const PASS_THROUGH: &str = "version: 1
nodes:
  - source: orders
    topics: [orders]
    value: avro
    columns:
      user: utf8
  - filter: recent
    parent: orders
    where: __timestamp >= 1732870801000
  - sink: out
    parent: recent
    topic: out
    value: json
";

const SINK_ROWS: &str = r#"
import sys, json, pyarrow.ipc as ipc
t = ipc.open_stream(open(sys.argv[1], 'rb')).read_all().sort_by('order_id')
print(json.dumps({"rows": [[r['order_id'], r['__timestamp'], r['__partition'], r['__offset'],
  r['__headers'].hex()] for r in t.to_pylist()], "types": {f.name: str(f.type) for f in t.schema}}))
"#;

#[test]
fn what_tail_writes_by_default_is_read_by_run_through_a_pipe() {
    let o = orders(4);
    let dir = tempfile::tempdir().unwrap();
    let topology = dir.path().join("pass.yaml");
    std::fs::write(&topology, PASS_THROUGH).unwrap();
    let sink = dir.path().join("out.arrows");
    let tailed = o.tail_to_end(&["--format", "arrow"]);
    assert!(tailed.status.success(), "{}", stderr(&tailed));
    let mut run = Command::new(binary())
        .arg("run")
        .arg(&topology)
        .args(["--input", "orders=-", "--sink"])
        .arg(format!("out={}", sink.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    run.stdin.take().unwrap().write_all(&tailed.stdout).unwrap();
    let ran = run.wait_with_output().unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let v = venv_python(SINK_ROWS, &[&sink]);
    let rows = v["rows"].clone();
    // `--where`-style filtering on the reserved timestamp saw epoch ms; the headers
    // came back as the library cell of the record's own header.
    let cell = |value: &str| -> String {
        encode_headers(&[Header::new("source", Some(value.as_bytes().to_vec()))])
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let (web, app) = (cell("web"), cell("app"));
    assert_eq!(
        v["rows"],
        json!([
            ["o-0001", BASE_TS + 1000, 1, 0, app],
            ["o-0002", BASE_TS + 2000, 0, 1, web],
            ["o-0003", BASE_TS + 3000, 1, 1, app],
        ]),
        "{v}"
    );

    // The same run into a Parquet sink: reserved columns typed, timestamps in µs.
    let parquet = dir.path().join("out.parquet");
    let mut run = Command::new(binary())
        .arg("run")
        .arg(&topology)
        .args(["--input", "orders=-", "--sink"])
        .arg(format!("out={}", parquet.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    run.stdin.take().unwrap().write_all(&tailed.stdout).unwrap();
    let ran = run.wait_with_output().unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let v = venv_python(PARQUET_TYPES, &[&parquet]);
    for column in ["__timestamp", "ts"] {
        let logical = v["physical"][column]["logical"]
            .as_str()
            .unwrap_or_default();
        assert!(logical.contains("timeUnit=microseconds"), "{column}: {v}");
    }
    // Sorted by partition and offset: o-0002 (partition 0, offset 1) comes first.
    assert_eq!(v["headers0"], json!([{"key": "source", "value": "web"}]));
    assert_eq!(rows.as_array().unwrap().len(), 3);
}
