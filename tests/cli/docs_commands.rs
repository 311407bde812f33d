//! Every command line the documentation shows is one the tool accepts.
//!
//! The shell lines of the fenced `bash` blocks of README.md, RELIABILITY.md and docs/*.md
//! (continuation lines joined, comments dropped, cut at the first pipe or redirection):
//! - `krabka-streams …` and `cargo run … -- …` lines go through the binary's own parser
//!   (`cmd::parse`): a flag or value the parser refuses fails the test, naming the file
//!   and the line. Those that need no broker, registry or data file (`run --check`,
//!   `run --explain` of a file in the repository, `completions`, `--help`) are also run,
//!   and must exit 0; the others are run against a test world by `docs_broker`.
//! - any other line: every repository path it names (`scripts/…`, `man/…`, `examples/…`)
//!   must exist, and a `scripts/` command must be executable.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::binary;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (file, line) for every shell line of a fenced bash block.
pub fn doc_lines() -> Vec<(String, String)> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("RELIABILITY.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read doc");
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        let mut in_bash = false;
        let mut pending = String::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if let Some(info) = trimmed.strip_prefix("```") {
                in_bash = !in_bash && matches!(info.trim(), "bash" | "sh" | "shell");
                pending.clear();
                continue;
            }
            if !in_bash {
                continue;
            }
            if let Some(head) = trimmed.strip_suffix('\\') {
                pending.push_str(head);
                pending.push(' ');
                continue;
            }
            pending.push_str(trimmed);
            let whole = std::mem::take(&mut pending);
            if !whole.is_empty() && !whole.starts_with('#') {
                out.push((rel.clone(), whole));
            }
        }
    }
    out
}

/// The words of one shell command: shell-split with comments dropped, cut at the first
/// operator or redirection.
pub fn words(line: &str) -> Option<Vec<String>> {
    let without_comment = strip_comment(line);
    let all = shlex::split(&without_comment)?;
    Some(
        all.into_iter()
            .take_while(|w| {
                !matches!(w.as_str(), "|" | "&&" | "||" | ";" | "&")
                    && !w.starts_with('>')
                    && !w.starts_with('<')
                    && !w.starts_with("2>")
            })
            .collect(),
    )
}

/// The line up to a `#` that starts a word outside quotes.
fn strip_comment(line: &str) -> String {
    let mut out = String::new();
    let (mut single, mut double) = (false, false);
    let mut prev_space = true;
    for c in line.chars() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_space => break,
            _ => {}
        }
        prev_space = c.is_whitespace();
        out.push(c);
    }
    out
}

/// The krabka-streams arguments of a line, if it runs the tool.
pub fn tool_args(words: &[String]) -> Option<Vec<String>> {
    match words.first().map(String::as_str) {
        Some("krabka-streams") => Some(words[1..].to_vec()),
        Some("cargo") if words.get(1).map(String::as_str) == Some("run") => words
            .iter()
            .position(|w| w == "--")
            .map(|i| words[i + 1..].to_vec()),
        _ => None,
    }
}

fn is_repo_path(word: &str) -> bool {
    ["scripts/", "man/", "examples/", "docs/", ".ci/", "fuzz/"]
        .iter()
        .any(|p| word.starts_with(p))
}

/// A repository path, with a trailing `*.ext` glob meaning "at least one such file".
fn repo_path_exists(word: &str) -> bool {
    let path = root().join(word);
    match word.rsplit_once("/*") {
        Some((dir, ext)) => std::fs::read_dir(root().join(dir))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().ends_with(ext))
            })
            .unwrap_or(false),
        None => path.exists(),
    }
}

/// Lines safe to run for real: no broker, registry or outside data involved.
fn runnable(args: &[String]) -> bool {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let touches_outside =
        has("-b") || has("--bootstrap-server") || args.iter().any(|a| a.starts_with("--registry"));
    if touches_outside {
        return false;
    }
    match args.first().map(String::as_str) {
        Some("completions") => true,
        Some("run") => {
            (has("--check") || has("--explain"))
                && !has("--input")
                && args.iter().any(|a| a.starts_with("examples/"))
        }
        _ => has("--help") || has("-h"),
    }
}

#[test]
fn every_command_line_in_the_docs_is_accepted_by_the_tool() {
    let lines = doc_lines();
    let mut checked = 0;
    let mut problems = Vec::new();
    for (file, line) in &lines {
        let Some(words) = words(line) else {
            problems.push(format!("{file}: unbalanced quotes: {line}"));
            continue;
        };
        for word in words.iter().filter(|w| is_repo_path(w)) {
            if !repo_path_exists(word) {
                problems.push(format!("{file}: {word} does not exist: {line}"));
            }
        }
        let Some(args) = tool_args(&words) else {
            if let Some(first) = words.first().filter(|w| w.starts_with("scripts/"))
                && !is_executable(&root().join(first))
            {
                problems.push(format!("{file}: {first} is not executable: {line}"));
            }
            continue;
        };
        checked += 1;
        let argv: Vec<OsString> = std::iter::once("krabka-streams".to_owned())
            .chain(args.iter().cloned())
            .map(OsString::from)
            .collect();
        match krabka_streams::cmd::parse(argv) {
            Ok(_) => {}
            Err((e, _)) if krabka_streams::cmd::clap_error_code(&e) == 0 => {}
            Err((e, _)) => {
                let first = e.render().to_string();
                let first = first.lines().next().unwrap_or("").to_owned();
                problems.push(format!("{file}: refused by the parser ({first}): {line}"));
                continue;
            }
        }
        if runnable(&args) {
            let out = Command::new(binary())
                .args(&args)
                .current_dir(root())
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run the binary");
            if !out.status.success() {
                problems.push(format!(
                    "{file}: exited {:?}: {line}: {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} command lines found in the docs"
    );
    assert!(
        problems.is_empty(),
        "command lines in the docs that do not work:\n{}",
        problems.join("\n")
    );
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[test]
fn the_extraction_sees_a_refused_flag() {
    // The check is only as good as its extraction: a line with a value the parser refuses
    // (the old RELIABILITY.md's `protobuf-sr` was such a value, in prose) must be caught.
    let split = words("krabka-streams tail t --format prquet --out x  # comment").unwrap();
    let args = tool_args(&split).unwrap();
    assert_eq!(args, ["tail", "t", "--format", "prquet", "--out", "x"]);
    let argv: Vec<OsString> = std::iter::once("krabka-streams".to_owned())
        .chain(args)
        .map(OsString::from)
        .collect();
    assert!(krabka_streams::cmd::parse(argv).is_err());
    let split = words("cargo run --release -- demo | head").unwrap();
    assert_eq!(tool_args(&split).unwrap(), ["demo"]);
}
