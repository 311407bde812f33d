//! One-shot reads of `__barrier_state`: every partition from the start to the
//! end offsets captured when the read starts (decision D16), folded into a `CutLog`.

use std::time::Duration;

use crate::engine::columnar::barrier::cut_log::{ConsumedRecord, CutLog, MalformedRecord};
use crate::engine::columnar::barrier::record::BARRIER_STATE_TOPIC;
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::kafka::topic_reader::TopicReader;

/// Why a read of `__barrier_state` failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierStateReadError {
    #[error(transparent)]
    Kafka(#[from] KafkaIoError),
    #[error("{BARRIER_STATE_TOPIC}: {0}")]
    Malformed(#[from] MalformedRecord),
}

/// What a read saw: the fold, and whether the topic exists at all.
#[derive(Debug, Clone, Default)]
pub struct BarrierState {
    pub log: CutLog,
    pub topic_exists: bool,
    pub partitions: i32,
    pub records: u64,
}

/// Reads and folds the whole `__barrier_state` topic (a missing topic is an empty log).
pub fn read_barrier_state(
    settings: &KafkaSettings,
    timeout: Duration,
) -> Result<BarrierState, BarrierStateReadError> {
    let Some(reader) = TopicReader::open(settings, BARRIER_STATE_TOPIC, timeout)? else {
        return Ok(BarrierState::default());
    };
    let mut state = BarrierState {
        log: CutLog::new(),
        topic_exists: true,
        partitions: reader.partitions().len() as i32,
        records: 0,
    };
    reader.read_to_end(|r| {
        state.records += 1;
        state.log.apply(&ConsumedRecord {
            partition: r.partition,
            offset: r.offset,
            key: r.key,
            value: r.value,
        })
    })??;
    Ok(state)
}
