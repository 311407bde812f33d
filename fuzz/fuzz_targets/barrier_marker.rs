//! Barrier marker control records: key and value.
#![no_main]
use krabka_streams::engine::columnar::barrier::marker::{BarrierMarker, decode_marker_key};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_marker_key(data);
    if let Ok(marker) = BarrierMarker::decode(data) {
        assert_eq!(marker.encode().expect("decoded marker re-encodes"), data);
    }
});
