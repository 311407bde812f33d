//! The repository carries its own contract: the golden vectors in `tests/vectors/data/`
//! and the formats and semantics in `docs/`. Nothing tracked may point outside the
//! checkout; this file is the one place that names the folder the vectors were first
//! published in, to check the copy has not drifted from it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder beside the checkout the vectors came from (absent on a fresh clone).
const UPSTREAM: &str = "../shared/vectors";

/// Text no tracked file may contain: a path out of the repository into that folder.
const FORBIDDEN: &[&str] = &["../shared", "/work/shared"];

/// The one file allowed to name the upstream folder: this one.
const THIS_FILE: &str = "tests/vectors/contract.rs";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").file_name())
        .filter_map(|name| name.to_str().map(str::to_owned))
        .filter(|name| name.ends_with(".json"))
        .collect()
}

#[test]
fn repository_vectors_are_identical_to_the_upstream_copy_when_it_is_beside_the_checkout() {
    let ours = root().join("tests/vectors/data");
    let theirs = root().join(UPSTREAM);
    let our_files = json_files(&ours);
    assert!(
        !our_files.is_empty(),
        "no golden vectors in {}",
        ours.display()
    );
    if !theirs.is_dir() {
        // A fresh clone has nothing beside it; the repository's copy is the contract.
        return;
    }
    let their_files = json_files(&theirs);
    let mut problems = Vec::new();
    for name in their_files.difference(&our_files) {
        problems.push(format!(
            "{name}: in {UPSTREAM} but not in tests/vectors/data"
        ));
    }
    for name in our_files.difference(&their_files) {
        problems.push(format!(
            "{name}: in tests/vectors/data but not in {UPSTREAM}"
        ));
    }
    for name in our_files.intersection(&their_files) {
        let a = std::fs::read(ours.join(name)).expect("read our vector file");
        let b = std::fs::read(theirs.join(name)).expect("read upstream vector file");
        if a != b {
            problems.push(format!(
                "{name}: tests/vectors/data/{name} differs from {UPSTREAM}/{name}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "vector copy drifted:\n{}",
        problems.join("\n")
    );
}

/// Tracked files by `git ls-files`; without git (an exported tarball) every file under the
/// root except `.git` and build output.
fn tracked_files() -> Vec<PathBuf> {
    let root = root();
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output();
    if let Ok(out) = listed
        && out.status.success()
        && !out.stdout.is_empty()
    {
        return out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect();
    }
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(root.join(&rel)).expect("list directory") {
            let entry = entry.expect("directory entry");
            let name = entry.file_name();
            if name == ".git" || name == "target" {
                continue;
            }
            let path = rel.join(&name);
            if entry.file_type().expect("file type").is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn no_tracked_file_refers_outside_the_repository_for_its_contract() {
    let root = root();
    let files = tracked_files();
    assert!(
        files.iter().any(|p| p == Path::new("Cargo.toml")),
        "file listing did not see Cargo.toml"
    );
    let mut offenders = Vec::new();
    for rel in files {
        if rel == Path::new(THIS_FILE) {
            continue;
        }
        // A tracked file deleted in the work tree has nothing to check.
        let Ok(bytes) = std::fs::read(root.join(&rel)) else {
            continue;
        };
        for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
            let line = String::from_utf8_lossy(line);
            if FORBIDDEN.iter().any(|f| line.contains(f)) {
                offenders.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "tracked files refer outside the repository (cite docs/ or tests/vectors/data instead):\n{}",
        offenders.join("\n")
    );
}

/// The citation form of the semantics before they lived in docs/semantics.md (built in two
/// pieces so that this file does not match itself).
const OLD_CITATION: &str = concat!("behavio", "ur §");

/// Section numbers of a doc's headings (`## 8. …`, `### 8.3 …`).
fn sections(doc: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join(doc)).expect("read doc");
    text.lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').split_whitespace().next())
        .map(|n| n.trim_end_matches('.').to_owned())
        .filter(|n| n.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect()
}

/// The numbers cited after `<name> §` (or `<name>.md §`, `` <name>.md` § ``) in `line`.
fn cited(line: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for form in [
        format!("{name} §"),
        format!("{name}.md §"),
        format!("{name}.md` §"),
    ] {
        for (i, _) in line.match_indices(&form) {
            let rest = &line[i + form.len()..];
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.').to_owned();
            if !number.is_empty() {
                out.push(number);
            }
        }
    }
    out
}

#[test]
fn every_cited_section_and_decision_exists_in_docs() {
    let formats = sections("docs/formats.md");
    let semantics = sections("docs/semantics.md");
    let decisions_text = std::fs::read_to_string(root().join("docs/semantics.md")).unwrap();
    let mut missing = Vec::new();
    for rel in tracked_files() {
        let Ok(text) = std::fs::read_to_string(root().join(&rel)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for (name, known) in [("formats", &formats), ("semantics", &semantics)] {
                for number in cited(line, name) {
                    if !known.contains(&number) {
                        missing.push(format!("{}:{}: {name} §{number}", rel.display(), n + 1));
                    }
                }
            }
            if line.contains(OLD_CITATION) {
                missing.push(format!(
                    "{}:{}: cites `{OLD_CITATION}` (now docs/semantics.md: `semantics §`)",
                    rel.display(),
                    n + 1
                ));
            }
        }
    }
    for d in 1..=25 {
        assert!(
            decisions_text.contains(&format!("| D{d} |")),
            "decision D{d} missing from docs/semantics.md §11"
        );
    }
    assert!(
        missing.is_empty(),
        "citations that resolve to no section of docs/:\n{}",
        missing.join("\n")
    );
}
