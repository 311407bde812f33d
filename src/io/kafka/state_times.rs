//! When each record of a state topic was written: the record timestamps of
//! one partition, by offset. `snapshot prune --state-topic NAME --older-than
//! DUR` dates an epoch snapshot by its (manifest) record as the directory
//! prune dates a file by its modification time. Only keys and timestamps are
//! kept (values are dropped as they are read), so a large state costs its read
//! time, not its size in memory. The store's own reader
//! (`state_topic::read_records`) does not keep timestamps.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::consumer::Consumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::io::kafka::reader_context::{ReaderConsumer, ReaderContext};
use crate::io::kafka::settings::KafkaSettings;

/// Offset → write time of every record of `name`-`partition` from the log start
/// to the high watermark, within `timeout` (every read is bounded). A record
/// without a timestamp is left out (its snapshot counts as of unknown age).
pub fn record_times(
    settings: &KafkaSettings,
    name: &str,
    partition: i32,
    timeout: Duration,
) -> Result<BTreeMap<i64, SystemTime>, String> {
    let mut config = settings.client_config();
    config
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "true")
        .set("isolation.level", "read_committed")
        .set("group.id", "krabka-streams-state-reader-unused");
    let consumer: ReaderConsumer = config
        .create_with_context(ReaderContext)
        .map_err(|e| format!("create Kafka consumer: {e}"))?;
    let (low, high) = consumer
        .fetch_watermarks(name, partition, timeout)
        .map_err(|e| format!("read the watermarks of {name}-{partition}: {e}"))?;
    let mut times = BTreeMap::new();
    if high <= low {
        return Ok(times);
    }
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(name, partition, Offset::Offset(low))
        .map_err(|e| e.to_string())?;
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + timeout;
    loop {
        if Instant::now() > deadline {
            return Err(format!(
                "reading {name}-{partition} up to offset {high} took longer than {timeout:?}"
            ));
        }
        match consumer.poll(Duration::from_millis(200)) {
            None => continue,
            Some(Err(KafkaError::PartitionEOF(_))) => break,
            Some(Err(e)) => return Err(format!("read {name}-{partition}: {e}")),
            Some(Ok(m)) => {
                if let Some(ms) = m.timestamp().to_millis().filter(|ms| *ms >= 0) {
                    times.insert(m.offset(), UNIX_EPOCH + Duration::from_millis(ms as u64));
                }
                if m.offset() + 1 >= high {
                    break;
                }
            }
        }
    }
    Ok(times)
}
