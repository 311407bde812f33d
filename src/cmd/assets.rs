//! Generated, committed assets: shell completions (`completions/`) and man pages
//! (`man/`), produced from the clap definitions so they cannot drift. A test
//! regenerates them in memory and fails when the committed copies are stale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use clap_complete::Shell;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::{cli_command, shell_completion};

#[derive(Debug, Args)]
pub struct GenerateAssetsArgs {
    /// Repository root to write `completions/` and `man/` into.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

/// Every generated file, by path relative to the repository root.
pub fn generate() -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for (shell, name) in [
        (Shell::Bash, "krabka-streams.bash"),
        (Shell::Zsh, "_krabka-streams"),
        (Shell::Fish, "krabka-streams.fish"),
    ] {
        files.insert(
            format!("completions/{name}"),
            shell_completion::script(shell),
        );
    }
    let mut root = cli_command();
    root.build();
    man_pages(&root, "krabka-streams", &mut files);
    files
}

fn man_pages(cmd: &clap::Command, name: &str, files: &mut BTreeMap<String, Vec<u8>>) {
    if cmd.is_hide_set() {
        return;
    }
    let page = cmd.clone().name(name.to_string());
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .expect("rendering to memory cannot fail");
    files.insert(format!("man/{name}.1"), out);
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        man_pages(sub, &format!("{name}-{}", sub.get_name()), files);
    }
}

/// Writes every generated file under `root`, removing stale generated files.
pub fn write_all(root: &Path) -> std::io::Result<()> {
    let files = generate();
    for dir in ["completions", "man"] {
        let d = root.join(dir);
        std::fs::create_dir_all(&d)?;
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            let rel = format!(
                "{dir}/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            if !files.contains_key(&rel) {
                std::fs::remove_file(&path)?;
            }
        }
    }
    for (rel, bytes) in files {
        crate::io::atomic_file::write_whole(&root.join(rel), &bytes)?;
    }
    Ok(())
}

pub fn run(args: GenerateAssetsArgs) -> CliResult<()> {
    write_all(&args.root)
        .map_err(|e| CliError::failure(format!("cannot write generated assets: {e}")))?;
    eprintln!("wrote completions/ and man/ under {}", args.root.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_completions_and_man_pages_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stale = Vec::new();
        for (rel, bytes) in generate() {
            match std::fs::read(root.join(&rel)) {
                Ok(committed) if committed == bytes => {}
                _ => stale.push(rel),
            }
        }
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `cargo xtask` and commit the result"
        );
    }
}
