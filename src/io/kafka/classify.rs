//! An rdkafka error as a [`KafkaIoError`]: unreachable (exit 4) or failed (exit 1), with
//! what the access watch (`auth_failure`) learnt on the side — a refused login turns a
//! transport failure into that refusal, a failed TLS handshake is named.

use std::fmt;

use rdkafka::error::{KafkaError, RDKafkaErrorCode};

use crate::io::kafka::auth_failure;
use crate::io::kafka::error::{KafkaIoError, TRANSPORT_HINT, is_unreachable_error};

/// Ends the message of a failed TLS handshake.
const TLS_HINT: &str = " (does ssl.ca.location / ssl.truststore.location hold the CA that signed the broker's certificate, and does the listener want a client certificate?)";

impl KafkaIoError {
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
