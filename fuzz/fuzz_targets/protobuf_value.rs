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
#[path = "common/registry_value.rs"]
mod registry_value;

use std::sync::Arc;

use krabka_streams::engine::columnarschema::protobuf::ProtobufValueDecoder;
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::SchemaType;
use libfuzzer_sys::fuzz_target;

use registry_value::{decode_twice_with_a_tombstone, schema_and_body, writer};

const EVERY: &str = include_str!("../schemas/every_type.proto");
/// Message-index paths into EVERY: Other, Every, Every.Line, and two that do not exist.
const PATHS: [&[i32]; 5] = [&[0], &[1], &[1, 0], &[2], &[1, 1]];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let cache = SchemaCache::offline();
    cache.seed_writer(writer(1, SchemaType::Protobuf, EVERY));
    let path = PATHS[usize::from(mode >> 2) % PATHS.len()];
    let value = match mode % 4 {
        0 => rest.to_vec(),
        1 | 2 => framing::encode_protobuf(1, path, rest).expect("small paths encode"),
        _ => {
            let Some((text, body)) = schema_and_body(rest) else {
                return;
            };
            cache.seed_writer(writer(2, SchemaType::Protobuf, text));
            framing::encode_protobuf(2, path, body).expect("small paths encode")
        }
    };
    let mut decoder = ProtobufValueDecoder::new(Arc::new(cache));
    decode_twice_with_a_tombstone(&mut decoder, &value);
});
