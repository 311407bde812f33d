//! An Arrow IPC **stream** read batch by batch from any [`Read`] (a large file, a pipe), so a
//! caller folding the batches holds one message at a time instead of the whole input.
//!
//! The same guards as [`super::ipc::read_batches`] apply, message by message: every metadata
//! and body length is read from the input rather than reserved up front (a length the input
//! does not back ends in a "truncated" error, never in a huge allocation), every buffer must
//! lie inside its body, and a panic inside the Arrow decoder is reported as an error.

use std::io::{self, ErrorKind, Read};

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};

use super::ipc::{IPC_CONTINUATION_MARKER, check_buffers, guarded, malformed};

/// The continuation marker and a zero metadata length.
const END_OF_STREAM: [u8; 8] = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];

/// How much of a declared length is allocated before the input delivers it: a
/// batch body (a few MiB) then lands in one allocation, with no regrowth copies,
/// while a hostile length still costs at most this much before "truncated".
const UPFRONT: usize = 64 << 20;

/// The record batches of an IPC stream, decoded one message at a time. Iteration ends at the
/// end-of-stream marker or at the end of the input between two messages; after an error it
/// yields nothing more.
pub struct StreamBatches<R> {
    input: R,
    decoder: StreamDecoder,
    /// Bytes handed to the decoder and not yet consumed by it.
    pending: Buffer,
    /// The input's end was passed on to the decoder.
    ended: bool,
    done: bool,
    /// Bytes read from the input so far (error messages name the offset).
    position: u64,
    /// A batch decoded while reading the schema, not yet handed out.
    ready: Option<RecordBatch>,
    /// The columns read from a seekable input (see [`StreamBatches::read_only`]).
    projection: Option<Projection<R>>,
}

/// An input that can pass over bytes instead of reading them (a file seeks).
pub trait Seekable: Read {
    /// The bytes left from the current position.
    fn remaining(&mut self) -> io::Result<u64>;
    /// Moves `n` bytes forward.
    fn skip(&mut self, n: u64) -> io::Result<()>;
}

impl Seekable for std::fs::File {
    fn remaining(&mut self) -> io::Result<u64> {
        let at = io::Seek::stream_position(self)?;
        Ok(self.metadata()?.len().saturating_sub(at))
    }

    fn skip(&mut self, n: u64) -> io::Result<()> {
        let n = i64::try_from(n).map_err(|_| io::Error::from(ErrorKind::InvalidInput))?;
        io::Seek::seek_relative(self, n)
    }
}

/// Which top-level columns to read, and how the input passes over the others.
struct Projection<R> {
    keep: Vec<bool>,
    remaining: fn(&mut R) -> io::Result<u64>,
    skip: fn(&mut R, u64) -> io::Result<()>,
}

impl<R: Seekable> StreamBatches<R> {
    /// Reads only the buffers of the columns flagged in `keep` (one flag per
    /// field of the stream's schema) from each record batch: the others are
    /// passed over (but for their validity bitmaps) and decode as zeroed
    /// buffers (empty strings, zeros), for a caller that drops them. A message whose layout this cannot map (nested,
    /// dictionary or view columns, compression) is read whole. A message whose
    /// body the input no longer holds is the same "truncated" error as ever.
    pub fn read_only(&mut self, keep: Vec<bool>) {
        self.projection = Some(Projection {
            keep,
            remaining: R::remaining,
            skip: R::skip,
        });
    }
}

