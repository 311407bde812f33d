//! A broker outage seen by a running tail. librdkafka reports a lost broker once
//! (`AllBrokersDown`, a transport failure) and then reconnects on its own, so a lost
//! connection is not the end of a tail: it becomes an error (exit 4) only when the
//! broker stays unreachable for the whole `--timeout`. While the outage lasts, a cheap
//! watermark probe tells whether the broker answers again — records alone cannot, as a
//! healthy topic may simply have nothing new.

use std::time::{Duration, Instant};

use crate::io::kafka::auth_failure::AccessWatch;
use crate::io::kafka::error::KafkaIoError;
use crate::ops::Error;

/// What ends the tail after a round of polls: an error the poll delivered that is not an
/// outage (`fatal`), else access lost since (credentials rotated, a certificate refused)
/// as `watch` learnt it from the client's error callback. rdkafka hands librdkafka's
/// error event to the callback and to whoever polls the queue, and librdkafka posts a
/// refusal once per broker, then suppresses identical ones for 30 s: when another call
/// served that event first (an error path's `auth_failure::serve_events` on the same
/// consumer), the loop's poll is left with transport failures and `AllBrokersDown`,
/// which the outage clock would report as unreachable after `--timeout`. A TLS 1.3
/// certificate refusal is a transport failure to the poll in any case.
pub fn round_failure(fatal: Option<KafkaIoError>, watch: &AccessWatch) -> Option<KafkaIoError> {
    fatal.or_else(|| watch.access_lost("consume"))
}

/// How often an ongoing outage probes the broker.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The outage in progress, if any.
#[derive(Default)]
pub struct Outage {
    current: Option<Current>,
}

struct Current {
    since: Instant,
    last_probe: Instant,
    cause: String,
}

impl Outage {
    /// Records an unreachable error; the first one starts the outage's clock.
    pub fn observe(&mut self, e: &KafkaIoError) {
        let now = Instant::now();
        match &mut self.current {
            Some(c) => c.cause = e.message.clone(),
            None => {
                tracing::warn!("the broker is unreachable, retrying: {}", e.message);
                self.current = Some(Current {
                    since: now,
                    last_probe: now,
                    cause: e.message.clone(),
                });
            }
        }
    }

    /// Something arrived from the broker: the outage is over.
    pub fn clear(&mut self) {
        if let Some(c) = self.current.take() {
            tracing::info!(
                "the broker answers again after {:.1}s",
                c.since.elapsed().as_secs_f64()
            );
        }
    }

    /// During an outage: probes at most every second (`probe` answers whether the broker
    /// responded), and fails once the outage has lasted `timeout`.
    pub fn check(&mut self, timeout: Duration, probe: impl FnOnce() -> bool) -> Result<(), Error> {
        let Some(c) = &mut self.current else {
            return Ok(());
        };
        if c.last_probe.elapsed() >= PROBE_EVERY {
            c.last_probe = Instant::now();
            if probe() {
                self.clear();
                return Ok(());
            }
        }
        if c.since.elapsed() >= timeout {
            return Err(Error::unreachable(format!(
                "the broker has been unreachable for {timeout:?}: {}",
                c.cause
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::ops::ErrorKind;

    use super::*;

    #[test]
    fn an_outage_fails_only_after_the_timeout_and_a_probe_that_answers_ends_it() {
        let mut o = Outage::default();
        assert!(
            o.check(Duration::ZERO, || false).is_ok(),
            "no outage, no error"
        );
        o.observe(&KafkaIoError::unreachable("consume: AllBrokersDown"));
        assert!(o.check(Duration::from_secs(60), || false).is_ok());
        let e = o.check(Duration::ZERO, || false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unreachable);
        assert!(e.message.contains("AllBrokersDown"), "{}", e.message);
        o.clear();
        assert!(o.check(Duration::ZERO, || false).is_ok());
    }

    /// The tail loop's own check: the poll saw only transport failures (an outage, no
    /// fatal error), the error callback saw the refused login; the round ends the tail
    /// with exit 1 naming the login, not an outage reported after `--timeout`.
    #[test]
    fn a_refusal_seen_only_by_the_error_callback_ends_the_tail_with_exit_1_naming_it() {
        let watch = AccessWatch::new();
        watch.expect_login(Some("SASL_PLAINTEXT"), Some("SCRAM-SHA-256"), Some("alice"));
        watch.note_transport_failure(
            "sasl_plaintext://127.0.0.1:9/1: Disconnected (after 2051ms in state UP)",
        );
        assert!(round_failure(None, &watch).is_none(), "an outage goes on");
        watch.note_authentication_failure(
            "sasl_plaintext://127.0.0.1:9/1: SASL authentication error: Authentication failed \
             during authentication due to invalid credentials with SASL mechanism \
             SCRAM-SHA-256 (after 3ms in state AUTH_REQ)",
        );
        let error: Error = round_failure(None, &watch)
            .expect("the refusal ends the round")
            .into();
        assert_eq!(error.kind, ErrorKind::Failure);
        assert!(
            error.message.starts_with(
                "consume: authentication failed: the broker refused the SASL SCRAM-SHA-256 \
                 login as user \"alice\": sasl_plaintext://127.0.0.1:9/1: SASL authentication error"
            ) && error.message.contains("invalid credentials"),
            "{}",
            error.message
        );
        // An error the poll delivered itself comes first.
        let fatal = KafkaIoError::failed("consume: Message consumption error");
        assert_eq!(round_failure(Some(fatal.clone()), &watch), Some(fatal));
    }
}
