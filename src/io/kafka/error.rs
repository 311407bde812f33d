//! Kafka adapter errors, classified the way the exit-code table needs:
//! unreachable or timed out (4) versus the broker answering with a failure (1) —
//! a refused SASL login included, which librdkafka only reports on the side
//! (`auth_failure`) and then shows as a transport failure. A failed TLS handshake,
//! reported on the side as well, stays unreachable (4) and is named. The
//! classification of an rdkafka error, which asks `auth_failure`, is in `classify`
//! (`auth_failure` builds this type, so this file does not import it).

use std::fmt;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

/// Ends the message of a transport failure: the client's own log says why, but this
/// line is often all that is left in a CI log, so it points at the usual causes.
pub(super) const TRANSPORT_HINT: &str = " (is the broker up at the bootstrap address, and do security.protocol and the TLS/SASL settings of --command-config match its listener?)";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaIoError {
    /// No answer from the cluster (transport failure, timeout): the outcome is unknown.
    pub unreachable: bool,
    pub message: String,
}

impl KafkaIoError {
    pub fn failed(message: impl Into<String>) -> Self {
        KafkaIoError {
            unreachable: false,
            message: message.into(),
        }
    }

    pub fn unreachable(message: impl Into<String>) -> Self {
        KafkaIoError {
            unreachable: true,
            message: message.into(),
        }
    }
}

impl KafkaIoError {
    /// The message without the hint a transport failure ends with: when a refused
    /// login explains the failure, the hint points the wrong way.
    pub fn without_transport_hint(&self) -> &str {
        self.message
            .strip_suffix(TRANSPORT_HINT)
            .unwrap_or(&self.message)
    }
}

impl fmt::Display for KafkaIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KafkaIoError {}

/// True for the rdkafka errors that mean "no answer": transport failures and timeouts.
pub fn is_unreachable_error(e: &KafkaError) -> bool {
    let code = match e.rdkafka_error_code() {
        Some(c) => c,
        None => return false,
    };
    matches!(
        code,
        RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::TimedOutQueue
            | RDKafkaErrorCode::Resolve
            | RDKafkaErrorCode::NetworkException
            | RDKafkaErrorCode::BrokerNotAvailable
            | RDKafkaErrorCode::LeaderNotAvailable
            | RDKafkaErrorCode::CoordinatorNotAvailable
            | RDKafkaErrorCode::NotCoordinator
    )
}
