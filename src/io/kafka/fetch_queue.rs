//! Consuming many messages per call: the fetch queues of assigned partitions
//! forwarded to one queue of ours, drained with `rd_kafka_consume_batch_queue`.
//!
//! rdkafka's `poll` returns one message per call, wrapped in an event with a
//! reference-counted handle and two clock reads: at several hundred thousand
//! messages a second that is a visible share of a tail's CPU. The batch call
//! takes up to N fetched messages under one queue lock and one clock read.
//!
//! Only partition fetch queues are forwarded, so this queue holds fetched
//! messages and per-partition consumer errors (partition EOF among them); client
//! errors, logs and statistics stay on the consumer's own queue, which the caller
//! keeps polling. The forwarding is set before the partitions are assigned:
//! librdkafka then keeps it (an application's forward is not replaced when a
//! fetch starts), so no message of these partitions reaches the consumer's queue.

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::bindings as rdsys;

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::columnar::record::Record;
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::headers::for_each_native_header;

/// Our queue; destroyed (its reference dropped) before the consumer is.
pub struct FetchQueue {
    queue: *mut rdsys::rd_kafka_queue_t,
    /// Reused buffer of message pointers.
    messages: Vec<*mut rdsys::rd_kafka_message_t>,
    waker: FetchWaker,
}

/// Ends a wait in [`FetchQueue::consume`] from another thread (the consumer of a
/// tail whose output is complete need not sit out its poll interval). Holds no
/// reference of its own: once the queue is destroyed a wake does nothing.
#[derive(Clone)]
pub struct FetchWaker(Arc<Mutex<Option<QueuePtr>>>);

struct QueuePtr(*mut rdsys::rd_kafka_queue_t);

// SAFETY: librdkafka's queue handles may be used from any thread; the pointer is
// only used under the mutex, which `Drop for FetchQueue` clears before destroying it.
unsafe impl Send for QueuePtr {}

impl FetchWaker {
    pub fn wake(&self) {
        let live = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(q) = live.as_ref() {
            // SAFETY: the queue is alive while the mutex holds its pointer.
            unsafe { rdsys::rd_kafka_queue_yield(q.0) };
        }
    }
}

impl FetchQueue {
    /// A queue no partition forwards to yet.
    ///
    /// # Safety
    /// `rk` must be a live consumer client that outlives the queue.
    pub unsafe fn empty(rk: *mut rdsys::rd_kafka_t) -> Result<FetchQueue, KafkaIoError> {
        // SAFETY: `rk` is live (contract).
        let queue = unsafe { rdsys::rd_kafka_queue_new(rk) };
        if queue.is_null() {
            return Err(KafkaIoError::failed("create a fetch queue"));
        }
        Ok(FetchQueue {
            queue,
            messages: Vec::new(),
            waker: FetchWaker(Arc::new(Mutex::new(Some(QueuePtr(queue))))),
        })
    }

    /// A handle that ends a wait of this queue early (it returns what it has).
    pub fn waker(&self) -> FetchWaker {
        self.waker.clone()
    }

    /// Forwards one partition's fetch queue here. librdkafka keeps an application's
    /// forward when the partition's fetch starts, but drops it when the fetch stops
    /// (an unassign): forward again before every assign of the partition.
    ///
    /// # Safety
    /// `rk` must be the live client the queue was made with.
    pub unsafe fn forward(
        &self,
        rk: *mut rdsys::rd_kafka_t,
        topic: &str,
        partition: i32,
    ) -> Result<(), KafkaIoError> {
        let name = CString::new(topic)
            .map_err(|_| KafkaIoError::failed(format!("topic name {topic:?} holds a NUL")))?;
        // SAFETY: `rk` is live and `name` NUL-terminated; the returned handle is ours.
        let pq = unsafe { rdsys::rd_kafka_queue_get_partition(rk, name.as_ptr(), partition) };
        if pq.is_null() {
            return Err(KafkaIoError::failed(format!(
                "get the fetch queue of {topic}/{partition}"
            )));
        }
        // SAFETY: both handles are live; the forward keeps its own reference to
        // `self.queue`, and dropping our handle of `pq` leaves the partition's queue.
        unsafe {
            rdsys::rd_kafka_queue_forward(pq, self.queue);
            rdsys::rd_kafka_queue_destroy(pq);
        }
        Ok(())
    }

    /// Takes up to `max` messages, waiting up to `timeout` for the first, and hands
    /// each to `f` in fetch order; returns how many there were.
    ///
    /// `rd_kafka_consume_batch_queue` itself waits until it has `max` messages or the
    /// timeout passed, so a single blocking call would hold a lone record (the first
    /// of `tail -n 1`, a record arriving on a quiet topic) for the whole timeout.
    /// Instead: take what is ready without waiting; when nothing is, wait for one
    /// message only, then take whatever came with it, again without waiting.
    pub fn consume(
        &mut self,
        timeout: Duration,
        max: usize,
        mut f: impl FnMut(NativeMessage<'_>),
    ) -> usize {
        let max = max.max(1);
        self.messages.clear();
        self.messages.reserve(max);
        let mut got = self.take(0, max);
        if got == 0 && !timeout.is_zero() {
            let timeout_ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
            got = self.take(timeout_ms, 1);
            if got == 1 && max > 1 {
                got += self.take(0, max - 1);
            }
        }
        // Every message is destroyed even if `f` panics midway (the guard).
        let guard = DestroyOnDrop(&mut self.messages);
        for &m in guard.0.iter() {
            f(NativeMessage {
                ptr: m,
                _borrow: PhantomData,
            });
        }
        drop(guard);
        got
    }

    /// One batch call appending up to `max` messages after those already taken
    /// (room for them is reserved by `consume`); returns how many it appended.
    fn take(&mut self, timeout_ms: i32, max: usize) -> usize {
        let have = self.messages.len();
        assert!(self.messages.capacity() >= have + max);
        // SAFETY: the buffer has room for `max` more pointers after the `have` taken;
        // librdkafka writes at most `max`.
        let got = unsafe {
            rdsys::rd_kafka_consume_batch_queue(
                self.queue,
                timeout_ms,
                self.messages.as_mut_ptr().add(have),
                max,
            )
        };
        let got = usize::try_from(got).unwrap_or(0).min(max);
        // SAFETY: librdkafka initialised the `got` pointers after the first `have`.
        unsafe { self.messages.set_len(have + got) };
        got
    }
}

/// Destroys the messages of a consumed batch.
struct DestroyOnDrop<'a>(&'a mut Vec<*mut rdsys::rd_kafka_message_t>);

