//! Refused SASL logins and failed TLS handshakes that librdkafka reported, kept for the
//! command's final error.
//!
//! librdkafka reports a refused login only to the client context's error callback (on
//! its own thread) and then keeps reconnecting; the call that finally gives up sees
//! nothing but a transport failure or a timeout, which reads like a broker that is
//! down. Our client contexts hand every error to [`note`], the settings a client is
//! built from name the login ([`expect_login`]), and the error paths ask
//! [`refusal`]: the user then reads which mechanism and user the broker refused and
//! why, and the command exits 1 (the broker answered: cli-conventions §C), not 4.
//!
//! A TLS handshake that failed is the same story with exit 4 (no broker was reached):
//! [`tls_failure`] names it (an untrusted certificate, say) in the final error, and a
//! certificate the client or the broker refused to accept ends the wait at once, as a
//! refused login does: reconnecting with the same CA and certificate cannot succeed.
//!
//! The same holds while a long command runs (`tail -f`, `run`, `barrier watch`): when
//! the credentials are rotated or the certificate expires, librdkafka loses the
//! connection, fails to log in again and retries for ever. Those loops ask
//! [`access_lost`] once per round (an atomic load) and end with the refusal at once
//! instead of reporting an outage after `--timeout`.
//!
//! Process-wide on purpose ([`WATCH`]): one process runs one command with one set of
//! credentials, and the callback has no way back to the call that is waiting. The state
//! is an [`AccessWatch`] so that tests can feed one of their own.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::io::kafka::error::KafkaIoError;

/// The SASL login the clients of this process attempt (never the password).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Login {
    mechanism: String,
    user: Option<String>,
}

/// librdkafka retries a broker at least every `reconnect.backoff.max.ms` (10 s by
/// default), so a handshake failure that still causes the present outage is never
/// older than this; an older one (a broker restart an hour ago) is not mentioned.
const TLS_STALE_AFTER: Duration = Duration::from_secs(30);

/// What the clients of one process learnt about their access: the login they attempt,
/// the first refusal, the latest TLS failure. The process has one, [`WATCH`]; tests
/// make their own.
pub struct AccessWatch {
    login: Mutex<Option<Login>>,
    refusal: Mutex<Option<String>>,
    /// The latest failed TLS handshake and when it was seen: a certificate refusal is
    /// kept for good (it ends the wait), any other failure only explains a transport
    /// failure while it is recent (see [`TLS_STALE_AFTER`]).
    tls_failure: Mutex<Option<(Instant, String)>>,
    /// Set with the first refusal or certificate failure, so hot loops need no lock.
    ended: AtomicBool,
}

/// The process's watch, fed by every client context's error callback.
pub static WATCH: AccessWatch = AccessWatch::new();

