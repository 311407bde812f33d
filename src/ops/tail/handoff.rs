//! What the two sides of the tail pipeline exchange, in a module of its own so
//! neither side imports the other: the decode side's reports to
//! the poll side, the flags both read, and the arena's byte limit both obey.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::engine::topic_partition::TopicPartition;

/// Largest number of value bytes put into one arena (the poll side fills up to it;
/// the decode side retries held records in batches of at most it).
pub const BATCH_BYTES: usize = 16 << 20;

/// What the decode side tells the poll side.
#[derive(Debug, PartialEq, Eq)]
pub enum Report {
    /// A record's writer schema is pending: stop fetching the partition.
    Pause(TopicPartition),
    /// The partition's held records are written: fetch it again after the last
    /// record the poll side delivered.
    Resume(TopicPartition),
    /// Group mode: records before these offsets are written (or skipped) and may be committed.
    Processed(Vec<(TopicPartition, i64)>),
}

/// State both sides read.
pub struct Shared {
    /// Rows written so far (progress display, `--max-records`).
    pub records: AtomicU64,
    /// Ctrl-C or SIGTERM: both sides stop (the decode side may be alone, waiting
    /// for the schema of held records after the poll side is done).
    pub cancelled: Arc<AtomicBool>,
    /// The poll side stopped on an error or a signal: write nothing more.
    pub abort: AtomicBool,
    /// The decode side stopped (failure, closed output, `--max-records` reached).
    pub over: AtomicBool,
    /// Ends the poll side's wait for records once `over` is set.
    pub wake_poll: std::sync::OnceLock<crate::io::kafka::fetch_queue::FetchWaker>,
}

impl Shared {
    pub fn new(cancelled: Arc<AtomicBool>) -> Self {
        Shared {
            records: AtomicU64::new(0),
            cancelled,
            abort: AtomicBool::new(false),
            over: AtomicBool::new(false),
            wake_poll: std::sync::OnceLock::new(),
        }
    }
}
