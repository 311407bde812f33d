//! Shell completion scripts of the public command line, shared by `completions` and the
//! committed `completions/` files.

use clap_complete::Shell;

/// The binary's name as the shells see it.
pub const BIN: &str = "krabka-streams";

/// The completion script for `shell`.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    let mut cmd = crate::cmd::flag_scope::for_completion(
        <crate::cmd::Cli as clap::CommandFactory>::command(),
    );
    clap_complete::generate(shell, &mut cmd, BIN, &mut out);
    match shell {
        Shell::Bash => fix_bash_names(&out),
        _ => out,
    }
}

/// clap_complete 4.6's bash script names each command's state twice and inconsistently for a
/// binary name with a `-`: the assignments `cmd="krabka__streams__subcmd__tail"` turn the
/// name's `-` into `__`, the case arms that read `$cmd` turn it into `__subcmd__`
/// (`krabka__subcmd__streams__subcmd__tail)`), so no arm below the first word ever matched
/// and `krabka-streams snapshot <TAB>` fell back to file names. Rewrite the arms' spelling to
/// the assignments'.
fn fix_bash_names(script: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(script);
    let wrong = BIN.replace('-', "__subcmd__");
    let right = BIN.replace('-', "__");
    text.replace(&wrong, &right).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state name a case arm tests is one some assignment sets, and the hidden
    /// `generate-assets` is nowhere.
    #[test]
    fn the_bash_script_arms_match_its_assignments() {
        let text = String::from_utf8(script(Shell::Bash)).unwrap();
        let assigned: std::collections::BTreeSet<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("cmd=\""))
            .filter_map(|l| l.strip_suffix('"'))
            .collect();
        let arms: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("krabka") && l.ends_with(')') && !l.contains(','))
            .map(|l| l.trim_end_matches(')'))
            .collect();
        assert!(arms.len() > 20, "found only {} case arms", arms.len());
        let orphans: Vec<&&str> = arms.iter().filter(|a| !assigned.contains(**a)).collect();
        assert!(orphans.is_empty(), "case arms nothing assigns: {orphans:?}");
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = String::from_utf8(script(shell)).unwrap();
            assert!(
                !text.contains("generate-assets") && !text.contains("generate__"),
                "{shell} completion offers the hidden generate-assets"
            );
        }
    }
}
