//! Recognising and reading Arrow IPC bytes (formats §5): the IPC **stream**
//! format (what the Go/Java codecs write) and the IPC **file** format (what
//! krabka-streams-rs `PolarsIpcSerde` writes), told apart by their first bytes.
//! It also knows Parquet's magic ([`is_parquet_head`]), so that every reader that
//! meets a Parquet file where it expected IPC (or has to choose) asks one place.

use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::{ArrowError, SchemaRef};

/// An IPC stream message starts with this continuation marker, then the
/// metadata length as an `i32` **little-endian**.
pub const IPC_CONTINUATION_MARKER: [u8; 4] = [0xff; 4];

/// An IPC file starts with `ARROW1` plus two padding bytes …
pub const IPC_FILE_HEADER: [u8; 8] = *b"ARROW1\0\0";

/// … and ends with `ARROW1`.
pub const IPC_FILE_TRAILER: [u8; 6] = *b"ARROW1";

/// Which Arrow IPC format some bytes are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcFormat {
    Stream,
    File,
    Unknown,
}

/// The one place that tells an IPC stream from an IPC file by its first bytes
/// (formats §5): a stream's first message starts with the continuation marker
/// `ffffffff`, a file starts with the magic `ARROW1` (then padding). Every reader
/// that has to choose (`run --input`, `produce`, `barrier verify`, snapshot payloads)
/// asks this; `Unknown` means neither start, which each caller answers in its own
/// words (a legacy marker-less stream, text lines, a refusal). `head` may be any
/// prefix of the input; a shorter one than the marker or magic is `Unknown`.
pub fn sniff_head(head: &[u8]) -> IpcFormat {
    if head.starts_with(&IPC_CONTINUATION_MARKER) {
        IpcFormat::Stream
    } else if head.starts_with(&IPC_FILE_HEADER[..IPC_FILE_TRAILER.len()]) {
        IpcFormat::File
    } else {
        IpcFormat::Unknown
    }
}

/// A Parquet file starts (and ends) with this magic.
pub const PARQUET_MAGIC: [u8; 4] = *b"PAR1";

/// Whether `head` (any prefix of the input) starts like a Parquet file: `produce`
/// reads it as Parquet, `run --input` refuses it by name instead of failing to decode it.
pub fn is_parquet_head(head: &[u8]) -> bool {
    head.starts_with(&PARQUET_MAGIC)
}

/// Sniffs the IPC format of complete bytes (a snapshot payload, a record value): as
/// [`sniff_head`], and whole: a stream has at least its first message's marker and
/// metadata length, a file also ends with `ARROW1`.
pub fn sniff(bytes: &[u8]) -> IpcFormat {
    match sniff_head(bytes) {
        IpcFormat::Stream if bytes.len() >= 8 => IpcFormat::Stream,
        IpcFormat::File
            if bytes.len() >= IPC_FILE_HEADER.len() + IPC_FILE_TRAILER.len()
                && bytes.starts_with(&IPC_FILE_HEADER)
                && bytes.ends_with(&IPC_FILE_TRAILER) =>
        {
            IpcFormat::File
        }
        _ => IpcFormat::Unknown,
    }
}

/// The stream metadata length that follows the continuation marker, if `bytes` is a stream.
pub fn stream_metadata_len(bytes: &[u8]) -> Option<i32> {
    match (sniff(bytes), bytes.get(4..8)) {
        (IpcFormat::Stream, Some(len)) => {
            Some(i32::from_le_bytes([len[0], len[1], len[2], len[3]]))
        }
        _ => None,
    }
}

