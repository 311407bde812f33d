//! The one reader of local schema files (`.avsc`, `.proto`, `.json`): `schema check
//! --schema-file`, `schema prewarm` (its `--schema-file` and every manifest entry),
//! `produce --value-schema`, `tail`/`schema decode` formats `json:FILE`/`avro:FILE`,
//! and a topology sink's `avro:`/`protobuf:`/`json-schema:` files with their imports
//! (docs/formats.md §4). One cap ([`CAP`], `io::bounded_read::SCHEMA`: a device or a
//! huge file is refused by name, never read whole), UTF-8 only, and one error text
//! that names the file, so a command cannot read a schema file by rules of its own.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::io::bounded_read;

/// The cap on a schema file (and on each file a `.proto` imports).
pub const CAP: bounded_read::Cap = bounded_read::SCHEMA;

/// A schema file that could not be read: `schema file PATH: why`.
#[derive(Debug)]
pub struct SchemaFileError {
    pub path: PathBuf,
    pub cause: std::io::Error,
}

impl fmt::Display for SchemaFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schema file {}: {}", self.path.display(), self.cause)
    }
}

impl std::error::Error for SchemaFileError {}

/// Reads the schema file at `path` as UTF-8 text, at most [`CAP`] bytes.
pub fn read(path: &Path) -> Result<String, SchemaFileError> {
    bounded_read::read_to_string(path, CAP).map_err(|cause| SchemaFileError {
        path: path.to_owned(),
        cause,
    })
}

/// Every file the `.proto` at `path` (whose text is `text`) imports, as (import path,
/// text), each read by [`read`] relative to the file's directory
/// (`io::proto_imports` says which imports are allowed).
pub fn read_proto_imports(path: &Path, text: &str) -> Result<Vec<(String, String)>, String> {
    // `a.proto`'s parent is "", which joins to the bare import path, as the user wrote it.
    let dir = path.parent().unwrap_or(Path::new(""));
    crate::io::proto_imports::read_imports(dir, text, |p| read(p).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent.avsc");
        let e = read(&missing).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("schema file {}: ", missing.display())),
            "{e}"
        );
        let e = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(
            e,
            "schema file /dev/zero: larger than 16 MiB (16777216 bytes), the cap for a schema file"
        );
        let binary = dir.path().join("b.avsc");
        std::fs::write(&binary, b"{\"type\":\xff}").unwrap();
        let e = read(&binary).unwrap_err().to_string();
        assert!(
            e.ends_with("not UTF-8 text (invalid byte at offset 8)"),
            "{e}"
        );
    }

    #[test]
    fn imports_are_read_beside_the_file_under_the_same_rules() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("order.proto");
        std::fs::write(dir.path().join("money.proto"), "syntax = \"proto3\";").unwrap();
        let got = read_proto_imports(&main, "import \"money.proto\";").unwrap();
        assert_eq!(
            got,
            vec![("money.proto".to_owned(), "syntax = \"proto3\";".to_owned())]
        );
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.proto")).unwrap();
        let e = read_proto_imports(&main, "import \"zero.proto\";").unwrap_err();
        assert!(e.contains("the cap for a schema file"), "{e}");
    }
}