impl Default for AccessWatch {
    fn default() -> Self {
        AccessWatch::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl AccessWatch {
    pub const fn new() -> Self {
        AccessWatch {
            login: Mutex::new(None),
            refusal: Mutex::new(None),
            tls_failure: Mutex::new(None),
            ended: AtomicBool::new(false),
        }
    }

    /// Records the login a client is about to attempt; `protocol` is `security.protocol`.
    pub fn expect_login(
        &self,
        protocol: Option<&str>,
        mechanism: Option<&str>,
        user: Option<&str>,
    ) {
        if !protocol.is_some_and(|p| p.to_ascii_lowercase().starts_with("sasl_")) {
            return;
        }
        *lock(&self.login) = Some(Login {
            // librdkafka's default mechanism.
            mechanism: mechanism.unwrap_or("GSSAPI").to_ascii_uppercase(),
            user: user.map(str::to_string),
        });
    }

    /// Called by every client context's error callback: keeps the first refused login and
    /// the latest failed TLS handshake (a certificate refusal for good).
    pub fn note(&self, error: &KafkaError, reason: &str) {
        if is_authentication_error(error) {
            let mut kept = lock(&self.refusal);
            if kept.is_none() {
                *kept = Some(clean_reason(reason));
            }
        } else if is_tls_failure(error, reason) {
            let mut kept = lock(&self.tls_failure);
            if !kept
                .as_ref()
                .is_some_and(|(_, r)| is_certificate_refusal(r))
            {
                *kept = Some((Instant::now(), clean_reason(reason)));
            }
        } else {
            return;
        }
        if self.ends_the_wait() {
            self.ended.store(true, Ordering::Release);
        }
    }

    /// [`note`](Self::note) of a transport failure (a lost connection), for tests outside
    /// io that feed a watch without naming rdkafka's error types.
    #[cfg(test)]
    pub fn note_transport_failure(&self, reason: &str) {
        use rdkafka::error::RDKafkaErrorCode;
        self.note(
            &KafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure),
            reason,
        );
    }

    /// [`note`](Self::note) of a refused login, for tests outside io (see
    /// [`note_transport_failure`](Self::note_transport_failure)).
    #[cfg(test)]
    pub fn note_authentication_failure(&self, reason: &str) {
        use rdkafka::error::RDKafkaErrorCode;
        self.note(
            &KafkaError::Global(RDKafkaErrorCode::Authentication),
            reason,
        );
    }

    /// The error that ends a running command once the broker refused our login (exit 1)
    /// or our certificate (exit 4); `None` while access stands.
    pub fn access_lost(&self, what: &str) -> Option<KafkaIoError> {
        if !self.ended.load(Ordering::Acquire) {
            return None;
        }
        if let Some(refusal) = self.refusal() {
            return Some(KafkaIoError::failed(format!("{what}: {refusal}")));
        }
        self.tls_failure()
            .map(|tls| KafkaIoError::unreachable(format!("{what}: {tls}")))
    }

    /// The refused login, said for the user: mechanism, user and the broker's reason.
    pub fn refusal(&self) -> Option<String> {
        let reason = lock(&self.refusal).clone()?;
        let login = lock(&self.login).clone();
        Some(describe(login.as_ref(), &reason))
    }

    /// The TLS handshake failure that explains a transport failure now, said for the user
    /// (librdkafka's reason names the broker and OpenSSL's verdict): a certificate refusal,
    /// or the latest other failure while it is recent.
    pub fn tls_failure(&self) -> Option<String> {
        let (seen, reason) = lock(&self.tls_failure).clone()?;
        explains_now(seen.elapsed(), &reason).then(|| describe_tls(&reason))
    }

    /// True once a TLS handshake failed over a certificate: one side did not accept the
    /// other's, which no retry with the same settings changes.
    pub fn tls_failure_is_final(&self) -> bool {
        lock(&self.tls_failure)
            .as_ref()
            .is_some_and(|(_, r)| is_certificate_refusal(r))
    }

    /// True when a wait for the broker cannot end well any more: the login was refused or
    /// the TLS handshake failed over a certificate.
    pub fn ends_the_wait(&self) -> bool {
        self.refusal().is_some() || self.tls_failure_is_final()
    }
}

/// Records the login a client is about to attempt ([`AccessWatch::expect_login`]).
pub fn expect_login(protocol: Option<&str>, mechanism: Option<&str>, user: Option<&str>) {
    WATCH.expect_login(protocol, mechanism, user)
}

/// Called by every client context's error callback ([`AccessWatch::note`]).
pub fn note(error: &KafkaError, reason: &str) {
    WATCH.note(error, reason)
}

/// [`AccessWatch::access_lost`] of the process.
pub fn access_lost(what: &str) -> Option<KafkaIoError> {
    WATCH.access_lost(what)
}

/// [`AccessWatch::refusal`] of the process.
pub fn refusal() -> Option<String> {
    WATCH.refusal()
}

/// [`AccessWatch::tls_failure`] of the process.
pub fn tls_failure() -> Option<String> {
    WATCH.tls_failure()
}

/// [`AccessWatch::tls_failure_is_final`] of the process.
pub fn tls_failure_is_final() -> bool {
    WATCH.tls_failure_is_final()
}

/// [`AccessWatch::ends_the_wait`] of the process.
pub fn ends_the_wait() -> bool {
    WATCH.ends_the_wait()
}

/// True for a failed TLS handshake: librdkafka's SSL error, or a transport failure
/// carrying the server's TLS alert over a certificate. Under TLS 1.3 the server checks
/// the client's certificate after the client's side of the handshake is done, so a
/// missing one arrives as an alert on the first read (`Receive failed: … tlsv13 alert
/// certificate required` in state APIVERSION_QUERY), which librdkafka reports as a
/// plain transport failure.
fn is_tls_failure(error: &KafkaError, reason: &str) -> bool {
    match error.rdkafka_error_code() {
        Some(RDKafkaErrorCode::SSL) => true,
        Some(RDKafkaErrorCode::BrokerTransportFailure) => is_certificate_alert(reason),
        _ => false,
    }
}

/// An OpenSSL alert from the server about our certificate.
fn is_certificate_alert(reason: &str) -> bool {
    reason.contains("SSL routines") && reason.contains(" alert ") && is_certificate_refusal(reason)
}

/// How long [`serve_events`] serves a consumer's queue at most, per call.
const SERVE_FOR: Duration = Duration::from_millis(50);

/// Serves the error events a consumer has queued, so that a refused login reaches
/// [`note`] before a failed call is turned into an error: librdkafka hands them to the
/// context only when the consumer is polled, and a metadata request that timed out
/// never polled it. Log lines share that queue (rdkafka sets `log.queue`), and with
/// `-X debug=…` hundreds of them sit ahead of the error: a poll with a zero timeout
/// serves one event, a poll with a short one serves events until it elapses, so the
/// queue is served for up to [`SERVE_FOR`], less once the wait is known to be over.
/// Only on error paths: a record polled here is dropped.
pub fn serve_events<C: ConsumerContext>(consumer: &BaseConsumer<C>) {
    let until = Instant::now() + SERVE_FOR;
    while Instant::now() < until && !ends_the_wait() {
        let _ = consumer.poll(Duration::from_millis(5));
    }
}

/// True for librdkafka's local authentication failure and the broker's
/// SASL_AUTHENTICATION_FAILED.
pub fn is_authentication_error(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed)
    )
}