/// Reads every record batch of an IPC stream or file, whichever the bytes are.
///
/// These bytes come from files and topics, so every declared length (stream
/// messages, file footer and blocks) is first checked against the input: the
/// Arrow readers then never allocate more than the input holds, nor meet the
/// negative lengths they would unwrap, and every buffer and field node of a batch
/// is checked against its body ([`check_buffers`]).
pub fn read_batches(bytes: &[u8]) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
    let format = sniff(bytes);
    match format {
        IpcFormat::Stream => check_stream_lengths(bytes)?,
        IpcFormat::File => check_file_lengths(bytes)?,
        IpcFormat::Unknown => return Err(malformed("not an Arrow IPC stream or file")),
    }
    let outcome = guarded(|| {
        if format == IpcFormat::Stream {
            let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
            let schema = reader.schema();
            Ok((schema, reader.collect::<Result<Vec<_>, _>>()?))
        } else {
            let reader = FileReader::try_new(Cursor::new(bytes), None)?;
            let schema = reader.schema();
            Ok((schema, reader.collect::<Result<Vec<_>, _>>()?))
        }
    });
    outcome.unwrap_or_else(|| Err(malformed("malformed Arrow IPC data")))
}

/// Runs an Arrow reader call over input the checks above have passed, turning a panic
/// into `None`. The checks ([`check_buffers`] and the length walks) are what keeps
/// arrow-ipc from panicking on hostile bytes; this catch is only the last line for a
/// shape they do not cover yet, so a reader bug ends as an error naming the input, not as
/// a crash. The process's panic hook is left alone: a panic caught here still prints,
/// which makes a missing check visible.
pub(super) fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok()
}

pub(super) fn malformed(what: &str) -> ArrowError {
    ArrowError::IpcError(what.to_owned())
}

/// Walks the stream's messages: each metadata and body length must fit the input.
fn check_stream_lengths(bytes: &[u8]) -> Result<(), ArrowError> {
    let mut pos = 0usize;
    while pos < bytes.len() {
        let word = |at: usize| {
            bytes
                .get(at..at + 4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| malformed("truncated Arrow IPC message"))
        };
        let mut meta_len = word(pos)?;
        pos += 4;
        if meta_len == -1 {
            meta_len = word(pos)?;
            pos += 4;
        }
        if meta_len == 0 {
            return Ok(()); // end-of-stream marker
        }
        let meta_len = usize::try_from(meta_len)
            .ok()
            .filter(|&len| len <= bytes.len() - pos)
            .ok_or_else(|| malformed("invalid Arrow IPC metadata length"))?;
        let message = arrow_ipc::root_as_message(&bytes[pos..pos + meta_len])
            .map_err(|e| ArrowError::IpcError(format!("invalid Arrow IPC message: {e}")))?;
        pos += meta_len;
        let body_len = usize::try_from(message.bodyLength())
            .ok()
            .filter(|&len| len <= bytes.len() - pos)
            .ok_or_else(|| malformed("invalid Arrow IPC body length"))?;
        check_buffers(&message, body_len as u64)?;
        pos += body_len;
    }
    Ok(())
}

/// Every buffer a record or dictionary batch names must lie inside its body:
/// arrow-ipc slices them without checking and panics on one that does not.
pub(super) fn check_buffers(
    message: &arrow_ipc::Message<'_>,
    body_len: u64,
) -> Result<(), ArrowError> {
    let batch = message
        .header_as_record_batch()
        .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
    let Some(batch) = batch else {
        return Ok(());
    };
    // Lengths and counts arrow-ipc casts to `usize` as they are: a negative one would
    // become a huge length.
    if batch.length() < 0 {
        return Err(malformed("Arrow IPC batch with a negative length"));
    }
    for node in batch.nodes().into_iter().flatten() {
        if node.length() < 0 || node.null_count() < 0 || node.null_count() > node.length() {
            return Err(malformed(
                "Arrow IPC field node with a negative length or more nulls than values",
            ));
        }
    }
    if batch
        .variadicBufferCounts()
        .into_iter()
        .flatten()
        .any(|n| n < 0)
    {
        return Err(malformed(
            "Arrow IPC batch with a negative variadic buffer count",
        ));
    }
    for buffer in batch.buffers().into_iter().flatten() {
        let end = u64::try_from(buffer.offset())
            .ok()
            .zip(u64::try_from(buffer.length()).ok())
            .and_then(|(offset, length)| offset.checked_add(length));
        if end.is_none_or(|end| end > body_len) {
            return Err(malformed("Arrow IPC buffer outside its message body"));
        }
    }
    Ok(())
}

