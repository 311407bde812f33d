//! Registry-framed JSON Schema values decoded into Arrow columns
//! (`RegistryJsonDecoder`, `--value-format json-sr`): columns from the writer's
//! JSON Schema, bodies parsed into them.
//!
//! The first byte picks what the rest is: a whole Confluent frame (the framing
//! is fuzzed too), a body framed here under a schema with every column kind,
//! `$ref`s and nullable unions, or `schema text \0 body` registered as another
//! writer schema (JSON Schemas come from the registry, i.e. from other programs).
#![no_main]
#[path = "common/registry_value.rs"]
mod registry_value;

use std::sync::Arc;

use krabka_streams::engine::columnarschema::json_schema::RegistryJsonDecoder;
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::SchemaType;
use libfuzzer_sys::fuzz_target;

use registry_value::{decode_twice_with_a_tombstone, schema_and_body, writer};

const EVERY: &str = include_str!("../schemas/every_type.json");

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let cache = SchemaCache::offline();
    cache.seed_writer(writer(1, SchemaType::Json, EVERY));
    let value = match mode % 3 {
        0 => rest.to_vec(),
        1 => framing::encode(1, rest),
        _ => {
            let Some((text, body)) = schema_and_body(rest) else {
                return;
            };
            cache.seed_writer(writer(2, SchemaType::Json, text));
            framing::encode(2, body)
        }
    };
    let mut decoder = RegistryJsonDecoder::new(Arc::new(cache));
    decode_twice_with_a_tombstone(&mut decoder, &value);
});
