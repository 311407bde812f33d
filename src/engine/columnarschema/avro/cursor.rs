//! A strict cursor over Avro binary: zigzag varints, lengths checked against the
//! input, no panics on any input.

/// Why Avro bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(pub String);

pub type DecodeResult<T> = Result<T, DecodeError>;

fn truncated<T>() -> DecodeResult<T> {
    Err(DecodeError("truncated Avro value".into()))
}

pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline(always)]
    pub fn read_long(&mut self) -> DecodeResult<i64> {
        // Most lengths, branch indexes and small numbers fit one byte.
        if let Some(&b) = self.buf.get(self.pos)
            && b & 0x80 == 0
        {
            self.pos += 1;
            return Ok(i64::from(b >> 1) ^ -i64::from(b & 1));
        }
        self.read_long_slow()
    }

    fn read_long_slow(&mut self) -> DecodeResult<i64> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let mut value: u64 = 0;
        // At most 10 bytes (64 bits); iterating the slice avoids a bounds check per byte.
        for (i, &b) in rest.iter().take(10).enumerate() {
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        if rest.len() >= 10 {
            return Err(DecodeError("Avro varint is too long".into()));
        }
        truncated()
    }

    #[inline(always)]
    pub fn read_int(&mut self) -> DecodeResult<i32> {
        let v = self.read_long()?;
        i32::try_from(v).map_err(|_| DecodeError(format!("Avro int out of range: {v}")))
    }

    #[inline]
    pub fn read_bool(&mut self) -> DecodeResult<bool> {
        match self.buf.get(self.pos) {
            Some(0) => {
                self.pos += 1;
                Ok(false)
            }
            Some(1) => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) => Err(DecodeError(format!("invalid Avro boolean byte 0x{b:02x}"))),
            None => truncated(),
        }
    }

    #[inline(always)]
    pub fn read_fixed(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        if self.remaining() < n {
            return truncated();
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline]
    pub fn read_f32(&mut self) -> DecodeResult<f32> {
        let b = self.read_fixed(4)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub fn read_f64(&mut self) -> DecodeResult<f64> {
        let b = self.read_fixed(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }

    #[inline(always)]
    pub fn read_bytes(&mut self) -> DecodeResult<&'a [u8]> {
        let len = self.read_long()?;
        if len < 0 {
            return Err(DecodeError(format!("negative Avro length {len}")));
        }
        self.read_fixed(len as usize)
    }

    #[inline]
    pub fn read_str(&mut self) -> DecodeResult<&'a str> {
        let b = self.read_bytes()?;
        std::str::from_utf8(b).map_err(|_| DecodeError("invalid UTF-8 in Avro string".into()))
    }

    /// The item count of the next array/map block (0 ends); a negative count is
    /// followed by the block's byte size, which is skipped over as a hint.
    pub fn read_block_count(&mut self) -> DecodeResult<usize> {
        let n = self.read_long()?;
        let n = if n < 0 {
            self.read_long()?;
            n.checked_neg()
                .ok_or_else(|| DecodeError("invalid Avro block count".into()))?
        } else {
            n
        };
        usize::try_from(n).map_err(|_| DecodeError("invalid Avro block count".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zigzag(v: i64) -> Vec<u8> {
        let mut u = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            let b = (u & 0x7f) as u8;
            u >>= 7;
            if u == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    #[test]
    fn varints_of_every_length_round_trip_and_overlong_or_cut_ones_are_errors() {
        for v in [
            0,
            -1,
            1,
            63,
            -64,
            64,
            1 << 20,
            1_732_870_800_000,
            i64::MIN,
            i64::MAX,
        ] {
            let bytes = zigzag(v);
            let mut c = Cursor::new(&bytes);
            assert_eq!(c.read_long().unwrap(), v, "{v}");
            assert_eq!(c.remaining(), 0);
            let cut = &bytes[..bytes.len() - 1];
            assert!(Cursor::new(cut).read_long().is_err(), "{v} cut short");
        }
        let overlong = [0xffu8; 11];
        assert_eq!(
            Cursor::new(&overlong).read_long().unwrap_err().0,
            "Avro varint is too long"
        );
        assert_eq!(
            Cursor::new(&[0x80, 0x80]).read_long().unwrap_err().0,
            "truncated Avro value"
        );
        assert_eq!(
            Cursor::new(&[]).read_long().unwrap_err().0,
            "truncated Avro value"
        );
    }
}
