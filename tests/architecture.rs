//! The layout's rules, checked by reading `src/` (issue #17; README "Layout"):
//!
//! - no import cycle between two files of `src/`;
//! - `engine` never imports `io`, `ops` or `cmd`; `engine/schema` never imports Arrow or
//!   Parquet; `engine/columnar` never imports the Avro or Protobuf crates; `engine/coordination`
//!   reaches nothing but the standard library (directly or through the engine files it uses);
//! - `io` never imports `cmd` or `ops`; `ops` never imports `cmd`; only `io` (not `ops` or
//!   `engine`) imports rdkafka; no subcommand module of
//!   `cmd` imports another one;
//! - no function is longer than [`MAX_FN_LINES`] lines unless its doc comment says why, with a
//!   line containing "long because".
//!
//! How the import graph is built, without a Rust parser (std only, so this test builds in
//! seconds): every file is lexed (comments, strings and character literals dropped, inline
//! `mod name { … }` blocks and `#[path]` attributes followed), and every `use` tree and every
//! path in code that starts with `crate::`, `super::`, `self::` or the name of a child module is
//! resolved to the file of the longest module prefix it names. A path that continues with a
//! name the module re-exports (`pub use child::Name`, also through globs) is followed to the
//! file that defines the name, so `super::Metrics` from `runner/group.rs` is an edge to
//! `runner/metrics.rs`, not to `runner/mod.rs`. A module's `pub use` of one of its own
//! descendants is a facade, not a dependency, and adds no edge. Edges between a module and its
//! own ancestors (a child's `super::Error`, a parent calling `child::run`) follow the module
//! tree and do not count; every other edge does. A cycle is a strongly connected component of
//! that graph with more than one file; the failure names one cycle in it, edge by
//! edge, with the line that makes each edge.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Longest function body, in lines from `fn` to its closing brace, allowed without a reason.
const MAX_FN_LINES: usize = 120;

/// Folders whose cycles are tolerated (a cycle is, while every file of it sits under one of
/// them). None: keep it that way.
const CYCLE_ALLOWLIST: &[&str] = &[];

/// Known imports between subcommands, as (importing subcommand, imported subcommand), each
/// with why it is still there. Every entry is a debt to remove.
const CMD_IMPORT_ALLOWLIST: &[(&str, &str)] = &[];

/// Files or folders whose long functions are known and not yet split. Every entry is a debt.
const LONG_FN_ALLOWLIST: &[&str] = &[];

/// Crates the standard library consists of.
const STD_CRATES: &[&str] = &["std", "core", "alloc"];

/// Crates `engine/schema` must not know (it has no Arrow).
const ARROW_CRATES: &[&str] = &[
    "arrow",
    "arrow_array",
    "arrow_buffer",
    "arrow_cast",
    "arrow_data",
    "arrow_ipc",
    "arrow_schema",
    "arrow_select",
    "parquet",
];

/// Crates `engine/columnar` must not know (it has no Avro or Protobuf).
const SCHEMA_CRATES: &[&str] = &["apache_avro", "prost", "prost_reflect", "protox"];

// ---------------------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
    Str(String),
    /// One `///` line (outer doc comment), without the slashes.
    Doc(String),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
}

fn lex(text: &str) -> Vec<Token> {
    let b: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = b.len();
    let at = |i: usize| if i < n { b[i] } else { '\0' };
    while i < n {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            let start = i;
            while i < n && b[i] != '\n' {
                i += 1;
            }
            let comment: String = b[start..i].iter().collect();
            if comment.starts_with("///") && !comment.starts_with("////") {
                out.push(Token {
                    tok: Tok::Doc(comment[3..].to_string()),
                    line,
                });
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < n {
                if b[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '"' || ((c == 'b' || c == 'c') && at(i + 1) == '"') {
            let start_line = line;
            if c != '"' {
                i += 1;
            }
            i += 1;
            let mut s = String::new();
            while i < n && b[i] != '"' {
                if b[i] == '\\' {
                    s.push(b[i]);
                    i += 1;
                }
                if i < n {
                    if b[i] == '\n' {
                        line += 1;
                    }
                    s.push(b[i]);
                }
                i += 1;
            }
            i += 1;
            out.push(Token {
                tok: Tok::Str(s),
                line: start_line,
            });
        } else if (c == 'r'
            && (at(i + 1) == '"' || (at(i + 1) == '#' && matches!(at(i + 2), '"' | '#'))))
            || ((c == 'b' || c == 'c')
                && at(i + 1) == 'r'
                && (at(i + 2) == '"' || at(i + 2) == '#'))
        {
            let start_line = line;
            i += if c == 'r' { 1 } else { 2 };
            let mut hashes = 0;
            while at(i) == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1; // opening quote
            let mut s = String::new();
            loop {
                if i >= n {
                    break;
                }
                if b[i] == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
                    i += 1 + hashes;
                    break;
                }
                if b[i] == '\n' {
                    line += 1;
                }
                s.push(b[i]);
                i += 1;
            }
            out.push(Token {
                tok: Tok::Str(s),
                line: start_line,
            });
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            if c == 'b' {
                i += 1;
            }
            // A character literal, or a lifetime / label (`'a`, `'static`).
            if at(i + 1) == '\\' {
                i += 2;
                while i < n && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < n && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            if c == 'r' && at(i + 1) == '#' {
                i += 2;
            }
            let start = i;
            while i < n && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(b[start..i].iter().collect()),
                line,
            });
        } else if c.is_ascii_digit() {
            while i < n
                && (b[i].is_alphanumeric()
                    || b[i] == '_'
                    || (b[i] == '.' && at(i + 1).is_ascii_digit()))
            {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::Path,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        }
    }
    out
}

fn is_ident(t: Option<&Token>, name: &str) -> bool {
    matches!(t, Some(Token { tok: Tok::Ident(s), .. }) if s == name)
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token {
            tok: Tok::Ident(s), ..
        }) => Some(s.as_str()),
        _ => None,
    }
}

