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
/// serves; the owner is blocked elsewhere, so a scoped thread serves them (dropping
/// the reports: the process is about to exit) while librdkafka's flush, which ignores
/// `linger.ms` for its duration, sends everything and waits for the acknowledgements.
pub fn flush_registered(bound: Duration) -> Option<i32> {
    let slot = REGISTERED.lock().ok()?;
    let handle = slot.as_ref()?;
    let native = Native(handle.0);
    let ms = i32::try_from(bound.as_millis()).unwrap_or(i32::MAX);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // SAFETY: the handle is live while registered and the lock is held until
            // this scope ends; every event taken is destroyed, the queue released.
            unsafe {
                let queue = rdsys::rd_kafka_queue_get_main(native.get());
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let event = rdsys::rd_kafka_queue_poll(queue, 50);
                    if !event.is_null() {
                        rdsys::rd_kafka_event_destroy(event);
                    }
                }
                rdsys::rd_kafka_queue_destroy(queue);
            }
        });
        // SAFETY: as above; flush may run while another thread serves the queue.
        unsafe { rdsys::rd_kafka_flush(native.get(), ms) };
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    // SAFETY: as above.
    Some(unsafe { rdsys::rd_kafka_outq_len(native.get()) })
}

/// The handle as the serving thread borrows it.
#[derive(Clone, Copy)]
struct Native(*mut rdsys::rd_kafka_t);

// SAFETY: librdkafka handles may be used from any thread; see `flush_registered` for
// why the handle outlives every use.
unsafe impl Send for Native {}
unsafe impl Sync for Native {}

impl Native {
    fn get(self) -> *mut rdsys::rd_kafka_t {
        self.0
    }
}
