//! A strict big-endian cursor shared by the frozen codecs.
//!
//! Every read returns `None` when the buffer runs out, so each codec can map a
//! short buffer to its own frozen error string; nothing here can panic.

#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

macro_rules! read_be {
    ($name:ident, $ty:ty) => {
        pub(crate) fn $name(&mut self) -> Option<$ty> {
            const N: usize = std::mem::size_of::<$ty>();
            let bytes = self.take(N)?;
            let mut arr = [0u8; N];
            arr.copy_from_slice(bytes);
            Some(<$ty>::from_be_bytes(arr))
        }
    };
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Takes `n` bytes, or `None` (consuming nothing) when fewer remain.
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.remaining() {
            return None;
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Some(out)
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let out = &self.buf[self.pos..];
        self.pos = self.buf.len();
        out
    }

    read_be!(u8, u8);
    read_be!(i8, i8);
    read_be!(i16, i16);
    read_be!(u16, u16);
    read_be!(i32, i32);
    read_be!(u32, u32);
    read_be!(i64, i64);
    read_be!(u64, u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_reads_consume_nothing() {
        let mut r = Reader::new(&[0, 1, 2]);
        assert_eq!(r.i32(), None);
        assert_eq!(r.i16(), Some(1));
        assert_eq!(r.remaining(), 1);
        assert_eq!(r.take(2), None);
        assert_eq!(r.u8(), Some(2));
        assert!(r.is_empty());
    }
}
