//! The files a `.proto` schema file imports, read from disk for a sink's
//! `protobuf:FILE.proto` (the registry needs each one registered as a reference).
//!
//! Import paths resolve as `protoc -I <dir of FILE.proto>` resolves them: every
//! import — the schema file's and its imports' own — is a path relative to the
//! schema file's directory, never absolute and never leaving it (no `..`), so a
//! topology cannot pull arbitrary files into the registry. The well-known
//! `google/protobuf/*.proto` files are built in and never read.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use crate::engine::columnarschema::proto_file_sink::{is_well_known, proto_imports};

/// Every file `text` imports, directly or not, as (import path, text), each
/// after the files it imports. Errors name the import and, for one that cannot
/// be read, the path tried.
pub fn read_imports(
    dir: &Path,
    text: &str,
    read: impl Fn(&Path) -> Result<String, String>,
) -> Result<Vec<(String, String)>, String> {
    let mut loaded = Vec::new();
    let mut visiting = Vec::new();
    visit(dir, text, &read, &mut loaded, &mut visiting)?;
    Ok(loaded)
}

fn visit(
    dir: &Path,
    text: &str,
    read: &impl Fn(&Path) -> Result<String, String>,
    loaded: &mut Vec<(String, String)>,
    visiting: &mut Vec<String>,
) -> Result<(), String> {
    let names: BTreeSet<String> = proto_imports(text)
        .into_iter()
        .filter(|i| !is_well_known(i))
        .collect();
    for name in names {
        if loaded.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let chain = |name: &str| {
            visiting
                .iter()
                .map(String::as_str)
                .chain([name])
                .collect::<Vec<_>>()
                .join(" -> ")
        };
        if visiting.contains(&name) {
            return Err(format!("imports {}: an import cycle", chain(&name)));
        }
        inside(&name).map_err(|e| format!("imports {}: {e}", chain(&name)))?;
        let imported =
            read(&dir.join(&name)).map_err(|e| format!("imports {}: {e}", chain(&name)))?;
        visiting.push(name.clone());
        visit(dir, &imported, read, loaded, visiting)?;
        visiting.pop();
        loaded.push((name, imported));
    }
    Ok(())
}

/// An import path must stay inside the schema file's directory.
fn inside(name: &str) -> Result<(), String> {
    let path = Path::new(name);
    let escapes = path
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    if name.is_empty() || escapes {
        return Err(
            "an import is a relative path inside the schema file's directory (no `..`, not absolute)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Result<String, String> {
        let map: BTreeMap<PathBuf, String> = entries
            .iter()
            .map(|(n, t)| (Path::new("/s").join(n), (*t).to_owned()))
            .collect();
        move |p: &Path| {
            map.get(p)
                .cloned()
                .ok_or_else(|| format!("{}: No such file or directory", p.display()))
        }
    }

    #[test]
    fn imports_are_read_relative_to_the_schema_files_directory_dependencies_first() {
        let read = files(&[
            (
                "common/money.proto",
                "import \"common/unit.proto\";\nmessage Money {}",
            ),
            (
                "common/unit.proto",
                "import \"google/protobuf/timestamp.proto\";\nmessage Unit {}",
            ),
        ]);
        let got = read_imports(Path::new("/s"), "import \"common/money.proto\";", read).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["common/unit.proto", "common/money.proto"]);
    }

    #[test]
    fn a_missing_escaping_or_cyclic_import_is_refused_by_name() {
        let read = files(&[
            ("a.proto", "import \"b.proto\";"),
            ("b.proto", "import \"a.proto\";"),
        ]);
        let e = read_imports(Path::new("/s"), "import \"nope.proto\";", &read).unwrap_err();
        assert_eq!(
            e,
            "imports nope.proto: /s/nope.proto: No such file or directory"
        );
        let e = read_imports(Path::new("/s"), "import \"../etc/x.proto\";", &read).unwrap_err();
        assert!(
            e.starts_with("imports ../etc/x.proto: an import is a relative path"),
            "{e}"
        );
        let e = read_imports(Path::new("/s"), "import \"/etc/x.proto\";", &read).unwrap_err();
        assert!(e.starts_with("imports /etc/x.proto: "), "{e}");
        let e = read_imports(Path::new("/s"), "import \"a.proto\";", &read).unwrap_err();
        assert_eq!(e, "imports a.proto -> b.proto -> a.proto: an import cycle");
    }
}
