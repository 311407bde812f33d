//! Kafka adapter errors, classified the way the exit-code table needs:
//! unreachable or timed out (4) versus the broker answering with a failure (1).

use std::fmt;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

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

    /// Wraps an rdkafka error with what was being done.
    pub fn from_kafka(what: impl fmt::Display, e: &KafkaError) -> Self {
        if is_unreachable_error(e) {
            // The connection failed because the broker refused our login: that is its
            // answer, not an outage, and retrying will not change it.
            if let Some(refused) = super::auth_failure::recent() {
                return KafkaIoError::failed(format!("{what}: {refused}"));
            }
        }
        let mut message = format!("{what}: {e}");
        if matches!(
            e.rdkafka_error_code(),
            Some(RDKafkaErrorCode::BrokerTransportFailure | RDKafkaErrorCode::AllBrokersDown)
        ) {
            // The client's log above says why (refused, TLS handshake, SASL); this line is
            // often all that is left in a CI log, so point at the usual causes.
            message.push_str(
                " (is the broker up at the bootstrap address, and do security.protocol and the TLS/SASL settings of --command-config match its listener?)",
            );
        }
        if is_unreachable_error(e) {
            KafkaIoError::unreachable(message)
        } else {
            KafkaIoError::failed(message)
        }
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

impl From<KafkaIoError> for crate::cmd::exit::CliError {
    fn from(e: KafkaIoError) -> Self {
        if e.unreachable {
            crate::cmd::exit::CliError::unreachable(e.message)
        } else {
            crate::cmd::exit::CliError::failure(e.message)
        }
    }
}
