//! `barrier list` and `barrier show` over a multi-partition `__barrier_state`.

use krabka_streams::engine::columnar::barrier::{BARRIER_STATE_TOPIC, BarrierStateKey};
use krabka_streams::engine::columnar::ipc;
use serde_json::Value;

use super::fixture::{Cluster, assert_code, cut, json_data, run, stderr, stdout};
use crate::support::venv_python;

/// Three groups spread over a 7-partition `__barrier_state`: complete and partial cuts, a cut
/// overwritten by a partial one, a tombstone, definitions and injections.
fn populated() -> Cluster {
    let mut c = Cluster::start();
    c.create_barrier_state(7);
    c.write_group("audit", &["orders"], 4);
    c.write_cut("audit", 1, &cut("orders", &[(0, 10), (1, 20)], &[]));
    c.write_cut("audit", 2, &cut("orders", &[(0, 15)], &[1]));
    c.write_cut("audit", 3, &cut("orders", &[(0, 30), (1, 40)], &[]));
    c.write_cut("audit", 4, &cut("orders", &[(0, 50), (1, 60)], &[]));
    c.write_cut_tombstone("audit", 4);
    c.write_injection("audit", 5, "orders", 2);
    c.write_cut(
        "ledger",
        7,
        &cut("payments", &[(0, 5), (1, 6), (2, 7)], &[]),
    );
    c.write_cut(
        "ledger",
        8,
        &cut("payments", &[(0, 9), (1, 9), (2, 9)], &[]),
    );
    c.write_cut("ledger", 8, &cut("payments", &[(0, 9)], &[1, 2]));
    c.write_cut("shadow", 1, &cut("orders", &[(0, 1)], &[]));
    c
}

fn epochs(data: &Value, group: &str) -> Vec<i64> {
    data["cuts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["group"] == group)
        .map(|c| c["epoch"].as_i64().unwrap())
        .collect()
}

#[test]
fn list_reads_every_partition_and_shows_only_complete_cuts_by_default() {
    let c = populated();
    assert_ne!(c.state_partition("audit"), c.state_partition("ledger"));
    let out = c.run(&["barrier", "list", "--output", "json"]);
    assert_code(&out, 0);
    let data = json_data(&out);
    assert_eq!(data["partitions"], 7);
    assert_eq!(data["topic_exists"], true);
    assert_eq!(
        epochs(&data, "audit"),
        [1, 3],
        "partial 2 hidden, 4 deleted"
    );
    assert_eq!(epochs(&data, "ledger"), [7], "8 became partial");
    assert_eq!(epochs(&data, "shadow"), [1]);
    assert_eq!(data["groups"], Value::Array(vec![]));
    let first = &data["cuts"][0];
    assert_eq!(first["triggered_at"], "2024-08-24T11:46:40.000Z");
    assert_eq!(first["completed_at"], "2024-08-24T11:46:40.042Z");
    assert_eq!(first["partitions"], 2);

    let human = c.run(&["barrier", "list"]);
    assert_code(&human, 0);
    let text = stdout(&human);
    assert!(
        text.contains("__barrier_state: 7 partitions, 11 records read"),
        "{text}"
    );
    assert!(text.contains("2024-08-24T11:46:40.042Z"), "{text}");
}

#[test]
fn list_all_adds_partial_cuts_definitions_and_injections() {
    let c = populated();
    let out = c.run(&[
        "barrier", "list", "--all", "--group", "audit", "--output", "json",
    ]);
    assert_code(&out, 0);
    let data = json_data(&out);
    assert_eq!(epochs(&data, "audit"), [1, 2, 3]);
    assert_eq!(
        epochs(&data, "ledger"),
        Vec::<i64>::new(),
        "filtered by --group"
    );
    assert_eq!(data["cuts"][1]["status"], "partial");
    assert_eq!(data["cuts"][1]["missing"], serde_json::json!(["orders/1"]));
    assert_eq!(data["groups"][0]["group"], "audit");
    assert_eq!(data["groups"][0]["last_epoch"], 4);
    assert_eq!(
        data["groups"][0]["state_partition"],
        c.state_partition("audit")
    );
    assert_eq!(data["injections"][0]["epoch"], 5);
    assert_eq!(data["injections"][0]["targets"][0]["partitions"], 2);

    let human = c.run(&["barrier", "list", "--all"]);
    assert_code(&human, 0);
    let text = stdout(&human);
    for needle in [
        "group definitions:",
        "injection records:",
        "partial",
        "orders ×2",
    ] {
        assert!(text.contains(needle), "{needle} in:\n{text}");
    }
}

/// What pyarrow sees of a Parquet file: codecs, a timestamp type, statistics and
/// dictionary pages, i.e. which writer settings it was written with.
const PYARROW_PARQUET_SETTINGS: &str = r#"
import sys, json
import pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
meta = f.metadata
cols = [meta.row_group(g).column(c) for g in range(meta.num_row_groups) for c in range(meta.num_columns)]
def col(name):
    return next(c for c in cols if c.path_in_schema == name)
def min_max(c):
    return c.statistics is not None and c.statistics.has_min_max
print(json.dumps({"rows": meta.num_rows, "codecs": sorted({c.compression for c in cols}),
  "triggered_at": str(f.schema_arrow.field("triggered_at").type),
  "group_has_min_max": min_max(col("group")), "epoch_has_min_max": min_max(col("epoch")),
  "dictionary_pages": any(c.has_dictionary_page for c in cols)}))
"#;

#[test]
fn list_writes_one_arrow_or_parquet_row_per_cut_partition_atomically() {
    let c = populated();
    let dir = tempfile::tempdir().unwrap();
    let arrows = dir.path().join("cuts.arrows");
    let out = c.run(&[
        "barrier",
        "list",
        "--all",
        "--format",
        "arrow",
        "--out",
        arrows.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    assert!(
        stdout(&out).contains("wrote 13 rows (6 cuts)"),
        "{}",
        stdout(&out)
    );
    let (schema, batches) = ipc::read_batches(&std::fs::read(&arrows).unwrap()).unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "group",
            "epoch",
            "status",
            "triggered_at",
            "completed_at",
            "topic",
            "partition",
            "offset"
        ]
    );
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(
        rows, 13,
        "2+2+2 audit, 3+3 ledger (8 partial: 1 offset + 2 missing), 1 shadow"
    );

    let parquet = dir.path().join("cuts.parquet");
    let out = c.run(&[
        "barrier",
        "list",
        "--format",
        "parquet",
        "--out",
        parquet.to_str().unwrap(),
    ]);
    assert_code(&out, 0);
    let file = std::fs::File::open(&parquet).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 2 + 2 + 3 + 1);
    let v = venv_python(PYARROW_PARQUET_SETTINGS, &[&parquet]);
    assert_eq!(v["rows"], 2 + 2 + 3 + 1, "{v}");
    assert_eq!(
        v["codecs"],
        serde_json::json!(["ZSTD"]),
        "tail's codec: {v}"
    );
    // Every Parquet timestamp is in µs (issue #20), as in tail and run.
    assert_eq!(v["triggered_at"], "timestamp[us, tz=UTC]", "{v}");
    assert_eq!(v["group_has_min_max"], false, "tail's statistics: {v}");
    assert_eq!(v["epoch_has_min_max"], true, "{v}");
    assert_eq!(v["dictionary_pages"], false, "tail's encoding: {v}");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["cuts.arrows", "cuts.parquet"], "no temp files left");
}

