//! Payload classification (`snapshot dump`): tries every known payload in turn.
#![no_main]
use krabka_streams::engine::columnar::snapshot::payload::classify;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = classify(data).kind();
});
