//! Shell completion as a user's shell runs it: the script `completions SHELL` prints is
//! loaded into a real shell process and asked for candidates the way the shell asks on TAB
//! (bash: `COMP_WORDS`/`COMP_CWORD` and the completion function; zsh and fish when they
//! are installed). Also: the hidden `generate-assets` is never offered, and each command's
//! help is short where the command uses few of the shared flags.

use std::process::Command;

use crate::support::binary;

fn script(shell: &str) -> String {
    let out = Command::new(binary())
        .args(["completions", shell])
        .output()
        .expect("run completions");
    assert!(out.status.success(), "completions {shell} failed");
    String::from_utf8(out.stdout).expect("UTF-8 script")
}

/// The candidates bash offers for `words` (the last one being the word under the cursor).
fn bash_candidates(words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("krabka-streams.bash");
    std::fs::write(&path, script("bash")).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let program = format!(
        "source '{}'\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={cword}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         _krabka__streams krabka-streams '{}' '{}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        path.display(),
        quoted.join(" "),
        words[cword],
        words[cword - 1],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .current_dir(dir.path())
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect()
}

fn assert_offers(candidates: &[String], expected: &[&str], what: &str) {
    for e in expected {
        assert!(
            candidates.iter().any(|c| c == e),
            "{what}: {e:?} not offered; got {candidates:?}"
        );
    }
}

#[test]
fn bash_completes_nested_subcommands_and_flag_values() {
    let top = bash_candidates(&["krabka-streams", ""]);
    assert_offers(&top, &["tail", "snapshot", "leader"], "first word");
    assert!(
        !top.iter().any(|c| c == "generate-assets"),
        "the hidden generate-assets is offered: {top:?}"
    );

    let snapshot = bash_candidates(&["krabka-streams", "snapshot", ""]);
    assert_offers(
        &snapshot,
        &["list", "dump", "restore", "verify", "prune", "restore-cut"],
        "snapshot <TAB>",
    );

    let inspect = bash_candidates(&["krabka-streams", "schema", "inspect", ""]);
    assert_offers(
        &inspect,
        &["subjects", "versions", "id-usage"],
        "schema inspect <TAB>",
    );

    let flags = bash_candidates(&["krabka-streams", "snapshot", "restore-cut", "--"]);
    assert_offers(
        &flags,
        &[
            "--group",
            "--epoch",
            "--snapshot-dir",
            "--consumer-group",
            "--bootstrap-server",
        ],
        "snapshot restore-cut --<TAB>",
    );
    // `snapshot list --state-topic` reads a broker, never a registry.
    let list_flags = bash_candidates(&["krabka-streams", "snapshot", "list", "--"]);
    assert_offers(
        &list_flags,
        &["--state-topic", "--bootstrap-server"],
        "snapshot list --<TAB>",
    );
    assert!(
        !list_flags.iter().any(|c| c == "--registry"),
        "snapshot list offers connection flags it ignores: {list_flags:?}"
    );
    let decode_flags = bash_candidates(&["krabka-streams", "barrier", "decode", "--"]);
    assert!(
        !decode_flags
            .iter()
            .any(|c| c == "--bootstrap-server" || c == "--registry"),
        "barrier decode offers connection flags it ignores: {decode_flags:?}"
    );

    let formats = bash_candidates(&["krabka-streams", "tail", "orders", "--format", ""]);
    assert_offers(
        &formats,
        &["arrow", "arrow-file", "parquet", "ndjson", "table"],
        "tail --format <TAB>",
    );
    let shells = bash_candidates(&["krabka-streams", "completions", ""]);
    assert_offers(&shells, &["bash", "zsh", "fish"], "completions <TAB>");
    let layouts = bash_candidates(&["krabka-streams", "barrier", "verify", "--layout", ""]);
    assert_offers(
        &layouts,
        &["java-go", "rust"],
        "barrier verify --layout <TAB>",
    );
}

fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn fish_completes_nested_subcommands_when_fish_is_installed() {
    if !installed("fish") {
        eprintln!("SKIPPED: fish is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("krabka-streams.fish");
    std::fs::write(&path, script("fish")).unwrap();
    let out = Command::new("fish")
        .args([
            "--no-config",
            "-c",
            &format!(
                "source '{}'; complete -C 'krabka-streams snapshot '",
                path.display()
            ),
        ])
        .output()
        .expect("run fish");
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["list", "restore-cut"] {
        assert!(
            text.lines().any(|l| l.split('\t').next() == Some(sub)),
            "fish: {sub} not offered: {text}"
        );
    }
}

#[test]
fn zsh_script_loads_and_names_nested_subcommands_when_zsh_is_installed() {
    if !installed("zsh") {
        eprintln!("SKIPPED: zsh is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("_krabka-streams"), script("zsh")).unwrap();
    let out = Command::new("zsh")
        .args([
            "-f",
            "-c",
            &format!(
                "fpath=('{}' $fpath); autoload -Uz compinit && compinit -u -D; \
                 autoload -Uz _krabka-streams; whence -w _krabka-streams__subcmd__snapshot_commands",
                dir.path().display()
            ),
        ])
        .output()
        .expect("run zsh");
    assert!(
        out.status.success(),
        "zsh: {} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn help_lines(args: &[&str]) -> Vec<String> {
    let out = Command::new(binary())
        .args(args)
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success(), "{args:?} --help failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn help_lists_only_the_shared_flags_a_command_uses_and_no_decision_numbers() {
    let completions = help_lines(&["completions"]);
    assert!(
        completions.len() <= 25,
        "completions --help is {} lines",
        completions.len()
    );
    // The connection flags (for --state-topic) and the output flags, not the registry's.
    let list = help_lines(&["snapshot", "list"]);
    assert!(
        list.len() <= 70,
        "snapshot list --help is {} lines",
        list.len()
    );
    let text = list.join("\n");
    for flag in ["--bootstrap-server", "--command-config", "--state-topic"] {
        assert!(text.contains(flag), "snapshot list --help lacks {flag}");
    }
    for flag in ["--registry", "--dry-run", "--yes"] {
        assert!(!text.contains(flag), "snapshot list --help shows {flag}");
    }
    let tail = help_lines(&["tail"]).join("\n");
    for flag in [
        "--bootstrap-server",
        "--registry",
        "--command-config",
        "--timeout",
    ] {
        assert!(tail.contains(flag), "tail --help lacks {flag}");
    }
    let decision = regex_lite_decision();
    for args in [
        &["snapshot", "restore"][..],
        &["snapshot", "dump"],
        &["leader", "status"],
        &["tail"],
        &["run"],
    ] {
        for line in help_lines(args) {
            assert!(
                !decision(&line),
                "{args:?} --help cites a decision number: {line}"
            );
        }
    }
}

/// Whether a line cites an internal decision number such as `(D14)` or `D6`.
fn regex_lite_decision() -> impl Fn(&str) -> bool {
    |line: &str| {
        let bytes = line.as_bytes();
        (0..bytes.len()).any(|i| {
            bytes[i] == b'D'
                && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                && {
                    let end = (i + 1..bytes.len())
                        .find(|&j| !bytes[j].is_ascii_digit())
                        .unwrap_or(bytes.len());
                    end - i <= 3 && bytes.get(end).is_none_or(|b| !b.is_ascii_alphanumeric())
                }
        })
    }
}