fn describe_tls(reason: &str) -> String {
    if reason.contains("certificate required") {
        format!(
            "TLS handshake failed: the broker requires a client certificate (set \
             ssl.certificate.location and ssl.key.location, or ssl.keystore.location, in \
             --command-config): {reason}"
        )
    } else {
        format!("TLS handshake failed: {reason}")
    }
}

fn explains_now(age: Duration, reason: &str) -> bool {
    is_certificate_refusal(reason) || age < TLS_STALE_AFTER
}

fn is_certificate_refusal(reason: &str) -> bool {
    [
        "certificate verify failed",
        "certificate required",
        "bad certificate",
        "unknown ca",
    ]
    .iter()
    .any(|s| reason.contains(s))
}

fn describe(login: Option<&Login>, reason: &str) -> String {
    let who = match login {
        Some(Login {
            mechanism,
            user: Some(user),
        }) => format!("SASL {mechanism} login as user {user:?}"),
        Some(Login {
            mechanism,
            user: None,
        }) => format!("SASL {mechanism} login (no sasl.username)"),
        None => "SASL login".to_string(),
    };
    format!(
        "authentication failed: the broker refused the {who}: {reason} \
         (check the user and password of sasl.jaas.config, sasl.mechanism, and that the user exists on the broker)"
    )
}

