//! Test helpers shared by the Arrow IPC readers' unit tests: stream bytes as a writer
//! produces them, and a reader that hands them out a few bytes at a time, as a pipe
//! may.

use std::io::Read;

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;

/// `batches` as one Arrow IPC stream (schema of the first, end marker included).
pub fn ipc_stream_bytes(batches: &[RecordBatch]) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut writer = StreamWriter::try_new(&mut bytes, &batches[0].schema()).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    bytes
}

/// Hands out at most `step` bytes per read.
pub struct Trickle<'a> {
    pub bytes: &'a [u8],
    pub step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.step).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}