/// Random access to the bytes of an IPC file, so the same layout checks run over a
/// buffer ([`read_batches`]) and over a file read through `Read + Seek` (`run --input
/// X.arrow`), never holding more than the footer and one block's metadata.
trait FileBytes {
    fn len(&mut self) -> Result<u64, ArrowError>;
    /// `len` bytes at `offset`; the caller has checked they lie inside the input.
    fn at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, ArrowError>;
}

impl FileBytes for &[u8] {
    fn len(&mut self) -> Result<u64, ArrowError> {
        Ok(<[u8]>::len(self) as u64)
    }

    fn at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, ArrowError> {
        usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(start, len)| self.get(start..start.checked_add(len)?))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| malformed("truncated Arrow IPC file"))
    }
}

/// A `Read + Seek` input as [`FileBytes`].
struct Seeked<'a, R>(&'a mut R);

impl<R: std::io::Read + std::io::Seek> FileBytes for Seeked<'_, R> {
    fn len(&mut self) -> Result<u64, ArrowError> {
        self.0
            .seek(std::io::SeekFrom::End(0))
            .map_err(|e| ArrowError::IoError(format!("cannot read the Arrow IPC file: {e}"), e))
    }

    fn at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, ArrowError> {
        let io = |e: std::io::Error| {
            ArrowError::IoError(format!("cannot read the Arrow IPC file: {e}"), e)
        };
        self.0.seek(std::io::SeekFrom::Start(offset)).map_err(io)?;
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut *self.0, len), &mut out)
            .map_err(io)?;
        if (out.len() as u64) < len {
            return Err(malformed("truncated Arrow IPC file"));
        }
        Ok(out)
    }
}

/// Checks the message a file block points at: its metadata and buffers.
fn check_file_block(
    input: &mut impl FileBytes,
    offset: u64,
    meta_len: u64,
    body_len: u64,
) -> Result<(), ArrowError> {
    let block = input.at(offset, meta_len)?;
    // The block's metadata is a length-prefixed message, after an optional continuation marker.
    let framed = block
        .strip_prefix(&IPC_CONTINUATION_MARKER[..])
        .unwrap_or(&block);
    let message = framed
        .get(4..)
        .and_then(|rest| {
            let len = usize::try_from(i32::from_le_bytes(framed[..4].try_into().ok()?)).ok()?;
            rest.get(..len)
        })
        .ok_or_else(|| malformed("invalid Arrow IPC block metadata"))?;
    let message = arrow_ipc::root_as_message(message)
        .map_err(|e| ArrowError::IpcError(format!("invalid Arrow IPC message: {e}")))?;
    check_buffers(&message, body_len)
}

/// Checks the file footer and every block it lists against the input.
fn check_file_lengths(mut bytes: &[u8]) -> Result<(), ArrowError> {
    check_file_layout(&mut bytes)
}

/// The checks [`read_batches`] makes of an IPC file, over a file read through
/// `Read + Seek` before arrow's `FileReader` is given it: the header and trailer
/// magic, the footer length, every block inside the file, every buffer inside its
/// block's body. The input is left at its start.
pub fn check_ipc_file<R: std::io::Read + std::io::Seek>(input: &mut R) -> Result<(), ArrowError> {
    let mut seeked = Seeked(input);
    let len = seeked.len()?;
    let min = (IPC_FILE_HEADER.len() + IPC_FILE_TRAILER.len()) as u64;
    if len < min {
        return Err(malformed("truncated Arrow IPC file"));
    }
    let head = seeked.at(0, IPC_FILE_HEADER.len() as u64)?;
    let tail = seeked.at(
        len - IPC_FILE_TRAILER.len() as u64,
        IPC_FILE_TRAILER.len() as u64,
    )?;
    if sniff_head(&head) != IpcFormat::File || tail != IPC_FILE_TRAILER {
        return Err(malformed(
            "not an Arrow IPC file (header or trailer magic missing)",
        ));
    }
    check_file_layout(&mut seeked)?;
    input
        .seek(std::io::SeekFrom::Start(0))
        .map_err(|e| ArrowError::IoError(format!("cannot read the Arrow IPC file: {e}"), e))?;
    Ok(())
}

