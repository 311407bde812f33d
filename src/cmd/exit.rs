//! The one exit-code table of `docs/cli-conventions.md` §C and the error type every
//! subcommand returns. The binary maps a `CliError` to its code and nothing else.

use std::fmt;

/// Process exit codes shared by every subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Ok,
    /// The operation ran and failed, or any row failed.
    Failure,
    /// Fixable by changing the command line.
    Usage,
    /// The command ran and the answer is "no".
    CheckFailed,
    /// Broker or registry unreachable, or the outcome is unknown.
    Unreachable,
    /// Ctrl-C or a declined prompt.
    Cancelled,
    /// The exit code of a command run on our behalf (`leader run`), passed
    /// through as is (128 + n when it died of signal n).
    Passthrough(i32),
}

impl ExitCode {
    pub fn code(self) -> i32 {
        match self {
            ExitCode::Ok => 0,
            ExitCode::Failure => 1,
            ExitCode::Usage => 2,
            ExitCode::CheckFailed => 3,
            ExitCode::Unreachable => 4,
            ExitCode::Cancelled => 130,
            ExitCode::Passthrough(code) => code,
        }
    }
}

/// Message for a cancelled command (Ctrl-C or a declined prompt).
pub const CANCELLED_MESSAGE: &str =
    "cancelled; a request in flight may already have reached the broker";

/// An error that carries the exit code it maps to. The message never contains secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    pub code: ExitCode,
    pub message: String,
}

impl CliError {
    pub fn new(code: ExitCode, message: impl Into<String>) -> Self {
        CliError {
            code,
            message: message.into(),
        }
    }
    pub fn failure(message: impl Into<String>) -> Self {
        Self::new(ExitCode::Failure, message)
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ExitCode::Usage, message)
    }
    pub fn check_failed(message: impl Into<String>) -> Self {
        Self::new(ExitCode::CheckFailed, message)
    }
    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new(ExitCode::Unreachable, message)
    }
    pub fn cancelled() -> Self {
        Self::new(ExitCode::Cancelled, CANCELLED_MESSAGE)
    }

    /// Prefixes the message with what was being done, keeping the code.
    pub fn context(self, what: impl fmt::Display) -> Self {
        CliError {
            code: self.code,
            message: format!("{what}: {}", self.message),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::failure(e.to_string())
    }
}

pub type CliResult<T> = Result<T, CliError>;

/// True when an I/O error means the reader of stdout went away: not a failure.
pub fn is_broken_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_convention_table() {
        assert_eq!(ExitCode::Ok.code(), 0);
        assert_eq!(ExitCode::Failure.code(), 1);
        assert_eq!(ExitCode::Usage.code(), 2);
        assert_eq!(ExitCode::CheckFailed.code(), 3);
        assert_eq!(ExitCode::Unreachable.code(), 4);
        assert_eq!(ExitCode::Cancelled.code(), 130);
    }

    #[test]
    fn context_keeps_the_code() {
        let e = CliError::unreachable("no broker").context("list cuts");
        assert_eq!(e.code, ExitCode::Unreachable);
        assert_eq!(e.message, "list cuts: no broker");
    }
}
