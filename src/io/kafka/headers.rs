//! Reading a consumed record's headers without trusting their keys to be UTF-8.
//!
//! Kafka header keys are bytes on the wire; any producer can write keys that are
//! not UTF-8. rdkafka's `Headers::get`/`iter` unwrap the UTF-8 conversion and so
//! panic on such a record, which would take down `tail`, `run` or a barrier read
//! on one hostile record. This reads them through librdkafka directly and
//! decodes keys the way the Java client does (`new String(bytes, UTF_8)`):
//! invalid sequences become U+FFFD. Values stay bytes.
//!
//! Most records carry no header, yet asking librdkafka for a consumed message's
//! headers parses its header section on first access: a heap-allocated reader per
//! message even when the section only says "0 headers" (about 1 000 instructions,
//! a sixth of `tail`'s CPU per record). So that answer is read first from the
//! section's count byte, in librdkafka's private message struct: see
//! [`surely_headerless`].

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;
use std::sync::LazyLock;

use rdkafka::bindings as rdsys;
use rdkafka::message::BorrowedMessage;

/// The headers of a consumed record, in order; keys decoded lossily as UTF-8.
pub fn message_headers(message: &BorrowedMessage<'_>) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for_each_header(message, |key, value| {
        out.push((key.to_owned(), value.map(<[u8]>::to_vec)))
    });
    out
}

/// Hands each header of a consumed record to `f` in order, borrowed from librdkafka
/// (no copy; a key is only converted when it is not UTF-8).
pub fn for_each_header(message: &BorrowedMessage<'_>, f: impl FnMut(&str, Option<&[u8]>)) {
    // SAFETY: `message.ptr()` is a live message owned by the consumer for the borrow's lifetime.
    unsafe { for_each_native_header(message.ptr(), f) }
}

/// [`for_each_header`] on a native message.
///
/// # Safety
/// `message` must point to a live consumed message for the duration of the call.
pub unsafe fn for_each_native_header(
    message: *mut rdsys::rd_kafka_message_t,
    f: impl FnMut(&str, Option<&[u8]>),
) {
    // SAFETY: the caller guarantees a live consumed message.
    if unsafe { surely_headerless(message) } {
        return;
    }
    let mut headers: *mut rdsys::rd_kafka_headers_t = ptr::null_mut();
    // SAFETY: the caller guarantees a live message; librdkafka keeps ownership of
    // the headers it returns.
    let err = unsafe { rdsys::rd_kafka_message_headers(message, &mut headers) };
    if err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR || headers.is_null() {
        return;
    }
    // SAFETY: `headers` was just returned non-null by librdkafka for this message,
    // which outlives the call.
    unsafe { visit_headers(headers, f) }
}

/// The librdkafka release whose private message layout [`ConsumedMessageHead`] mirrors
/// (`RD_KAFKA_VERSION`); with any other, every message takes librdkafka's own path.
const MIRRORED_LIBRDKAFKA: c_int = 0x020c_01ff;

/// `rkm_flags` bit of a message being produced (rdkafka_msg.h): its headers are
/// never in a section.
const RD_KAFKA_MSG_F_PRODUCER: c_int = 0x40000;

/// Whether the linked librdkafka is the one whose layout [`ConsumedMessageHead`]
/// mirrors (read once: the library is linked statically).
pub fn header_peek_enabled() -> bool {
    // SAFETY: a plain getter without arguments.
    static MATCHES: LazyLock<bool> =
        LazyLock::new(|| unsafe { rdsys::rd_kafka_version() } == MIRRORED_LIBRDKAFKA);
    *MATCHES
}

/// The head of librdkafka 2.12.1's private `rd_kafka_msg_t` (rdkafka_msg.h) up to the
/// consumer's unparsed header section (`rkm_u.consumer.binhdrs`, an
/// `rd_kafkap_bytes_t` whose first members are `int32_t len; const void *data`).
/// A consumed `rd_kafka_message_t` is the first member of that struct (librdkafka's
/// own `rd_kafka_message2msg` is a cast).
#[repr(C)]
struct ConsumedMessageHead {
    message: rdsys::rd_kafka_message_t,
    /// `TAILQ_ENTRY(rd_kafka_msg_s) rkm_link`: two pointers.
    link: [*mut c_void; 2],
    flags: c_int,
    timestamp_type: c_int,
    timestamp: i64,
    /// Parsed headers, when something parsed them already.
    headers: *mut rdsys::rd_kafka_headers_t,
    status: c_int,
    broker_id: i32,
    /// The union `rkm_u` (8-aligned, as is this offset), its consumer member.
    header_section_len: i32,
    header_section: *const u8,
}

