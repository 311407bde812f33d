//! Closing a group consumer without rdkafka's idle wait. rdkafka's drop of a
//! consumer with a `group.id` (every consumer: librdkafka assigns partitions only
//! through a group handle) closes it and then polls in slices of 100 ms until it
//! is closed; librdkafka ends the close with a wake-up that such a poll does not
//! return on, so every drop took 100 ms even when the close itself took a
//! millisecond — a third of a whole `tail -n 1`. Here the same close is made and
//! served in short slices; rdkafka's drop then finds it closed (its own attempt to
//! close again is refused, which it logs: `cmd::logging` keeps that line out).

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, ConsumerContext};

/// How long one poll waits while the close runs: short, as nothing but the close's
/// own events (a group's revoke, the final commit) comes now.
const SLICE: Duration = Duration::from_millis(1);

/// Closes `consumer` (its group membership left, auto-committed offsets committed,
/// exactly as rdkafka's drop would) and returns once librdkafka says it is closed.
/// A consumer without a group handle has nothing to close.
pub fn close<C: ConsumerContext>(consumer: &BaseConsumer<C>) {
    if consumer.closed() || consumer.close_queue().is_err() {
        return;
    }
    // Unbounded like rdkafka's own loop: librdkafka bounds the close itself (its
    // LeaveGroup and commit requests time out), and the rebalance callbacks run here.
    while !consumer.closed() {
        let _ = consumer.poll(SLICE);
    }
}
