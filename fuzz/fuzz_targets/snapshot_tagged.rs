//! Go tagged values (GroupBy keys and aggregates).
#![no_main]
use krabka_streams::engine::columnar::snapshot::tagged::TaggedValue;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = TaggedValue::decode(data) {
        // Compared as bytes: a decoded NaN is not equal to itself.
        let once = value.encode();
        let twice = TaggedValue::decode(&once)
            .expect("re-encoded decodes")
            .encode();
        assert_eq!(once, twice);
    }
});
