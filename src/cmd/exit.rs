//! The one exit-code table of `docs/cli-conventions.md` §C. A use case returns an
//! [`ops::Error`](crate::ops::Error); this module alone turns its kind into the
//! process's exit code.

pub use crate::ops::error::{Error as CliError, ErrorKind as ExitCode};

pub type CliResult<T> = crate::ops::Result<T>;

/// The process exit code of a successful command.
pub const OK: i32 = 0;

/// The process exit code for an error of this kind.
pub fn code(kind: ExitCode) -> i32 {
    match kind {
        ExitCode::Failure => 1,
        ExitCode::Usage => 2,
        ExitCode::CheckFailed => 3,
        ExitCode::Unreachable => 4,
        ExitCode::Cancelled => 130,
        ExitCode::Passthrough(code) => code,
    }
}

/// True when an I/O error means the reader of stdout went away: not a failure.
pub fn is_broken_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_convention_table() {
        assert_eq!(OK, 0);
        assert_eq!(code(ExitCode::Failure), 1);
        assert_eq!(code(ExitCode::Usage), 2);
        assert_eq!(code(ExitCode::CheckFailed), 3);
        assert_eq!(code(ExitCode::Unreachable), 4);
        assert_eq!(code(ExitCode::Cancelled), 130);
        assert_eq!(code(ExitCode::Passthrough(137)), 137);
    }
}
