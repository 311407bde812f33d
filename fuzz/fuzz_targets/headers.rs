//! The `__headers` cell: decoded headers re-encode to the same bytes.
#![no_main]
use krabka_streams::engine::columnar::headers::{decode_headers, encode_headers};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(headers) = decode_headers(data) {
        let again = encode_headers(&headers);
        assert_eq!(
            decode_headers(&again).expect("re-encoded cell decodes"),
            headers
        );
    }
});
