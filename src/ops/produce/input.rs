//! What `produce` reads: Arrow IPC (stream or file, formats §5), Parquet, NDJSON (as
//! `tail --format ndjson` writes it) or plain lines, from a file or stdin. Anything
//! that is not a regular file (stdin, a FIFO, `<(…)`) is read as a stream and never
//! seeked; a Parquet file or IPC file arriving on a pipe is read whole under a cap
//! (`io::bounded_read`), since its footer is at its end.
//!
//! Columnar inputs come out in the library layout of formats §4 (typed
//! `__timestamp`/`__headers` converted back exactly), so one encoding path serves
//! every input.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::engine::columnar::ipc::{self, IpcFormat};
use crate::engine::columnar::reserved_types::{library_schema, to_library};
use crate::engine::columnar::runner::offline::BatchReader;
use crate::io::arrow_files::IpcInput;
use crate::io::bounded_read;
use crate::ops::{Error, Result};

/// Cap on one Parquet file read from a pipe (read whole: its footer is at the end).
pub const PARQUET_PIPE: bounded_read::Cap = bounded_read::Cap {
    bytes: 1 << 30,
    what: "a Parquet file read from a pipe (write an Arrow IPC stream to pipe more)",
};

/// Cap on one input line (NDJSON row or plain-text record).
pub const LINE: bounded_read::Cap = bounded_read::Cap {
    bytes: 128 << 20,
    what: "one input line",
};

/// The input formats. Reading is another concept than the one output-format type
/// (`io::batch_sink::DataFormat`): detection from the extension or first bytes, kcat's lines,
/// and Arrow's stream and file read alike, so it stays a type of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// From the file's extension, else its first bytes (Arrow IPC, Parquet), else lines.
    Auto,
    Arrow,
    Parquet,
    Ndjson,
    Lines,
}

impl InputFormat {
    pub fn label(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Arrow => "arrow",
            InputFormat::Parquet => "parquet",
            InputFormat::Ndjson => "ndjson",
            InputFormat::Lines => "lines",
        }
    }
}

/// An opened input.
pub enum Opened {
    /// Arrow batches in the library layout, and which format they were read from.
    Columnar(Box<dyn BatchReader + Send>, InputFormat),
    /// NDJSON rows, one object a line.
    Ndjson(LineInput),
    /// Plain-text lines.
    Lines(LineInput),
}

/// Lines of a text input, each bounded by [`LINE`].
pub struct LineInput {
    pub name: String,
    reader: Box<dyn BufRead + Send>,
    /// 1-based number of the last line read.
    pub line: u64,
}

impl LineInput {
    fn new(name: &str, reader: Box<dyn BufRead + Send>) -> Self {
        LineInput {
            name: name.to_owned(),
            reader,
            line: 0,
        }
    }

    #[cfg(test)]
    pub fn for_tests_reader(reader: Box<dyn BufRead + Send>) -> Self {
        Self::new("test", reader)
    }

    #[cfg(test)]
    pub fn for_tests(text: &str) -> Self {
        Self::new(
            "test",
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        )
    }

    /// The next line without its `\n` (a `\r` before it is kept, as kcat keeps it),
    /// `None` at the end. A last line without a newline is a line.
    pub fn next_line(&mut self) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        let n = (&mut self.reader)
            .take(LINE.bytes + 2)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::failure(format!("cannot read {}: {e}", self.name)))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        if buf.len() as u64 > LINE.bytes {
            return Err(Error::failure(format!(
                "{} line {}: {}",
                self.name,
                self.line,
                LINE.exceeded()
            )));
        }
        Ok(Some(buf))
    }
}

/// The format a path's extension names, if it names one.
pub fn format_of_extension(path: &str) -> Option<InputFormat> {
    let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "arrows" | "arrow" | "feather" | "ipc" => InputFormat::Arrow,
        "parquet" | "pq" => InputFormat::Parquet,
        "ndjson" | "jsonl" => InputFormat::Ndjson,
        "txt" | "lines" => InputFormat::Lines,
        _ => return None,
    })
}

