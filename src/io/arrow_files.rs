//! Arrow IPC streams and files as batch readers and writers for offline runs.
//! Inputs are sniffed (formats §5: stream or file) and read batch by batch;
//! `-` is stdin. Outputs are IPC streams (`.arrows`, `-` = stdout), IPC files
//! (`.arrow`) or Parquet (`.parquet`, through `batch_sink`); a file is written
//! under a temporary name in the same directory and renamed only when the run
//! succeeds, so a failed run leaves nothing half-written. The Arrow readers run under `catch_unwind`: malformed input is
//! an error naming the input, never a crash.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Cursor, Read, Seek, SeekFrom, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{ArrowError, Schema, SchemaRef};

use crate::engine::columnar::ipc::{
    IPC_FILE_TRAILER, IpcFormat, check_ipc_file, is_parquet_head, sniff_head,
};
use crate::engine::columnar::ipc_stream::{Seekable, StreamBatches};
use crate::engine::columnar::reserved_types::{
    has_typed_columns, library_schema, to_library, to_typed, typed_schema,
};
use crate::engine::columnar::runner::offline::{BatchReader, BatchWriter, WriteError};
use crate::io::atomic_file::OutputFile;
use crate::io::batch_sink::{BatchSink, DataFormat, SinkError, SinkOptions};

enum Inner {
    /// Streams are read message by message into one allocation each, decoded
    /// in place (arrow's `StreamReader` zero-fills a fresh buffer per message
    /// before reading into it: 6 % of a 10 M-row run's CPU time).
    /// Unbuffered: bodies are read straight into their allocation (through a
    /// `BufReader` the first megabyte of every body was copied twice).
    Stream(StreamBatches<StreamInput>, SchemaRef),
    File(FileReader<Box<dyn ReadSeek>>),
}

/// Where a stream is read from: a file can pass over the columns a run does
/// not read ([`IpcInput::read_only`]); a pipe is read whole.
enum StreamInput {
    File(File),
    Pipe(Box<dyn Read + Send>),
}

impl Read for StreamInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            StreamInput::File(f) => f.read(buf),
            StreamInput::Pipe(p) => p.read(buf),
        }
    }
}

impl Seekable for StreamInput {
    fn remaining(&mut self) -> std::io::Result<u64> {
        match self {
            StreamInput::File(f) => f.remaining(),
            StreamInput::Pipe(_) => Err(std::io::ErrorKind::Unsupported.into()),
        }
    }

    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        match self {
            StreamInput::File(f) => f.skip(n),
            StreamInput::Pipe(_) => Err(std::io::ErrorKind::Unsupported.into()),
        }
    }
}

trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// Batches of one IPC stream or file, read ahead on a thread of their own.
pub struct IpcInput {
    name: String,
    inner: Inner,
    failed: bool,
}

/// Batches read ahead: a reader thread decodes the next batches (at most
/// [`READ_AHEAD`] waiting) while the topology processes the current one.
pub struct PrefetchedInput {
    schema: SchemaRef,
    batches: std::sync::mpsc::Receiver<Result<RecordBatch, String>>,
}

/// How many decoded batches may wait for the topology.
pub const READ_AHEAD: usize = 2;

impl PrefetchedInput {
    pub fn new(mut input: IpcInput) -> Self {
        let schema = input.schema();
        let (tx, rx) = std::sync::mpsc::sync_channel(READ_AHEAD);
        std::thread::spawn(move || {
            while let Some(batch) = input.next_batch() {
                if tx.send(batch).is_err() {
                    break;
                }
            }
        });
        PrefetchedInput {
            schema,
            batches: rx,
        }
    }
}

impl BatchReader for PrefetchedInput {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch, String>> {
        self.batches.recv().ok()
    }
}

fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, ArrowError>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(|e| format!("cannot read {what}: {e}")),
        Err(_) => Err(format!("cannot read {what}: malformed Arrow IPC data")),
    }
}

