//! Go GroupBy / WindowedGroupBy state.
#![no_main]
use krabka_streams::engine::columnar::snapshot::groupby::GroupByState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = GroupByState::decode(data) {
        let once = state.encode();
        let twice = GroupByState::decode(&once)
            .expect("re-encoded decodes")
            .encode();
        assert_eq!(once, twice);
    }
});
