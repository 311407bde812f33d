//! `columnar.json`: the codec vectors (semantics §3, formats §4–§6). The operator,
//! topology and runner vectors belong to the `run` issue and are listed as pending.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use krabka_streams::engine::columnar::batch::{BatchDecoder, encode_rows};
use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnar::codec::blob::{BlobDecoder, encode_blobs, ipc_stream};
use krabka_streams::engine::columnar::codec::gzip::{GzipDecoder, compress, decompress};
use krabka_streams::engine::columnar::codec::json::{JsonDecoder, JsonEncoder, JsonRowSchema};
use krabka_streams::engine::columnar::codec::raw::{RawDecoder, StringDecoder, ValueColumnEncoder};
use krabka_streams::engine::columnar::headers::Header;
use krabka_streams::engine::columnar::record::{OutRecord, Record};
use krabka_streams::engine::columnar::reserved::PAYLOAD_NAME_KEY;
use serde_json::Value;

use crate::support::{assert_all_covered, i64_of, id, load, str_of, unhex};

fn record(
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    ts: i64,
    partition: i32,
    offset: i64,
) -> Record {
    Record {
        topic: "t".into(),
        partition,
        offset,
        timestamp: ts,
        key,
        value,
        headers: Vec::new(),
    }
}

fn decode(decoder: Box<dyn ValueDecoder>, records: &[Record]) -> RecordBatch {
    let refs: Vec<&Record> = records.iter().collect();
    BatchDecoder::new(None, decoder)
        .decode(&refs)
        .unwrap_or_else(|f| panic!("record {}: {}", f.index, f.error))
}

fn names(batch: &RecordBatch) -> Vec<String> {
    batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

fn check_rowcodec_columns(v: &Value) {
    let records: Vec<Record> = v["inputs"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            record(
                Some(unhex(str_of(&r["key_hex"], "key"))),
                Some(str_of(&r["value"], "value").as_bytes().to_vec()),
                i64_of(&r["timestamp"], "ts"),
                i64_of(&r["partition"], "p") as i32,
                i64_of(&r["offset"], "o"),
            )
        })
        .collect();
    let batch = decode(Box::new(StringDecoder::default()), &records);
    let expected: Vec<String> = v["expected"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| str_of(c, "column").to_string())
        .collect();
    assert_eq!(names(&batch), expected, "{}", id(v));
    let back = encode_rows(&batch, &ValueColumnEncoder).unwrap();
    let want: Vec<OutRecord> = v["expected"]["encode_back"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| OutRecord {
            key: Some(unhex(str_of(&r["key_hex"], "key"))),
            value: Some(str_of(&r["value"], "value").as_bytes().to_vec()),
            timestamp: i64_of(&r["timestamp"], "ts"),
            headers: Vec::new(),
        })
        .collect();
    assert_eq!(back, want, "{}", id(v));
}

fn check_json_infer(v: &Value) {
    let rows = [
        r#"{"id":"a","amount":5,"tags":["x","y"]}"#,
        r#"{"id":"b","amount":7,"tags":[]}"#,
    ];
    let records: Vec<Record> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| record(None, Some(r.as_bytes().to_vec()), 10, 0, i as i64))
        .collect();
    let mut decoder = JsonDecoder::inferring();
    let batch = {
        let refs: Vec<&Record> = records.iter().collect();
        let mut d = BatchDecoder::new(None, Box::new(JsonDecoder::inferring()));
        let b = d.decode(&refs).unwrap();
        for r in &records {
            decoder.append(r.value.as_deref()).unwrap();
        }
        decoder.finish().unwrap();
        b
    };
    let expected: Vec<&str> = v["expected"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| str_of(c, "column"))
        .collect();
    assert_eq!(&names(&batch)[..3], expected.as_slice(), "{}", id(v));
    assert!(v["expected"]["round_trip"].as_bool().unwrap());
    let encoder = JsonEncoder {
        schema: decoder.schema().unwrap().clone(),
    };
    let back = encode_rows(&batch, &encoder).unwrap();
    for (r, want) in back.iter().zip(rows) {
        let got: Value = serde_json::from_slice(r.value.as_deref().unwrap()).unwrap();
        assert_eq!(
            got,
            serde_json::from_str::<Value>(want).unwrap(),
            "{}",
            id(v)
        );
    }
}

fn check_json_sticky(v: &Value) {
    let mut d = JsonDecoder::inferring();
    for batch in v["inputs"]["batches"].as_array().unwrap() {
        for row in batch.as_array().unwrap() {
            let text = serde_json::json!({ "n": row }).to_string();
            d.append(Some(text.as_bytes())).unwrap();
        }
        let cols = d.finish().unwrap();
        assert_eq!(cols[0].0.data_type(), &DataType::Utf8, "{}", id(v));
        let a = cols[0].1.as_string::<i32>();
        if a.is_valid(0) {
            assert_eq!(
                a.value(0),
                str_of(&v["expected"]["second_value"], "second"),
                "{}",
                id(v)
            );
        }
    }
    assert_eq!(v["expected"]["type"], "Utf8");
}

