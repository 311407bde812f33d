//! Kafka client properties files (`--command-config`).
#![no_main]
use krabka_streams::io::properties::parse_properties;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_properties(data);
});
