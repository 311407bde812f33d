//! The pieces of an rdkafka transactional producer the group runner's
//! exactly-once mode needs: the `transactional.id` a topology runs under, the
//! producer settings, offsets as a partition list, and error mapping in which a
//! fenced or otherwise fatal producer, or a stale group generation, says so
//! (`RunnerError::fenced`: the online run rejoins its group with a new producer).

use std::collections::BTreeMap;

use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::runner::group::{Fence, RunnerError, TopicPartition};
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

/// Whether the group moved on without this member: the offsets of a
/// transaction carry the consumer's generation, and the coordinator refuses a
/// stale one (KIP-447), e.g. after the member was paused past its session and
/// its partitions went to another member.
pub fn is_stale_member(e: &KafkaError) -> bool {
    matches!(
        code(e),
        Some(
            RDKafkaErrorCode::IllegalGeneration
                | RDKafkaErrorCode::UnknownMemberId
                | RDKafkaErrorCode::FencedInstanceId
                | RDKafkaErrorCode::RebalanceInProgress
        )
    )
}

/// A transactional call that failed while `step`; never retriable: the round is
/// aborted and rolled back. A fenced producer or a stale group generation is a
/// [`RunnerError::fenced`]: the online run then drops its in-memory state and
/// rejoins the group.
pub fn transaction_error(step: &str, transactional_id: &str, e: &KafkaError) -> RunnerError {
    if is_fenced(e) {
        RunnerError::fenced(
            Fence::Producer,
            format!(
                "producer fenced while {step}: another runner now uses transactional.id \
             {transactional_id} ({e})"
            ),
        )
    } else if is_stale_member(e) {
        RunnerError::fenced(
            Fence::Group,
            format!("the consumer group moved on without this member while {step} ({e})"),
        )
    } else {
        RunnerError::new(format!("transaction failed while {step}: {e}"))
    }
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
        assert!(!err.retriable && err.fenced == Some(Fence::Producer));
        assert!(
            err.message
                .starts_with("producer fenced while sending records: another runner now uses transactional.id t-1"),
            "{err}"
        );
        let other = KafkaError::MessageProduction(RDKafkaErrorCode::MessageTimedOut);
        let err = transaction_error("committing", "t-1", &other);
        assert!(
            err.message
                .starts_with("transaction failed while committing")
                && err.fenced.is_none()
        );
        // The group moved on (the member was paused past its session): fenced too.
        for code in [
            RDKafkaErrorCode::IllegalGeneration,
            RDKafkaErrorCode::UnknownMemberId,
        ] {
            let err = transaction_error(
                "sending the consumed offsets",
                "t-1",
                &KafkaError::ConsumerCommit(code),
            );
            assert!(err.fenced == Some(Fence::Group) && !err.retriable, "{err}");
            assert!(
                err.message.starts_with(
                    "the consumer group moved on without this member while sending the consumed offsets"
                ),
                "{err}"
            );
        }
    }
}
