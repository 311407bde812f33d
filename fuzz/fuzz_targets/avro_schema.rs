//! Avro schema texts (from the registry or `--schema-file`): the input is the
//! schema text, a NUL, then a body decoded under it when it parses.
#![no_main]
use std::sync::Arc;

use krabka_streams::engine::columnarschema::avro::decoder::RowDecoder;
use krabka_streams::engine::columnarschema::avro::schema::AvroSchema;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (text, body) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let Ok(schema) = AvroSchema::parse(text) else {
        return;
    };
    if let Ok(mut decoder) = RowDecoder::new(Arc::new(schema)) {
        if decoder.decode(body).is_ok() {
            let _ = decoder.finish();
        }
    }
});
