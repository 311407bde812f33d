//! Which offsets a topic really holds below given limits, per partition: what `barrier verify
//! --input` compares an Arrow input with. Offsets are not contiguous (barrier and transaction
//! markers leave gaps, compaction removes records), so they are read, not computed.
//!
//! Each partition is read from its log start (low watermark) up to `min(limit, high
//! watermark)` with `read_committed`, as a runner consumes (aborted records are never "before
//! the cut"); partition-EOF events end a partition early where the last offsets are markers.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::Consumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::columnar::barrier::verify::PartitionLog;
use crate::io::kafka::error::{KafkaIoError, is_unreachable_error};
use crate::io::kafka::reader_context::{ReaderConsumer, ReaderContext};
use crate::io::kafka::settings::KafkaSettings;

/// The offsets `topic` holds in `[log start, limit)` for each `(partition, limit)`.
pub fn offsets_below(
    settings: &KafkaSettings,
    topic: &str,
    limits: &BTreeMap<i32, i64>,
    timeout: Duration,
) -> Result<BTreeMap<i32, PartitionLog>, KafkaIoError> {
    settings.refuse_dead_bootstrap()?;
    let mut config = settings.client_config();
    config
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .set("isolation.level", "read_committed")
        .set("group.id", "krabka-streams-reader-unused");
    let consumer: ReaderConsumer = config
        .create_with_context(ReaderContext)
        .map_err(|e| KafkaIoError::failed(format!("create Kafka consumer: {e}")))?;
    let deadline = Instant::now() + timeout;

    let mut logs = BTreeMap::new();
    let mut stops = BTreeMap::new();
    let mut assignment = TopicPartitionList::new();
    for (&partition, &limit) in limits {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let (low, high) = consumer
            .fetch_watermarks(topic, partition, remaining)
            .map_err(|e| {
                KafkaIoError::from_kafka(format!("read watermarks of {topic}-{partition}"), &e)
            })?;
        logs.insert(
            partition,
            PartitionLog {
                log_start: low,
                offsets: Vec::new(),
            },
        );
        let stop = limit.min(high);
        if low < stop {
            stops.insert(partition, stop);
            assignment
                .add_partition_offset(topic, partition, Offset::Offset(low))
                .map_err(|e| KafkaIoError::failed(format!("{topic}-{partition}: {e}")))?;
        }
    }
    if stops.is_empty() {
        return Ok(logs);
    }
    consumer
        .assign(&assignment)
        .map_err(|e| KafkaIoError::from_kafka(format!("assign {topic}"), &e))?;

    let mut pending: BTreeSet<i32> = stops.keys().copied().collect();
    let mut last_error = None;
    while !pending.is_empty() {
        if Instant::now() >= deadline {
            let cause = last_error
                .map(|e: KafkaError| format!(" (last error: {e})"))
                .unwrap_or_default();
            return Err(KafkaIoError::unreachable(format!(
                "timed out reading {topic} partitions {pending:?} up to the cut{cause}"
            )));
        }
        match consumer.poll(Duration::from_millis(200)) {
            None => {}
            Some(Ok(message)) => {
                let partition = message.partition();
                let Some(&stop) = stops.get(&partition) else {
                    continue;
                };
                if !pending.contains(&partition) {
                    continue;
                }
                if let Some(log) = logs.get_mut(&partition).filter(|_| message.offset() < stop) {
                    log.offsets.push(message.offset());
                }
                if message.offset() + 1 >= stop {
                    pending.remove(&partition);
                }
            }
            Some(Err(KafkaError::PartitionEOF(partition))) => {
                pending.remove(&partition);
            }
            // librdkafka reconnects by itself; the deadline bounds the wait.
            Some(Err(e)) if is_unreachable_error(&e) => last_error = Some(e),
            Some(Err(e)) => {
                return Err(KafkaIoError::from_kafka(format!("read {topic}"), &e));
            }
        }
    }
    Ok(logs)
}
