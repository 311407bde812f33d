//! The runner's error, apart from the group runner so that the barrier aligner, which
//! the runner drives, can name it without importing the runner. Offsets are keyed by
//! `engine::topic_partition::TopicPartition`, the one topic-partition type.

/// A runner failure; `retriable` ones (a pending schema fetch) leave everything
/// to be consumed again. Transaction failures are never retriable: the round is
/// aborted. A `fenced` one says this member lost the right to write for its
/// partitions (its transactional producer was fenced, or the group moved on to
/// a newer generation without it), or that its transaction could not be aborted
/// (its outcome is the broker's to tell): the online run drops its in-memory
/// state and rejoins the group with a new producer instead of stopping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RunnerError {
    pub message: String,
    pub retriable: bool,
    pub fenced: bool,
}

impl RunnerError {
    pub fn new(message: impl Into<String>) -> Self {
        RunnerError {
            message: message.into(),
            retriable: false,
            fenced: false,
        }
    }

    /// This member was fenced (see the type's documentation).
    pub fn fenced(message: impl Into<String>) -> Self {
        RunnerError {
            fenced: true,
            ..RunnerError::new(message)
        }
    }
}