impl IpcInput {
    /// Opens a path, or stdin for `-`. Anything that is not a regular file (stdin,
    /// a FIFO, `<(…)`, a device) is read as a stream, never seeked; opening a FIFO
    /// with no writer waits for one, as `cat` does (a signal ends the wait:
    /// `cmd::interrupt`).
    pub fn open(path: &str) -> Result<IpcInput, String> {
        if path == "-" {
            return Self::pipe("stdin", Box::new(std::io::stdin()));
        }
        let mut file = File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Self::pipe(path, Box::new(file));
        }
        let mut head = [0u8; 8];
        let n = read_up_to(&mut file, &mut head).map_err(|e| format!("cannot read {path}: {e}"))?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        refuse_parquet(path, &head[..n])?;
        if sniff_head(&head[..n]) == IpcFormat::File {
            let mut tail = [0u8; 6];
            let ends_right = file.seek(SeekFrom::End(-6)).is_ok()
                && file.read_exact(&mut tail).is_ok()
                && tail == IPC_FILE_TRAILER;
            if !ends_right {
                return Err(truncated_file(path));
            }
            file.seek(SeekFrom::Start(0))
                .map_err(|e| format!("cannot read {path}: {e}"))?;
            Self::file(path, Box::new(file))
        } else {
            Self::stream(path, StreamInput::File(file), n)
        }
    }

    /// Reads an input that cannot seek (a pipe whose first bytes a caller already
    /// sniffed and chained back), as [`IpcInput::open`] reads stdin.
    pub fn from_reader(name: &str, input: Box<dyn Read + Send>) -> Result<IpcInput, String> {
        Self::pipe(name, input)
    }

    /// A stream that cannot seek: an IPC stream is read as it arrives; an IPC file
    /// (its footer is at the end) is read whole, up to `bounded_read::IPC_FILE_PIPE`.
    fn pipe(name: &str, mut input: Box<dyn Read + Send>) -> Result<IpcInput, String> {
        let mut head = [0u8; 8];
        let n =
            read_up_to(&mut input, &mut head).map_err(|e| format!("cannot read {name}: {e}"))?;
        refuse_parquet(name, &head[..n])?;
        if sniff_head(&head[..n]) == IpcFormat::File {
            let mut all = head[..n].to_vec();
            let rest =
                crate::io::bounded_read::read_stream(input, crate::io::bounded_read::IPC_FILE_PIPE)
                    .map_err(|e| format!("cannot read {name}: {e}"))?;
            all.extend_from_slice(&rest);
            if all.len() < 12 || !all.ends_with(&IPC_FILE_TRAILER) {
                return Err(truncated_file(name));
            }
            return Self::file(name, Box::new(Cursor::new(all)));
        }
        let chained: Box<dyn Read + Send> = Box::new(Cursor::new(head[..n].to_vec()).chain(input));
        Self::stream(name, StreamInput::Pipe(chained), n)
    }

    /// Reads, from a stream file, only the buffers of these columns: the
    /// others decode as zeroed columns the caller must drop. Other inputs are
    /// read whole.
    pub fn read_only(&mut self, columns: &BTreeSet<String>) {
        if let Inner::Stream(batches, schema) = &mut self.inner
            && batches.input_is(|input| matches!(input, StreamInput::File(_)))
        {
            let keep = schema
                .fields()
                .iter()
                .map(|f| columns.contains(f.name()))
                .collect();
            batches.read_only(keep);
        }
    }

    fn stream(name: &str, reader: StreamInput, available: usize) -> Result<IpcInput, String> {
        if available == 0 {
            return Err(format!("{name} is empty, not an Arrow IPC stream or file"));
        }
        let mut batches = StreamBatches::new(reader);
        let schema = guarded(name, || batches.schema())?;
        Ok(IpcInput {
            name: name.to_owned(),
            inner: Inner::Stream(batches, schema),
            failed: false,
        })
    }

    fn file(name: &str, mut reader: Box<dyn ReadSeek>) -> Result<IpcInput, String> {
        // The checks the in-memory reader makes (footer, blocks, buffers inside their
        // bodies), so a hostile file is refused by name before arrow's FileReader,
        // which slices what the file claims, reads it; `guarded` stays a last resort.
        check_ipc_file(&mut reader).map_err(|e| format!("cannot read {name}: {e}"))?;
        let reader = guarded(name, || FileReader::try_new(reader, None))?;
        Ok(IpcInput {
            name: name.to_owned(),
            inner: Inner::File(reader),
            failed: false,
        })
    }
}