/// The body ranges `(offset, length)` of the kept columns' buffers, in body
/// order; `None` when the batch's layout is not the flat one this maps.
fn kept_ranges(
    schema: &Schema,
    keep: &[bool],
    message: &arrow_ipc::Message<'_>,
) -> Option<Vec<(usize, usize)>> {
    let batch = message.header_as_record_batch()?;
    if batch.compression().is_some()
        || keep.len() != schema.fields().len()
        || batch.nodes()?.len() != keep.len()
    {
        return None;
    }
    let buffers = batch.buffers()?;
    let mut ranges = Vec::new();
    let mut at = 0;
    for (field, kept) in schema.fields().iter().zip(keep) {
        let count = match field.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary => 3,
            DataType::Boolean | DataType::FixedSizeBinary(_) => 2,
            t if t.is_primitive() => 2,
            _ => return None,
        };
        // A column passed over keeps its validity bitmap (its first buffer, an
        // eighth of a byte a row): the decoder checks it against the null count.
        let read = if *kept { count } else { 1 };
        for i in at..at + read {
            if i >= buffers.len() {
                return None;
            }
            let b = buffers.get(i);
            ranges.push((
                usize::try_from(b.offset()).ok()?,
                usize::try_from(b.length()).ok()?,
            ));
        }
        at += count;
    }
    if at != buffers.len() {
        return None;
    }
    ranges.sort_unstable();
    // Overlapping buffers are not a layout this reads piecewise.
    let mut end = 0;
    for (offset, length) in &ranges {
        if *offset < end {
            return None;
        }
        end = offset + length;
    }
    Some(ranges)
}

impl<R: Read> StreamBatches<R> {
    pub fn new(input: R) -> Self {
        StreamBatches {
            input,
            decoder: StreamDecoder::new(),
            pending: Buffer::from_vec(Vec::<u8>::new()),
            ended: false,
            done: false,
            position: 0,
            ready: None,
            projection: None,
        }
    }

    /// Whether the input is what `test` looks for.
    pub fn input_is(&self, test: impl FnOnce(&R) -> bool) -> bool {
        test(&self.input)
    }

    /// The stream's schema, reading up to its schema message. (The decoder
    /// completes a message with an empty body, as the schema's is, only when
    /// the next bytes arrive, so the first batch may be decoded with it: it is
    /// kept for [`Iterator::next`].)
    pub fn schema(&mut self) -> Result<SchemaRef, ArrowError> {
        loop {
            if let Some(schema) = self.decoder.schema() {
                return Ok(schema);
            }
            match self.decode_more()? {
                None => return Err(malformed("the stream ends before its schema")),
                Some(Some(batch)) => self.ready = Some(batch),
                Some(None) => {}
            }
        }
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        if let Some(batch) = self.ready.take() {
            return Ok(Some(batch));
        }
        loop {
            match self.decode_more()? {
                None => return Ok(None),
                Some(Some(batch)) => return Ok(Some(batch)),
                Some(None) => {}
            }
        }
    }

    /// One decoding step over the pending bytes, read from the next message when none are
    /// left: `Some(batch or not)`, or `None` once the stream has ended.
    fn decode_more(&mut self) -> Result<Option<Option<RecordBatch>>, ArrowError> {
        if self.pending.is_empty() {
            if self.ended {
                return Ok(None);
            }
            // The decoder emits a batch with an empty body only once more bytes arrive, so
            // the end is always passed on as an end-of-stream marker.
            self.pending = match self.read_message()? {
                Some(message) => Buffer::from_vec(message),
                None => {
                    self.ended = true;
                    Buffer::from_vec(END_OF_STREAM.to_vec())
                }
            };
        }
        let (decoder, pending) = (&mut self.decoder, &mut self.pending);
        guarded(|| decoder.decode(pending))
            .unwrap_or_else(|| Err(malformed("malformed Arrow IPC data")))
            .map(Some)
    }

    /// The next message re-framed as `ffffffff`, metadata length, metadata, body; `None` at
    /// the end of the stream.
    fn read_message(&mut self) -> Result<Option<Vec<u8>>, ArrowError> {
        let start = self.position;
        self.read_framed().map_err(|e| match e {
            ArrowError::IpcError(m) => {
                ArrowError::IpcError(format!("{m} (message at byte {start})"))
            }
            other => other,
        })
    }