fn check_json_schema_nullability(v: &Value) {
    let schema = JsonRowSchema::from_json_schema(str_of(&v["inputs"]["schema"], "schema")).unwrap();
    let nullable: Vec<bool> = schema.columns.iter().map(|c| c.nullable).collect();
    let want: Vec<bool> = v["expected"]["nullable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect();
    assert_eq!(nullable, want, "{}", id(v));
    let mut d = JsonDecoder::with_schema(schema);
    let err = d.append(Some(br#"{"id":null,"amount":1}"#)).unwrap_err();
    assert_eq!(
        err.to_string(),
        str_of(&v["expected"]["null_id_error"], "err"),
        "{}",
        id(v)
    );
    let scalar =
        JsonRowSchema::from_json_schema(str_of(&v["expected"]["scalar_schema"], "s")).unwrap();
    let mut d = JsonDecoder::with_schema(scalar);
    let err = d.append(Some(b"null")).unwrap_err();
    assert_eq!(
        err.to_string(),
        str_of(&v["expected"]["scalar_null_error"], "err"),
        "{}",
        id(v)
    );
}

fn payload(users: &[&str], amounts: &[i64]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("user", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(users.to_vec())),
            Arc::new(Int64Array::from(amounts.to_vec())),
        ],
    )
    .unwrap()
}

fn check_blob_decode(v: &Value) {
    let records = vec![
        record(
            None,
            Some(ipc_stream(&payload(&["a", "b"], &[5, 3])).unwrap()),
            10,
            0,
            5,
        ),
        record(
            Some(vec![0x07]),
            Some(ipc_stream(&payload(&["c"], &[9])).unwrap()),
            11,
            0,
            6,
        ),
    ];
    let batch = decode(Box::new(BlobDecoder::new()), &records);
    let e = &v["expected"];
    assert_eq!(
        batch.num_rows() as i64,
        i64_of(&e["rows"], "rows"),
        "{}",
        id(v)
    );
    let offsets = batch
        .column_by_name("__offset")
        .unwrap()
        .as_primitive::<Int64Type>();
    let ts = batch
        .column_by_name("__timestamp")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(
        offsets.value(2),
        i64_of(&e["row2"]["offset"], "offset"),
        "{}",
        id(v)
    );
    assert_eq!(
        ts.value(2),
        i64_of(&e["row2"]["timestamp"], "ts"),
        "{}",
        id(v)
    );
    let out = encode_blobs(&batch, 900 * 1024).unwrap();
    assert_eq!(
        out.len() as i64,
        i64_of(&e["encode"]["records"], "records"),
        "{}",
        id(v)
    );
    let timestamps: Vec<i64> = out.iter().map(|r| r.timestamp).collect();
    let want_ts: Vec<i64> = e["encode"]["timestamps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_i64().unwrap())
        .collect();
    assert_eq!(timestamps, want_ts, "{}", id(v));
    assert_eq!(out[1].key, Some(vec![0x07]), "{}", id(v));
    for (r, rows) in out.iter().zip(e["encode"]["rows"].as_array().unwrap()) {
        let (schema, batches) =
            krabka_streams::engine::columnar::ipc::read_batches(r.value.as_deref().unwrap())
                .unwrap();
        assert_eq!(
            batches[0].num_rows() as i64,
            rows.as_i64().unwrap(),
            "{}",
            id(v)
        );
        assert_eq!(
            schema.fields().len() as i64,
            i64_of(&e["encode"]["payload_columns"], "columns"),
            "{}",
            id(v)
        );
    }
}

fn big_batch(rows: usize) -> RecordBatch {
    let users: Vec<String> = (0..rows).map(|i| format!("user-{i:04}")).collect();
    let refs: Vec<&str> = users.iter().map(String::as_str).collect();
    let amounts: Vec<i64> = (0..rows as i64).collect();
    let records = vec![record(
        None,
        Some(ipc_stream(&payload(&refs, &amounts)).unwrap()),
        1,
        0,
        0,
    )];
    decode(Box::new(BlobDecoder::new()), &records)
}

fn check_blob_split(v: &Value) {
    let rows = i64_of(&v["inputs"]["rows"], "rows") as usize;
    let cap = i64_of(&v["inputs"]["max_record_bytes"], "cap") as usize;
    let out = encode_blobs(&big_batch(rows), cap).unwrap();
    assert!(
        out.len() as i64 > i64_of(&v["expected"]["records_gt"], "gt"),
        "{}",
        id(v)
    );
    let le = i64_of(&v["expected"]["each_le_bytes"], "le") as usize;
    assert!(
        out.iter().all(|r| r.value.as_ref().unwrap().len() <= le),
        "{}",
        id(v)
    );
}

fn check_blob_cap_1(v: &Value) {
    let cap = i64_of(&v["inputs"]["max_record_bytes"], "cap") as usize;
    let err = encode_blobs(&big_batch(2), cap).unwrap_err();
    assert_eq!(
        err.to_string(),
        str_of(&v["expected"]["error_message"], "err"),
        "{}",
        id(v)
    );
}

fn check_escape_key(v: &Value) {
    let column = str_of(&v["inputs"]["payload_column"], "column");
    let schema = Schema::new(vec![Field::new(column, DataType::Utf8, true)]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(StringArray::from(vec!["x"]))],
    )
    .unwrap();
    let records = vec![record(
        Some(b"k".to_vec()),
        Some(ipc_stream(&batch).unwrap()),
        1,
        0,
        0,
    )];
    let decoded = decode(Box::new(BlobDecoder::new()), &records);
    let field = decoded.schema().field(0).clone();
    assert_eq!(
        field.name(),
        str_of(&v["expected"]["processing_name"], "name"),
        "{}",
        id(v)
    );
    let want = &v["expected"]["field_metadata"][PAYLOAD_NAME_KEY];
    assert_eq!(
        field.metadata().get(PAYLOAD_NAME_KEY).map(String::as_str),
        want.as_str(),
        "{}",
        id(v)
    );
    assert_eq!(
        decoded.schema().field(1).name(),
        "__key",
        "the reserved column follows"
    );
    let out = encode_blobs(&decoded, 900 * 1024).unwrap();
    let (schema, _) =
        krabka_streams::engine::columnar::ipc::read_batches(out[0].value.as_deref().unwrap())
            .unwrap();
    assert_eq!(
        schema.field(0).name(),
        str_of(&v["expected"]["encoded_name"], "name"),
        "{}",
        id(v)
    );
    assert!(schema.field(0).metadata().is_empty(), "{}", id(v));
}

fn check_gzip_ceiling(v: &Value) {
    let max = i64_of(&v["inputs"]["max_uncompressed_bytes"], "max") as usize;
    let err = decompress(&compress(b"hello"), max).unwrap_err();
    assert_eq!(
        err.to_string(),
        str_of(&v["expected"]["error_message"], "err"),
        "{}",
        id(v)
    );
    let mut r = record(Some(b"k".to_vec()), Some(compress(b"payload")), 42, 0, 3);
    r.headers = vec![
        Header::new("h", Some(b"v".to_vec())),
        Header::new("n", None),
    ];
    let inner: Box<dyn ValueDecoder> = Box::new(RawDecoder::default());
    let batch = decode(
        Box::new(GzipDecoder::new(inner, 1024)),
        std::slice::from_ref(&r),
    );
    let back = encode_rows(&batch, &ValueColumnEncoder).unwrap();
    assert_eq!(back[0].key, r.key, "{}", id(v));
    assert_eq!(back[0].value.as_deref(), Some(&b"payload"[..]), "{}", id(v));
    assert_eq!(
        decompress(&compress(back[0].value.as_deref().unwrap()), 1024).unwrap(),
        b"payload"
    );
    assert_eq!(back[0].timestamp, 42, "{}", id(v));
    assert_eq!(back[0].headers, r.headers, "{}", id(v));
}

#[test]
fn every_columnar_vector_is_read_from_the_file_and_checked() {
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let elsewhere = crate::columnar_ops::CHECKS
        .iter()
        .chain(crate::columnar_runner::CHECKS);
    let checks: std::collections::BTreeMap<&str, crate::support::Check> =
        elsewhere.map(|(id, check)| (*id, *check)).collect();
    for v in load("columnar") {
        let vid = id(&v).to_string();
        match vid.as_str() {
            "COL-ROWCODEC-COLUMNS" => check_rowcodec_columns(&v),
            "COL-JSON-INFER" => check_json_infer(&v),
            "COL-JSON-STICKY-SCHEMA" => check_json_sticky(&v),
            "COL-JSON-SCHEMA-NULLABILITY" => check_json_schema_nullability(&v),
            "COL-BLOB-DECODE" => check_blob_decode(&v),
            "COL-BLOB-SPLIT" => check_blob_split(&v),
            "COL-BLOB-CAP-1" => check_blob_cap_1(&v),
            "COL-ESCAPE-KEY" => check_escape_key(&v),
            "COL-GZIP-CEILING" => check_gzip_ceiling(&v),
            other => match checks.get(other) {
                Some(check) => check(&v),
                None => panic!("{other}: vector without a check"),
            },
        }
        covered.insert(vid);
    }
    assert_all_covered("columnar", &covered);
}
