//! Avro value bodies decoded into Arrow rows under a schema using every Avro
//! type (records, unions, arrays, maps, enums, fixed, logical types).
#![no_main]
use std::sync::{Arc, LazyLock};

use krabka_streams::engine::columnarschema::avro::decoder::RowDecoder;
use krabka_streams::engine::columnarschema::avro::schema::AvroSchema;
use libfuzzer_sys::fuzz_target;

static SCHEMA: LazyLock<Arc<AvroSchema>> = LazyLock::new(|| {
    Arc::new(AvroSchema::parse(include_str!("../schemas/every_type.avsc")).expect("schema parses"))
});

fuzz_target!(|data: &[u8]| {
    let mut decoder = RowDecoder::new(SCHEMA.clone()).expect("schema maps to Arrow");
    if decoder.decode(data).is_ok() {
        // Strings are checked for UTF-8 in bulk when the batch finishes, so
        // finishing may fail (and the codec then names the record); it may not panic.
        let _ = decoder.finish();
    }
});