#[test]
fn a_corrupt_record_fails_the_listing_naming_its_partition_and_offset() {
    let mut c = Cluster::start();
    c.create_barrier_state(5);
    c.write_cut("audit", 1, &cut("orders", &[(0, 10)], &[]));
    let good_key = BarrierStateKey::cut("audit", 2).encode().unwrap();
    let (partition, offset) = c.write_raw("audit", &good_key, Some(&[0, 0, 1]));
    let out = c.run(&["barrier", "list"]);
    assert_code(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{BARRIER_STATE_TOPIC}: malformed barrier state record at partition {partition}, offset {offset}: truncated barrier state cut value"
        )),
        "{err}"
    );
    let out = c.run(&["barrier", "show", "--group", "audit", "--epoch", "1"]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains(&format!("at partition {partition}, offset {offset}")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_malformed_group_definition_is_listed_with_its_error_and_fails_the_command() {
    let mut c = Cluster::start();
    c.create_barrier_state(3);
    let key = BarrierStateKey::group("audit").encode().unwrap();
    c.write_raw("audit", &key, Some(&[0, 0, 0]));
    c.write_cut("audit", 1, &cut("orders", &[(0, 10)], &[]));
    let plain = c.run(&["barrier", "list"]);
    assert_code(&plain, 0);
    let out = c.run(&["barrier", "list", "--all"]);
    assert_code(&out, 1);
    assert!(
        stdout(&out).contains("malformed: truncated barrier state group value"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("group definition of audit: truncated barrier state group value"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_cluster_without_barrier_state_lists_nothing() {
    let c = Cluster::start();
    let out = c.run(&["barrier", "list", "--output", "json"]);
    assert_code(&out, 0);
    let data = json_data(&out);
    assert_eq!(data["topic_exists"], false);
    assert_eq!(data["cuts"], Value::Array(vec![]));
    let human = c.run(&["barrier", "list"]);
    assert!(
        stdout(&human).contains("does not exist"),
        "{}",
        stdout(&human)
    );
}

#[test]
fn show_prints_every_offset_of_one_cut_and_latest_is_the_highest_complete() {
    let c = populated();
    let out = c.run(&[
        "barrier", "show", "--group", "ledger", "--epoch", "latest", "--output", "json",
    ]);
    assert_code(&out, 0);
    let data = json_data(&out);
    assert_eq!(data["epoch"], 7);
    assert_eq!(data["topics"][0]["partitions"][2]["offset"], 7);

    let partial = c.run(&["barrier", "show", "--group", "ledger", "--epoch", "8"]);
    assert_code(&partial, 0);
    let text = stdout(&partial);
    assert!(text.contains("status:     partial"), "{text}");
    assert!(
        text.contains("missing:    payments/1, payments/2"),
        "{text}"
    );
}

#[test]
fn show_of_an_unknown_group_or_epoch_exits_1_saying_what_exists() {
    let c = populated();
    let out = c.run(&["barrier", "show", "--group", "audit", "--epoch", "4"]);
    assert_code(&out, 1);
    assert!(
        stderr(&out)
            .contains("barrier group audit has no cut at epoch 4 (latest complete cut: epoch 3)"),
        "{}",
        stderr(&out)
    );
    let out = c.run(&["barrier", "show", "--group", "nobody", "--epoch", "latest"]);
    assert_code(&out, 1);
    assert!(
        stderr(&out).contains("no such barrier group: nobody (no record of it in __barrier_state; groups: audit, ledger, shadow)"),
        "{}",
        stderr(&out)
    );
    let usage = c.run(&["barrier", "show", "--group", "audit", "--epoch", "0"]);
    assert_code(&usage, 2);
}

#[test]
fn an_unreachable_broker_exits_4_within_the_timeout() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let started = std::time::Instant::now();
    let out = run(&["-b", &closed, "--timeout", "2s", "barrier", "list"]);
    assert_code(&out, 4);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}