/// The format of bytes that start with `head` (`Lines` when nothing binary matches).
/// Text that starts like a JSON object is refused rather than guessed: it could be
/// NDJSON rows (with `__key`, `__headers` …) or JSON values to send as they are.
fn sniff(name: &str, head: &[u8]) -> Result<InputFormat> {
    if ipc::sniff_head(head) != IpcFormat::Unknown {
        return Ok(InputFormat::Arrow);
    }
    if ipc::is_parquet_head(head) {
        return Ok(InputFormat::Parquet);
    }
    if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        return Err(Error::usage(format!(
            "{name} looks like JSON: pass --format ndjson for rows as `tail --format ndjson` writes them (payload fields, __key, __timestamp, __headers), or --format lines to send each line as it is"
        )));
    }
    Ok(InputFormat::Lines)
}

/// Fills `buf` as far as the input allows (short only at its end).
fn read_head(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Opens `path` (`-` = stdin) as `format`; `batch_rows` bounds a Parquet batch.
pub fn open(path: &str, format: InputFormat, batch_rows: usize) -> Result<Opened> {
    let name = if path == "-" { "stdin" } else { path };
    let format = match format {
        InputFormat::Auto if path != "-" => format_of_extension(path).unwrap_or(InputFormat::Auto),
        f => f,
    };
    if format == InputFormat::Arrow {
        return IpcInput::open(path)
            .map(|i| Opened::Columnar(Box::new(i), InputFormat::Arrow))
            .map_err(Error::failure);
    }
    let (reader, regular): (Box<dyn Read + Send>, Option<File>) = if path == "-" {
        (Box::new(std::io::stdin()), None)
    } else {
        let file =
            File::open(path).map_err(|e| Error::failure(format!("cannot open {path}: {e}")))?;
        if file.metadata().is_ok_and(|m| m.is_file()) {
            let clone = file
                .try_clone()
                .map_err(|e| Error::failure(format!("cannot open {path}: {e}")))?;
            (Box::new(file), Some(clone))
        } else {
            (Box::new(file), None)
        }
    };
    let mut reader = reader;
    let mut head = [0u8; 8];
    let n = read_head(&mut reader, &mut head)
        .map_err(|e| Error::failure(format!("cannot read {name}: {e}")))?;
    let format = match format {
        InputFormat::Auto => sniff(name, &head[..n])?,
        f => f,
    };
    if format == InputFormat::Arrow {
        // Sniffed on a stream: hand the bytes read back to the IPC reader through a pipe
        // of our own would cost a thread; reopen instead when the input is a regular file.
        if regular.is_some() {
            return IpcInput::open(path)
                .map(|i| Opened::Columnar(Box::new(i), InputFormat::Arrow))
                .map_err(Error::failure);
        }
        let chained: Box<dyn Read + Send> =
            Box::new(std::io::Cursor::new(head[..n].to_vec()).chain(reader));
        return IpcInput::from_reader(name, chained)
            .map(|i| Opened::Columnar(Box::new(i), InputFormat::Arrow))
            .map_err(Error::failure);
    }
    let chained: Box<dyn Read + Send> =
        Box::new(std::io::Cursor::new(head[..n].to_vec()).chain(reader));
    match format {
        InputFormat::Parquet => {
            let input = match regular {
                Some(file) => ParquetInput::open_file(name, file, batch_rows)?,
                None => {
                    let bytes = bounded_read::read_stream(chained, PARQUET_PIPE)
                        .map_err(|e| Error::failure(format!("cannot read {name}: {e}")))?;
                    ParquetInput::open_bytes(name, bytes, batch_rows)?
                }
            };
            Ok(Opened::Columnar(Box::new(input), InputFormat::Parquet))
        }
        InputFormat::Ndjson => Ok(Opened::Ndjson(LineInput::new(
            name,
            Box::new(BufReader::with_capacity(1 << 16, chained)),
        ))),
        _ => Ok(Opened::Lines(LineInput::new(
            name,
            Box::new(BufReader::with_capacity(1 << 16, chained)),
        ))),
    }
}

/// A Parquet input, batch by batch, in the library layout.
pub struct ParquetInput {
    name: String,
    schema: SchemaRef,
    reader: ParquetRecordBatchReader,
    failed: bool,
}

fn parquet_error(name: &str, e: impl std::fmt::Display) -> Error {
    Error::failure(format!("cannot read {name} as Parquet: {e}"))
}

impl ParquetInput {
    fn open_file(name: &str, file: File, batch_rows: usize) -> Result<Self> {
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_error(name, e))?;
        Self::build(name, builder, batch_rows)
    }

    fn open_bytes(name: &str, bytes: Vec<u8>, batch_rows: usize) -> Result<Self> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .map_err(|e| parquet_error(name, e))?;
        Self::build(name, builder, batch_rows)
    }

    fn build<T: parquet::file::reader::ChunkReader + 'static>(
        name: &str,
        builder: ParquetRecordBatchReaderBuilder<T>,
        batch_rows: usize,
    ) -> Result<Self> {
        let schema = Arc::new(library_schema(builder.schema()));
        let reader = builder
            .with_batch_size(batch_rows.max(1))
            .build()
            .map_err(|e| parquet_error(name, e))?;
        Ok(ParquetInput {
            name: name.to_owned(),
            schema,
            reader,
            failed: false,
        })
    }
}