    fn read_framed(&mut self) -> Result<Option<Vec<u8>>, ArrowError> {
        let Some(mut meta_len) = self.read_word(true)? else {
            return Ok(None);
        };
        if meta_len == -1 {
            meta_len = self.read_word(false)?.unwrap_or_default();
        }
        if meta_len == 0 {
            return Ok(None);
        }
        let meta_len = usize::try_from(meta_len)
            .map_err(|_| malformed("invalid Arrow IPC metadata length"))?;
        let mut framed = Vec::with_capacity(8 + meta_len.min(UPFRONT));
        framed.extend_from_slice(&IPC_CONTINUATION_MARKER);
        framed.extend_from_slice(&(meta_len as i32).to_le_bytes());
        self.read_exactly(meta_len, &mut framed)?;
        let message = arrow_ipc::root_as_message(&framed[8..])
            .map_err(|e| ArrowError::IpcError(format!("invalid Arrow IPC message: {e}")))?;
        let body_len = usize::try_from(message.bodyLength())
            .map_err(|_| malformed("invalid Arrow IPC body length"))?;
        check_buffers(&message, body_len as u64)?;
        let ranges = match (&self.projection, self.decoder.schema()) {
            (Some(projection), Some(schema)) => kept_ranges(&schema, &projection.keep, &message),
            _ => None,
        };
        match ranges {
            Some(ranges) => self.read_ranges(body_len, &ranges, &mut framed)?,
            None => self.read_exactly(body_len, &mut framed)?,
        }
        Ok(Some(framed))
    }

    /// Appends a body of `body_len` bytes of which only `ranges` are read;
    /// the rest is zeros, passed over in the input.
    fn read_ranges(
        &mut self,
        body_len: usize,
        ranges: &[(usize, usize)],
        out: &mut Vec<u8>,
    ) -> Result<(), ArrowError> {
        let Some(projection) = &self.projection else {
            return self.read_exactly(body_len, out);
        };
        let (remaining, skip) = (projection.remaining, projection.skip);
        let io = |e: io::Error| ArrowError::IoError(e.to_string(), e);
        if remaining(&mut self.input).map_err(io)? < body_len as u64 {
            return Err(malformed("truncated Arrow IPC message"));
        }
        out.reserve(body_len);
        let body_at = out.len();
        let mut read = 0;
        for &(offset, length) in ranges.iter().chain([(body_len, 0)].iter()) {
            if offset > read {
                out.resize(body_at + offset, 0);
                skip(&mut self.input, (offset - read) as u64).map_err(io)?;
                self.position += (offset - read) as u64;
            }
            self.read_exactly(length, out)?;
            read = offset + length;
        }
        Ok(())
    }

    /// A little-endian `i32`; `None` when the input ends before its first byte and `at_end_ok`.
    fn read_word(&mut self, at_end_ok: bool) -> Result<Option<i32>, ArrowError> {
        let mut word = [0u8; 4];
        let mut filled = 0;
        while filled < word.len() {
            match self.input.read(&mut word[filled..]) {
                Ok(0) if filled == 0 && at_end_ok => return Ok(None),
                Ok(0) => return Err(malformed("truncated Arrow IPC message")),
                Ok(n) => {
                    filled += n;
                    self.position += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(ArrowError::IoError(e.to_string(), e)),
            }
        }
        Ok(Some(i32::from_le_bytes(word)))
    }

    /// Appends exactly `len` bytes, growing `out` only as the input delivers them.
    fn read_exactly(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), ArrowError> {
        let before = out.len();
        out.reserve(len.min(UPFRONT));
        (&mut self.input)
            .take(len as u64)
            .read_to_end(out)
            .map_err(|e| ArrowError::IoError(e.to_string(), e))?;
        self.position += (out.len() - before) as u64;
        if out.len() - before < len {
            return Err(malformed("truncated Arrow IPC message"));
        }
        Ok(())
    }
}

impl<R: Read> Iterator for StreamBatches<R> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_batch();
        self.done = !matches!(next, Ok(Some(_)));
        next.transpose()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::engine::columnar::ipc::read_batches;
    use crate::engine::columnar::test_support::{Trickle, ipc_stream_bytes};

