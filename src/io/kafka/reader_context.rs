//! The client context of our reading consumers: librdkafka errors and log lines are logged
//! collapsed, once per distinct message (`client_log`; refused logins kept for the final
//! error, `auth_failure`), except partition-EOF notices. Readers ask for those to see the end of a
//! partition, and librdkafka also passes them to the global error callback, which would print
//! one ERROR line per partition on every read of a many-partition topic.

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

/// A consumer context that keeps partition-EOF notices out of the error log.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReaderContext;

/// The consumer type our readers use.
pub type ReaderConsumer = BaseConsumer<ReaderContext>;

impl ClientContext for ReaderContext {
    fn error(&self, error: KafkaError, reason: &str) {
        crate::io::kafka::auth_failure::note(&error, reason);
        if is_partition_eof(&error) {
            tracing::trace!("librdkafka: {error}: {reason}");
        } else {
            crate::io::kafka::client_log::error(&error, reason);
        }
    }

    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        crate::io::kafka::client_log::log(level, fac, log_message);
    }
}

impl ConsumerContext for ReaderContext {}

fn is_partition_eof(error: &KafkaError) -> bool {
    matches!(
        error,
        KafkaError::PartitionEOF(_) | KafkaError::Global(RDKafkaErrorCode::PartitionEOF)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_eof_notices_are_recognised_in_both_shapes() {
        assert!(is_partition_eof(&KafkaError::PartitionEOF(3)));
        assert!(is_partition_eof(&KafkaError::Global(
            RDKafkaErrorCode::PartitionEOF
        )));
        assert!(!is_partition_eof(&KafkaError::Global(
            RDKafkaErrorCode::BrokerTransportFailure
        )));
    }
}
