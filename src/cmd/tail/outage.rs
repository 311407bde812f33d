//! A broker outage seen by a running tail. librdkafka reports a lost broker once
//! (`AllBrokersDown`, a transport failure) and then reconnects on its own, so a lost
//! connection is not the end of a tail: it becomes an error (exit 4) only when the
//! broker stays unreachable for the whole `--timeout`. While the outage lasts, a cheap
//! watermark probe tells whether the broker answers again — records alone cannot, as a
//! healthy topic may simply have nothing new.

use std::time::{Duration, Instant};

use crate::cmd::exit::CliError;
use crate::io::kafka::error::KafkaIoError;

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
    pub fn check(
        &mut self,
        timeout: Duration,
        probe: impl FnOnce() -> bool,
    ) -> Result<(), CliError> {
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
            return Err(CliError::unreachable(format!(
                "the broker has been unreachable for {timeout:?}: {}",
                c.cause
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(e.code, crate::cmd::exit::ExitCode::Unreachable);
        assert!(e.message.contains("AllBrokersDown"), "{}", e.message);
        o.clear();
        assert!(o.check(Duration::ZERO, || false).is_ok());
    }
}
