//! Snapshot containers of both generations, and the detection between them.
#![no_main]
use krabka_streams::engine::columnar::snapshot::container;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = container::detect(data);
    let _ = container::decode_gen_a(data);
    let _ = container::read(data);
    if let Ok(entries) = container::decode(data) {
        let again = container::encode(&entries);
        assert_eq!(
            container::decode(&again).expect("re-encoded decodes"),
            entries
        );
    }
});
