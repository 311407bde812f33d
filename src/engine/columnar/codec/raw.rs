//! The two simplest row codecs: raw bytes (one Binary column `value`) and UTF-8
//! text (one Utf8 column `value`). A tombstone is a null cell.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::{Array, BinaryArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field};

use crate::engine::columnar::codec::{CodecError, PayloadColumns, RowEncoder, ValueDecoder};

/// The single payload column of the row codecs and of scalar rows.
pub const VALUE_COLUMN: &str = "value";

/// Raw bytes → Binary `value`.
#[derive(Debug, Default)]
pub struct RawDecoder {
    builder: BinaryBuilder,
}

impl ValueDecoder for RawDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        self.builder.append_option(value);
        Ok(1)
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        let field = Arc::new(Field::new(VALUE_COLUMN, DataType::Binary, true));
        Ok(vec![(field, Arc::new(self.builder.finish()))])
    }

    fn reset(&mut self) {
        self.builder = BinaryBuilder::new();
    }
}

/// UTF-8 text → Utf8 `value`; invalid UTF-8 is a decode error.
#[derive(Debug, Default)]
pub struct StringDecoder {
    builder: StringBuilder,
}

impl ValueDecoder for StringDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        match value {
            None => self.builder.append_null(),
            Some(bytes) => {
                let text = std::str::from_utf8(bytes)
                    .map_err(|e| CodecError::invalid(format!("value is not valid UTF-8: {e}")))?;
                self.builder.append_value(text);
            }
        }
        Ok(1)
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        let field = Arc::new(Field::new(VALUE_COLUMN, DataType::Utf8, true));
        Ok(vec![(field, Arc::new(self.builder.finish()))])
    }

    fn reset(&mut self) {
        self.builder = StringBuilder::new();
    }
}

/// Writes the `value` column back: Binary as is, Utf8 as its bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct ValueColumnEncoder;

impl RowEncoder for ValueColumnEncoder {
    fn encode_row(&self, batch: &RecordBatch, row: usize) -> Result<Option<Vec<u8>>, CodecError> {
        let column = batch.column_by_name(VALUE_COLUMN).ok_or_else(|| {
            CodecError::invalid(format!("Arrow batch has no column {VALUE_COLUMN}"))
        })?;
        if column.is_null(row) {
            return Ok(None);
        }
        if let Some(a) = column.as_any().downcast_ref::<BinaryArray>() {
            return Ok(Some(a.value(row).to_vec()));
        }
        if let Some(a) = column.as_any().downcast_ref::<StringArray>() {
            return Ok(Some(a.value(row).as_bytes().to_vec()));
        }
        Err(CodecError::invalid(format!(
            "column {VALUE_COLUMN} is {}, not Binary or Utf8",
            column.data_type()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_a_decode_error_and_tombstones_are_null() {
        let mut d = StringDecoder::default();
        assert!(d.append(Some(b"\xff")).is_err());
        d.reset();
        d.append(Some(b"a")).unwrap();
        d.append(None).unwrap();
        let cols = d.finish().unwrap();
        assert_eq!(cols[0].1.len(), 2);
        assert!(cols[0].1.is_null(1));
    }
}
