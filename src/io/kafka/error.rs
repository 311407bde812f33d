//! Kafka adapter errors, classified the way the exit-code table needs:
//! unreachable or timed out (4) versus the broker answering with a failure (1) —
//! a refused SASL login included, which librdkafka only reports on the side
//! (`auth_failure`) and then shows as a transport failure. A failed TLS handshake,
//! reported on the side as well, stays unreachable (4) and is named.

use std::fmt;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::io::kafka::auth_failure;

/// Ends the message of a transport failure: the client's own log says why, but this
/// line is often all that is left in a CI log, so it points at the usual causes.
const TRANSPORT_HINT: &str = " (is the broker up at the bootstrap address, and do security.protocol and the TLS/SASL settings of --command-config match its listener?)";

/// Ends the message of a failed TLS handshake.
const TLS_HINT: &str = " (does ssl.ca.location / ssl.truststore.location hold the CA that signed the broker's certificate, and does the listener want a client certificate?)";

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

    /// Wraps an rdkafka error with what was being done. A transport failure or timeout
    /// after the broker refused our login is that refusal (exit 1), not an outage.
    pub fn from_kafka(what: impl fmt::Display, e: &KafkaError) -> Self {
        if (is_unreachable_error(e) || auth_failure::is_authentication_error(e))
            && let Some(refusal) = auth_failure::refusal()
        {
            return KafkaIoError::failed(format!("{what}: {refusal}"));
        }
        if is_unreachable_error(e)
            && let Some(tls) = auth_failure::tls_failure()
        {
            // librdkafka's own reason for an untrusted certificate already points at
            // ssl.ca.location, ours for a missing client certificate at
            // ssl.certificate.location; the hint is for the reasons that do not.
            let hint =
                if tls.contains("ssl.ca.location") || tls.contains("ssl.certificate.location") {
                    ""
                } else {
                    TLS_HINT
                };
            return KafkaIoError::unreachable(format!("{what}: {e}: {tls}{hint}"));
        }
        let mut message = format!("{what}: {e}");
        if matches!(
            e.rdkafka_error_code(),
            Some(RDKafkaErrorCode::BrokerTransportFailure | RDKafkaErrorCode::AllBrokersDown)
        ) {
            message.push_str(TRANSPORT_HINT);
        }
        if is_unreachable_error(e) {
            KafkaIoError::unreachable(message)
        } else {
            KafkaIoError::failed(message)
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
