//! `barrier watch`: follows `__barrier_state` and hands each new cut of a group to the
//! caller, until it has `count` of them, the caller stops, or `cancelled` is set.

use std::ops::ControlFlow;
use std::time::Duration;

use crate::engine::columnar::barrier::{BARRIER_STATE_TOPIC, BarrierCut};
use crate::io::kafka::barrier_watch::{
    WatchEnd, WatchError, WatchEvent, WatchOptions, follow_cuts,
};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, Result};

/// What to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchPlan {
    pub group: String,
    /// Stop (successfully) after this many new cuts.
    pub count: Option<u64>,
    /// Partial cuts too.
    pub include_partial: bool,
    pub poll_interval: Duration,
    /// Bound of each broker request.
    pub timeout: Duration,
}

/// What `emit` tells the watch after printing a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emitted {
    /// Printed; go on.
    Printed,
    /// The reader went away (a closed pipe): stop, successfully.
    ReaderGone,
}

/// Follows the group's new cuts (those published after the start), passing each to `emit`.
/// An unknown group (the topic holds others but none of it) is a failure; Ctrl-C is
/// [`crate::ops::ErrorKind::Cancelled`]; an error of `emit` ends the watch with it.
pub fn watch(
    settings: &KafkaSettings,
    plan: &WatchPlan,
    cancelled: &dyn Fn() -> bool,
    mut emit: impl FnMut(&BarrierCut) -> Result<Emitted>,
) -> Result<()> {
    let options = WatchOptions {
        group: plan.group.clone(),
        include_partial: plan.include_partial,
        poll_interval: plan.poll_interval,
        timeout: plan.timeout,
    };
    let mut printed = 0u64;
    // Why the callback stopped early, when not because of `count`.
    let mut stop: Option<Result<()>> = None;
    let end = follow_cuts(settings, &options, cancelled, |event| match event {
        WatchEvent::WaitingForTopic => {
            tracing::info!("{BARRIER_STATE_TOPIC} does not exist yet; waiting for it");
            ControlFlow::Continue(())
        }
        WatchEvent::Following {
            unknown: Some(unknown),
            ..
        } => {
            stop = Some(Err(Error::failure(unknown.to_string())));
            ControlFlow::Break(())
        }
        WatchEvent::Following {
            partitions,
            last_epoch,
            unknown: None,
        } => {
            let after = if last_epoch < 1 {
                String::new()
            } else {
                format!(" after epoch {last_epoch}")
            };
            tracing::info!(
                "following {BARRIER_STATE_TOPIC} ({partitions} partitions) for new cuts of group {}{after}; Ctrl-C stops",
                plan.group
            );
            ControlFlow::Continue(())
        }
        WatchEvent::Cut(cut) => match emit(cut) {
            Ok(Emitted::Printed) => {
                printed += 1;
                if plan.count.is_some_and(|n| printed >= n) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            }
            Ok(Emitted::ReaderGone) => {
                stop = Some(Ok(()));
                ControlFlow::Break(())
            }
            Err(e) => {
                stop = Some(Err(e));
                ControlFlow::Break(())
            }
        },
    })
    .map_err(watch_error)?;
    match (stop, end) {
        (Some(outcome), _) => outcome,
        (None, WatchEnd::Cancelled) => Err(Error::cancelled()),
        (None, WatchEnd::Stopped) => Ok(()),
    }
}

fn watch_error(e: WatchError) -> Error {
    if e.is_unreachable() {
        Error::unreachable(e.to_string())
    } else {
        Error::failure(e.to_string())
    }
}