/// `true` when librdkafka would report no header for this consumed message
/// (`rd_kafka_message_headers` → `RD_KAFKA_RESP_ERR__NOENT`), read without parsing:
/// no parsed list yet, and a header section that is empty or whose count varint
/// is 0 (one zero byte). `false` means "ask librdkafka" (it may still find none).
///
/// # Safety
/// `message` must point to a live message consumed from a broker (not produced).
pub unsafe fn surely_headerless(message: *const rdsys::rd_kafka_message_t) -> bool {
    if !header_peek_enabled() {
        return false;
    }
    // SAFETY: a consumed message is the head of an `rd_kafka_msg_t` (caller), whose
    // layout in the linked release is the mirrored one (checked above).
    let head = unsafe { &*message.cast::<ConsumedMessageHead>() };
    if !head.headers.is_null() || head.flags & RD_KAFKA_MSG_F_PRODUCER != 0 {
        return false;
    }
    // librdkafka: a length of 0 or -1 (null) means no section; else it reads the count.
    head.header_section_len <= 0
        || head.header_section.is_null()
        // SAFETY: a section of at least one byte at a non-null pointer, alive with
        // the message (it points into the fetched buffer the message holds).
        || unsafe { *head.header_section } == 0
}

/// Reads every header of a native header list.
///
/// # Safety
/// `headers` must point to a live `rd_kafka_headers_t` for the duration of the call.
pub unsafe fn read_headers(
    headers: *const rdsys::rd_kafka_headers_t,
) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    // SAFETY: the caller guarantees `headers` is live.
    unsafe {
        visit_headers(headers, |key, value| {
            out.push((key.to_owned(), value.map(<[u8]>::to_vec)))
        })
    };
    out
}

