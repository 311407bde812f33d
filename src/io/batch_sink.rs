//! Where decoded batches go: an Arrow IPC stream or file, Parquet (zstd, row-group
//! size, rotation by rows or bytes, timestamps never in nanoseconds) or NDJSON, on
//! stdout or in a file published atomically when the sink is finished. The first
//! batch fixes the schema of a binary output; a later batch with another schema is
//! refused (one stream or file holds one schema).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{Compression, Type as PhysicalType, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::engine::columnar::json_values::batch_to_json_lines;
use crate::engine::columnar::parallel::default_threads;
use crate::io::atomic_file::OutputFile;
use crate::io::parquet_columns::ParquetColumnsWriter;

/// The one output data-format type: what `tail`, `barrier list --format` and the demo write
/// batches as, all through [`BatchSink`]. The table preview is a
/// rendering, not a data format (`cmd::tail`); reading a format is another concept (the
/// readers of `io::arrow_files`, `produce`'s input), kept apart. Its clap side is in `cmd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    /// Arrow IPC stream (`application/vnd.apache.arrow.stream`, `.arrows`).
    ArrowStream,
    /// Arrow IPC file (`.arrow`).
    ArrowFile,
    /// Parquet with tail's writer settings (zstd, µs timestamps).
    Parquet,
    /// One JSON object per line.
    Ndjson,
}

impl DataFormat {
    /// How reports name the format.
    pub fn label(self) -> &'static str {
        match self {
            DataFormat::ArrowStream => "Arrow IPC stream",
            DataFormat::ArrowFile => "Arrow IPC file",
            DataFormat::Parquet => "Parquet",
            DataFormat::Ndjson => "NDJSON",
        }
    }
}

/// Why a sink failed.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// The reader of stdout went away: stop quietly.
    #[error("the output was closed")]
    Closed,
    #[error("{0}")]
    Failed(String),
}

impl From<io::Error> for SinkError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            SinkError::Closed
        } else {
            SinkError::Failed(e.to_string())
        }
    }
}

fn arrow_err(e: impl std::fmt::Display) -> SinkError {
    let text = e.to_string();
    if text.contains("Broken pipe") {
        SinkError::Closed
    } else {
        SinkError::Failed(text)
    }
}

/// File descriptor 1 written directly. `io::Stdout` is line-buffered: it scans
/// every write for the last newline and writes up to it at once, which on binary
/// output (Arrow IPC, Parquet) means a scan of every byte and writes split at random
/// `\n` bytes. The sink buffers itself and flushes once per batch instead.
pub struct RawStdout(std::mem::ManuallyDrop<std::fs::File>);

impl RawStdout {
    fn new() -> io::Result<RawStdout> {
        // Whatever the process printed through `io::Stdout` goes out first.
        io::stdout().flush()?;
        // SAFETY: fd 1 stays open for the process's life; ManuallyDrop never closes it.
        Ok(RawStdout(std::mem::ManuallyDrop::new(unsafe {
            <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(1)
        })))
    }
}

impl Write for RawStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write(buf) {
            // A closed stdout swallows output, as `io::Stdout` does.
            Err(e) if e.raw_os_error() == Some(libc::EBADF) => Ok(buf.len()),
            other => other,
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where bytes go: stdout or an output file (`io::atomic_file`: a regular file is
/// published atomically, a device or descriptor written in place).
pub enum Target {
    Stdout(io::BufWriter<RawStdout>),
    File(OutputFile),
}

impl Target {
    fn open(path: Option<&Path>) -> Result<Target, SinkError> {
        match path {
            None => Ok(Target::Stdout(io::BufWriter::with_capacity(
                128 << 10,
                RawStdout::new()?,
            ))),
            Some(p) => OutputFile::create(p)
                .map(Target::File)
                .map_err(|e| SinkError::Failed(format!("cannot create {}: {e}", p.display()))),
        }
    }

    fn commit(self) -> Result<Option<PathBuf>, SinkError> {
        match self {
            Target::Stdout(mut s) => {
                s.flush()?;
                Ok(None)
            }
            Target::File(f) => {
                let path = f.path().to_path_buf();
                f.commit()
                    .map(Some)
                    .map_err(|e| SinkError::Failed(format!("cannot write {}: {e}", path.display())))
            }
        }
    }
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Target::Stdout(s) => s.write(buf),
            Target::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Target::Stdout(s) => s.flush(),
            Target::File(f) => f.flush(),
        }
    }
}

