//! The runner's error and the topic-partition it keys offsets by, apart from the group
//! runner so that the barrier aligner, which the runner drives, can name them without
//! importing the runner.

/// A topic-partition.
pub type Tp = (String, i32);

/// A runner failure; `retriable` ones (a pending schema fetch) leave everything
/// to be consumed again. Transaction failures, fencing included, are never
/// retriable: the run stops.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RunnerError {
    pub message: String,
    pub retriable: bool,
}

impl RunnerError {
    pub fn new(message: impl Into<String>) -> Self {
        RunnerError {
            message: message.into(),
            retriable: false,
        }
    }
}
