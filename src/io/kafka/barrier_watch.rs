//! Following `__barrier_state` for new cuts (`barrier watch`): a [`CutReader`] over a
//! [`KafkaBarrierConsumer`] reads the topic to its end once (the baseline, never printed),
//! then re-reads every poll interval and reports each cut of the group whose epoch is above
//! every epoch seen so far.
//!
//! A topic that does not exist yet is waited for. The reader's idle-poll fallback is set to
//! the command timeout, so the baseline read never ends early on a slow first fetch: reads end
//! at the end offsets captured when they start (decision D16).

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use crate::engine::columnar::barrier::cut_log::BarrierCut;
use crate::engine::columnar::barrier::reader::{
    CutReadError, CutReader, CutReaderOptions, DEFAULT_CUT_POLL_TIMEOUT,
};
use crate::engine::columnar::barrier::record::{BARRIER_STATE_TOPIC, NO_EPOCH};
use crate::engine::columnar::barrier::unknown_group::{UnknownGroup, require_group};
use crate::io::kafka::auth_failure;
use crate::io::kafka::barrier_consumer::KafkaBarrierConsumer;
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::settings::KafkaSettings;

/// What to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchOptions {
    pub group: String,
    /// Report partial cuts too (they still consume epochs).
    pub include_partial: bool,
    /// Pause between reads once the baseline is read.
    pub poll_interval: Duration,
    /// Bound of each metadata request and of the reads' idle fallback.
    pub timeout: Duration,
}

/// What the follower tells its caller.
#[derive(Debug)]
pub enum WatchEvent<'a> {
    /// `__barrier_state` does not exist yet (reported once).
    WaitingForTopic,
    /// The baseline is read; later cuts have an epoch above `last_epoch` (−1 = none yet).
    /// `unknown` is set when the topic already existed and holds other groups but no
    /// record of this one (a typo, most likely).
    Following {
        partitions: i32,
        last_epoch: i64,
        unknown: Option<UnknownGroup>,
    },
    /// A new cut of the group.
    Cut(&'a BarrierCut),
}

/// How following ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEnd {
    /// The caller's callback asked to stop.
    Stopped,
    /// `cancelled` became true.
    Cancelled,
}

/// Why following failed.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Kafka(#[from] KafkaIoError),
    /// A malformed record, or the consumer failed during a read.
    #[error("{BARRIER_STATE_TOPIC}: {0}")]
    Read(#[from] CutReadError),
}

impl WatchError {
    /// Whether the broker could not be reached (the consumer's error says so).
    pub fn is_unreachable(&self) -> bool {
        match self {
            WatchError::Kafka(e) => e.unreachable,
            WatchError::Read(CutReadError::Consumer { error, .. }) => error
                .downcast_ref::<KafkaIoError>()
                .is_some_and(|e| e.unreachable),
            WatchError::Read(CutReadError::Malformed(_)) => false,
        }
    }
}

/// Follows the group's cuts until `on_event` breaks or `cancelled()` turns true.
pub fn follow_cuts(
    settings: &KafkaSettings,
    options: &WatchOptions,
    cancelled: &dyn Fn() -> bool,
    mut on_event: impl FnMut(WatchEvent<'_>) -> ControlFlow<()>,
) -> Result<WatchEnd, WatchError> {
    let consumer = KafkaBarrierConsumer::new(settings, options.timeout)?;
    let mut waiting_reported = false;
    let partitions = loop {
        if let Some(n) = consumer.partition_count(BARRIER_STATE_TOPIC)? {
            break n;
        }
        if !waiting_reported {
            waiting_reported = true;
            if on_event(WatchEvent::WaitingForTopic).is_break() {
                return Ok(WatchEnd::Stopped);
            }
        }
        if pause(options.poll_interval.max(Duration::from_secs(1)), cancelled) {
            return Ok(WatchEnd::Cancelled);
        }
    };
    let idle_polls = (options.timeout.as_millis() / DEFAULT_CUT_POLL_TIMEOUT.as_millis()).max(1);
    let reader_options = CutReaderOptions {
        idle_polls: u32::try_from(idle_polls).unwrap_or(u32::MAX),
        ..CutReaderOptions::default()
    };
    let mut reader = CutReader::new(consumer, partitions, reader_options)
        .map_err(|e| KafkaIoError::failed(format!("cannot follow {BARRIER_STATE_TOPIC}: {e}")))?;
    let baseline = reader.read()?;
    // A watch that had to wait for the topic, or that finds it holding no group at all,
    // follows a cluster being set up: its group is expected to appear. A topic holding
    // other groups but not this one means a typo.
    let unknown = if waiting_reported || baseline.groups().is_empty() {
        None
    } else {
        require_group(baseline, true, &options.group).err()
    };
    let mut last_epoch = baseline
        .cuts(&options.group)
        .last()
        .map_or(NO_EPOCH, |c| c.epoch);
    if on_event(WatchEvent::Following {
        partitions,
        last_epoch,
        unknown,
    })
    .is_break()
    {
        return Ok(WatchEnd::Stopped);
    }
    loop {
        if pause(options.poll_interval, cancelled) {
            return Ok(WatchEnd::Cancelled);
        }
        let cuts = reader.read()?;
        // A login refused after a reconnect (credentials rotated) would otherwise look
        // like a quiet topic for ever.
        if let Some(e) = auth_failure::access_lost(&format!("follow {BARRIER_STATE_TOPIC}")) {
            return Err(e.into());
        }
        for cut in cuts.cuts(&options.group) {
            if cut.epoch <= last_epoch {
                continue;
            }
            last_epoch = cut.epoch;
            if (cut.cut.is_complete() || options.include_partial)
                && on_event(WatchEvent::Cut(&cut)).is_break()
            {
                return Ok(WatchEnd::Stopped);
            }
        }
    }
}

/// Sleeps for `duration` in short steps; true when `cancelled()` turned true meanwhile.
fn pause(duration: Duration, cancelled: &dyn Fn() -> bool) -> bool {
    let until = Instant::now() + duration;
    loop {
        if cancelled() {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}
