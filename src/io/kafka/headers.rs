//! Reading a consumed record's headers without trusting their keys to be UTF-8.
//!
//! Kafka header keys are bytes on the wire; any producer can write keys that are
//! not UTF-8. rdkafka's `Headers::get`/`iter` unwrap the UTF-8 conversion and so
//! panic on such a record, which would take down `tail`, `run` or a barrier read
//! on one hostile record. This reads them through librdkafka directly and
//! decodes keys the way the Java client does (`new String(bytes, UTF_8)`):
//! invalid sequences become U+FFFD. Values stay bytes.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

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
