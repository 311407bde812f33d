//! The gzip value codec (`--value-format gzip+json`): decompression under the ceiling,
//! then the inner JSON decoder.
#![no_main]
use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnar::codec::gzip::{GzipDecoder, decompress};
use krabka_streams::engine::columnar::codec::json::JsonDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    const MAX: usize = 1 << 20;
    if let Ok(plain) = decompress(data, MAX) {
        assert!(plain.len() <= MAX);
    }
    let mut decoder = GzipDecoder::new(Box::new(JsonDecoder::inferring()), MAX);
    if decoder.append(Some(data)).is_ok() {
        let _ = decoder.finish();
    }
});