/// librdkafka's reason without its bookkeeping suffix
/// (`(after 94ms in state AUTH_REQ, 1 identical error(s) suppressed)`).
fn clean_reason(reason: &str) -> String {
    let trimmed = match reason.rfind(" (after ") {
        Some(i) if reason.ends_with(')') => &reason[..i],
        _ => reason,
    };
    trimmed.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_mechanism_user_and_reason_without_librdkafka_bookkeeping() {
        let login = Login {
            mechanism: "SCRAM-SHA-256".into(),
            user: Some("alice".into()),
        };
        let reason = clean_reason(
            "sasl_plaintext://127.0.0.1:9/bootstrap: SASL authentication error: SASL SCRAM \
             authentication failed: broker responded with unknown-user (after 94ms in state \
             AUTH_REQ, 1 identical error(s) suppressed)",
        );
        let said = describe(Some(&login), &reason);
        assert!(
            said.starts_with(
                "authentication failed: the broker refused the SASL SCRAM-SHA-256 login as user \"alice\": sasl_plaintext://127.0.0.1:9/bootstrap: SASL authentication error"
            ),
            "{said}"
        );
        assert!(said.contains("unknown-user (check the user"), "{said}");
        assert!(!said.contains("after 94ms"), "{said}");
        assert_eq!(clean_reason("no suffix (here)"), "no suffix (here)");
    }

    #[test]
    fn a_certificate_refusal_is_final_other_tls_failures_are_not() {
        assert!(is_certificate_refusal(
            "ssl://127.0.0.1:9/bootstrap: SSL handshake failed: error:0A000086:SSL routines::\
             certificate verify failed: broker certificate could not be verified"
        ));
        assert!(is_certificate_refusal(
            "SSL handshake failed: tlsv13 alert certificate required"
        ));
        assert!(!is_certificate_refusal(
            "SSL handshake failed: Disconnected"
        ));
    }

    #[test]
    fn a_tls13_certificate_required_alert_on_a_transport_failure_is_a_final_tls_refusal() {
        let reason = "ssl://127.0.0.1:9/bootstrap: Receive failed: error:0A00045C:SSL \
                      routines::tlsv13 alert certificate required: SSL alert number 116 \
                      (after 4ms in state APIVERSION_QUERY)";
        let transport = KafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure);
        assert!(is_tls_failure(&transport, reason));
        assert!(is_certificate_refusal(reason));
        let said = describe_tls(&clean_reason(reason));
        assert!(
            said.starts_with(
                "TLS handshake failed: the broker requires a client certificate (set \
                 ssl.certificate.location and ssl.key.location"
            ) && said.ends_with("SSL alert number 116"),
            "{said}"
        );
        // A broker that went away is no TLS failure, nor a refused login.
        let down = "ssl://127.0.0.1:9/bootstrap: Connect to ipv4#127.0.0.1:9 failed: \
                    Connection refused (after 0ms in state CONNECT)";
        assert!(!is_tls_failure(&transport, down));
        assert!(!is_tls_failure(
            &KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            reason
        ));
        assert!(is_tls_failure(
            &KafkaError::Global(RDKafkaErrorCode::SSL),
            "SSL handshake failed: Disconnected"
        ));
    }

    #[test]
    fn an_old_tls_failure_explains_nothing_unless_it_was_a_certificate_refusal() {
        let dropped = "ssl://127.0.0.1:9/bootstrap: SSL handshake failed: Disconnected";
        assert!(explains_now(Duration::from_secs(5), dropped));
        assert!(!explains_now(Duration::from_secs(600), dropped));
        assert!(explains_now(
            Duration::from_secs(600),
            "SSL handshake failed: certificate verify failed"
        ));
    }

    #[test]
    fn only_authentication_errors_count() {
        assert!(is_authentication_error(&KafkaError::Global(
            RDKafkaErrorCode::Authentication
        )));
        assert!(!is_authentication_error(&KafkaError::Global(
            RDKafkaErrorCode::BrokerTransportFailure
        )));
    }
}
