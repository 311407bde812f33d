//! The runner's error, apart from the group runner so that the barrier aligner, which
//! the runner drives, can name it without importing the runner. Offsets are keyed by
//! `engine::topic_partition::TopicPartition`, the one topic-partition type.

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
