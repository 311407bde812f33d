//! The file side of `barrier verify`: the `(__partition, __offset)` pairs of an Arrow input
//! (a file or stdin), the names of a snapshot directory and the bytes of one snapshot file.
//! Adapters only; which cut to check and how the facts compare is `ops::barrier::verify`
//! over [`crate::engine::columnar::barrier::verify`].

use std::cell::Cell;
use std::io::Read;
use std::path::Path;

use crate::engine::columnar::barrier::verify::InputOffsets;
use crate::engine::columnar::ipc::{self, IPC_FILE_TRAILER, IpcFormat};
use crate::engine::columnar::ipc_stream::StreamBatches;

/// A file, directory or input that cannot be read or is not what it should be; the message
/// names it (and, for an Arrow input, the byte the reader had reached).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// The offsets of the Arrow input at `path` (`None`: stdin) restricted to `topic`, with the
/// name reports use for it (the path, or `-`).
pub fn input_offsets(
    path: Option<&Path>,
    topic: &str,
) -> Result<(String, InputOffsets), InputError> {
    match path {
        Some(path) => {
            let source = path.display().to_string();
            let file = std::fs::File::open(path)
                .map_err(|e| InputError(format!("cannot read input {}: {e}", path.display())))?;
            let offsets = read_input_offsets(std::io::BufReader::new(file), &source, topic)?;
            Ok((source, offsets))
        }
        None => Ok((
            "-".to_owned(),
            read_input_offsets(std::io::stdin().lock(), "-", topic)?,
        )),
    }
}

/// The UTF-8 names in a snapshot directory, sorted. A missing or unreadable directory is an
/// error, not an empty list (a wrong path must not read as "every snapshot is missing").
pub fn snapshot_names(dir: &Path) -> Result<Vec<String>, InputError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_owned(),
            std::io::ErrorKind::NotADirectory => "is not a directory".to_owned(),
            _ => format!("cannot be read: {e}"),
        };
        InputError(format!("snapshot directory {} {why}", dir.display()))
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| InputError(format!("cannot list {}: {e}", dir.display())))?;
        // Names that are not UTF-8 are no snapshot names either writer produces.
        if let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The bytes of snapshot file `name` in `dir`, bounded by the snapshot size cap.
pub fn read_snapshot(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    crate::io::bounded_read::read(&dir.join(name), crate::io::bounded_read::SNAPSHOT)
        .map_err(|e| format!("cannot read {}: {e}", dir.join(name).display()))
}

/// The `(__partition, __offset)` pairs of an Arrow input, folded batch by batch so memory
/// holds one message plus the offsets, whatever the input's size. An IPC stream (what `tail`
/// writes, and all a pipe can carry) is read as it comes; an IPC file is the same stream
/// between its 8-byte header and its footer, so it is read the same way (also from a pipe),
/// and then only the footer's frame is checked (its length and the closing `ARROW1`): the
/// batches were already read, and a file cut short before its footer is refused. Errors name
/// the input and the byte the reader had reached.
fn read_input_offsets(
    input: impl Read,
    source: &str,
    topic: &str,
) -> Result<InputOffsets, InputError> {
    let position = Cell::new(0u64);
    let mut input = Counted {
        inner: input,
        position: &position,
    };
    let failed = |e: &dyn std::fmt::Display| {
        InputError(format!("input {source} (byte {}): {e}", position.get()))
    };
    let unreadable = |e: std::io::Error| match source {
        "-" => InputError(format!("cannot read the input from stdin: {e}")),
        path => InputError(format!("cannot read input {path}: {e}")),
    };
    let mut head = Vec::with_capacity(8);
    (&mut input)
        .take(8)
        .read_to_end(&mut head)
        .map_err(unreadable)?;
    let format = ipc::sniff_head(&head);
    if format == IpcFormat::Unknown {
        return Err(failed(&"not an Arrow IPC stream or file"));
    }
    let is_file = format == IpcFormat::File;
    // A stream's first 8 bytes are its first message; a file's are its header, which writers
    // may pad with zeros up to their alignment (arrow-rs: 64 bytes) before the first message.
    let replay = if is_file {
        first_non_zero_byte(&mut input).map_err(unreadable)?
    } else {
        head
    };
    let mut offsets = InputOffsets::for_topic(topic);
    for batch in StreamBatches::new(replay.as_slice().chain(&mut input)) {
        offsets
            .add_batch(&batch.map_err(|e| failed(&e))?)
            .map_err(|e| failed(&e))?;
    }
    if is_file {
        check_file_footer(&mut input).map_err(|e| match e {
            Some(io) => unreadable(io),
            None => failed(&"an Arrow IPC file without its footer (cut short?)"),
        })?;
    }
    Ok(offsets)
}