fn check_file_layout(input: &mut impl FileBytes) -> Result<(), ArrowError> {
    let len = input.len()?;
    let trailer_start = len
        .checked_sub(IPC_FILE_TRAILER.len() as u64 + 4)
        .ok_or_else(|| malformed("truncated Arrow IPC file"))?;
    let word = input.at(trailer_start, 4)?;
    let footer_len = i32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    // A file shorter than header + footer length + trailer (the magic numbers may
    // overlap) has no room for any footer.
    let room = trailer_start.checked_sub(IPC_FILE_HEADER.len() as u64);
    let footer_len = u64::try_from(footer_len)
        .ok()
        .filter(|&l| room.is_some_and(|room| l <= room))
        .ok_or_else(|| malformed("invalid Arrow IPC footer length"))?;
    let footer_bytes = input.at(trailer_start - footer_len, footer_len)?;
    let footer = arrow_ipc::root_as_footer(&footer_bytes)
        .map_err(|e| ArrowError::IpcError(format!("invalid Arrow IPC footer: {e}")))?;
    let blocks = footer
        .dictionaries()
        .into_iter()
        .flatten()
        .chain(footer.recordBatches().into_iter().flatten());
    for block in blocks {
        let end = u64::try_from(block.offset())
            .ok()
            .zip(u64::try_from(block.metaDataLength()).ok())
            .zip(u64::try_from(block.bodyLength()).ok())
            .and_then(|((offset, meta), body)| offset.checked_add(meta)?.checked_add(body));
        if end.is_none_or(|end| end > len) {
            return Err(malformed("invalid Arrow IPC block"));
        }
        check_file_block(
            input,
            block.offset() as u64,
            block.metaDataLength() as u64,
            block.bodyLength() as u64,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_ipc::writer::{FileWriter, StreamWriter};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn short_or_foreign_bytes_are_unknown() {
        assert_eq!(sniff(&[]), IpcFormat::Unknown);
        assert_eq!(sniff(&[0xff; 4]), IpcFormat::Unknown);
        assert_eq!(sniff(b"ARROW1\0\0"), IpcFormat::Unknown);
        assert_eq!(sniff(b"ARROW1\0\0ARROW1"), IpcFormat::File);
        assert_eq!(
            sniff(&[0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0]),
            IpcFormat::Stream
        );
        assert_eq!(
            stream_metadata_len(&[0xff, 0xff, 0xff, 0xff, 8, 1, 0, 0]),
            Some(264)
        );
        assert!(read_batches(b"nope").is_err());
    }

    #[test]
    fn a_head_is_told_by_its_marker_or_magic_alone() {
        assert_eq!(sniff_head(&[0xff; 4]), IpcFormat::Stream);
        assert_eq!(sniff_head(b"ARROW1"), IpcFormat::File);
        assert_eq!(sniff_head(b"ARROW1\0\0"), IpcFormat::File);
        for foreign in [
            &b""[..],
            b"ARROW",
            &[0xff; 3],
            b"PAR1abcd",
            &[8, 0, 0, 0, 1, 2],
        ] {
            assert_eq!(sniff_head(foreign), IpcFormat::Unknown, "{foreign:?}");
        }
        // Whole bytes agree with their head whenever they are complete.
        let stream = stream_of_one_batch();
        assert_eq!(sniff_head(&stream[..8]), sniff(&stream));
    }

    fn stream_of_one_batch() -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .unwrap();
        let mut out = Vec::new();
        let mut writer = StreamWriter::try_new(&mut out, &schema).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        out
    }

    /// The stream offset of the `i64` offset of the batch's last buffer (the
    /// values), found by its value: the writer puts the values at body offset 8
    /// after an 8-byte-aligned empty validity buffer.
    fn last_buffer_offset_at(stream: &[u8]) -> usize {
        let values_len = 24i64.to_le_bytes();
        stream
            .windows(16)
            .rposition(|w| w[8..] == values_len && w[..8] == 0i64.to_le_bytes())
            .expect("the values buffer descriptor")
    }

    /// Fuzzing found it (`snapshot_join`, a join buffer holding these bytes): a file of
    /// 14 to 17 bytes has both magic numbers but no room for a footer length, and the
    /// room left for the footer was computed by a subtraction that overflowed.
    #[test]
    fn a_file_too_short_for_its_footer_is_an_error_not_an_overflow() {
        for len in 14..=18 {
            let mut bytes = IPC_FILE_HEADER.to_vec();
            bytes.resize(len - IPC_FILE_TRAILER.len(), 0);
            bytes.extend_from_slice(&IPC_FILE_TRAILER);
            assert_eq!(sniff(&bytes), IpcFormat::File, "{len} bytes");
            let err = read_batches(&bytes).unwrap_err().to_string();
            assert!(
                err.contains("invalid Arrow IPC footer"),
                "{len} bytes: {err}"
            );
        }
        let found = b"\0\0\0\x10ARROW1\0\0\0\x10ARROW1";
        let err = read_batches(&found[4..]).unwrap_err().to_string();
        assert!(err.contains("invalid Arrow IPC footer length"), "{err}");
    }

    #[test]
    fn a_buffer_outside_its_body_is_an_error_before_arrow_can_panic_on_it() {
        let good = stream_of_one_batch();
        assert_eq!(read_batches(&good).unwrap().1[0].num_rows(), 3);
        let at = last_buffer_offset_at(&good);
        let mut bad = good.clone();
        bad[at..at + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
        let err = read_batches(&bad).unwrap_err().to_string();
        assert!(err.contains("buffer outside its message body"), "{err}");
        // The same batch in the IPC file format, reached through the footer's block.
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .unwrap();
        let mut file = Vec::new();
        let mut writer = FileWriter::try_new(&mut file, &schema).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        assert_eq!(read_batches(&file).unwrap().1.len(), 1);
        let at = last_buffer_offset_at(&file);
        file[at..at + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
        let err = read_batches(&file).unwrap_err().to_string();
        assert!(err.contains("buffer outside its message body"), "{err}");
    }

    #[test]
    fn a_guarded_call_turns_a_panic_into_none_and_leaves_the_panic_hook_alone() {
        const CHILD: &str = "KRABKA_GUARDED_PANIC_CHILD";
        if std::env::var_os(CHILD).is_some() {
            assert_eq!(guarded(|| panic!("inside the guarded call")), None::<()>);
            assert_eq!(guarded(|| 7), Some(7));
            // Hostile bytes are refused by the checks, before any reader can panic.
            let mut bad = stream_of_one_batch();
            let at = last_buffer_offset_at(&bad);
            bad[at..at + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
            assert!(read_batches(&bad).is_err());
            return;
        }
        // The panic hook is process-wide: look at it from a child process of this test
        // binary, running only this test with its output uncaptured. The default hook
        // still prints the caught panic (nothing swapped it), and the refused bytes
        // printed nothing.
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "engine::columnar::ipc::tests::a_guarded_call_turns_a_panic_into_none_and_leaves_the_panic_hook_alone",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("inside the guarded call"), "{stderr}");
        assert_eq!(stderr.matches("panicked").count(), 1, "{stderr}");
    }

    #[test]
    fn a_file_read_through_seek_gets_the_same_checks_as_a_buffer() {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .unwrap();
        let mut bytes = Vec::new();
        let mut w = FileWriter::try_new(&mut bytes, &schema).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
        let mut cursor = Cursor::new(bytes.clone());
        check_ipc_file(&mut cursor).unwrap();
        assert_eq!(cursor.position(), 0, "left at its start");
        // Every cut, and every single-byte change, agrees with the buffer path.
        for n in 0..bytes.len() {
            let cut = &bytes[..n];
            assert!(check_ipc_file(&mut Cursor::new(cut)).is_err(), "cut at {n}");
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0xff;
            // `run --input` recognises a file by its first six bytes, `ARROW1`.
            let magic = bad.starts_with(&IPC_FILE_HEADER[..6]) && bad.ends_with(&IPC_FILE_TRAILER);
            let buffered = magic && check_file_lengths(&bad).is_ok();
            let seeked = check_ipc_file(&mut Cursor::new(&bad)).is_ok();
            assert_eq!(buffered, seeked, "byte {i} flipped");
        }
    }
}
