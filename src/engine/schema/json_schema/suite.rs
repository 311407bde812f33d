//! A runner for the official JSON-Schema-Test-Suite, ignored by default: the suite is
//! reference data and is not in this repository. Run it with
//! `JSON_SCHEMA_SUITE=/path/to/JSON-Schema-Test-Suite cargo test --lib json_schema_suite -- --ignored --nocapture`
//! (optionally `JSON_SCHEMA_SUITE_DIRS=draft7,draft2020-12/optional/bignum.json`); it
//! prints the pass count of each draft and every failure, and never fails itself.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::JsonSchema;

const DRAFTS: &str = "draft4,draft6,draft7,draft2019-09,draft2020-12";

fn files_under(path: &Path, out: &mut Vec<PathBuf>, recurse: bool) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            if recurse {
                files_under(&entry, out, recurse);
            }
        } else if entry.extension().is_some_and(|e| e == "json") {
            out.push(entry);
        }
    }
}

/// Every remote of the suite, served at the URI the suite's tests use for it.
fn remotes(root: &Path) -> Vec<(String, String)> {
    let base = root.join("remotes");
    let mut files = Vec::new();
    files_under(&base, &mut files, true);
    files
        .into_iter()
        .filter(|f| {
            let rel = f.strip_prefix(&base).unwrap().to_string_lossy().to_string();
            !rel.starts_with("draft3") && !rel.starts_with("v1")
        })
        .map(|f| {
            let rel = f
                .strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (
                format!("http://localhost:1234/{rel}"),
                std::fs::read_to_string(&f).unwrap(),
            )
        })
        .collect()
}

fn meta_of(dir: &str) -> Option<&'static str> {
    let draft = dir.split('/').next()?;
    Some(match draft {
        "draft4" => "http://json-schema.org/draft-04/schema#",
        "draft6" => "http://json-schema.org/draft-06/schema#",
        "draft7" => "http://json-schema.org/draft-07/schema#",
        "draft2019-09" => "https://json-schema.org/draft/2019-09/schema",
        "draft2020-12" => "https://json-schema.org/draft/2020-12/schema",
        _ => return None,
    })
}

/// `JSON_SCHEMA_VERDICTS=FILE`: one schema a line; prints `OK` or the refusal for each, to
/// compare what two builds accept.
#[test]
#[ignore]
fn json_schema_verdicts() {
    let Ok(path) = std::env::var("JSON_SCHEMA_VERDICTS") else {
        eprintln!("JSON_SCHEMA_VERDICTS is not set");
        return;
    };
    for line in std::fs::read_to_string(path).unwrap().lines() {
        if line.trim().is_empty() {
            continue;
        }
        let line = line.to_string();
        let verdict = std::panic::catch_unwind(move || match JsonSchema::parse(&line) {
            Ok(_) => "OK".to_string(),
            Err(e) => format!("ERR {e}"),
        })
        .unwrap_or_else(|_| "PANIC".into());
        println!("VERDICT {verdict}");
    }
}

#[test]
#[ignore]
fn json_schema_suite() {
    let Ok(root) = std::env::var("JSON_SCHEMA_SUITE") else {
        eprintln!("JSON_SCHEMA_SUITE is not set");
        return;
    };
    let root = PathBuf::from(root);
    let references = remotes(&root);
    let dirs = std::env::var("JSON_SCHEMA_SUITE_DIRS").unwrap_or_else(|_| DRAFTS.into());
    let mut summary = Vec::new();
    for dir in dirs.split(',') {
        let mut files = Vec::new();
        files_under(&root.join("tests").join(dir), &mut files, false);
        let (mut passed, mut total) = (0usize, 0usize);
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let groups: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            for group in groups {
                let description = group["description"].as_str().unwrap_or("").to_string();
                let mut schema = group["schema"].clone();
                // The suite's draft 4/6/7 schemas leave the draft to the runner.
                if let (Some(object), Some(uri)) = (schema.as_object_mut(), meta_of(dir)) {
                    object
                        .entry("$schema")
                        .or_insert_with(|| Value::String(uri.into()));
                }
                let schema_text = schema.to_string();
                let tests = group["tests"].as_array().cloned().unwrap_or_default();
                let refs = references.clone();
                let outcome = std::panic::catch_unwind(move || {
                    let compiled = JsonSchema::parse_with_references(&schema_text, &refs);
                    tests
                        .iter()
                        .map(|t| {
                            let expect = t["valid"].as_bool().unwrap();
                            let got = match &compiled {
                                Ok(s) => Ok(s.validate(&t["data"]).is_ok()),
                                Err(e) => Err(e.to_string()),
                            };
                            (
                                t["description"].as_str().unwrap_or("").to_string(),
                                expect,
                                got,
                            )
                        })
                        .collect::<Vec<_>>()
                });
                let Ok(results) = outcome else {
                    let n = group["tests"].as_array().map_or(0, Vec::len);
                    total += n;
                    println!("FAIL {dir}/{name} | {description} | PANIC ({n} tests)");
                    continue;
                };
                for (test, expect, got) in results {
                    total += 1;
                    match got {
                        Ok(valid) if valid == expect => passed += 1,
                        Ok(valid) => println!(
                            "FAIL {dir}/{name} | {description} | {test} | expected valid={expect}, got {valid}"
                        ),
                        Err(e) => println!(
                            "FAIL {dir}/{name} | {description} | {test} | schema refused: {e}"
                        ),
                    }
                }
            }
        }
        summary.push(format!("{dir}: {passed}/{total}"));
    }
    for line in summary {
        println!("SUMMARY {line}");
    }
}