    fn batch(from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let values = Int64Array::from((from..from + rows).collect::<Vec<_>>());
        RecordBatch::try_new(schema, vec![Arc::new(values)]).unwrap()
    }

    fn stream(batches: &[RecordBatch]) -> Vec<u8> {
        ipc_stream_bytes(batches)
    }

    #[test]
    fn streamed_batches_equal_the_batches_read_from_the_whole_bytes() {
        let bytes = stream(&[batch(0, 5), batch(5, 0), batch(5, 1000)]);
        let (_, whole) = read_batches(&bytes).unwrap();
        let streamed: Vec<_> = StreamBatches::new(Trickle {
            bytes: &bytes,
            step: 3,
        })
        .collect::<Result<_, _>>()
        .unwrap();
        assert_eq!(streamed, whole);
        assert_eq!(streamed.len(), 3);
    }

    #[test]
    fn the_schema_comes_before_any_batch_and_a_truncated_message_is_named_by_its_offset() {
        let bytes = stream(&[batch(0, 4), batch(4, 4)]);
        let mut batches = StreamBatches::new(&bytes[..]);
        assert_eq!(batches.schema().unwrap(), batch(0, 1).schema());
        let all: Vec<_> = batches.collect::<Result<_, _>>().unwrap();
        assert_eq!(all, vec![batch(0, 4), batch(4, 4)]);
        // The second batch starts where a one-batch stream's end marker would.
        let second_at = stream(&[batch(0, 4)]).len() - 8;
        let mut cut = StreamBatches::new(&bytes[..bytes.len() - 18]);
        cut.schema().unwrap();
        assert_eq!(cut.next().unwrap().unwrap(), batch(0, 4));
        let err = cut.next().unwrap().unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "truncated Arrow IPC message (message at byte {second_at})"
            )),
            "{err}"
        );
        let err = StreamBatches::new(&[][..]).schema().unwrap_err();
        assert!(err.to_string().contains("ends before its schema"), "{err}");
        // A stream of a schema and no batch, with or without its end marker.
        let mut schema_only = Vec::new();
        let mut writer = StreamWriter::try_new(&mut schema_only, &batch(0, 1).schema()).unwrap();
        writer.finish().unwrap();
        drop(writer);
        let unterminated = schema_only[..schema_only.len() - 8].to_vec();
        for bytes in [schema_only, unterminated] {
            let mut batches = StreamBatches::new(&bytes[..]);
            assert_eq!(batches.schema().unwrap(), batch(0, 1).schema());
            assert_eq!(batches.count(), 0);
        }
    }

    impl Seekable for std::io::Cursor<Vec<u8>> {
        fn remaining(&mut self) -> io::Result<u64> {
            Ok((self.get_ref().len() as u64).saturating_sub(self.position()))
        }
        fn skip(&mut self, n: u64) -> io::Result<()> {
            self.set_position(self.position() + n);
            Ok(())
        }
    }

    fn three_columns(from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("n", DataType::Int64, false),
            Field::new("b", DataType::Binary, false),
        ]));
        let s = arrow_array::StringArray::from_iter(
            (from..from + rows).map(|i| (i % 5 != 0).then(|| format!("value-{i}"))),
        );
        let b = arrow_array::BinaryArray::from_iter_values(
            (from..from + rows).map(|i| i.to_be_bytes()),
        );
        let n = Int64Array::from((from..from + rows).collect::<Vec<_>>());
        RecordBatch::try_new(schema, vec![Arc::new(s), Arc::new(n), Arc::new(b)]).unwrap()
    }

    #[test]
    fn a_projected_read_keeps_the_kept_columns_and_zeroes_the_others() {
        let batches = [
            three_columns(0, 100),
            three_columns(100, 0),
            three_columns(100, 300),
        ];
        let bytes = stream(&batches);
        for keep in [
            [true, false, false],
            [false, true, true],
            [true, true, true],
        ] {
            let mut read = StreamBatches::new(std::io::Cursor::new(bytes.clone()));
            read.schema().unwrap();
            read.read_only(keep.to_vec());
            let got: Vec<RecordBatch> = read.collect::<Result<_, _>>().unwrap();
            assert_eq!(got.len(), batches.len());
            for (got, want) in got.iter().zip(&batches) {
                for (c, kept) in keep.iter().enumerate() {
                    if *kept {
                        assert_eq!(got.column(c), want.column(c), "{keep:?} column {c}");
                    } else {
                        assert_eq!(got.column(c).len(), want.num_rows());
                    }
                }
            }
        }
    }

    #[test]
    fn a_projected_read_of_a_truncated_stream_fails_at_the_cut_message() {
        let bytes = stream(&[three_columns(0, 50), three_columns(50, 50)]);
        let whole = StreamBatches::new(std::io::Cursor::new(bytes.clone())).count();
        for cut in 1..bytes.len() - 8 {
            let mut read = StreamBatches::new(std::io::Cursor::new(bytes[..cut].to_vec()));
            if read.schema().is_err() {
                continue;
            }
            read.read_only(vec![false, true, false]);
            let outcome: Vec<_> = read.collect();
            // A cut inside a batch (even inside a column passed over) is an
            // error, never a panic; a cut between batches ends the stream there.
            match outcome.last() {
                Some(Err(e)) => {
                    assert!(
                        e.to_string().contains("truncated Arrow IPC message"),
                        "cut {cut}: {e}"
                    )
                }
                _ => assert!(outcome.len() < whole || cut >= bytes.len() - 8, "cut {cut}"),
            }
        }
    }

    #[test]
    fn a_projected_read_from_a_file_cut_short_is_an_error_not_a_crash() {
        let bytes = stream(&[three_columns(0, 500), three_columns(500, 500)]);
        let mut file = tempfile::tempfile().unwrap();
        io::Write::write_all(&mut file, &bytes[..bytes.len() - 100]).unwrap();
        io::Seek::rewind(&mut file).unwrap();
        let mut read = StreamBatches::new(file);
        read.schema().unwrap();
        read.read_only(vec![false, true, false]);
        let outcome: Vec<_> = read.collect();
        assert!(outcome[0].is_ok());
        let err = outcome.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(
            err.contains("truncated Arrow IPC message (message at byte"),
            "{err}"
        );
    }

    #[test]
    fn a_stream_without_its_end_marker_ends_at_the_last_whole_message() {
        let bytes = stream(&[batch(0, 4)]);
        let unterminated = &bytes[..bytes.len() - 8];
        let streamed: Vec<_> = StreamBatches::new(unterminated)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(streamed, vec![batch(0, 4)]);
    }

    #[test]
    fn truncated_or_oversized_messages_fail_without_panic_or_huge_allocation() {
        let bytes = stream(&[batch(0, 4)]);
        for cut in 1..bytes.len() - 8 {
            let outcome: Result<Vec<_>, _> = StreamBatches::new(&bytes[..cut]).collect();
            // Cut between the schema and the batch, the input is merely shorter; else it fails.
            if let Ok(batches) = outcome {
                assert!(
                    batches.is_empty(),
                    "a stream cut at byte {cut} yields no batch"
                );
            }
        }
        let mut huge = IPC_CONTINUATION_MARKER.to_vec();
        huge.extend_from_slice(&i32::MAX.to_le_bytes());
        huge.extend_from_slice(b"short");
        let err = StreamBatches::new(&huge[..]).next().unwrap().unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        let mut negative = IPC_CONTINUATION_MARKER.to_vec();
        negative.extend_from_slice(&(-5i32).to_le_bytes());
        let err = StreamBatches::new(&negative[..])
            .next()
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains("metadata length"), "{err}");
    }
}
