//! Go/Java join buffers, and the Arrow batches they hold.
#![no_main]
use krabka_streams::engine::columnar::snapshot::join::JoinState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = JoinState::decode(data) {
        let once = state.encode();
        assert_eq!(JoinState::decode(&once).expect("re-encoded decodes"), state);
        for batch in state.left.iter().chain(&state.right) {
            let _ = batch.record_batches();
        }
    }
});
