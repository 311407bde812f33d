//! Registry-framed Protobuf values decoded into Arrow columns
//! (`ProtobufValueDecoder`, what `tail`/`run` do with `--value-format protobuf-sr`).
//!
//! The first byte picks what the rest is: a whole Confluent frame (the framing
//! and message-index path are fuzzed too), a body framed here for one of the
//! messages of a schema that uses every field kind (so the fuzzer spends its time
//! in prost-reflect and the Arrow columns), or `.proto text \0 body` registered
//! as another writer schema. Each value is appended, then a
//! tombstone, then the value again, so multi-row columns and nulls are built
//! and finished.
#![no_main]
use std::sync::Arc;

use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnarschema::protobuf::ProtobufValueDecoder;
use krabka_streams::engine::columnarschema::writer_schemas::WriterSchema;
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::SchemaType;
use libfuzzer_sys::fuzz_target;

const EVERY: &str = include_str!("../schemas/every_type.proto");
/// Message-index paths into EVERY: Other, Every, Every.Line, and two that do not exist.
const PATHS: [&[i32]; 5] = [&[0], &[1], &[1, 0], &[2], &[1, 1]];

fn writer(id: i32, text: &str) -> WriterSchema {
    WriterSchema {
        id,
        schema_type: SchemaType::Protobuf,
        text: text.to_string(),
        message_type: None,
        references: Vec::new(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let cache = SchemaCache::offline();
    cache.seed_writer(writer(1, EVERY));
    let value = match mode % 4 {
        0 => rest.to_vec(),
        1 | 2 => {
            let path = PATHS[usize::from(mode >> 2) % PATHS.len()];
            framing::encode_protobuf(1, path, rest).expect("small paths encode")
        }
        _ => {
            let Some(split) = rest.iter().position(|&b| b == 0) else {
                return;
            };
            let Ok(text) = std::str::from_utf8(&rest[..split]) else {
                return;
            };
            cache.seed_writer(writer(2, text));
            let path = PATHS[usize::from(mode >> 2) % PATHS.len()];
            framing::encode_protobuf(2, path, &rest[split + 1..]).expect("small paths encode")
        }
    };
    let mut decoder = ProtobufValueDecoder::new(Arc::new(cache));
    // The driver's contract: a failed append is followed by `reset`, which drops
    // the batch's rows; the columns must then still finish evenly.
    for record in [Some(value.as_slice()), None, Some(value.as_slice())] {
        if decoder.append(record).is_err() {
            decoder.reset();
        }
    }
    if let Ok(columns) = decoder.finish() {
        let rows = columns.first().map(|(_, a)| a.len());
        assert!(
            columns.iter().all(|(_, a)| Some(a.len()) == rows),
            "columns of uneven length"
        );
    }
});