/// Options of a data sink.
#[derive(Debug, Clone)]
pub struct SinkOptions {
    pub format: DataFormat,
    /// `None` = stdout.
    pub path: Option<PathBuf>,
    pub row_group_size: usize,
    pub rotate_rows: Option<u64>,
    pub rotate_bytes: Option<u64>,
}

enum Writer {
    Stream(StreamWriter<Target>),
    File(FileWriter<Target>),
    Parquet(ParquetColumnsWriter<Target>),
    Ndjson(Target),
}

/// A data sink (all formats but the table preview).
pub struct BatchSink {
    opts: SinkOptions,
    schema: Option<SchemaRef>,
    writer: Option<Writer>,
    /// Rows and bytes in the current (rotated) file.
    rows_in_file: u64,
    /// Approximate bytes in the current file for formats that do not report them.
    approx_bytes: u64,
    parquet_schema: Option<SchemaRef>,
    files: Vec<PathBuf>,
    file_index: usize,
    /// Threads a Parquet row group's columns are encoded on.
    threads: usize,
}

/// `out.parquet`, index 3 → `out-000003.parquet`.
pub fn rotated_path(path: &Path, index: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{index:06}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{index:06}"),
    };
    path.with_file_name(name)
}

/// The Parquet writer settings of `tail` (also what `benches/tail.rs` measures) for a
/// file of `schema` (as written, see [`parquet_schema`]): zstd level 1, row groups of
/// `row_group_rows` rows.
///
/// Min/max statistics stay on for fixed-width columns (offsets, partitions, timestamps,
/// numbers: what readers prune row groups and pages by) and are off for variable-length
/// byte columns (keys, values, strings): there they cost a byte comparison per value
/// (~10 % of the writer's time on the bench's orders) and high-cardinality keys and
/// payloads rarely let a reader skip anything.
pub fn parquet_properties(schema: &Schema, row_group_rows: usize) -> WriterProperties {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        // Dictionary pages cost more write time than zstd saves on Kafka data.
        .set_dictionary_enabled(false)
        .set_max_row_group_row_count(Some(row_group_rows.max(1)));
    // A schema the converter refuses is refused again, with its message, by the writer.
    if let Ok(descr) = ArrowSchemaConverter::new().convert(schema) {
        for column in descr.columns() {
            if column.physical_type() == PhysicalType::BYTE_ARRAY {
                builder = builder
                    .set_column_statistics_enabled(column.path().clone(), EnabledStatistics::None);
            }
        }
    }
    builder.build()
}

/// Default Parquet row-group size in rows (bounded memory: one row group is buffered).
pub const DEFAULT_ROW_GROUP_ROWS: usize = 128 * 1024;

/// A Parquet writer with tail's settings for batches of `schema`, and the schema it
/// writes ([`parquet_schema`]; pass each batch through [`to_parquet_batch`]). Every
/// Parquet output (`tail`, `barrier list`) is opened here so they read back alike.
pub(crate) fn parquet_writer<W: Write + Send>(
    out: W,
    schema: &Schema,
    row_group_rows: usize,
) -> parquet::errors::Result<(ArrowWriter<W>, SchemaRef)> {
    // arrow-rs panics (`not implemented: See ARROW-8817`) on a union: refuse first.
    check_parquet_schema(schema).map_err(parquet::errors::ParquetError::General)?;
    let written = Arc::new(parquet_schema(schema));
    let properties = parquet_properties(&written, row_group_rows);
    let writer = ArrowWriter::try_new(out, written.clone(), Some(properties))?;
    Ok((writer, written))
}