/// Parquet where Arrow IPC is read: say what it is rather than fail to decode it.
fn refuse_parquet(name: &str, head: &[u8]) -> Result<(), String> {
    if is_parquet_head(head) {
        return Err(format!(
            "{name} is a Parquet file; `run --input` reads Arrow IPC (a stream, .arrows, or a file, .arrow), as `tail --format arrow` writes"
        ));
    }
    Ok(())
}

/// An IPC file's footer (and its closing `ARROW1`) is at its end: without it, the file
/// was cut short.
fn truncated_file(name: &str) -> String {
    format!(
        "{name} starts like an Arrow IPC file (ARROW1) but does not end with the ARROW1 footer magic: the file is truncated or not an IPC file"
    )
}

fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

impl IpcInput {
    /// The schema as written (reserved columns in either layout).
    fn written_schema(&self) -> SchemaRef {
        match &self.inner {
            Inner::Stream(_, schema) => schema.clone(),
            Inner::File(r) => r.schema(),
        }
    }
}

/// Inputs are read in the library layout: `tail` writes `__timestamp` and `__headers`
/// typed by default (`engine::columnar::reserved_types`), and a `tail | run` pipe
/// must read what `tail` writes.
impl BatchReader for IpcInput {
    fn schema(&self) -> SchemaRef {
        let written = self.written_schema();
        if has_typed_columns(&written) {
            std::sync::Arc::new(library_schema(&written))
        } else {
            written
        }
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch, String>> {
        if self.failed {
            return None;
        }
        let name = self.name.clone();
        let next = match catch_unwind(AssertUnwindSafe(|| match &mut self.inner {
            Inner::Stream(r, _) => r.next(),
            Inner::File(r) => r.next(),
        })) {
            Ok(next) => next,
            Err(_) => Some(Err(ArrowError::IpcError("malformed Arrow IPC data".into()))),
        };
        let next = next.map(|r| {
            r.map_err(|e| format!("cannot read {name}: {e}"))
                .and_then(|b| to_library(&b).map_err(|e| format!("{name}: {e}")))
        });
        if matches!(next, Some(Err(_))) {
            self.failed = true;
        }
        next
    }
}

/// Rows per Parquet row group (`tail --row-group-size`'s default).
const DEFAULT_ROW_GROUP_ROWS: usize = 128 * 1024;

enum Writer {
    Stream(StreamWriter<Sink>),
    File(FileWriter<Sink>),
}

/// Where an IPC output's bytes go: stdout, or an output file (`io::atomic_file`).
enum Sink {
    Stdout(BufWriter<std::io::Stdout>),
    File(OutputFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::File(f) => f.flush(),
        }
    }
}

/// Where one sink writes: an IPC stream or file, created with the first
/// batch's schema, or a Parquet file.
pub struct IpcOutput {
    target: String,
    parquet: Option<BatchSink>,
    file_format: bool,
    /// The output, opened up front so an unwritable path fails before any input
    /// is read; committed by `finish`.
    file: Option<OutputFile>,
    writer: Option<Writer>,
    schema: Option<SchemaRef>,
}

impl IpcOutput {
    /// Encodes a Parquet output's columns on up to `threads` threads (the file is
    /// the same at every count); IPC outputs are written as they are.
    pub fn set_threads(&mut self, threads: usize) {
        if let Some(sink) = self.parquet.as_mut() {
            sink.set_threads(threads);
        }
    }

    /// `-` writes an IPC stream to stdout; `*.arrow` an IPC file; anything else an IPC stream.
    pub fn create(target: &str) -> Result<IpcOutput, String> {
        if target.ends_with(".parquet") {
            // Parquet opens its file with the first batch: check the directory now.
            crate::io::atomic_file::check_writable(Path::new(target))
                .map_err(|e| format!("cannot create {target}: {e}"))?;
            return Ok(IpcOutput {
                target: target.to_owned(),
                parquet: Some(BatchSink::new(SinkOptions {
                    format: DataFormat::Parquet,
                    path: Some(PathBuf::from(target)),
                    row_group_size: DEFAULT_ROW_GROUP_ROWS,
                    rotate_rows: None,
                    rotate_bytes: None,
                })),
                file_format: false,
                file: None,
                writer: None,
                schema: None,
            });
        }
        let file = if target == "-" {
            None
        } else {
            Some(
                OutputFile::create(Path::new(target))
                    .map_err(|e| format!("cannot create {target}: {e}"))?,
            )
        };
        Ok(IpcOutput {
            target: target.to_owned(),
            parquet: None,
            file_format: target.ends_with(".arrow"),
            file,
            writer: None,
            schema: None,
        })
    }