impl Drop for DestroyOnDrop<'_> {
    fn drop(&mut self) {
        for m in self.0.drain(..) {
            // SAFETY: each pointer came from rd_kafka_consume_batch_queue and is destroyed once.
            unsafe { rdsys::rd_kafka_message_destroy(m) };
        }
    }
}

// SAFETY: librdkafka's queue handles may be used from any thread (its queues lock
// themselves); the message buffer is empty between calls.
unsafe impl Send for FetchQueue {}

impl Drop for FetchQueue {
    fn drop(&mut self) {
        // No waker may touch the queue from here on.
        self.waker
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // SAFETY: our handle, released once; the partitions' forwards hold their own references.
        unsafe { rdsys::rd_kafka_queue_destroy(self.queue) };
    }
}

/// A fetched message (or a partition's consumer error), valid while it is handed out.
#[derive(Clone, Copy)]
pub struct NativeMessage<'a> {
    ptr: *const rdsys::rd_kafka_message_t,
    _borrow: PhantomData<&'a ()>,
}

impl<'a> NativeMessage<'a> {
    /// # Safety
    /// `ptr` must be a live message for `'a`.
    pub unsafe fn from_ptr(ptr: *const rdsys::rd_kafka_message_t) -> NativeMessage<'a> {
        NativeMessage {
            ptr,
            _borrow: PhantomData,
        }
    }

    fn raw(&self) -> &'a rdsys::rd_kafka_message_t {
        // SAFETY: live for `'a` (constructor contract).
        unsafe { &*self.ptr }
    }

    pub fn error(&self) -> rdsys::rd_kafka_resp_err_t {
        self.raw().err
    }

    /// The client's handle of the message's topic: equal handles, same topic (a
    /// handle lives while its topic's partitions are assigned), so a run of messages
    /// of one topic is recognised without reading the name.
    pub fn topic_handle(&self) -> *const std::ffi::c_void {
        self.raw().rkt.cast_const().cast()
    }

    pub fn topic(&self) -> &'a str {
        let rkt = self.raw().rkt;
        if rkt.is_null() {
            return "";
        }
        // SAFETY: a message's topic handle lives as long as the message; its name is
        // NUL-terminated. Topic names are ASCII by Kafka's rules.
        let name = unsafe { CStr::from_ptr(rdsys::rd_kafka_topic_name(rkt)) };
        name.to_str().unwrap_or("")
    }

    pub fn partition(&self) -> i32 {
        self.raw().partition
    }

    /// The record's offset; for a partition-EOF event, the offset the end was reached at.
    pub fn offset(&self) -> i64 {
        self.raw().offset
    }

    fn bytes(ptr: *mut std::ffi::c_void, len: usize) -> Option<&'a [u8]> {
        // SAFETY: librdkafka gives `len` readable bytes at a non-null pointer, alive with the message.
        (!ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
    }

    /// Epoch milliseconds, 0 when the broker gave none (as rdkafka's `to_millis`).
    pub fn timestamp(&self) -> i64 {
        let mut kind = rdsys::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
        // SAFETY: a live message; `kind` is a valid out-pointer.
        let ts = unsafe { rdsys::rd_kafka_message_timestamp(self.ptr, &mut kind) };
        if ts == -1 || kind == rdsys::rd_kafka_timestamp_type_t::RD_KAFKA_TIMESTAMP_NOT_AVAILABLE {
            0
        } else {
            ts
        }
    }

    /// An owned copy of the message under `topic` (its [`topic`](Self::topic)).
    pub fn to_record(&self, topic: &str) -> Record {
        let raw = self.raw();
        let mut headers = Vec::new();
        // SAFETY: a live message.
        unsafe {
            for_each_native_header(self.ptr.cast_mut(), |key, value| {
                headers.push(Header::new(key, value.map(<[u8]>::to_vec)))
            })
        };
        Record {
            topic: topic.to_owned(),
            partition: raw.partition,
            offset: raw.offset,
            timestamp: self.timestamp(),
            key: Self::bytes(raw.key, raw.key_len).map(<[u8]>::to_vec),
            value: Self::bytes(raw.payload, raw.len).map(<[u8]>::to_vec),
            headers,
        }
    }

    /// Copies the message (key, value, headers as one `__headers` cell) into `batch`,
    /// under topic number `topic` of the batch ([`RawBatch::topic_index`] of its
    /// [`topic`](Self::topic), which the caller looked up once per run of messages).
    pub fn append_to(&self, topic: u32, batch: &mut RawBatch) {
        let raw = self.raw();
        batch.push_indexed(
            topic,
            raw.partition,
            raw.offset,
            self.timestamp(),
            Self::bytes(raw.key, raw.key_len),
            Self::bytes(raw.payload, raw.len),
            // SAFETY: a live message.
            |cell| unsafe {
                for_each_native_header(self.ptr.cast_mut(), |key, value| cell.push(key, value))
            },
        );
    }
}
