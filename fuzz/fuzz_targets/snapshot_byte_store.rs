//! krabka-streams-rs byte-backed store state.
#![no_main]
use krabka_streams::engine::columnar::snapshot::byte_store::ByteStore;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(store) = ByteStore::decode(data) {
        let once = store.encode();
        assert_eq!(ByteStore::decode(&once).expect("re-encoded decodes"), store);
    }
});
