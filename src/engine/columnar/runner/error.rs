//! The runner's error, apart from the group runner so that the barrier aligner, which
//! the runner drives, can name it without importing the runner. Offsets are keyed by
//! `engine::topic_partition::TopicPartition`, the one topic-partition type.

/// A runner failure; `retriable` ones (a pending schema fetch) leave everything
/// to be consumed again. Transaction failures are never retriable: the round is
/// aborted. A `fenced` one says this member lost the right to write for its
/// partitions, or that its transaction could not be aborted (its outcome is the
/// broker's to tell): the online run drops its in-memory state and rejoins the
/// group with a new producer instead of stopping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RunnerError {
    pub message: String,
    pub retriable: bool,
    pub fenced: Option<Fence>,
}

/// How a member was fenced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fence {
    /// Another producer initialised this member's `transactional.id`: a
    /// replacement of this member, or another member sharing the id (which a
    /// rejoin would fence in turn, so the run stops when it happens again soon).
    Producer,
    /// The group refused the transaction's offsets as of a stale generation:
    /// it moved on without this member (paused past its session).
    Group,
    /// The transaction could neither commit nor abort (Tansu times out the
    /// commit of a producer whose id was taken over): only a new producer can
    /// end it.
    Unresolved,
}

impl RunnerError {
    pub fn new(message: impl Into<String>) -> Self {
        RunnerError {
            message: message.into(),
            retriable: false,
            fenced: None,
        }
    }

    /// This member was fenced (see [`Fence`]).
    pub fn fenced(fence: Fence, message: impl Into<String>) -> Self {
        RunnerError {
            fenced: Some(fence),
            ..RunnerError::new(message)
        }
    }
}