fn is_punct(t: Option<&Token>, c: char) -> bool {
    matches!(t, Some(Token { tok: Tok::Punct(p), .. }) if *p == c)
}

// ---------------------------------------------------------------------------------------------
// Files and modules

type ModPath = Vec<String>;

struct SourceFile {
    /// Relative to the repository root, with `/` separators.
    rel: String,
    module: ModPath,
    tokens: Vec<Token>,
}

/// One `use` leaf or code path, in the module it was written in.
struct RawImport {
    file: usize,
    module: ModPath,
    segments: Vec<String>,
    line: usize,
    /// `None` for a code path; the visibility of the `use` otherwise.
    in_use: Option<UseKind>,
    /// The name the `use` binds (`None` for globs, `_` and code paths).
    binds: Option<String>,
    glob: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum UseKind {
    Private,
    Public,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file is by its place in `src/` (`a/mod.rs` and `a.rs` are `a`); `None` for the
/// binaries, which are crates of their own.
fn module_of(rel_to_src: &str) -> Option<ModPath> {
    if rel_to_src.starts_with("bin/") {
        return None;
    }
    let stem = rel_to_src.strip_suffix(".rs").expect("a .rs file");
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    Some(parts)
}

fn starts_with(path: &[String], prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}

/// Extern crates this package can name: its dependencies (`-` as `_`), itself and std.
fn extern_crates() -> HashSet<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("read Cargo.toml");
    let mut names: HashSet<String> = STD_CRATES.iter().map(|s| s.to_string()).collect();
    names.insert("krabka_streams".into());
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
            continue;
        }
        if in_deps && let Some((name, _)) = line.split_once('=') {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') {
                names.insert(name.replace('-', "_"));
            }
        }
    }
    names
}

/// Everything read from `src/`: modules, the items and names each defines or binds, and
/// every import with the line it is on.
struct Crate {
    files: Vec<SourceFile>,
    /// Module -> the file it lives in (file modules and inline `mod x { … }`).
    modules: HashMap<ModPath, usize>,
    /// Module -> item names defined in it.
    items: HashMap<ModPath, HashSet<String>>,
    imports: Vec<RawImport>,
    externs: HashSet<String>,
    /// Long functions: (file, line, name, length, doc says why).
    functions: Vec<(usize, usize, String, usize, bool)>,
}

impl Crate {
    fn read() -> Crate {
        let src = root().join("src");
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        let mut files = Vec::new();
        for path in paths {
            let rel_src = path
                .strip_prefix(&src)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            let Some(module) = module_of(&rel_src) else {
                continue;
            };
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            files.push(SourceFile {
                rel: format!("src/{rel_src}"),
                module,
                tokens: lex(&text),
            });
        }
        let mut krate = Crate {
            files,
            modules: HashMap::new(),
            items: HashMap::new(),
            imports: Vec::new(),
            externs: extern_crates(),
            functions: Vec::new(),
        };
        krate.apply_path_attributes();
        for (idx, file) in krate.files.iter().enumerate() {
            krate.modules.insert(file.module.clone(), idx);
        }
        for idx in 0..krate.files.len() {
            krate.scan(idx);
        }
        krate
    }

