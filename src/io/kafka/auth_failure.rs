//! The SASL authentication failure librdkafka reported, kept for the error a command ends
//! with.
//!
//! librdkafka reports a refused login only to the client's error callback (a global
//! `Authentication` error: "SASL SCRAM authentication failed: broker responded with
//! unknown-user"); the request that waited for the connection then fails with a transport
//! error or a timeout, which alone reads like an outage (exit 4, "is the broker up …?").
//! Our client contexts note the failure here ([`note`] from the error callback, [`log`] from
//! the log callback: errors reach the former only when the client polls, often after the
//! failing call has returned, while log lines arrive at once from librdkafka's threads) and
//! [`KafkaIoError::from_kafka`] reports it instead: the broker answered, so the command
//! failed (exit 1), naming the mechanism and the user, never the password.
//!
//! [`KafkaIoError::from_kafka`]: super::error::KafkaIoError::from_kafka

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use super::settings::KafkaSettings;

/// librdkafka retries a refused login on every reconnect (at most `reconnect.backoff.max.ms`,
/// 10 s, apart), so a failure that persists is noted again and again; one older than this
/// was transient and no longer explains a later transport error.
const FRESH_FOR: Duration = Duration::from_secs(30);

struct Noted {
    reason: String,
    at: Instant,
}

static NOTED: Mutex<Option<Noted>> = Mutex::new(None);
/// "SASL SCRAM-SHA-256 as user 'alice'" of the last client configured with SASL.
static IDENTITY: Mutex<Option<String>> = Mutex::new(None);

/// Called by client contexts with every error librdkafka reports: keeps authentication
/// failures (librdkafka's reason names no secret).
pub fn note(error: &KafkaError, reason: &str) {
    if error.rdkafka_error_code() == Some(RDKafkaErrorCode::Authentication) {
        remember(reason);
    }
}

/// For `ClientContext::log`: notes a refused login from librdkafka's log line, then logs the
/// line as rdkafka's default `log` does.
pub fn log(level: RDKafkaLogLevel, fac: &str, message: &str) {
    if is_refused_login(message) {
        remember(message);
    }
    match level {
        RDKafkaLogLevel::Emerg
        | RDKafkaLogLevel::Alert
        | RDKafkaLogLevel::Critical
        | RDKafkaLogLevel::Error => {
            tracing::error!(target: "librdkafka", "librdkafka: {fac} {message}")
        }
        RDKafkaLogLevel::Warning => {
            tracing::warn!(target: "librdkafka", "librdkafka: {fac} {message}")
        }
        RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
            tracing::info!(target: "librdkafka", "librdkafka: {fac} {message}")
        }
        RDKafkaLogLevel::Debug => {
            tracing::debug!(target: "librdkafka", "librdkafka: {fac} {message}")
        }
    }
}

/// librdkafka's lines for a login the broker refused (`rd_kafka_broker_fail` with
/// `_AUTHENTICATION`): "SASL authentication error: …", "SASL <M> mechanism handshake failed: …".
fn is_refused_login(message: &str) -> bool {
    message.contains("SASL authentication error")
        || (message.contains("SASL") && message.contains("mechanism handshake failed"))
}

fn remember(reason: &str) {
    *NOTED.lock().unwrap_or_else(|p| p.into_inner()) = Some(Noted {
        reason: reason.to_owned(),
        at: Instant::now(),
    });
}

/// Serves the log and error events librdkafka queued for `consumer` (they reach its context
/// only through a poll), so that a refused login is noted before a failure is described.
/// Only while nothing is assigned: a poll then cannot take a record from the caller.
pub fn serve_queued_events<C: ConsumerContext>(consumer: &BaseConsumer<C>) {
    let unassigned = consumer.assignment().is_ok_and(|a| a.count() == 0);
    if !unassigned {
        return;
    }
    // A poll consumes log events until its timeout and returns at an error event; a few
    // rounds drain what a failed connection attempt left behind.
    for _ in 0..8 {
        if consumer.poll(Duration::from_millis(20)).is_none() {
            return;
        }
    }
}

