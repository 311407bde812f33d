//! The projected stream reader (`run --input X.arrows` from a file): messages read one
//! at a time, the buffers of dropped columns skipped over by seeking.
#![no_main]
use std::io::{Cursor, Read, Seek, SeekFrom};

use krabka_streams::engine::columnar::ipc_stream::{Seekable, StreamBatches};
use libfuzzer_sys::fuzz_target;

struct Input(Cursor<Vec<u8>>);

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Seekable for Input {
    fn remaining(&mut self) -> std::io::Result<u64> {
        Ok((self.0.get_ref().len() as u64).saturating_sub(self.0.position()))
    }
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let n = i64::try_from(n).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        self.0.seek(SeekFrom::Current(n)).map(drop)
    }
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the kept columns (bit i keeps column i).
    let Some((&mask, stream)) = data.split_first() else {
        return;
    };
    let mut batches = StreamBatches::new(Input(Cursor::new(stream.to_vec())));
    let Ok(schema) = batches.schema() else {
        return;
    };
    let keep = (0..schema.fields().len())
        .map(|i| i < 8 && mask & (1 << i) != 0)
        .collect();
    batches.read_only(keep);
    for batch in batches {
        match batch {
            Ok(batch) => {
                for column in batch.columns() {
                    let _ = column.to_data().validate_full();
                }
            }
            Err(_) => break,
        }
    }
});
