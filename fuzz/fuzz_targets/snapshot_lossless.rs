//! Lossless snapshot dumps (JSON with base64 values), read back by `snapshot restore`.
#![no_main]
use krabka_streams::engine::columnar::snapshot::lossless::read_lossless;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(dump) = read_lossless(data) {
        let _ = dump.to_container(false);
        let _ = dump.to_container(true);
    }
});