    /// `#[path = "x.rs"] mod name;` puts `x.rs` at `parent::name`, not where its own name says.
    fn apply_path_attributes(&mut self) {
        let mut moves = Vec::new();
        for file in &self.files {
            let t = &file.tokens;
            for i in 0..t.len() {
                if is_punct(t.get(i), '#')
                    && is_punct(t.get(i + 1), '[')
                    && is_ident(t.get(i + 2), "path")
                    && is_punct(t.get(i + 3), '=')
                {
                    let Some(Token {
                        tok: Tok::Str(target),
                        ..
                    }) = t.get(i + 4)
                    else {
                        continue;
                    };
                    let mut j = i + 5;
                    while j < t.len() && !is_ident(t.get(j), "mod") {
                        j += 1;
                    }
                    let Some(name) = ident(t.get(j + 1)) else {
                        continue;
                    };
                    let dir = Path::new(&file.rel).parent().expect("a folder");
                    let target_rel = dir.join(target).to_string_lossy().replace('\\', "/");
                    let mut module = file.module.clone();
                    module.push(name.to_string());
                    moves.push((target_rel, module));
                }
            }
        }
        for (target_rel, module) in moves {
            if let Some(f) = self.files.iter_mut().find(|f| f.rel == target_rel) {
                f.module = module;
            }
        }
    }

