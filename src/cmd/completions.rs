//! `completions <shell>`: prints a completion script generated from the clap definitions.

use clap::Args;
use clap_complete::Shell;

use crate::cmd::exit::CliResult;
use crate::cmd::output::finish_stdout;
use crate::cmd::shell_completion;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Shell to generate for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> CliResult<()> {
    let out = shell_completion::script(args.shell);
    finish_stdout(std::io::Write::write_all(
        &mut std::io::stdout().lock(),
        &out,
    ))
}
