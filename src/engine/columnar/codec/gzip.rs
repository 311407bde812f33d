//! The gzip wrapper codec (formats §6): each value is the gzip of the inner
//! codec's value. Decompression reads at most the ceiling + 1 bytes, so a
//! decompression bomb costs at most the ceiling in memory.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use crate::engine::columnar::codec::{CodecError, PayloadColumns, ValueDecoder};

/// `DefaultMaxUncompressedBytes`: 16 MiB.
pub const DEFAULT_MAX_UNCOMPRESSED_BYTES: usize = 16 * 1024 * 1024;

/// Checks a ceiling: 1 ≤ n < max int.
pub fn check_ceiling(n: i64) -> Result<usize, CodecError> {
    if n < 1 || n >= i64::from(i32::MAX) {
        return Err(CodecError::invalid(format!(
            "maxUncompressedBytes must be between 1 and {}",
            i32::MAX - 1
        )));
    }
    Ok(n as usize)
}

/// Decompresses one value, refusing more than `max` bytes of output.
pub fn decompress(bytes: &[u8], max: usize) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    GzDecoder::new(bytes)
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| CodecError::invalid(format!("cannot decompress GZIP record: {e}")))?;
    if out.len() > max {
        return Err(CodecError::invalid(format!(
            "GZIP record exceeds maxUncompressedBytes={max}"
        )));
    }
    Ok(out)
}

/// Compresses at the default level with no file name and no mtime.
pub fn compress(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(
        Vec::with_capacity(bytes.len() / 2 + 32),
        Compression::default(),
    );
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

/// Decompresses each value, then hands it to the inner decoder.
pub struct GzipDecoder {
    inner: Box<dyn ValueDecoder>,
    max: usize,
}

impl GzipDecoder {
    pub fn new(inner: Box<dyn ValueDecoder>, max: usize) -> Self {
        GzipDecoder { inner, max }
    }
}

impl ValueDecoder for GzipDecoder {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        match value {
            None => self.inner.append(None),
            Some(bytes) => {
                let plain = decompress(bytes, self.max)?;
                self.inner.append(Some(&plain))
            }
        }
    }

    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        self.inner.finish()
    }

    fn reset(&mut self) {
        self.inner.reset()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_enforced_and_garbage_is_named() {
        let z = compress(b"hello");
        assert_eq!(decompress(&z, 5).unwrap(), b"hello");
        assert_eq!(
            decompress(&z, 4).unwrap_err().to_string(),
            "GZIP record exceeds maxUncompressedBytes=4"
        );
        assert!(
            decompress(b"nope", 10)
                .unwrap_err()
                .to_string()
                .starts_with("cannot decompress GZIP record: ")
        );
        assert!(check_ceiling(0).is_err());
        assert!(check_ceiling(i64::from(i32::MAX)).is_err());
    }
}
