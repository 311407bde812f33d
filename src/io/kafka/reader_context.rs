//! The client context of our reading consumers: librdkafka errors are logged as the default
//! context logs them (and refused logins kept for the final error, `auth_failure`), except
//! partition-EOF notices. Readers ask for those to see the end of a
//! partition, and librdkafka also passes them to the global error callback, which would print
//! one ERROR line per partition on every read of a many-partition topic.

use rdkafka::client::ClientContext;
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
            tracing::error!("librdkafka: {error}: {reason}");
        }
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
