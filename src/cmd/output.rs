//! Rendering reports: one JSON document `{"data": …}` or human text/tables on
//! stdout, errors on stderr, a closed stdout pipe treated as success.

use std::io::{IsTerminal, Write};

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::{Value, json};

use crate::cmd::exit::{CliError, CliResult, ExitCode, is_broken_pipe};
use crate::cmd::global::{OutputArgs, OutputMode};

/// Human dry-run reports start with this line.
pub const DRY_RUN_BANNER: &str = "DRY RUN: no change was made.";

/// The output side of one command invocation.
#[derive(Debug, Clone)]
pub struct Ui {
    pub mode: OutputMode,
    pub dry_run: bool,
    pub assume_yes: bool,
}

impl Ui {
    pub fn new(args: &OutputArgs) -> Self {
        Ui {
            mode: args.output,
            dry_run: args.dry_run,
            assume_yes: args.yes,
        }
    }

    pub fn is_json(&self) -> bool {
        self.mode == OutputMode::Json
    }

    /// Prints one report: `data` as the JSON document in json mode, else `human` output.
    pub fn report(
        &self,
        data: Value,
        human: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> CliResult<()> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let result = if self.is_json() {
            let mut doc = json!({ "data": data });
            if self.dry_run {
                doc["dry_run"] = Value::Bool(true);
            }
            serde_json::to_writer(&mut out, &doc)
                .map_err(std::io::Error::other)
                .and_then(|_| writeln!(out))
        } else {
            let banner = if self.dry_run {
                writeln!(out, "{DRY_RUN_BANNER}")
            } else {
                Ok(())
            };
            banner.and_then(|_| human(&mut out))
        };
        finish_stdout(result.and_then(|_| out.flush()))
    }

    /// Asks before a destructive action unless `--yes`; refuses on a non-interactive stdin.
    pub fn confirm(&self, question: &str) -> CliResult<()> {
        if self.assume_yes {
            return Ok(());
        }
        if !std::io::stdin().is_terminal() {
            return Err(CliError::usage(
                "refusing to prompt for confirmation on a non-interactive stdin; pass --yes to proceed",
            ));
        }
        eprint!("{question} [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Ok(()),
            _ => Err(CliError::cancelled()),
        }
    }
}

/// A write error on stdout: a broken pipe means the reader is done, which is success.
pub fn finish_stdout(result: std::io::Result<()>) -> CliResult<()> {
    match result {
        Ok(()) => Ok(()),
        Err(e) if is_broken_pipe(&e) => Ok(()),
        Err(e) => Err(CliError::failure(format!("cannot write to stdout: {e}"))),
    }
}

/// A table in the house style, sized to the terminal.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().copied());
    // A terminal that reports no size (0x0, e.g. a pty under `script` or a serial
    // console) would squeeze every column to one character: use $COLUMNS, else 80.
    if t.width() == Some(0) {
        t.set_width(fallback_width(std::env::var("COLUMNS").ok().as_deref()));
    }
    t
}

/// The table width when the terminal reports none: a positive `$COLUMNS`, else 80.
fn fallback_width(columns: Option<&str>) -> u16 {
    columns
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|w| *w > 0)
        .unwrap_or(80)
}

/// Prints an error the way the mode asks: `krabka-streams <command>: <message>` or JSON on stderr.
pub fn print_error(mode: OutputMode, command: &str, err: &CliError) {
    let mut stderr = std::io::stderr().lock();
    let _ = match mode {
        OutputMode::Json => writeln!(
            stderr,
            "{}",
            json!({"error": {"code": crate::cmd::exit::code(err.kind), "message": err.message}})
        ),
        OutputMode::Human => {
            if command.is_empty() {
                writeln!(stderr, "krabka-streams: {}", err.message)
            } else {
                writeln!(stderr, "krabka-streams {command}: {}", err.message)
            }
        }
    };
}

/// Refuses binary output to a terminal (exit 2 with a hint).
pub fn refuse_binary_on_tty(what: &str) -> CliResult<()> {
    refuse_binary_on_tty_or(what, "pass --out FILE")
}

/// [`refuse_binary_on_tty`] for a command whose file flag is another (`how`, e.g.
/// `name a file: --sink NAME=FILE`).
pub fn refuse_binary_on_tty_or(what: &str, how: &str) -> CliResult<()> {
    if std::io::stdout().is_terminal() {
        return Err(CliError::new(
            ExitCode::Usage,
            format!("refusing to write {what} to a terminal; redirect stdout or {how}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_without_a_size_gets_columns_or_80() {
        assert_eq!(fallback_width(None), 80);
        assert_eq!(fallback_width(Some("132")), 132);
        assert_eq!(fallback_width(Some("0")), 80);
        assert_eq!(fallback_width(Some("wide")), 80);
    }
}
