//! `completions <shell>`: prints a completion script generated from the clap definitions.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cmd::Cli;
use crate::cmd::exit::CliResult;
use crate::cmd::output::finish_stdout;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Shell to generate for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> CliResult<()> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "krabka-streams", &mut out);
    finish_stdout(std::io::Write::write_all(
        &mut std::io::stdout().lock(),
        &out,
    ))
}