/// Remembers who a client configured with these settings logs in as.
pub fn note_identity(settings: &KafkaSettings) {
    if let Some(identity) = identity_of(settings) {
        *IDENTITY.lock().unwrap_or_else(|p| p.into_inner()) = Some(identity);
    }
}

/// "authentication failed (SASL SCRAM-SHA-256 as user 'alice'): <librdkafka's reason>" when
/// a login was refused recently.
pub fn recent() -> Option<String> {
    let noted = NOTED.lock().unwrap_or_else(|p| p.into_inner());
    let noted = noted.as_ref().filter(|n| n.at.elapsed() < FRESH_FOR)?;
    let identity = IDENTITY.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Some(describe(identity.as_deref(), &noted.reason))
}

/// "SASL <mechanism> as user '<user>'" for SASL settings; None otherwise.
fn identity_of(settings: &KafkaSettings) -> Option<String> {
    let protocol = settings.get("security.protocol")?.to_ascii_lowercase();
    if !protocol.starts_with("sasl") {
        return None;
    }
    // `-X` may use librdkafka's alias; GSSAPI is librdkafka's default.
    let mechanism = settings
        .get("sasl.mechanisms")
        .or_else(|| settings.get("sasl.mechanism"))
        .unwrap_or("GSSAPI");
    Some(match settings.get("sasl.username") {
        Some(user) => format!("SASL {mechanism} as user '{user}'"),
        None => format!("SASL {mechanism}"),
    })
}

fn describe(identity: Option<&str>, reason: &str) -> String {
    match identity {
        Some(who) => format!("authentication failed ({who}): {reason}"),
        None => format!("authentication failed: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The process-wide notes are left alone here: a noted failure would turn other unit
    // tests' transport errors into authentication failures.

    #[test]
    fn a_refused_login_is_described_with_mechanism_and_user_but_not_the_password() {
        let mut settings = KafkaSettings::new();
        settings
            .set("security.protocol", "sasl_plaintext")
            .set("sasl.mechanisms", "SCRAM-SHA-256")
            .set("sasl.username", "alice")
            .set("sasl.password", "hunter2");
        let message = describe(
            identity_of(&settings).as_deref(),
            "SASL SCRAM authentication failed: broker responded with unknown-user",
        );
        assert_eq!(
            message,
            "authentication failed (SASL SCRAM-SHA-256 as user 'alice'): \
             SASL SCRAM authentication failed: broker responded with unknown-user"
        );
        assert!(!message.contains("hunter2"));
    }

    #[test]
    fn librdkafka_lines_of_a_refused_login_are_recognised() {
        assert!(is_refused_login(
            "sasl_plaintext://127.0.0.1:29417/bootstrap: SASL authentication error: SASL SCRAM \
             authentication failed: broker responded with unknown-user (after 181ms in state \
             AUTH_REQ)"
        ));
        assert!(is_refused_login(
            "sasl_plaintext://127.0.0.1:1/bootstrap: SASL PLAIN mechanism handshake failed: \
             Broker: Unsupported SASL mechanism"
        ));
        assert!(!is_refused_login(
            "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused"
        ));
    }

    #[test]
    fn plaintext_and_ssl_settings_have_no_sasl_identity() {
        let mut settings = KafkaSettings::new();
        assert_eq!(identity_of(&settings), None);
        settings.set("security.protocol", "ssl");
        assert_eq!(identity_of(&settings), None);
        settings.set("security.protocol", "SASL_SSL");
        assert_eq!(identity_of(&settings).as_deref(), Some("SASL GSSAPI"));
        settings.set("sasl.mechanism", "PLAIN");
        assert_eq!(identity_of(&settings).as_deref(), Some("SASL PLAIN"));
    }
}
