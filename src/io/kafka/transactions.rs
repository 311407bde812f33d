//! The pieces of an rdkafka transactional producer the group runner's
//! exactly-once mode needs: the `transactional.id` a topology runs under, the
//! producer settings, offsets as a partition list, and error mapping in which a
//! fenced or otherwise fatal producer says so (the run must stop; another
//! instance owns the transactional id now).

use std::collections::BTreeMap;

use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::runner::group::{RunnerError, TopicPartition};
use crate::io::kafka::settings::KafkaSettings;

/// `-X transactional.id=…` when given, else one derived from the consumer group, so
/// a restarted runner fences its own predecessor. Instances of one group that run
/// side by side need distinct ids (`-X transactional.id=…`), or they fence each other.
pub fn transactional_id(settings: &KafkaSettings, consumer_group: &str) -> String {
    settings
        .get("transactional.id")
        .map(str::to_owned)
        .unwrap_or_else(|| format!("krabka-streams-{consumer_group}"))
}

/// Makes a producer configuration transactional.
pub fn configure(config: &mut ClientConfig, transactional_id: &str) {
    config
        .set("transactional.id", transactional_id)
        .set("enable.idempotence", "true")
        .set("acks", "all");
}

/// Next offsets as a partition list.
pub fn offsets_list(
    offsets: &BTreeMap<TopicPartition, i64>,
) -> Result<TopicPartitionList, RunnerError> {
    let mut list = TopicPartitionList::new();
    for (TopicPartition { topic, partition }, offset) in offsets {
        list.add_partition_offset(topic, *partition, Offset::Offset(*offset))
            .map_err(|e| RunnerError::new(format!("{topic}-{partition}: {e}")))?;
    }
    Ok(list)
}

fn code(e: &KafkaError) -> Option<RDKafkaErrorCode> {
    match e {
        KafkaError::Transaction(inner) => Some(inner.code()),
        other => other.rdkafka_error_code(),
    }
}

/// Whether the producer was fenced by a newer instance with the same transactional id.
pub fn is_fenced(e: &KafkaError) -> bool {
    matches!(
        code(e),
        Some(
            RDKafkaErrorCode::Fenced
                | RDKafkaErrorCode::ProducerFenced
                | RDKafkaErrorCode::InvalidProducerEpoch
                | RDKafkaErrorCode::TransactionCoordinatorFenced
        )
    ) || matches!(e, KafkaError::Transaction(inner) if inner.is_fatal())
}

/// A transactional call that failed while `step`; never retriable: the round is
/// aborted and rolled back, and a fenced producer ends the run.
pub fn transaction_error(step: &str, transactional_id: &str, e: &KafkaError) -> RunnerError {
    let message = if is_fenced(e) {
        format!(
            "producer fenced while {step}: another runner now uses transactional.id \
             {transactional_id} ({e})"
        )
    } else {
        format!("transaction failed while {step}: {e}")
    };
    RunnerError::new(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transactional_id_defaults_to_the_group_and_an_explicit_one_wins() {
        let plain = KafkaSettings::default();
        assert_eq!(transactional_id(&plain, "orders"), "krabka-streams-orders");
        let mut explicit = KafkaSettings::default();
        explicit.set("transactional.id", "orders-1");
        assert_eq!(transactional_id(&explicit, "orders"), "orders-1");
    }

    #[test]
    fn a_fenced_producer_error_says_another_runner_took_over() {
        let e = KafkaError::MessageProduction(RDKafkaErrorCode::ProducerFenced);
        let err = transaction_error("sending records", "t-1", &e);
        assert!(!err.retriable);
        assert!(
            err.message
                .starts_with("producer fenced while sending records: another runner now uses transactional.id t-1"),
            "{err}"
        );
        let other = KafkaError::MessageProduction(RDKafkaErrorCode::MessageTimedOut);
        assert!(
            transaction_error("committing", "t-1", &other)
                .message
                .starts_with("transaction failed while committing")
        );
    }
}
