//! Writing a list of record batches as data output (`--format arrow|arrow-file|parquet --out PATH`)
//! in the one output-format type, `io::batch_sink::DataFormat`:
//! the Arrow IPC stream format (`.arrows`), the IPC file format (`.arrow`), or Parquet
//! (tail's settings: `batch_sink::parquet_writer`). A file is written atomically through a temp file in its directory, so a
//! failed write never leaves a half-written output; `-` writes to stdout.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use crate::engine::columnar::json_values::batch_to_json_lines;
use crate::io::atomic_file::write_streamed;
use crate::io::batch_sink::{DEFAULT_ROW_GROUP_ROWS, DataFormat, parquet_writer, to_parquet_batch};
use arrow_array::RecordBatch;
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::SchemaRef;

/// Where data output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
}

impl Destination {
    /// `-` is stdout, anything else a file path.
    pub fn parse(text: &str) -> Self {
        if text == "-" {
            Destination::Stdout
        } else {
            Destination::File(PathBuf::from(text))
        }
    }
}

/// Writes `batches` (all of `schema`) to `destination` in `format`.
pub fn write_batches(
    destination: &Destination,
    format: DataFormat,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> io::Result<()> {
    match destination {
        Destination::Stdout => {
            let mut out = BufWriter::new(io::stdout());
            encode(&mut out, format, schema, batches)?;
            out.flush()
        }
        Destination::File(path) => write_streamed(path, |out| {
            encode(out, format, schema, batches)?;
            out.flush()
        }),
    }
}

/// Encodes into any writer; the writer is flushed by the caller.
pub fn encode<W: Write + Send>(
    out: &mut W,
    format: DataFormat,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> io::Result<()> {
    match format {
        DataFormat::ArrowStream => {
            let mut writer = StreamWriter::try_new(out, schema).map_err(io::Error::other)?;
            for batch in batches {
                writer.write(batch).map_err(io::Error::other)?;
            }
            writer.finish().map_err(io::Error::other)
        }
        DataFormat::ArrowFile => {
            let mut writer = FileWriter::try_new(out, schema).map_err(io::Error::other)?;
            for batch in batches {
                writer.write(batch).map_err(io::Error::other)?;
            }
            writer.finish().map_err(io::Error::other)
        }
        DataFormat::Parquet => {
            let (mut writer, written) =
                parquet_writer(out, schema, DEFAULT_ROW_GROUP_ROWS).map_err(io::Error::other)?;
            for batch in batches {
                let batch = to_parquet_batch(batch, &written).map_err(io::Error::other)?;
                writer.write(&batch).map_err(io::Error::other)?;
            }
            writer.close().map(|_| ()).map_err(io::Error::other)
        }
        // The lines `io::batch_sink` writes for `tail --format ndjson`.
        DataFormat::Ndjson => {
            for batch in batches {
                for line in batch_to_json_lines(batch).map_err(io::Error::other)? {
                    out.write_all(line.as_bytes())?;
                    out.write_all(b"\n")?;
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};
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

    #[test]
    fn arrow_stream_and_file_outputs_read_back_identically() {
        let (schema, batch) = batch();
        for format in [DataFormat::ArrowStream, DataFormat::ArrowFile] {
            let mut bytes = Vec::new();
            encode(&mut bytes, format, &schema, std::slice::from_ref(&batch)).unwrap();
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
        write_batches(
            &Destination::File(path.clone()),
            DataFormat::Parquet,
            &schema,
            std::slice::from_ref(&batch),
        )
        .unwrap();
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