/// The first non-zero byte (as a one-byte vector), skipping zeros; empty at the end.
fn first_non_zero_byte(input: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut byte = [0u8];
    loop {
        match input.read(&mut byte) {
            Ok(0) => return Ok(Vec::new()),
            Ok(_) if byte[0] == 0 => {}
            Ok(_) => return Ok(byte.to_vec()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// What follows the end-of-stream marker of an IPC file: the footer, its length as a
/// little-endian `i32`, and `ARROW1`. Only the frame is checked, keeping the last 10 bytes
/// in memory. `Err(None)`: the frame is not there.
fn check_file_footer(rest: &mut impl Read) -> Result<(), Option<std::io::Error>> {
    let (mut total, mut last) = (0u64, Vec::with_capacity(10));
    let mut chunk = [0u8; 8192];
    loop {
        let n = match rest.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Some(e)),
        };
        total += n as u64;
        last.extend_from_slice(&chunk[..n]);
        let excess = last.len().saturating_sub(10);
        last.drain(..excess);
    }
    let framed = last.len() == 10 && last[4..] == IPC_FILE_TRAILER && {
        let footer_len = i32::from_le_bytes([last[0], last[1], last[2], last[3]]);
        u64::try_from(footer_len).is_ok_and(|len| len + 10 == total)
    };
    if framed { Ok(()) } else { Err(None) }
}

/// A reader that counts the bytes read through it into `position`.
struct Counted<'a, R> {
    inner: R,
    position: &'a Cell<u64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.position.set(self.position.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array, RecordBatch};
    use arrow_ipc::writer::FileWriter;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::engine::columnar::test_support::{Trickle, ipc_stream_bytes};

    fn batch(partition: i32, from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("__partition", DataType::Int32, false),
            Field::new("__offset", DataType::Int64, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![partition; rows as usize])),
                Arc::new(Int64Array::from((from..from + rows).collect::<Vec<_>>())),
            ],
        )
        .unwrap()
    }

    fn batches() -> Vec<RecordBatch> {
        vec![batch(0, 0, 3), batch(1, 10, 2), batch(0, 3, 1)]
    }

    fn file_bytes() -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut writer = FileWriter::try_new(&mut bytes, &batches()[0].schema()).unwrap();
        for b in batches() {
            writer.write(&b).unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        bytes
    }

    fn stream_bytes() -> Vec<u8> {
        ipc_stream_bytes(&batches())
    }

    /// Five bytes per read, as a pipe may hand them out.
    fn trickle(bytes: &[u8]) -> Trickle<'_> {
        Trickle { bytes, step: 5 }
    }

    #[test]
    fn an_ipc_file_is_folded_batch_by_batch_from_a_pipe_like_a_stream() {
        let from_file = read_input_offsets(trickle(&file_bytes()), "f.arrow", "orders").unwrap();
        let from_stream =
            read_input_offsets(trickle(&stream_bytes()), "f.arrows", "orders").unwrap();
        assert_eq!(from_file.rows, 6);
        assert_eq!(from_file.by_partition, from_stream.by_partition);
        assert_eq!(from_file.by_partition[&0], [0, 1, 2, 3]);
    }

    #[test]
    fn an_ipc_file_cut_short_before_its_footer_is_refused_naming_the_input_and_byte() {
        let bytes = file_bytes();
        for keep in [bytes.len() - 1, bytes.len() - 12, bytes.len() - 40] {
            let InputError(message) =
                read_input_offsets(&bytes[..keep], "f.arrow", "orders").unwrap_err();
            assert!(message.starts_with("input f.arrow (byte "), "{message}");
        }
    }

    #[test]
    fn a_broken_message_names_the_input_and_the_byte_reached() {
        let mut bytes = stream_bytes();
        bytes.truncate(bytes.len() - 20);
        let InputError(message) = read_input_offsets(&bytes[..], "s.arrows", "orders").unwrap_err();
        assert!(
            message.contains(&format!("(byte {})", bytes.len())) && message.contains("truncated"),
            "{message}"
        );
        let InputError(message) = read_input_offsets(&b"PAR1"[..], "x", "orders").unwrap_err();
        assert!(
            message.contains("not an Arrow IPC stream or file"),
            "{message}"
        );
    }
}
