//! Reading exactly one Avro datum from a body with apache-avro.
//!
//! apache-avro's decoder turns an end of input inside a union index, a boolean or a
//! string into a `null` value instead of an error, so a body cut short decodes as a
//! shorter record (issue 20). A datum never needs a byte past its end, so any read
//! that hits the end of the body means the body ended early: the [`Watched`] reader
//! notes it and the read fails whatever apache-avro made of it. Bytes left after the
//! datum fail too.

use std::io::{self, Read};

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;

/// Why a body is not exactly one datum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrictError {
    #[error("the Avro body ends early: {len} bytes do not hold a whole datum")]
    EndsEarly { len: usize },
    #[error("{0} trailing bytes after the Avro datum")]
    Trailing(usize),
    #[error("{0}")]
    Avro(String),
}

/// A slice reader that remembers whether a read asked for more than was left.
struct Watched<'a> {
    rest: &'a [u8],
    short: bool,
}

impl Read for Watched<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !buf.is_empty() && self.rest.is_empty() {
            self.short = true;
        }
        let n = buf.len().min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        if buf.len() > self.rest.len() {
            self.short = true;
            self.rest = &[];
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let (head, tail) = self.rest.split_at(buf.len());
        buf.copy_from_slice(head);
        self.rest = tail;
        Ok(())
    }
}

/// Reads one datum that must fill `body` exactly.
pub fn read_whole_datum(
    reader: &GenericDatumReader<'_>,
    body: &[u8],
) -> Result<Value, StrictError> {
    let mut watched = Watched {
        rest: body,
        short: false,
    };
    let value = reader.read_value(&mut watched);
    if watched.short {
        return Err(StrictError::EndsEarly { len: body.len() });
    }
    let value = value.map_err(|e| StrictError::Avro(e.to_string()))?;
    if !watched.rest.is_empty() {
        return Err(StrictError::Trailing(watched.rest.len()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::Schema;

    /// Every cut of a body apache-avro alone reads as a shorter record is an error.
    #[test]
    fn cuts_inside_unions_booleans_and_strings_end_early() {
        let schema = Schema::parse_str(
            r#"{"type":"record","name":"R","fields":[{"name":"ok","type":"boolean"},
            {"name":"s","type":"string"},{"name":"n","type":["null","string"]}]}"#,
        )
        .unwrap();
        let reader = GenericDatumReader::builder(&schema).build().unwrap();
        // ok=true, s="ab", n="hello"
        let body = hex::decode("0104616202".to_string() + "0a68656c6c6f").unwrap();
        assert!(read_whole_datum(&reader, &body).is_ok());
        for n in 0..body.len() {
            assert_eq!(
                read_whole_datum(&reader, &body[..n]),
                Err(StrictError::EndsEarly { len: n }),
                "cut at {n}"
            );
        }
        let mut long = body.clone();
        long.push(0);
        assert_eq!(
            read_whole_datum(&reader, &long),
            Err(StrictError::Trailing(1))
        );
    }
}
