//! Entry point: parse arguments, dispatch, map errors to exit codes. Nothing else.

use krabka_streams::cmd;

fn main() {
    let cli = match cmd::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err((e, mode)) => std::process::exit(cmd::report_clap_error(e, mode)),
    };
    let mode = cli.global.output.output;
    let name = cli.command.name();
    if let Err(e) = cmd::dispatch(cli) {
        cmd::output::print_error(mode, name, &e);
        std::process::exit(cmd::exit::code(e.kind));
    }
}