/// Refuses a schema with a column Parquet cannot hold (a union, at any depth: the
/// Parquet format has no union type), naming the column, before anything is written.
pub fn check_parquet_schema(schema: &Schema) -> Result<(), String> {
    fn find(data_type: &DataType, path: &str) -> Option<String> {
        match data_type {
            DataType::Union(..) => Some(path.to_owned()),
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _)
            | DataType::Map(f, _) => find(f.data_type(), &format!("{path}.{}", f.name())),
            DataType::Struct(fields) => fields
                .iter()
                .find_map(|f| find(f.data_type(), &format!("{path}.{}", f.name()))),
            DataType::Dictionary(_, value) => find(value, path),
            DataType::RunEndEncoded(_, values) => find(values.data_type(), path),
            _ => None,
        }
    }
    for field in schema.fields() {
        if let Some(path) = find(field.data_type(), field.name()) {
            return Err(format!(
                "column `{path}` is an Arrow union, which Parquet cannot hold; write an Arrow IPC output (.arrows/.arrow) or select other columns"
            ));
        }
    }
    Ok(())
}

/// Every Parquet timestamp is in microseconds (TIMESTAMP_MICROS): the unit Spark,
/// Athena, BigQuery and DuckDB all read natively, and one unit for every file we
/// write. Seconds and milliseconds widen exactly; nanoseconds are cut to µs (Parquet
/// readers that take ns are rare). Nanosecond times of day become µs too.
fn parquet_schema(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Timestamp(unit, tz) if *unit != TimeUnit::Microsecond => f
                .as_ref()
                .clone()
                .with_data_type(DataType::Timestamp(TimeUnit::Microsecond, tz.clone())),
            DataType::Time64(TimeUnit::Nanosecond) => f
                .as_ref()
                .clone()
                .with_data_type(DataType::Time64(TimeUnit::Microsecond)),
            _ => f.as_ref().clone(),
        })
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

pub(crate) fn to_parquet_batch(
    batch: &RecordBatch,
    target: &SchemaRef,
) -> Result<RecordBatch, SinkError> {
    if batch.schema().as_ref() == target.as_ref() {
        return Ok(batch.clone());
    }
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                // Not `safe`: a value out of the µs range is an error, never a null.
                let options = arrow_cast::CastOptions {
                    safe: false,
                    ..Default::default()
                };
                arrow_cast::cast_with_options(c, f.data_type(), &options)
                    .map_err(|e| SinkError::Failed(format!("column {}: {e}", f.name())))
            }
        })
        .collect::<Result<_, _>>()?;
    RecordBatch::try_new(target.clone(), columns).map_err(arrow_err)
}

impl BatchSink {
    pub fn new(opts: SinkOptions) -> Self {
        BatchSink {
            opts,
            schema: None,
            writer: None,
            rows_in_file: 0,
            approx_bytes: 0,
            parquet_schema: None,
            files: Vec::new(),
            file_index: 0,
            threads: default_threads(),
        }
    }

