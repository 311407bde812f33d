//! Every whole-file read of this tool goes through here, under a documented cap:
//! a device (`/dev/zero`), a FIFO that never ends or a sparse 1 TiB file is refused
//! with the file's name and the cap, never read until memory runs out. A file's
//! size is only compared with the cap, never trusted for an allocation: the buffer
//! grows as bytes arrive, and reading stops one byte past the cap.
//!
//! The caps, and the flags that use them (RELIABILITY.md lists them too):
//!
//! | cap | bytes | read by |
//! |---|---|---|
//! | [`CONFIG`] | 1 MiB | `--command-config`, the registry password file, PEM keys |
//! | [`SCHEMA`] | 16 MiB | every schema file (through `io::schema_file`), the `schema prewarm` manifest |
//! | [`SCHEMA_CACHE`] | 256 MiB | `--schema-cache` |
//! | [`RECORD`] | 128 MiB | `schema decode --file`, `barrier decode --key-file` |
//! | [`SNAPSHOT`] | 2 GiB | snapshot containers (`snapshot list/verify/dump`, restores) |
//! | [`DUMP`] | 2 GiB | `snapshot restore --from-json` |
//! | [`REGISTRY_RESPONSE`] | 16 MiB | every schema registry answer (a server streaming without end) |
//! | [`SYSTEM_CA_BUNDLE`] | 16 MiB | the system CA bundle, read when a registry CA bundle adds to it |
//! | [`IPC_FILE_PIPE`] | 1 GiB | an Arrow IPC *file* read from a pipe (read whole: its footer is at the end) |

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// A cap on one kind of read: how many bytes, and what the file is (for the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    pub bytes: u64,
    pub what: &'static str,
}

pub const CONFIG: Cap = Cap {
    bytes: 1 << 20,
    what: "a configuration file",
};
pub const SCHEMA: Cap = Cap {
    bytes: 16 << 20,
    what: "a schema file",
};
pub const SCHEMA_CACHE: Cap = Cap {
    bytes: 256 << 20,
    what: "a schema cache",
};
pub const RECORD: Cap = Cap {
    bytes: 128 << 20,
    what: "a record file",
};
pub const SNAPSHOT: Cap = Cap {
    bytes: 2 << 30,
    what: "a snapshot container",
};
pub const DUMP: Cap = Cap {
    bytes: 2 << 30,
    what: "a lossless snapshot dump",
};
pub const REGISTRY_RESPONSE: Cap = Cap {
    bytes: 16 << 20,
    what: "a schema registry response",
};
pub const SYSTEM_CA_BUNDLE: Cap = Cap {
    bytes: 16 << 20,
    what: "the system CA bundle",
};
pub const IPC_FILE_PIPE: Cap = Cap {
    bytes: 1 << 30,
    what: "an Arrow IPC file read from a pipe (write an IPC stream to pipe more)",
};

/// The buffer reserved up front at most, whatever the file's size says.
const UPFRONT: u64 = 8 << 20;

/// The error inside [`Cap::exceeded`]'s `io::Error`, so that a caller can tell
/// a refusal by the cap from a failed read ([`is_exceeded`]).
#[derive(Debug)]
pub struct Exceeded(Cap);

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "larger than {} ({} bytes), the cap for {}",
            human(self.0.bytes),
            self.0.bytes,
            self.0.what
        )
    }
}

impl std::error::Error for Exceeded {}

impl Cap {
    /// `larger than 1 MiB (1048576 bytes), the cap for a configuration file`.
    pub fn exceeded(&self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, Exceeded(*self))
    }
}

/// Whether `e` is a refusal by a cap rather than a failed read.
pub fn is_exceeded(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Exceeded>())
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b => format!("{b} bytes"),
    }
}

/// Reads all of `reader` (a stream of unknown length) up to `cap`.
pub fn read_stream(reader: impl Read, cap: Cap) -> io::Result<Vec<u8>> {
    read_with_hint(reader, cap, 0)
}

fn read_with_hint(reader: impl Read, cap: Cap, hint: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(hint.min(UPFRONT).min(cap.bytes) as usize);
    reader.take(cap.bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap.bytes {
        return Err(cap.exceeded());
    }
    Ok(bytes)
}

/// Reads the file at `path` (regular or not) up to `cap`; a regular file larger
/// than the cap is refused before any byte is read. The error does not repeat
/// the path: callers name the file.
pub fn read(path: &Path, cap: Cap) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    read_file(file, cap)
}

/// [`read`] of an open file.
pub fn read_file(file: File, cap: Cap) -> io::Result<Vec<u8>> {
    let meta = file.metadata()?;
    let hint = if meta.is_file() {
        if meta.len() > cap.bytes {
            return Err(cap.exceeded());
        }
        meta.len()
    } else {
        0
    };
    read_with_hint(file, cap, hint)
}

/// [`read`] as UTF-8 text; invalid UTF-8 names the offset of the first bad byte.
pub fn read_to_string(path: &Path, cap: Cap) -> io::Result<String> {
    String::from_utf8(read(path, cap)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Cap = Cap {
        bytes: 8,
        what: "a test file",
    };

    #[test]
    fn a_device_that_never_ends_is_cut_at_the_cap() {
        let err = read(Path::new("/dev/zero"), TINY).unwrap_err();
        assert_eq!(
            err.to_string(),
            "larger than 8 bytes (8 bytes), the cap for a test file"
        );
        let err = read(Path::new("/dev/zero"), CONFIG).unwrap_err();
        assert!(err.to_string().contains("1 MiB (1048576 bytes)"), "{err}");
    }

    #[test]
    fn a_sparse_huge_file_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge");
        let f = File::create(&path).unwrap();
        f.set_len(1 << 40).unwrap();
        let err = read(&path, SNAPSHOT).unwrap_err();
        assert!(err.to_string().contains("2 GiB"), "{err}");
    }

    #[test]
    fn a_file_at_the_cap_is_read_whole_and_bad_utf8_names_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"12345678").unwrap();
        assert_eq!(read(&path, TINY).unwrap(), b"12345678");
        std::fs::write(&path, b"ab\xffc").unwrap();
        let err = read_to_string(&path, TINY).unwrap_err();
        assert!(err.to_string().contains("offset 2"), "{err}");
        assert_eq!(
            read_stream(&b"123456789"[..], TINY).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
