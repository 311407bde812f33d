//! The producer to flush when a signal ends the process.
//!
//! A command that produces (`produce`) may be blocked reading its input when Ctrl-C
//! or SIGTERM arrives, so it cannot stop between records itself; the signal listener
//! ends the process instead (`cmd::interrupt`). Records already handed to librdkafka
//! but not yet sent would die with it: before exiting, the listener flushes the one
//! producer registered here, bounded, and says what it could not deliver.
//!
//! Soundness: the registration holds the producer's native handle under a mutex; the
//! owner unregisters (taking the same lock, so it waits for a flush in progress)
//! before the producer is dropped, so the handle is never used after it is freed.
//! librdkafka's flush may run concurrently with produce calls of another thread.

use std::sync::Mutex;
use std::time::Duration;

use rdkafka::bindings as rdsys;

/// The native handle of the registered producer.
struct Handle(*mut rdsys::rd_kafka_t);

// SAFETY: librdkafka handles are thread-safe; the pointer is only used while the
// mutex is held and the owner unregisters it (under the mutex) before freeing it.
unsafe impl Send for Handle {}

static REGISTERED: Mutex<Option<Handle>> = Mutex::new(None);

/// Registers the producer behind `native` as the one to flush on a signal.
///
/// # Safety
/// `native` must stay a live producer handle until [`unregister`] returns.
pub unsafe fn register(native: *mut rdsys::rd_kafka_t) {
    if let Ok(mut slot) = REGISTERED.lock() {
        *slot = Some(Handle(native));
    }
}

/// Forgets the registered producer; waits for a flush in progress.
pub fn unregister() {
    if let Ok(mut slot) = REGISTERED.lock() {
        *slot = None;
    }
}

/// Flushes the registered producer for at most `bound`: `None` when none is
/// registered, else the number of records still not delivered (0: all delivered).
///
/// The producer reports deliveries as events on its main queue, which its owner
/// serves; the owner is blocked elsewhere, so this serves them itself (dropping the
/// reports: the process is about to exit) until nothing is left or `bound` passes.
pub fn flush_registered(bound: Duration) -> Option<i32> {
    let slot = REGISTERED.lock().ok()?;
    let handle = slot.as_ref()?;
    let deadline = std::time::Instant::now() + bound;
    // SAFETY: the handle is live while registered (see the module doc) and the lock is
    // held; the queue reference taken here is released before returning, and every event
    // taken from it is destroyed.
    unsafe {
        let queue = rdsys::rd_kafka_queue_get_main(handle.0);
        loop {
            // Sends what linger.ms would still hold back, without waiting.
            rdsys::rd_kafka_flush(handle.0, 0);
            let event = rdsys::rd_kafka_queue_poll(queue, 100);
            if !event.is_null() {
                rdsys::rd_kafka_event_destroy(event);
            }
            if rdsys::rd_kafka_outq_len(handle.0) == 0 || std::time::Instant::now() >= deadline {
                break;
            }
        }
        rdsys::rd_kafka_queue_destroy(queue);
        Some(rdsys::rd_kafka_outq_len(handle.0))
    }
}