    /// Encodes Parquet columns on up to `threads` threads (default: the
    /// available cores); the file is the same at every count.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    fn rotating(&self) -> bool {
        self.opts.path.is_some()
            && (self.opts.rotate_rows.is_some() || self.opts.rotate_bytes.is_some())
    }

    fn open(&mut self, schema: &SchemaRef) -> Result<(), SinkError> {
        let path = match &self.opts.path {
            Some(p) if self.rotating() => Some(rotated_path(p, self.file_index)),
            other => other.clone(),
        };
        self.file_index += 1;
        self.rows_in_file = 0;
        self.approx_bytes = 0;
        let target = Target::open(path.as_deref())?;
        self.writer = Some(match self.opts.format {
            DataFormat::ArrowStream => {
                Writer::Stream(StreamWriter::try_new(target, schema).map_err(arrow_err)?)
            }
            DataFormat::ArrowFile => {
                Writer::File(FileWriter::try_new(target, schema).map_err(arrow_err)?)
            }
            DataFormat::Parquet => {
                let (writer, written) =
                    parquet_writer(target, schema, self.opts.row_group_size).map_err(arrow_err)?;
                let writer = ParquetColumnsWriter::new(
                    writer,
                    written.clone(),
                    self.opts.row_group_size,
                    self.threads,
                )
                .map_err(arrow_err)?;
                self.parquet_schema = Some(written);
                Writer::Parquet(writer)
            }
            DataFormat::Ndjson => Writer::Ndjson(target),
        });
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), SinkError> {
        let Some(w) = self.writer.take() else {
            return Ok(());
        };
        let target = match w {
            Writer::Stream(mut w) => {
                w.finish().map_err(arrow_err)?;
                w.into_inner().map_err(arrow_err)?
            }
            Writer::File(mut w) => {
                w.finish().map_err(arrow_err)?;
                w.into_inner().map_err(arrow_err)?
            }
            Writer::Parquet(w) => w.into_inner().map_err(arrow_err)?,
            Writer::Ndjson(t) => t,
        };
        if let Some(p) = target.commit()? {
            self.files.push(p);
        }
        Ok(())
    }

    /// The file being written (the latest rotated one), if any.
    fn current_path(&self) -> Option<PathBuf> {
        let p = self.opts.path.as_ref()?;
        Some(if self.rotating() {
            rotated_path(p, self.file_index.saturating_sub(1))
        } else {
            p.clone()
        })
    }

    /// A failure names the file it happened to (a full disk, a device that refused a
    /// write), unless the message already does.
    fn naming_file(&self, e: SinkError) -> SinkError {
        match (e, self.current_path()) {
            (SinkError::Failed(m), Some(p)) if !m.contains(&p.display().to_string()) => {
                SinkError::Failed(format!("write {}: {m}", p.display()))
            }
            (e, _) => e,
        }
    }

    /// Writes one batch; the first fixes the schema.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        self.write_batch(batch).map_err(|e| self.naming_file(e))
    }

    fn write_batch(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        match &self.schema {
            None => self.schema = Some(batch.schema()),
            Some(s)
                if self.opts.format != DataFormat::Ndjson
                    && s.as_ref() != batch.schema().as_ref() =>
            {
                return Err(SinkError::Failed(format!(
                    "a batch has another Arrow schema than the first one written ({} vs {} columns); one output holds one schema: tail such topics separately or use --format ndjson",
                    batch.num_columns(),
                    s.fields().len()
                )));
            }
            Some(_) => {}
        }
        if self.writer.is_none() {
            let schema = batch.schema();
            self.open(&schema)?;
        }
        match self.writer.as_mut().expect("opened above") {
            Writer::Stream(w) => {
                w.write(batch).map_err(arrow_err)?;
                w.flush().map_err(arrow_err)?;
            }
            Writer::File(w) => w.write(batch).map_err(arrow_err)?,
            Writer::Parquet(w) => {
                let target = self.parquet_schema.clone().expect("set when opened");
                w.write(&to_parquet_batch(batch, &target)?)
                    .map_err(arrow_err)?;
            }
            Writer::Ndjson(t) => {
                let lines = batch_to_json_lines(batch).map_err(SinkError::Failed)?;
                for line in lines {
                    t.write_all(line.as_bytes())?;
                    t.write_all(b"\n")?;
                }
                t.flush()?;
            }
        }
        self.rows_in_file += batch.num_rows() as u64;
        self.approx_bytes += batch.get_array_memory_size() as u64;
        let over_rows = self
            .opts
            .rotate_rows
            .is_some_and(|n| self.rows_in_file >= n);
        let over_bytes = self
            .opts
            .rotate_bytes
            .is_some_and(|n| self.bytes_in_file() >= n);
        if self.rotating() && (over_rows || over_bytes) {
            self.close_current()?;
        }
        Ok(())
    }

    fn bytes_in_file(&self) -> u64 {
        match &self.writer {
            Some(Writer::Parquet(w)) => (w.bytes_written() + w.in_progress_size()) as u64,
            _ => self.approx_bytes,
        }
    }

    /// Closes the output properly (footer, end-of-stream) and publishes the file(s).
    /// With no batch at all, `fallback` gives the schema of an empty output.
    pub fn finish(mut self, fallback: &SchemaRef) -> Result<Vec<PathBuf>, SinkError> {
        match self.finish_files(fallback) {
            Ok(()) => Ok(self.files),
            Err(e) => Err(self.naming_file(e)),
        }
    }

    fn finish_files(&mut self, fallback: &SchemaRef) -> Result<(), SinkError> {
        if self.writer.is_none() && self.files.is_empty() && self.opts.format != DataFormat::Ndjson
        {
            let schema = self.schema.clone().unwrap_or_else(|| fallback.clone());
            self.open(&schema)?;
        }
        if self.writer.is_none() && self.files.is_empty() && self.opts.path.is_some() {
            self.open(fallback)?;
        }
        self.close_current()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::TimestampNanosecondArray;

    fn nanos_batch() -> RecordBatch {
        let schema = Schema::new(vec![Field::new(
            "t",
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            true,
        )]);
        let a = TimestampNanosecondArray::from(vec![1_500_000_000i64]).with_timezone("UTC");
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(a)]).unwrap()
    }

    #[test]
    fn parquet_never_stores_nanoseconds_and_arrow_files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut sink = BatchSink::new(SinkOptions {
            format: DataFormat::Parquet,
            path: Some(path.clone()),
            row_group_size: 10,
            rotate_rows: None,
            rotate_bytes: None,
        });
        sink.write(&nanos_batch()).unwrap();
        assert!(!path.exists(), "published only when finished");
        let files = sink.finish(&nanos_batch().schema()).unwrap();
        assert_eq!(files, vec![path.clone()]);
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(&path).unwrap(),
        )
        .unwrap();
        assert_eq!(
            reader.schema().field(0).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );

        let path = dir.path().join("t.arrow");
        let mut sink = BatchSink::new(SinkOptions {
            format: DataFormat::ArrowFile,
            path: Some(path.clone()),
            row_group_size: 10,
            rotate_rows: None,
            rotate_bytes: None,
        });
        sink.write(&nanos_batch()).unwrap();
        sink.finish(&nanos_batch().schema()).unwrap();
        let (schema, batches) =
            crate::engine::columnar::ipc::read_batches(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(schema, nanos_batch().schema());
        assert_eq!(batches[0].num_rows(), 1);
    }

    #[test]
    fn parquet_timestamps_of_every_unit_are_stored_as_timestamp_micros() {
        use parquet::basic::{LogicalType, TimeUnit as PqUnit};
        let schema = Arc::new(Schema::new(vec![
            Field::new("s", DataType::Timestamp(TimeUnit::Second, None), true),
            Field::new(
                "ms",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow_array::TimestampSecondArray::from(vec![7])),
                Arc::new(
                    arrow_array::TimestampMillisecondArray::from(vec![1_732_870_800_123])
                        .with_timezone("UTC"),
                ),
            ],
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let mut sink = BatchSink::new(SinkOptions {
            format: DataFormat::Parquet,
            path: Some(path.clone()),
            row_group_size: 10,
            rotate_rows: None,
            rotate_bytes: None,
        });
        sink.write(&batch).unwrap();
        sink.finish(&schema).unwrap();
        let reader = parquet::file::serialized_reader::SerializedFileReader::new(
            std::fs::File::open(&path).unwrap(),
        )
        .unwrap();
        let meta = parquet::file::reader::FileReader::metadata(&reader);
        for column in meta.file_metadata().schema_descr().columns() {
            assert!(
                matches!(
                    column.logical_type_ref(),
                    Some(LogicalType::Timestamp(t)) if t.unit == PqUnit::MICROS
                ),
                "{}: {:?}",
                column.name(),
                column.logical_type_ref()
            );
        }
        let back: Vec<RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
                bytes::Bytes::from(std::fs::read(&path).unwrap()),
                10,
            )
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let ms = back[0]
            .column(1)
            .as_any()
            .downcast_ref::<arrow_array::TimestampMicrosecondArray>()
            .unwrap();
        assert_eq!(ms.value(0), 1_732_870_800_123_000, "widened exactly");
    }

    #[test]
    fn a_second_schema_is_refused_for_binary_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = BatchSink::new(SinkOptions {
            format: DataFormat::ArrowStream,
            path: Some(dir.path().join("x.arrows")),
            row_group_size: 10,
            rotate_rows: None,
            rotate_bytes: None,
        });
        sink.write(&nanos_batch()).unwrap();
        let other = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)])),
            vec![Arc::new(arrow_array::Int64Array::from(vec![1]))],
        )
        .unwrap();
        assert!(matches!(sink.write(&other), Err(SinkError::Failed(_))));
    }

    #[test]
    fn parquet_keeps_min_max_on_fixed_width_columns_and_drops_them_on_byte_columns() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("__offset", DataType::Int64, false),
            Field::new("value", DataType::Binary, true),
            Field::new(
                "address",
                DataType::Struct(vec![Field::new("city", DataType::Utf8, true)].into()),
                true,
            ),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![7, 3])),
                Arc::new(arrow_array::BinaryArray::from(vec![
                    b"b".as_ref(),
                    b"a".as_ref(),
                ])),
                Arc::new(arrow_array::StructArray::from(vec![(
                    Arc::new(Field::new("city", DataType::Utf8, true)),
                    Arc::new(arrow_array::StringArray::from(vec!["Oslo", "Rome"])) as ArrayRef,
                )])),
            ],
        )
        .unwrap();
        let mut w = ArrowWriter::try_new(
            Vec::new(),
            schema.clone(),
            Some(parquet_properties(&schema, 10)),
        )
        .unwrap();
        w.write(&batch).unwrap();
        let bytes = bytes::Bytes::from(w.into_inner().unwrap());
        let reader =
            parquet::file::serialized_reader::SerializedFileReader::new(bytes.clone()).unwrap();
        let meta = parquet::file::reader::FileReader::metadata(&reader)
            .row_group(0)
            .clone();
        let stats = meta.column(0).statistics().expect("offset statistics");
        assert_eq!(stats.min_bytes_opt(), Some(3i64.to_le_bytes().as_ref()));
        assert!(
            meta.column(1)
                .statistics()
                .is_none_or(|s| s.min_bytes_opt().is_none())
        );
        assert!(
            meta.column(2)
                .statistics()
                .is_none_or(|s| s.min_bytes_opt().is_none())
        );
        let back: Vec<RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 10)
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(back, vec![batch]);
    }

    #[test]
    fn rotated_names_keep_the_extension() {
        assert_eq!(
            rotated_path(Path::new("/d/out.parquet"), 3),
            PathBuf::from("/d/out-000003.parquet")
        );
        assert_eq!(
            rotated_path(Path::new("out"), 0),
            PathBuf::from("out-000000")
        );
    }

    /// A list of batches written whole (what `barrier list --out` does; these tests were
    /// `io::batch_file`'s, the second writer the sink replaced).
    mod whole_lists {
        use arrow_array::Int64Array;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        use super::*;
        use crate::engine::columnar::ipc;

        fn batch() -> (SchemaRef, RecordBatch) {
            let schema = Arc::new(Schema::new(vec![Field::new(
                "offset",
                DataType::Int64,
                true,
            )]));
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]))],
            )
            .unwrap();
            (schema, batch)
        }

        fn write(path: &Path, format: DataFormat, schema: &SchemaRef, batch: &RecordBatch) {
            let mut sink = BatchSink::new(SinkOptions {
                format,
                path: Some(path.to_path_buf()),
                row_group_size: DEFAULT_ROW_GROUP_ROWS,
                rotate_rows: None,
                rotate_bytes: None,
            });
            sink.write(batch).unwrap();
            sink.finish(schema).unwrap();
        }

        #[test]
        fn arrow_stream_and_file_outputs_read_back_identically() {
            let (schema, batch) = batch();
            let dir = tempfile::tempdir().unwrap();
            for format in [DataFormat::ArrowStream, DataFormat::ArrowFile] {
                let path = dir.path().join(format.label());
                write(&path, format, &schema, &batch);
                let bytes = std::fs::read(&path).unwrap();
                let (read_schema, read) = ipc::read_batches(&bytes).unwrap();
                assert_eq!(read_schema, schema);
                assert_eq!(read, vec![batch.clone()]);
            }
        }

        #[test]
        fn parquet_output_goes_to_the_file_atomically_and_reads_back() {
            let (schema, batch) = batch();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("cuts.parquet");
            write(&path, DataFormat::Parquet, &schema, &batch);
            let file = std::fs::File::open(&path).unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .build()
                .unwrap();
            let read: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
            assert_eq!(read, vec![batch]);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }
}