    /// One pass over a file's tokens: inline modules, items, `use` trees, code paths and
    /// function lengths.
    fn scan(&mut self, idx: usize) {
        let tokens = std::mem::take(&mut self.files[idx].tokens);
        let base = self.files[idx].module.clone();
        // (module name, brace depth inside it)
        let mut stack: Vec<(String, usize)> = Vec::new();
        let mut depth = 0usize;
        let current = |stack: &[(String, usize)]| {
            let mut m = base.clone();
            m.extend(stack.iter().map(|(n, _)| n.clone()));
            m
        };
        let mut i = 0;
        while i < tokens.len() {
            let t = &tokens[i];
            match &t.tok {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    if stack.last().is_some_and(|(_, d)| *d == depth) {
                        stack.pop();
                    }
                    depth = depth.saturating_sub(1);
                }
                Tok::Ident(kw) => match kw.as_str() {
                    "mod" => {
                        if let Some(name) = ident(tokens.get(i + 1)) {
                            let mut m = current(&stack);
                            self.items.entry(m.clone()).or_default().insert(name.into());
                            if is_punct(tokens.get(i + 2), '{') {
                                m.push(name.into());
                                self.modules.insert(m, idx);
                                stack.push((name.into(), depth + 1));
                            }
                        }
                    }
                    "struct" | "enum" | "trait" | "type" | "const" | "static" | "union" | "fn" => {
                        if let Some(name) = ident(tokens.get(i + 1)) {
                            let m = current(&stack);
                            self.items.entry(m).or_default().insert(name.into());
                        }
                        if kw == "fn" {
                            self.measure_fn(idx, &tokens, i);
                        }
                    }
                    "macro_rules" if is_punct(tokens.get(i + 1), '!') => {
                        if let Some(name) = ident(tokens.get(i + 2)) {
                            let m = current(&stack);
                            self.items.entry(m).or_default().insert(name.into());
                        }
                    }
                    "use" => {
                        let kind = if is_public(&tokens, i) {
                            UseKind::Public
                        } else {
                            UseKind::Private
                        };
                        let mut j = i + 1;
                        let mut leaves = Vec::new();
                        parse_use_tree(&tokens, &mut j, Vec::new(), &mut leaves);
                        let module = current(&stack);
                        for (segments, binds, glob) in leaves {
                            self.imports.push(RawImport {
                                file: idx,
                                module: module.clone(),
                                segments,
                                line: t.line,
                                in_use: Some(kind),
                                binds,
                                glob,
                            });
                        }
                        // Continue after the tree; its braces were consumed by the parser.
                        i = j;
                        continue;
                    }
                    _ => {
                        let after_path =
                            i > 0 && matches!(tokens[i - 1].tok, Tok::Path | Tok::Punct('$'));
                        if !after_path
                            && matches!(tokens.get(i + 1).map(|t| &t.tok), Some(Tok::Path))
                        {
                            let mut segments = vec![kw.clone()];
                            let mut j = i + 1;
                            while matches!(tokens.get(j).map(|t| &t.tok), Some(Tok::Path)) {
                                match ident(tokens.get(j + 1)) {
                                    Some(s) => segments.push(s.into()),
                                    None => break,
                                }
                                j += 2;
                            }
                            self.imports.push(RawImport {
                                file: idx,
                                module: current(&stack),
                                segments,
                                line: t.line,
                                in_use: None,
                                binds: None,
                                glob: false,
                            });
                            i = j;
                            continue;
                        }
                    }
                },
                _ => {}
            }
            i += 1;
        }
        self.files[idx].tokens = tokens;
    }

    /// Records a function whose body is longer than [`MAX_FN_LINES`].
    fn measure_fn(&mut self, idx: usize, tokens: &[Token], at: usize) {
        let Some(name) = ident(tokens.get(at + 1)) else {
            return; // `fn(u8) -> u8`, a type
        };
        let mut j = at + 2;
        let mut nest = 0i32;
        while j < tokens.len() {
            match tokens[j].tok {
                Tok::Punct('(') | Tok::Punct('[') => nest += 1,
                Tok::Punct(')') | Tok::Punct(']') => nest -= 1,
                Tok::Punct(';') if nest == 0 => return,
                Tok::Punct('{') if nest == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let mut braces = 0i32;
        let mut end = j;
        while end < tokens.len() {
            match tokens[end].tok {
                Tok::Punct('{') => braces += 1,
                Tok::Punct('}') => {
                    braces -= 1;
                    if braces == 0 {
                        break;
                    }
                }
                _ => {}
            }
            end += 1;
        }
        let Some(last) = tokens.get(end) else { return };
        let length = last.line - tokens[at].line + 1;
        if length <= MAX_FN_LINES {
            return;
        }
        let says_why = doc_before(tokens, at)
            .iter()
            .any(|line| line.to_lowercase().contains("long because"));
        self.functions
            .push((idx, tokens[at].line, name.to_string(), length, says_why));
    }
}

/// Whether the `use` at `at` is `pub` or `pub(…)`.
fn is_public(tokens: &[Token], at: usize) -> bool {
    if at == 0 {
        return false;
    }
    if is_ident(tokens.get(at - 1), "pub") {
        return true;
    }
    if is_punct(tokens.get(at - 1), ')') {
        let mut j = at - 1;
        while j > 0 && !is_punct(tokens.get(j), '(') {
            j -= 1;
        }
        return j > 0 && is_ident(tokens.get(j - 1), "pub");
    }
    false
}

/// The `///` lines above the item at `at`, over its qualifiers and attributes.
fn doc_before(tokens: &[Token], at: usize) -> Vec<String> {
    let mut docs = Vec::new();
    let mut j = at;
    while j > 0 {
        let prev = &tokens[j - 1];
        match &prev.tok {
            Tok::Ident(s)
                if matches!(
                    s.as_str(),
                    "pub" | "crate" | "super" | "in" | "const" | "async" | "unsafe" | "extern"
                ) =>
            {
                j -= 1
            }
            Tok::Str(_) | Tok::Punct('(') | Tok::Punct(')') => j -= 1,
            Tok::Doc(text) => {
                docs.push(text.clone());
                j -= 1;
            }
            Tok::Punct(']') => {
                // An attribute: back to its `#`.
                let mut nest = 0;
                while j > 0 {
                    j -= 1;
                    match tokens[j].tok {
                        Tok::Punct(']') => nest += 1,
                        Tok::Punct('[') => {
                            nest -= 1;
                            if nest == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if j > 0 && is_punct(tokens.get(j - 1), '#') {
                    j -= 1;
                }
            }
            _ => break,
        }
    }
    docs
}

/// Parses one use tree at `j` into its leaves: (path, name bound, glob).
fn parse_use_tree(
    tokens: &[Token],
    j: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, bool)>,
) {
    let mut path = prefix;
    loop {
        match tokens.get(*j).map(|t| &t.tok) {
            Some(Tok::Path) => *j += 1,
            Some(Tok::Ident(s)) if s != "as" => {
                path.push(s.clone());
                *j += 1;
                if !matches!(tokens.get(*j).map(|t| &t.tok), Some(Tok::Path)) {
                    break;
                }
            }
            Some(Tok::Punct('{')) => {
                *j += 1;
                loop {
                    match tokens.get(*j).map(|t| &t.tok) {
                        None => return,
                        Some(Tok::Punct('}')) => {
                            *j += 1;
                            break;
                        }
                        Some(Tok::Punct(',')) => *j += 1,
                        _ => {
                            let before = *j;
                            parse_use_tree(tokens, j, path.clone(), out);
                            if *j == before {
                                *j += 1;
                            }
                        }
                    }
                }
                skip_to_use_end(tokens, j);
                return;
            }
            Some(Tok::Punct('*')) => {
                *j += 1;
                out.push((path, None, true));
                skip_to_use_end(tokens, j);
                return;
            }
            _ => break,
        }
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    let mut binds = path.last().cloned();
    if is_ident(tokens.get(*j), "as") {
        binds = ident(tokens.get(*j + 1))
            .filter(|s| *s != "_")
            .map(str::to_owned);
        *j += 2;
    }
    out.push((path, binds, false));
    skip_to_use_end(tokens, j);
}

/// Leaves `j` on the `,` or `}` that ends a nested tree, or past the `;` of the whole `use`.
fn skip_to_use_end(tokens: &[Token], j: &mut usize) {
    if let Some(Tok::Punct(';')) = tokens.get(*j).map(|t| &t.tok) {
        *j += 1
    }
}

// ---------------------------------------------------------------------------------------------
// Resolution

#[derive(Clone, Debug, PartialEq)]
enum Target {
    /// A module of this crate, in a file.
    Module(ModPath),
    /// An extern crate.
    Extern(String),
}

struct Resolver<'a> {
    krate: &'a Crate,
    /// Module -> (name bound by a `use` there, absolute path).
    bindings: HashMap<ModPath, HashMap<String, Target>>,
    /// Module -> absolute paths of its glob `use`s.
    globs: HashMap<ModPath, Vec<ModPath>>,
}

/// A path made absolute: segments from the crate root, or an extern crate.
enum Absolute {
    Local(ModPath),
    Extern(String),
    Unknown,
}

impl<'a> Resolver<'a> {
    fn new(krate: &'a Crate) -> Resolver<'a> {
        let mut r = Resolver {
            krate,
            bindings: HashMap::new(),
            globs: HashMap::new(),
        };
        // Two rounds: a `use` may start from a name another `use` bound.
        for _ in 0..2 {
            for imp in krate.imports.iter().filter(|i| i.in_use.is_some()) {
                let abs = r.absolute(&imp.module, &imp.segments);
                if imp.glob {
                    if let Absolute::Local(p) = abs {
                        let g = r.globs.entry(imp.module.clone()).or_default();
                        if !g.contains(&p) {
                            g.push(p);
                        }
                    }
                } else if let Some(name) = &imp.binds {
                    let target = match abs {
                        Absolute::Local(p) => Target::Module(p),
                        Absolute::Extern(c) => Target::Extern(c),
                        Absolute::Unknown => continue,
                    };
                    r.bindings
                        .entry(imp.module.clone())
                        .or_default()
                        .insert(name.clone(), target);
                }
            }
        }
        r
    }

    fn absolute(&self, module: &ModPath, segments: &[String]) -> Absolute {
        let Some(first) = segments.first() else {
            return Absolute::Unknown;
        };
        let mut base: ModPath;
        let mut rest = segments;
        match first.as_str() {
            "crate" => {
                base = Vec::new();
                rest = &segments[1..];
            }
            "self" | "super" => {
                base = module.clone();
                while rest.first().is_some_and(|s| s == "self" || s == "super") {
                    if rest[0] == "super" {
                        base.pop();
                    }
                    rest = &rest[1..];
                }
            }
            name => {
                let mut child = module.clone();
                child.push(name.to_string());
                if self.krate.modules.contains_key(&child) {
                    base = module.clone();
                } else if let Some(t) = self.bindings.get(module).and_then(|b| b.get(name)) {
                    match t {
                        Target::Module(p) => {
                            base = p.clone();
                            rest = &segments[1..];
                        }
                        Target::Extern(c) => return Absolute::Extern(c.clone()),
                    }
                } else if self.krate.externs.contains(name) {
                    return Absolute::Extern(name.to_string());
                } else {
                    return Absolute::Unknown;
                }
            }
        }
        base.extend(rest.iter().cloned());
        Absolute::Local(base)
    }

    /// The module whose file defines what `path` names, following re-exports.
    fn locate(&self, path: &[String], depth: usize) -> Target {
        let mut len = path.len();
        while len > 0 && !self.krate.modules.contains_key(&path[..len]) {
            len -= 1;
        }
        let module = path[..len].to_vec();
        let rest = &path[len..];
        if depth > 8 || rest.is_empty() {
            return Target::Module(module);
        }
        let name = &rest[0];
        if self
            .krate
            .items
            .get(&module)
            .is_some_and(|items| items.contains(name))
        {
            return Target::Module(module);
        }
        if let Some(t) = self.bindings.get(&module).and_then(|b| b.get(name)) {
            return match t {
                Target::Extern(c) => Target::Extern(c.clone()),
                Target::Module(p) => {
                    let mut next = p.clone();
                    next.extend(rest[1..].iter().cloned());
                    self.locate(&next, depth + 1)
                }
            };
        }
        for g in self.globs.get(&module).into_iter().flatten() {
            let defines = self.krate.items.get(g).is_some_and(|i| i.contains(name))
                || self.bindings.get(g).is_some_and(|b| b.contains_key(name))
                || self
                    .krate
                    .modules
                    .contains_key(&[g.as_slice(), &rest[..1]].concat());
            if defines {
                let mut next = g.clone();
                next.extend(rest.iter().cloned());
                return self.locate(&next, depth + 1);
            }
        }
        Target::Module(module)
    }
}

/// One dependency of a file: what it imports, resolved, and where it says so.
struct Edge {
    from: usize,
    target: Target,
    /// The file of a local target.
    to: Option<usize>,
    line: usize,
    text: String,
    /// A `pub use` of a descendant module: a facade, no dependency.
    facade: bool,
}

fn edges(krate: &Crate) -> Vec<Edge> {
    let resolver = Resolver::new(krate);
    let mut out = Vec::new();
    for imp in &krate.imports {
        let target = match resolver.absolute(&imp.module, &imp.segments) {
            Absolute::Unknown => continue,
            Absolute::Extern(c) => Target::Extern(c),
            Absolute::Local(p) => resolver.locate(&p, 0),
        };
        let to = match &target {
            Target::Module(m) => krate.modules.get(m).copied(),
            Target::Extern(_) => None,
        };
        let facade = imp.in_use == Some(UseKind::Public)
            && match resolver.absolute(&imp.module, &imp.segments) {
                Absolute::Local(p) => p.len() > imp.module.len() && p.starts_with(&imp.module),
                _ => false,
            };
        out.push(Edge {
            from: imp.file,
            target,
            to,
            line: imp.line,
            text: imp.segments.join("::"),
            facade,
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The rules

fn under(rel: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| rel.starts_with(p))
}

/// Strongly connected components of the file graph with more than one file (Tarjan).
fn cycles(n: usize, adj: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adj: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.adj[v].clone().iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().expect("on the stack");
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// One cycle through `start` inside `component` (shortest, by breadth-first search).
fn one_cycle(start: usize, component: &[usize], adj: &[BTreeSet<usize>]) -> Vec<usize> {
    let inside: HashSet<usize> = component.iter().copied().collect();
    let mut parent: HashMap<usize, usize> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if !inside.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![v];
                let mut cur = v;
                while cur != start {
                    cur = parent[&cur];
                    path.push(cur);
                }
                path.reverse();
                return path;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(w) {
                e.insert(v);
                queue.push_back(w);
            }
        }
    }
    vec![start]
}

fn describe_edge(krate: &Crate, all: &[Edge], from: usize, to: usize) -> String {
    let e = all
        .iter()
        .find(|e| e.from == from && e.to == Some(to) && !e.facade)
        .expect("an edge");
    format!(
        "{}:{} uses {} ({})",
        krate.files[from].rel, e.line, e.text, krate.files[to].rel
    )
}

#[test]
fn no_import_cycle_between_files_of_src() {
    let krate = Crate::read();
    let all = edges(&krate);
    let n = krate.files.len();
    let mut adj = vec![BTreeSet::new(); n];
    for e in all.iter().filter(|e| !e.facade) {
        if let Some(to) = e.to {
            let (a, b) = (&krate.files[e.from].module, &krate.files[to].module);
            // A module is made of its children and they see it: edges along the module tree
            // are how Rust nests, not a cycle between peers.
            if to != e.from && !a.starts_with(b) && !b.starts_with(a) {
                adj[e.from].insert(to);
            }
        }
    }
    let mut problems = Vec::new();
    for component in cycles(n, &adj) {
        let allowed = CYCLE_ALLOWLIST.iter().any(|prefix| {
            component
                .iter()
                .all(|&f| krate.files[f].rel.starts_with(prefix))
        });
        if allowed {
            continue;
        }
        let names: Vec<&str> = component
            .iter()
            .map(|&f| krate.files[f].rel.as_str())
            .collect();
        let cycle = one_cycle(component[0], &component, &adj);
        let mut steps = Vec::new();
        for k in 0..cycle.len() {
            let (a, b) = (cycle[k], cycle[(k + 1) % cycle.len()]);
            steps.push(format!("    {}", describe_edge(&krate, &all, a, b)));
        }
        problems.push(format!(
            "import cycle among {} files: {}\n  for example:\n{}",
            component.len(),
            names.join(", "),
            steps.join("\n")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The subcommand modules of `cmd`: the modules `enum Command` in `cmd/mod.rs` names.
fn subcommands(krate: &Crate) -> BTreeSet<String> {
    let file = krate
        .files
        .iter()
        .find(|f| f.rel == "src/cmd/mod.rs")
        .expect("src/cmd/mod.rs");
    let t = &file.tokens;
    let start = (0..t.len())
        .find(|&i| is_ident(t.get(i), "enum") && is_ident(t.get(i + 1), "Command"))
        .expect("enum Command in cmd/mod.rs");
    let mut names = BTreeSet::new();
    let mut depth = 0;
    for i in start..t.len() {
        match t[i].tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Tok::Ident(ref s)
                if matches!(t.get(i + 1).map(|t| &t.tok), Some(Tok::Path))
                    && krate
                        .modules
                        .contains_key(&vec!["cmd".to_string(), s.clone()]) =>
            {
                names.insert(s.clone());
            }
            _ => {}
        }
    }
    assert!(
        !names.is_empty(),
        "no subcommand modules found in enum Command"
    );
    names
}

#[test]
fn layers_import_only_downwards() {
    let krate = Crate::read();
    let all = edges(&krate);
    let subs = subcommands(&krate);
    let sub_of = |m: &[String]| -> Option<String> {
        (m.len() >= 2 && m[0] == "cmd" && subs.contains(&m[1])).then(|| m[1].clone())
    };
    // Files that reach nothing but std, directly or through the files they use.
    let n = krate.files.len();
    let mut impure: Vec<bool> = vec![false; n];
    for e in &all {
        if let Target::Extern(c) = &e.target
            && !STD_CRATES.contains(&c.as_str())
        {
            impure[e.from] = true;
        }
    }
    loop {
        let mut changed = false;
        for e in all.iter().filter(|e| !e.facade) {
            if let Some(to) = e.to
                && impure[to]
                && !impure[e.from]
            {
                impure[e.from] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let mut problems = BTreeSet::new();
    for e in all.iter().filter(|e| !e.facade) {
        let file = &krate.files[e.from];
        let from = &file.module;
        let at = format!("{}:{} uses {}", file.rel, e.line, e.text);
        match &e.target {
            Target::Module(to) => {
                if to.first() == Some(&"engine".to_string()) && to == from {
                    continue;
                }
                if starts_with(from, &["engine"])
                    && ["io", "ops", "cmd"].iter().any(|l| starts_with(to, &[l]))
                {
                    problems.insert(format!("{at}: the engine never imports {}", to[0]));
                }
                if starts_with(from, &["io"])
                    && ["ops", "cmd"].iter().any(|l| starts_with(to, &[l]))
                {
                    problems.insert(format!("{at}: io never imports {}", to[0]));
                }
                if starts_with(from, &["ops"]) && starts_with(to, &["cmd"]) {
                    problems.insert(format!("{at}: ops never imports cmd"));
                }
                if let (Some(a), Some(b)) = (sub_of(from), sub_of(to)) {
                    let allowed = CMD_IMPORT_ALLOWLIST.contains(&(a.as_str(), b.as_str()));
                    if a != b && !allowed {
                        problems.insert(format!(
                            "{at}: subcommand cmd::{a} imports subcommand cmd::{b}"
                        ));
                    }
                }
                if starts_with(from, &["engine", "coordination"])
                    && !starts_with(to, &["engine", "coordination"])
                    && let Some(to_file) = e.to
                    && impure[to_file]
                {
                    problems.insert(format!(
                        "{at}: engine::coordination reaches only std, and {} does not",
                        krate.files[to_file].rel
                    ));
                }
            }
            Target::Extern(c) => {
                let c = c.as_str();
                if starts_with(from, &["engine", "schema"]) && ARROW_CRATES.contains(&c) {
                    problems.insert(format!("{at}: engine::schema has no Arrow"));
                }
                if starts_with(from, &["engine", "columnar"]) && SCHEMA_CRATES.contains(&c) {
                    problems.insert(format!("{at}: engine::columnar has no Avro or Protobuf"));
                }
                if starts_with(from, &["engine", "coordination"]) && !STD_CRATES.contains(&c) {
                    problems.insert(format!("{at}: engine::coordination uses std only"));
                }
                // ops is tested over traits with fakes; rdkafka stays behind io's adapters.
                if (starts_with(from, &["ops"]) || starts_with(from, &["engine"])) && c == "rdkafka"
                {
                    problems.insert(format!("{at}: only io knows rdkafka"));
                }
                if starts_with(from, &["engine"]) && c == "krabka_streams" {
                    problems.insert(format!("{at}: the engine never imports the crate's top"));
                }
            }
        }
    }
    let problems: Vec<String> = problems.into_iter().collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_long_function_without_a_stated_reason() {
    let krate = Crate::read();
    let mut problems = Vec::new();
    for (file, line, name, length, says_why) in &krate.functions {
        let rel = &krate.files[*file].rel;
        if *says_why || under(rel, LONG_FN_ALLOWLIST) {
            continue;
        }
        problems.push(format!(
            "{rel}:{line}: fn {name} is {length} lines (over {MAX_FN_LINES}); split it, or say \
             in its doc comment why it is long (a line containing \"long because\")"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checks above are only as good as the reader: it must see the edges it claims to.
#[test]
fn the_reader_finds_known_edges() {
    let krate = Crate::read();
    let all = edges(&krate);
    let file = |rel: &str| {
        krate
            .files
            .iter()
            .position(|f| f.rel == rel)
            .unwrap_or_else(|| panic!("{rel} not read"))
    };
    let has = |from: &str, to: &str| {
        let (a, b) = (file(from), file(to));
        all.iter()
            .any(|e| e.from == a && e.to == Some(b) && !e.facade)
    };
    // `use crate::cmd::exit::…` in cmd/mod.rs.
    assert!(has("src/cmd/mod.rs", "src/cmd/exit.rs"));
    // A re-export followed: `super::Metrics` is `runner/metrics.rs` (runner/mod.rs re-exports it).
    assert!(has(
        "src/engine/columnar/runner/group.rs",
        "src/engine/columnar/runner/metrics.rs"
    ));
    // A facade re-export is no dependency of the module that re-exports.
    assert!(!has(
        "src/engine/coordination/mod.rs",
        "src/engine/coordination/clock.rs"
    ));
    let lexed =
        lex("use a::{b, c::{self as d, *}}; // x\nfn f() { let s = \"}\"; r#\"{\"#; '}'; }");
    let mut j = 1;
    let mut leaves = Vec::new();
    parse_use_tree(&lexed, &mut j, Vec::new(), &mut leaves);
    assert_eq!(leaves.len(), 3, "{leaves:?}");
    assert!(leaves.iter().any(|(p, _, g)| *g && p.join("::") == "a::c"));
    assert!(
        leaves
            .iter()
            .any(|(p, b, g)| !*g && p.join("::") == "a::b" && b.as_deref() == Some("b"))
    );
    assert!(
        leaves
            .iter()
            .any(|(p, b, g)| !*g && p.join("::") == "a::c" && b.as_deref() == Some("d"))
    );
    let braces = lexed
        .iter()
        .filter(|t| matches!(t.tok, Tok::Punct('{') | Tok::Punct('}')))
        .count();
    assert_eq!(braces, 6, "strings and chars hide their braces");
}

/// One topic-partition type (issue #17; it prints as in docs/formats.md §7): `engine::topic_partition::TopicPartition`.
/// A `type` alias whose definition holds the tuple `(String, i32)`, or a second
/// `struct TopicPartition`, brings back the parallel types that printed `t/p` in one place
/// and `t-p` in another.
#[test]
fn one_topic_partition_type() {
    const HOME: &str = "src/engine/topic_partition.rs";
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut problems = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(root()).expect("under the root");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(path).expect("read a source file");
        problems.extend(topic_partition_doubles(&rel, &lex(&text), rel == HOME));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let caught = |src: &str| topic_partition_doubles("x.rs", &lex(src), false).len();
    assert_eq!(caught("pub type Tp = (String, i32);"), 1);
    assert_eq!(
        caught("type M = BTreeMap<(std::string::String, i32), i64>;"),
        1
    );
    assert_eq!(caught("pub(crate) struct TopicPartition { t: String }"), 1);
    assert_eq!(
        caught("type Key = (String, u32); // (String, i32)\nfn f(x: (String, i32)) {}"),
        0
    );
}

/// The lines of `tokens` that define a topic-partition type beside the one in the engine.
fn topic_partition_doubles(rel: &str, tokens: &[Token], home: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if !home && is_ident(Some(t), "struct") && is_ident(tokens.get(i + 1), "TopicPartition") {
            out.push(format!(
                "{rel}:{}: a second struct TopicPartition; use engine::topic_partition::TopicPartition",
                t.line
            ));
        }
        let starts_alias = is_ident(Some(t), "type")
            && ident(tokens.get(i + 1)).is_some()
            && (i == 0 || !is_punct(tokens.get(i - 1), '.'));
        if !starts_alias {
            continue;
        }
        // The alias's definition: up to its `;`, with paths reduced to their last segment.
        let body: Vec<&Token> = tokens[i + 2..]
            .iter()
            .take_while(|t| !is_punct(Some(t), ';'))
            .filter(|t| t.tok != Tok::Path)
            .collect();
        let mut names: Vec<Option<&Token>> = Vec::new();
        for t in &body {
            if ident(Some(t)).is_some()
                && names
                    .last()
                    .is_some_and(|l| l.is_some_and(|l| ident(Some(l)).is_some()))
            {
                names.pop();
            }
            names.push(Some(t));
        }
        let tuple = names.windows(5).any(|w| {
            is_punct(w[0], '(')
                && is_ident(w[1], "String")
                && is_punct(w[2], ',')
                && is_ident(w[3], "i32")
                && is_punct(w[4], ')')
        });
        if tuple {
            out.push(format!(
                "{rel}:{}: a type alias over (String, i32); use engine::topic_partition::TopicPartition",
                t.line
            ));
        }
    }
    out
}

/// clap is the command line's: `engine`, `io` and `ops` never name it (issue #17), so a
/// `ValueEnum` for one of their types is implemented in the `cmd` module that offers it.
#[test]
fn only_cmd_and_the_binaries_know_clap() {
    let mut files = Vec::new();
    for layer in ["engine", "io", "ops"] {
        rust_files(&root().join("src").join(layer), &mut files);
    }
    let mut problems = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read a source file");
        let rel = path.strip_prefix(root()).expect("under the root").display();
        for t in lex(&text) {
            if t.tok == Tok::Ident("clap".into()) {
                problems.push(format!("{rel}:{}: names clap outside cmd", t.line));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
