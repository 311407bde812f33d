//! Arrow IPC input (stream and file formats): topic values, join buffers, files.
#![no_main]
use krabka_streams::engine::columnar::ipc::read_batches;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((_, batches)) = read_batches(data) {
        for batch in &batches {
            // Touching every column proves the buffers hold what the metadata claims.
            for column in batch.columns() {
                let _ = column.to_data().validate_full();
            }
        }
    }
});
