//! librdkafka's error events and log lines, collapsed: a client that cannot reach its
//! broker reports the same failure every few milliseconds (588 lines in a 30 s wait),
//! so each distinct message is logged once, at `warn`, under the target
//! [`TARGET`] (which `-q` turns off), and its repeats only at `debug`. Two lines are
//! the same message when they differ only in librdkafka's trailing
//! `(after 3ms in state CONNECT, 2 identical error(s) suppressed)`, and an error
//! event and a log line with the same reason are one message.

use std::collections::HashSet;
use std::sync::Mutex;

use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::KafkaError;

/// The tracing target of every librdkafka line.
pub const TARGET: &str = "librdkafka";

/// Messages already logged at `warn`, bounded so a client inventing endless new
/// texts cannot grow it without end.
static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
const MAX_SEEN: usize = 1024;

/// The text without librdkafka's per-attempt suffix.
fn normalized(text: &str) -> &str {
    let text = text.trim_end();
    match text.rfind(" (after ") {
        Some(i) if text.ends_with(')') => &text[..i],
        _ => text,
    }
}

/// Whether `key` is new (and now remembered).
fn first_time(key: &str) -> bool {
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let seen = seen.get_or_insert_with(HashSet::new);
    if seen.contains(key) {
        return false;
    }
    if seen.len() < MAX_SEEN {
        seen.insert(key.to_string());
    }
    true
}

/// An error event from a client's error callback.
pub fn error(error: &KafkaError, reason: &str) {
    let reason = normalized(reason);
    if first_time(reason) {
        tracing::warn!(target: TARGET, "librdkafka: {error}: {reason}");
    } else {
        tracing::debug!(target: TARGET, "librdkafka (again): {error}: {reason}");
    }
}

/// A line of librdkafka's own log.
pub fn log(level: RDKafkaLogLevel, facility: &str, message: &str) {
    match level {
        RDKafkaLogLevel::Emerg
        | RDKafkaLogLevel::Alert
        | RDKafkaLogLevel::Critical
        | RDKafkaLogLevel::Error
        | RDKafkaLogLevel::Warning => {
            let text = normalized(message);
            if first_time(text) {
                tracing::warn!(target: TARGET, "librdkafka {facility}: {text}");
            } else {
                tracing::debug!(target: TARGET, "librdkafka {facility} (again): {text}");
            }
        }
        RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
            tracing::debug!(target: TARGET, "librdkafka {facility}: {message}")
        }
        RDKafkaLogLevel::Debug => {
            tracing::trace!(target: TARGET, "librdkafka {facility}: {message}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_of_one_failure_are_one_message() {
        let a = "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)";
        let b = "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 1ms in state CONNECT, 1 identical error(s) suppressed)";
        assert_eq!(normalized(a), normalized(b));
        assert_eq!(normalized("1/1 brokers are down"), "1/1 brokers are down");
        let key = format!("test-only {}", std::process::id());
        assert!(first_time(&key));
        assert!(!first_time(&key));
    }
}