impl BatchReader for ParquetInput {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn next_batch(&mut self) -> Option<std::result::Result<RecordBatch, String>> {
        if self.failed {
            return None;
        }
        let name = &self.name;
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.reader.next()))
            .unwrap_or_else(|_| {
                Some(Err(arrow_schema::ArrowError::ParquetError(
                    "malformed Parquet data".into(),
                )))
            });
        let next = next.map(|r| {
            r.map_err(|e| format!("cannot read {name} as Parquet: {e}"))
                .and_then(|b| to_library(&b).map_err(|e| format!("{name}: {e}")))
        });
        if matches!(next, Some(Err(_))) {
            self.failed = true;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_inputs_are_sniffed_and_json_text_is_refused_not_guessed() {
        assert_eq!(sniff("x", b"PAR1abcd").unwrap(), InputFormat::Parquet);
        assert_eq!(sniff("x", b"ARROW1\0\0").unwrap(), InputFormat::Arrow);
        assert_eq!(
            sniff("x", &[0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0]).unwrap(),
            InputFormat::Arrow
        );
        assert_eq!(sniff("x", b"k1:v1\n").unwrap(), InputFormat::Lines);
        assert_eq!(sniff("x", b"").unwrap(), InputFormat::Lines);
        let e = sniff("stdin", b"  {\"a\":1}").unwrap_err();
        assert_eq!(e.kind, crate::ops::ErrorKind::Usage);
        assert!(e.message.contains("--format ndjson"), "{}", e.message);
    }

    #[test]
    fn extensions_name_formats() {
        assert_eq!(format_of_extension("o.arrows"), Some(InputFormat::Arrow));
        assert_eq!(format_of_extension("o.PARQUET"), Some(InputFormat::Parquet));
        assert_eq!(format_of_extension("o.jsonl"), Some(InputFormat::Ndjson));
        assert_eq!(format_of_extension("o.json"), None);
    }

    #[test]
    fn lines_keep_carriage_returns_and_a_last_line_without_newline() {
        let mut input = LineInput::new("t", Box::new(std::io::Cursor::new(b"a\r\n\nb".to_vec())));
        assert_eq!(input.next_line().unwrap(), Some(b"a\r".to_vec()));
        assert_eq!(input.next_line().unwrap(), Some(Vec::new()));
        assert_eq!(input.next_line().unwrap(), Some(b"b".to_vec()));
        assert_eq!(input.next_line().unwrap(), None);
        assert_eq!(input.line, 3);
    }
}
