//! The JSON value codec: rows split at 0x00 bytes, columns inferred from them, then the
//! same rows read against the inferred (sticky) schema.
#![no_main]
use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnar::codec::json::JsonDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut decoder = JsonDecoder::inferring();
    let mut appended = 0;
    for row in data.split(|&b| b == 0).take(64) {
        if decoder
            .append(if row.is_empty() { None } else { Some(row) })
            .is_err()
        {
            decoder.reset();
            continue;
        }
        appended += 1;
    }
    if appended > 0 && decoder.finish().is_ok() {
        // A second batch goes through the schema the first one fixed.
        for row in data.split(|&b| b == 0).take(64) {
            if decoder.append(Some(row)).is_err() {
                decoder.reset();
            }
        }
        let _ = decoder.finish();
    }
});
