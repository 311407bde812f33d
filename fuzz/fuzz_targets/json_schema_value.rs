//! Registry-framed JSON Schema values decoded into Arrow columns
//! (`RegistryJsonDecoder`, `--value-format json-sr`): columns from the writer's
//! JSON Schema, bodies parsed into them.
//!
//! The first byte picks what the rest is: a whole Confluent frame (the framing
//! is fuzzed too), a body framed here under a schema with every column kind,
//! `$ref`s and nullable unions, or `schema text \0 body` registered as another
//! writer schema (JSON Schemas come from the registry, i.e. from other programs).
#![no_main]
use std::sync::Arc;

use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnarschema::json_schema::RegistryJsonDecoder;
use krabka_streams::engine::columnarschema::writer_schemas::WriterSchema;
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::SchemaType;
use libfuzzer_sys::fuzz_target;

const EVERY: &str = include_str!("../schemas/every_type.json");

fn writer(id: i32, text: &str) -> WriterSchema {
    WriterSchema {
        id,
        schema_type: SchemaType::Json,
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
    let value = match mode % 3 {
        0 => rest.to_vec(),
        1 => framing::encode(1, rest),
        _ => {
            let Some(split) = rest.iter().position(|&b| b == 0) else {
                return;
            };
            let Ok(text) = std::str::from_utf8(&rest[..split]) else {
                return;
            };
            cache.seed_writer(writer(2, text));
            framing::encode(2, &rest[split + 1..])
        }
    };
    let mut decoder = RegistryJsonDecoder::new(Arc::new(cache));
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
