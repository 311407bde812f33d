//! `framing.json`: Confluent framing (formats §2) and the Arrow IPC sniff (§5).

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType, Field, Schema};
use krabka_streams::engine::columnar::ipc::{self, IpcFormat};
use krabka_streams::engine::schema::framing;
use serde_json::Value;

use crate::snapshot::adversarial_inputs;
use crate::support::{assert_all_covered, i64_of, id, load, str_of, unhex};

fn indexes_of(v: &Value) -> Option<Vec<i32>> {
    v.as_array().map(|items| {
        items
            .iter()
            .map(|i| i32::try_from(i64_of(i, "message index")).unwrap())
            .collect()
    })
}

fn schema_id_of(v: &Value) -> u32 {
    u32::try_from(i64_of(v, "schema_id")).unwrap()
}

fn check_encode(v: &Value) {
    let inputs = &v["inputs"];
    let id_ = schema_id_of(&inputs["schema_id"]);
    let body = unhex(str_of(&inputs["body_hex"], "body_hex"));
    let expected = str_of(&v["expected"]["hex"], "hex");
    let indexes = indexes_of(&inputs["message_indexes"]);
    let bytes = match &indexes {
        Some(path) => framing::encode_protobuf(id_, path, &body).unwrap(),
        None => framing::encode(id_, &body),
    };
    assert_eq!(hex::encode(&bytes), expected, "{}", id(v));
    // And back again.
    let frame = match &indexes {
        Some(_) => framing::decode_protobuf(&bytes).unwrap(),
        None => framing::decode(&bytes).unwrap(),
    };
    assert_eq!(frame.schema_id_unsigned(), id_, "{}", id(v));
    assert_eq!(frame.schema_id, id_ as i32, "{}", id(v));
    assert_eq!(frame.message_indexes, indexes, "{}", id(v));
    assert_eq!(frame.body, body.as_slice(), "{}", id(v));
}

fn check_index_paths(v: &Value) {
    let paths = v["inputs"]["paths"].as_array().unwrap();
    let hexes = v["expected"]["hex"].as_array().unwrap();
    assert_eq!(paths.len(), hexes.len(), "{}", id(v));
    for (path, expected) in paths.iter().zip(hexes) {
        let path = indexes_of(path).unwrap();
        let encoded = framing::encode_message_indexes(&path).unwrap();
        assert_eq!(hex::encode(&encoded), str_of(expected, "hex"), "{}", id(v));
        let mut frame = vec![0, 0, 0, 0, 1];
        frame.extend_from_slice(&encoded);
        let decoded = framing::decode_protobuf(&frame).unwrap();
        assert_eq!(decoded.message_indexes, Some(path), "{}", id(v));
        assert!(decoded.body.is_empty(), "{}", id(v));
    }
}

fn check_decode(v: &Value) {
    let bytes = unhex(str_of(&v["inputs"]["hex"], "hex"));
    let e = &v["expected"];
    let frame = framing::decode(&bytes).unwrap();
    assert_eq!(
        i64::from(frame.schema_id),
        i64_of(&e["schema_id"], "schema_id"),
        "{}",
        id(v)
    );
    assert_eq!(
        i64::from(frame.schema_id_unsigned()),
        i64_of(&e["schema_id_unsigned"], "schema_id_unsigned"),
        "{}",
        id(v)
    );
    assert_eq!(
        hex::encode(frame.body),
        str_of(&e["body_hex"], "body_hex"),
        "{}",
        id(v)
    );
}

fn check_decode_error(v: &Value) {
    let bytes = unhex(str_of(&v["inputs"]["hex"], "hex"));
    let protobuf = v["inputs"]["protobuf"].as_bool().unwrap();
    let expected = str_of(&v["expected"]["error_message"], "error_message");
    let err = if protobuf {
        framing::decode_protobuf(&bytes).unwrap_err()
    } else {
        framing::decode(&bytes).unwrap_err()
    };
    assert_eq!(err.to_string(), expected, "{}", id(v));
    if !protobuf {
        // Header errors are the same whichever decoder sees them.
        assert_eq!(
            framing::decode_protobuf(&bytes).unwrap_err().to_string(),
            expected
        );
    }
}