/// # Safety
/// `headers` must point to a live `rd_kafka_headers_t` for the duration of the call.
unsafe fn visit_headers(
    headers: *const rdsys::rd_kafka_headers_t,
    mut f: impl FnMut(&str, Option<&[u8]>),
) {
    // SAFETY: the caller guarantees `headers` is live.
    let count = unsafe { rdsys::rd_kafka_header_cnt(headers) };
    for index in 0..count {
        let mut name: *const c_char = ptr::null();
        let mut value: *const c_void = ptr::null();
        let mut size = 0usize;
        // SAFETY: `index < count`; the out-pointers are valid locals.
        let err = unsafe {
            rdsys::rd_kafka_header_get_all(headers, index, &mut name, &mut value, &mut size)
        };
        if err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR || name.is_null() {
            continue;
        }
        // SAFETY: librdkafka stores every header name NUL-terminated.
        let key = String::from_utf8_lossy(unsafe { CStr::from_ptr(name) }.to_bytes());
        let value = (!value.is_null()).then(|| {
            // SAFETY: librdkafka returns `size` readable bytes at `value`.
            unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) }
        });
        f(&key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::message::{BorrowedHeaders, Header, OwnedHeaders};

    /// The native list behind rdkafka's `OwnedHeaders` (a `BorrowedHeaders`
    /// reference is the native pointer itself, as rdkafka builds it).
    fn native(headers: &OwnedHeaders) -> *mut rdsys::rd_kafka_headers_t {
        headers.as_borrowed() as *const BorrowedHeaders as *mut rdsys::rd_kafka_headers_t
    }

    /// What librdkafka itself answers: does the message have headers?
    fn librdkafka_finds_headers(m: &rdkafka::message::BorrowedMessage<'_>) -> bool {
        let mut headers: *mut rdsys::rd_kafka_headers_t = ptr::null_mut();
        // SAFETY: a live consumed message; librdkafka keeps the list.
        let err = unsafe { rdsys::rd_kafka_message_headers(m.ptr(), &mut headers) };
        err == rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && !headers.is_null()
    }

    #[test]
    fn the_header_peek_agrees_with_librdkafka_on_consumed_records() {
        use crate::io::kafka::mock_cluster::EmbeddedCluster;
        use rdkafka::config::ClientConfig;
        use rdkafka::consumer::{BaseConsumer, Consumer};
        use rdkafka::message::{Headers, Message};
        use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
        use std::time::{Duration, Instant};

        assert!(
            header_peek_enabled(),
            "the linked librdkafka is not {MIRRORED_LIBRDKAFKA:#x}: check rd_kafka_msg_t in its rdkafka_msg.h against ConsumedMessageHead, then update MIRRORED_LIBRDKAFKA"
        );
        let cluster = EmbeddedCluster::start(None).expect("mock cluster");
        cluster.create_topic("peek", 1).expect("topic");
        let producer: BaseProducer = ClientConfig::new()
            .set("bootstrap.servers", cluster.bootstrap())
            .set("linger.ms", "5")
            .create()
            .expect("producer");
        let two = OwnedHeaders::new()
            .insert(Header {
                key: "a",
                value: Some("1"),
            })
            .insert(Header {
                key: "b",
                value: None::<&[u8]>,
            });
        let one_empty = OwnedHeaders::new().insert(Header {
            key: "",
            value: Some(""),
        });
        // (key, value, headers); several per batch so sections sit mid-buffer.
        let records: Vec<(Option<&str>, Option<&str>, Option<OwnedHeaders>)> = vec![
            (Some("k"), Some("v"), None),
            (Some("k"), Some("v"), Some(two)),
            (None, None, None),
            (None, Some(""), Some(one_empty)),
            (Some(""), None, Some(OwnedHeaders::new())),
            (Some("k"), Some("last"), None),
        ];
        let expected: Vec<bool> = records
            .iter()
            .map(|(_, _, h)| h.as_ref().is_some_and(|h| h.count() > 0))
            .collect();
        for (key, value, headers) in records {
            let mut record = BaseRecord::<str, str>::to("peek").partition(0);
            if let Some(k) = key {
                record = record.key(k);
            }
            if let Some(v) = value {
                record = record.payload(v);
            }
            if let Some(h) = headers {
                record = record.headers(h);
            }
            producer.send(record).map_err(|(e, _)| e).expect("send");
        }
        producer.flush(Duration::from_secs(10)).expect("flush");
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", cluster.bootstrap())
            .set("group.id", "peek")
            .set("auto.offset.reset", "earliest")
            .create()
            .expect("consumer");
        consumer.subscribe(&["peek"]).expect("subscribe");
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while seen.len() < expected.len() && Instant::now() < deadline {
            if let Some(Ok(m)) = consumer.poll(Duration::from_millis(100)) {
                // SAFETY: a live consumed message.
                let peeked = unsafe { surely_headerless(m.ptr()) };
                let found = librdkafka_finds_headers(&m);
                assert_eq!(
                    peeked,
                    !found,
                    "offset {}: the peek says headerless={peeked}, librdkafka found headers={found}",
                    m.offset()
                );
                // Once parsed, the parsed list is used: the peek must not say "none".
                // SAFETY: as above.
                assert!(!found || !unsafe { surely_headerless(m.ptr()) });
                seen.push(found);
            }
        }
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_key_that_is_not_utf8_is_read_lossily_instead_of_panicking() {
        let headers = OwnedHeaders::new().insert(Header {
            key: "ok",
            value: Some("v"),
        });
        let raw_key = [b'k', 0xff, 0xfe];
        // SAFETY: a live list; name and value sizes match their buffers.
        let err = unsafe {
            rdsys::rd_kafka_header_add(
                native(&headers),
                raw_key.as_ptr().cast(),
                raw_key.len() as isize,
                ptr::null(),
                0,
            )
        };
        assert_eq!(err, rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR);
        // SAFETY: `headers` is alive for the call.
        let read = unsafe { read_headers(native(&headers)) };
        assert_eq!(
            read,
            vec![
                ("ok".to_owned(), Some(b"v".to_vec())),
                ("k\u{fffd}\u{fffd}".to_owned(), None),
            ]
        );
    }
}
