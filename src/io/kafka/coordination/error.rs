//! Errors of the coordination wire client, classified the way the election
//! branches: no answer (unreachable), an unusable answer, or a broker error
//! code; codes 47 and 90 become the engine's "fenced", a refused login (58) its
//! "refused".

use std::fmt;

use kafka_protocol::ResponseError;

use crate::engine::coordination::TransportError;

pub const INVALID_PRODUCER_EPOCH: i16 = 47;
pub const PRODUCER_FENCED: i16 = 90;
pub const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;
pub const OFFSET_OUT_OF_RANGE: i16 = 1;
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
pub const TOPIC_ALREADY_EXISTS: i16 = 36;
pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
pub const DUPLICATE_SEQUENCE_NUMBER: i16 = 46;
pub const SASL_AUTHENTICATION_FAILED: i16 = 58;

/// Codes after which the same request may succeed a little later.
const RETRIABLE: [i16; 10] = [
    5,  // LEADER_NOT_AVAILABLE
    6,  // NOT_LEADER_OR_FOLLOWER
    7,  // REQUEST_TIMED_OUT
    13, // NETWORK_EXCEPTION
    14, // COORDINATOR_LOAD_IN_PROGRESS
    15, // COORDINATOR_NOT_AVAILABLE
    16, // NOT_COORDINATOR
    19, // NOT_ENOUGH_REPLICAS
    51, // CONCURRENT_TRANSACTIONS
    20, // NOT_ENOUGH_REPLICAS_AFTER_APPEND
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// No answer: connect failure, reset, timeout. The outcome is unknown.
    Io(String),
    /// The TLS handshake was refused (untrusted certificate, an alert from the broker):
    /// the broker cannot be reached with these settings, and retrying will not change
    /// that, so it is not retried.
    Tls(String),
    /// The broker does not speak a needed API or version.
    Unsupported(String),
    /// The answer could not be used.
    Protocol(String),
    /// The broker answered with an error code.
    Broker {
        what: String,
        code: i16,
        message: Option<String>,
    },
}

impl WireError {
    pub fn io(message: impl Into<String>) -> Self {
        WireError::Io(message.into())
    }

    pub fn protocol(message: impl Into<String>) -> Self {
        WireError::Protocol(message.into())
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        WireError::Unsupported(message.into())
    }

    pub fn broker(what: impl Into<String>, code: i16, message: Option<String>) -> Self {
        WireError::Broker {
            what: what.into(),
            code,
            message: message.filter(|m| !m.is_empty()),
        }
    }

    /// The broker error code, if the broker answered with one.
    pub fn code(&self) -> Option<i16> {
        match self {
            WireError::Broker { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Worth the same request again after a short pause.
    pub fn is_retriable(&self) -> bool {
        match self {
            WireError::Io(_) => true,
            WireError::Broker { code, .. } => RETRIABLE.contains(code),
            _ => false,
        }
    }

    pub fn is_fenced(&self) -> bool {
        matches!(
            self.code(),
            Some(INVALID_PRODUCER_EPOCH) | Some(PRODUCER_FENCED)
        )
    }

    /// The engine's view: fenced, refused (the login), unreachable, or failed.
    pub fn into_transport(self) -> TransportError {
        if self.is_fenced() {
            TransportError::fenced(self.to_string())
        } else if self.code() == Some(SASL_AUTHENTICATION_FAILED) {
            TransportError::refused(self.to_string())
        } else if matches!(self, WireError::Io(_) | WireError::Tls(_)) {
            TransportError::unreachable(self.to_string())
        } else {
            TransportError::failed(self.to_string())
        }
    }
}

/// `PRODUCER_FENCED (90)`: the Kafka name of a code and the code.
pub fn code_name(code: i16) -> String {
    match ResponseError::try_from_code(code) {
        None => "NONE (0)".to_string(),
        Some(ResponseError::Unknown(c)) => format!("UNKNOWN_ERROR_CODE ({c})"),
        Some(e) => {
            let camel = format!("{e:?}");
            let mut out = String::with_capacity(camel.len() + 8);
            for (i, ch) in camel.chars().enumerate() {
                if ch.is_ascii_uppercase() && i > 0 {
                    out.push('_');
                }
                out.push(ch.to_ascii_uppercase());
            }
            format!("{out} ({code})")
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Io(m)
            | WireError::Tls(m)
            | WireError::Unsupported(m)
            | WireError::Protocol(m) => f.write_str(m),
            WireError::Broker {
                what,
                code,
                message,
            } => {
                write!(f, "{what} failed: {}", code_name(*code))?;
                if let Some(m) = message {
                    write!(f, ": {m}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for WireError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::coordination::TransportErrorKind;

    #[test]
    fn codes_read_like_the_kafka_names() {
        assert_eq!(code_name(90), "PRODUCER_FENCED (90)");
        assert_eq!(code_name(47), "INVALID_PRODUCER_EPOCH (47)");
        assert_eq!(code_name(3), "UNKNOWN_TOPIC_OR_PARTITION (3)");
        assert_eq!(code_name(-1), "UNKNOWN_SERVER_ERROR (-1)");
        assert_eq!(code_name(999), "UNKNOWN_ERROR_CODE (999)");
    }

    #[test]
    fn epoch_errors_are_fenced_and_silence_is_unreachable() {
        let fenced = WireError::broker("AddPartitionsToTxn", 90, None).into_transport();
        assert_eq!(fenced.kind, TransportErrorKind::Fenced);
        assert_eq!(
            fenced.to_string(),
            "fenced: another member holds the role: AddPartitionsToTxn failed: PRODUCER_FENCED (90)"
        );
        assert!(WireError::broker("Produce", 47, None).is_fenced());
        assert_eq!(
            WireError::io("timed out").into_transport().kind,
            TransportErrorKind::Unreachable
        );
        assert!(WireError::broker("EndTxn", 51, None).is_retriable());
        let tls = WireError::Tls("TLS handshake failed: certificate verify failed".into());
        assert!(!tls.is_retriable());
        assert_eq!(tls.into_transport().kind, TransportErrorKind::Unreachable);
        assert!(!WireError::broker("EndTxn", 90, None).is_retriable());
    }

    #[test]
    fn a_refused_login_is_refused_and_never_retried() {
        let refused = WireError::broker(
            "SASL SCRAM-SHA-256 login as user \"alice\" at 127.0.0.1:9",
            SASL_AUTHENTICATION_FAILED,
            Some("invalid credentials".into()),
        );
        assert!(!refused.is_retriable());
        let refused = refused.into_transport();
        assert_eq!(refused.kind, TransportErrorKind::Refused);
        assert_eq!(
            refused.to_string(),
            "SASL SCRAM-SHA-256 login as user \"alice\" at 127.0.0.1:9 failed: \
             SASL_AUTHENTICATION_FAILED (58): invalid credentials"
        );
    }
}