fn check_encode_error(v: &Value) {
    let inputs = &v["inputs"];
    let path = indexes_of(&inputs["message_indexes"]).unwrap();
    let body = unhex(str_of(&inputs["body_hex"], "body_hex"));
    let err =
        framing::encode_protobuf(schema_id_of(&inputs["schema_id"]), &path, &body).unwrap_err();
    let expected = str_of(&v["expected"]["error_message"], "error_message");
    assert_eq!(err.to_string(), expected, "{}", id(v));
    assert_eq!(
        framing::encode_message_indexes(&path)
            .unwrap_err()
            .to_string(),
        expected
    );
}

fn sample_batch() -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![Some("a"), None])),
        ],
    )
    .unwrap()
}

pub(crate) fn ipc_stream(batch: &RecordBatch) -> Vec<u8> {
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(batch).unwrap();
    writer.into_inner().unwrap()
}

fn ipc_file(batch: &RecordBatch) -> Vec<u8> {
    let mut writer = FileWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(batch).unwrap();
    writer.into_inner().unwrap()
}

fn check_ipc_sniff(v: &Value) {
    let inputs = &v["inputs"];
    let stream_prefix = unhex(str_of(&inputs["stream_prefix_hex"], "stream_prefix_hex"));
    let file_prefix = unhex(str_of(&inputs["file_prefix_hex"], "file_prefix_hex"));
    let file_suffix = str_of(&inputs["file_suffix_ascii"], "file_suffix_ascii").as_bytes();
    assert_eq!(stream_prefix, ipc::IPC_CONTINUATION_MARKER);
    assert_eq!(file_prefix, ipc::IPC_FILE_HEADER);
    assert_eq!(file_suffix, ipc::IPC_FILE_TRAILER);

    let batch = sample_batch();
    let stream = ipc_stream(&batch);
    assert!(stream.starts_with(&stream_prefix), "{}", id(v));
    let metadata_len = ipc::stream_metadata_len(&stream).unwrap();
    let le = i32::from_le_bytes(stream[4..8].try_into().unwrap());
    assert_eq!(metadata_len, le);
    assert!(metadata_len > 0 && (metadata_len as usize) < stream.len());
    assert_eq!(ipc::sniff(&stream), IpcFormat::Stream, "{}", id(v));

    let file = ipc_file(&batch);
    assert!(file.starts_with(&file_prefix), "{}", id(v));
    assert!(file.ends_with(file_suffix), "{}", id(v));
    assert_eq!(ipc::sniff(&file), IpcFormat::File, "{}", id(v));

    for bytes in [&stream, &file] {
        let (schema, batches) = ipc::read_batches(bytes).unwrap();
        assert_eq!(schema, batch.schema());
        assert_eq!(batches, vec![batch.clone()]);
    }
}

#[test]
fn every_framing_vector_is_checked() {
    let mut covered = BTreeSet::new();
    for v in load("framing") {
        match str_of(&v["kind"], "kind") {
            "framing.encode" => check_encode(&v),
            "framing.index_path" => check_index_paths(&v),
            "framing.decode" => check_decode(&v),
            "framing.decode_error" => check_decode_error(&v),
            "framing.encode_error" => check_encode_error(&v),
            "arrow.ipc_sniff" => check_ipc_sniff(&v),
            other => panic!("{}: unhandled kind {other}", id(&v)),
        }
        covered.insert(id(&v).to_string());
    }
    assert_all_covered("framing", &covered);
}

#[test]
fn framing_decoders_never_panic() {
    let golden: Vec<Vec<u8>> = load("framing")
        .iter()
        .flat_map(|v| {
            let e = &v["expected"];
            [&v["inputs"]["hex"], &e["hex"]]
                .into_iter()
                .filter_map(|h| h.as_str().map(unhex))
                .collect::<Vec<_>>()
        })
        .collect();
    for input in adversarial_inputs(&golden, 0x5eed_f4a3) {
        let _ = framing::decode(&input);
        let _ = framing::decode_protobuf(&input);
    }
}

#[test]
fn ipc_readers_never_panic_on_damaged_streams_and_files() {
    let batch = sample_batch();
    let golden = vec![ipc_stream(&batch), ipc_file(&batch)];
    for input in adversarial_inputs(&golden, 0xa770_0001) {
        let _ = ipc::sniff(&input);
        let _ = ipc::read_batches(&input);
    }
}
