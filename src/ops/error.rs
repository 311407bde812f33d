//! The error every use case returns. Its kind says which row of the exit-code table
//! of `docs/cli-conventions.md` §C it belongs to; the message never contains secrets.

use std::fmt;

use crate::engine::columnar::runner::error::RunnerError;
use crate::io::kafka::auth_failure;
use crate::io::kafka::error::KafkaIoError;

/// Why a use case did not succeed, one kind per exit code of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
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

/// Message for a cancelled command (Ctrl-C or a declined prompt) that had opened a
/// client to a broker or registry.
pub const CANCELLED_MESSAGE: &str =
    "cancelled; a request in flight may already have reached the broker";

/// Message for a cancelled command that never spoke to a broker or registry.
pub const CANCELLED_OFFLINE_MESSAGE: &str = "cancelled";

/// An error that carries the kind of exit it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }
    pub fn failure(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Failure, message)
    }
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }
    pub fn check_failed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::CheckFailed, message)
    }
    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unreachable, message)
    }
    /// Warns about requests in flight only when the process built a remote client.
    pub fn cancelled() -> Self {
        let message = if crate::io::remote_contact::happened() {
            CANCELLED_MESSAGE
        } else {
            CANCELLED_OFFLINE_MESSAGE
        };
        Self::new(ErrorKind::Cancelled, message)
    }

    /// Prefixes the message with what was being done, keeping the kind.
    pub fn context(self, what: impl fmt::Display) -> Self {
        Error {
            kind: self.kind,
            message: format!("{what}: {}", self.message),
        }
    }
}

/// A schema file that cannot be read is fixed on the command line (or in the file).
impl From<crate::io::schema_file::SchemaFileError> for Error {
    fn from(e: crate::io::schema_file::SchemaFileError) -> Self {
        Error::usage(e.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::failure(e.to_string())
    }
}

/// A runner's Kafka call: a retriable failure means no answer (exit 4).
impl From<RunnerError> for Error {
    fn from(e: RunnerError) -> Self {
        if e.retriable {
            Error::unreachable(e.message)
        } else {
            Error::failure(e.message)
        }
    }
}

impl From<KafkaIoError> for Error {
    fn from(e: KafkaIoError) -> Self {
        // "No answer" built without the rdkafka error at hand (a poll that timed out):
        // a refused login explains it.
        if e.unreachable
            && let Some(refusal) = auth_failure::refusal()
        {
            let what = e.without_transport_hint();
            return Error::failure(format!("{what}: {refusal}"));
        }
        if e.unreachable {
            Error::unreachable(e.message)
        } else {
            Error::failure(e.message)
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_kind() {
        let e = Error::unreachable("no broker").context("list cuts");
        assert_eq!(e.kind, ErrorKind::Unreachable);
        assert_eq!(e.message, "list cuts: no broker");
    }
}
