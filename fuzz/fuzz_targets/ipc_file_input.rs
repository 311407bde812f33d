//! `run --input X.arrow`: an Arrow IPC file opened by path and read batch by batch
//! (the file-format checks, then arrow's FileReader; a stream otherwise), as an
//! offline run reads it.
#![no_main]
use krabka_streams::engine::columnar::runner::offline::BatchReader;
use krabka_streams::io::arrow_files::IpcInput;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Whatever the bytes: IpcInput sniffs a file (the checks, then FileReader) or a stream.
    let path =
        std::env::temp_dir().join(format!("krabka-fuzz-ipc-file-{}.arrow", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(mut input) = IpcInput::open(path.to_str().unwrap_or_default()) {
        let _ = input.schema();
        while let Some(batch) = input.next_batch() {
            match batch {
                Ok(batch) => {
                    for column in batch.columns() {
                        let _ = column.to_data().validate_full();
                    }
                }
                Err(_) => break,
            }
        }
    }
    let _ = std::fs::remove_file(&path);
});