    fn open(&mut self, schema: &Schema) -> Result<(), WriteError> {
        let sink = match self.file.take() {
            Some(file) => Sink::File(file),
            None => Sink::Stdout(BufWriter::with_capacity(1 << 20, std::io::stdout())),
        };
        let writer = if self.file_format {
            Writer::File(FileWriter::try_new(sink, schema).map_err(arrow_write_error)?)
        } else {
            Writer::Stream(StreamWriter::try_new(sink, schema).map_err(arrow_write_error)?)
        };
        self.writer = Some(writer);
        self.schema = Some(std::sync::Arc::new(schema.clone()));
        Ok(())
    }

    /// Ends the stream (an empty one with `schema` when nothing was written) and
    /// moves the file into place.
    pub fn finish(mut self, schema: Option<&Schema>) -> Result<(), String> {
        if let Some(sink) = self.parquet.take() {
            let fallback =
                std::sync::Arc::new(typed_schema(&schema.cloned().unwrap_or_else(Schema::empty)));
            return sink
                .finish(&fallback)
                .map(|_| ())
                .map_err(|e| format!("cannot write {}: {e}", self.target));
        }
        if self.writer.is_none() {
            let empty = Schema::empty();
            self.open(schema.unwrap_or(&empty))
                .map_err(|e| describe(&self.target, e))?;
        }
        let result = match self.writer.take().expect("opened") {
            Writer::Stream(mut w) => w.finish().and_then(|_| w.into_inner()),
            Writer::File(mut w) => w.finish().and_then(|_| w.into_inner()),
        };
        let sink = match result.map_err(arrow_write_error) {
            Ok(sink) => sink,
            Err(WriteError::Closed) => return Ok(()),
            Err(e) => return Err(describe(&self.target, e)),
        };
        match sink {
            Sink::File(file) => file
                .commit()
                .map(|_| ())
                .map_err(|e| format!("cannot write {}: {e}", self.target)),
            Sink::Stdout(mut out) => match out.flush() {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(format!("cannot write {}: {e}", self.target))
                }
                _ => Ok(()),
            },
        }
    }
}

fn describe(target: &str, e: WriteError) -> String {
    match e {
        WriteError::Closed => format!("{target}: the reader went away"),
        WriteError::Failed(m) => format!("cannot write {target}: {m}"),
    }
}

fn arrow_write_error(e: ArrowError) -> WriteError {
    match e {
        ArrowError::IoError(_, io) if io.kind() == std::io::ErrorKind::BrokenPipe => {
            WriteError::Closed
        }
        ArrowError::IoError(m, _) if m.contains("Broken pipe") => WriteError::Closed,
        ArrowError::ExternalError(ref inner) if inner.to_string().contains("Broken pipe") => {
            WriteError::Closed
        }
        other => WriteError::Failed(other.to_string()),
    }
}

impl BatchWriter for IpcOutput {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), WriteError> {
        if let Some(sink) = self.parquet.as_mut() {
            // Parquet is read by other tools: reserved columns typed, as `tail` writes them.
            let typed = to_typed(batch).map_err(WriteError::Failed)?;
            return sink.write(&typed).map_err(|e| match e {
                SinkError::Closed => WriteError::Closed,
                SinkError::Failed(m) => WriteError::Failed(m),
            });
        }
        if self.writer.is_none() {
            self.open(&batch.schema())?;
        }
        if let Some(schema) = &self.schema
            && schema.fields() != batch.schema().fields()
        {
            return Err(WriteError::Failed(format!(
                "the batch schema changed: an Arrow stream keeps one schema ({} columns before, {} now)",
                schema.fields().len(),
                batch.schema().fields().len()
            )));
        }
        match self.writer.as_mut().expect("opened") {
            Writer::Stream(w) => w.write(batch),
            Writer::File(w) => w.write(batch),
        }
        .map_err(arrow_write_error)
    }
}
