//! Recognising and reading Arrow IPC bytes (formats §5): the IPC **stream**
//! format (what the Go/Java codecs write) and the IPC **file** format (what
//! krabka-streams-rs `PolarsIpcSerde` writes), told apart by their first bytes.

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

/// Sniffs the IPC format: a stream starts with `ffffffff` and a 4-byte
/// metadata length; a file starts with `ARROW1\0\0` and ends with `ARROW1`.
pub fn sniff(bytes: &[u8]) -> IpcFormat {
    if bytes.len() >= 8 && bytes.starts_with(&IPC_CONTINUATION_MARKER) {
        IpcFormat::Stream
    } else if bytes.len() >= IPC_FILE_HEADER.len() + IPC_FILE_TRAILER.len()
        && bytes.starts_with(&IPC_FILE_HEADER)
        && bytes.ends_with(&IPC_FILE_TRAILER)
    {
        IpcFormat::File
    } else {
        IpcFormat::Unknown
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
/// negative lengths they would unwrap. A panic inside the Arrow reader on other
/// malformed input is caught and reported as an error.
pub fn read_batches(bytes: &[u8]) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
    let format = sniff(bytes);
    match format {
        IpcFormat::Stream => check_stream_lengths(bytes)?,
        IpcFormat::File => check_file_lengths(bytes)?,
        IpcFormat::Unknown => return Err(malformed("not an Arrow IPC stream or file")),
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if format == IpcFormat::Stream {
            let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
            let schema = reader.schema();
            Ok((schema, reader.collect::<Result<Vec<_>, _>>()?))
        } else {
            let reader = FileReader::try_new(Cursor::new(bytes), None)?;
            let schema = reader.schema();
            Ok((schema, reader.collect::<Result<Vec<_>, _>>()?))
        }
    }));
    outcome.unwrap_or_else(|_| Err(malformed("malformed Arrow IPC data")))
}

fn malformed(what: &str) -> ArrowError {
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
        pos += body_len;
    }
    Ok(())
}

/// Checks the file footer and every block it lists against the input.
fn check_file_lengths(bytes: &[u8]) -> Result<(), ArrowError> {
    let trailer_start = bytes.len() - IPC_FILE_TRAILER.len() - 4;
    let footer_len = i32::from_le_bytes(
        bytes[trailer_start..trailer_start + 4]
            .try_into()
            .map_err(|_| malformed("truncated Arrow IPC file"))?,
    );
    let footer_len = usize::try_from(footer_len)
        .ok()
        .filter(|&len| len <= trailer_start - IPC_FILE_HEADER.len())
        .ok_or_else(|| malformed("invalid Arrow IPC footer length"))?;
    let footer = arrow_ipc::root_as_footer(&bytes[trailer_start - footer_len..trailer_start])
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
        if end.is_none_or(|end| end > bytes.len() as u64) {
            return Err(malformed("invalid Arrow IPC block"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
}
