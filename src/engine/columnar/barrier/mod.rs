//! `__barrier_state` cut manifests, barrier markers and the cut reader fold (formats §7,
//! semantics §8).
//!
//! * [`record`]: keys and values of `__barrier_state`, tombstones, the group → partition rule.
//! * [`marker`]: the barrier marker control record written into data partitions.
//! * [`cut_log`]: the pure fold of records into cuts and its queries.
//! * [`reader`]: the [`CutReader`] that drives a [`BarrierConsumer`] over the topic.
//! * [`error`]: the codec error type with the frozen message strings.
//! * [`verify`]: pure comparisons of offsets, snapshot files and Arrow inputs with one cut.
//! * [`rows`]: cuts as Arrow rows, one per (group, epoch, topic, partition, offset).
//! * `in_memory`: the in-memory [`BarrierConsumer`] the reader tests and vectors share.
//!
//! Engine code: no CLI, no Kafka client, no HTTP, no Avro. Kafka is reached only through
//! [`BarrierConsumer`].

pub mod cut_log;
pub mod error;
#[doc(hidden)]
pub mod in_memory;
pub mod marker;
pub mod reader;
pub mod record;
pub mod rows;
pub mod selection;
pub mod unknown_group;
pub mod verify;
mod wire;

pub use cut_log::{BarrierCut, ConsumedRecord, CutLog, MalformedRecord};
pub use error::{BarrierCodecError, RecordPart};
pub use marker::{
    BARRIER_MARKER_CONTROL_TYPE, BARRIER_MARKER_KEY, BarrierMarker, decode_marker_key,
};
pub use reader::{
    BarrierConsumer, ConsumerError, ConsumerStep, CutReadError, CutReader, CutReaderConfigError,
    CutReaderOptions, DEFAULT_CUT_IDLE_POLLS, DEFAULT_CUT_POLL_TIMEOUT,
};
pub use record::{
    BARRIER_STATE_TOPIC, BarrierStateKey, BarrierStateValue, Cut, CutOffset, CutStatus, CutTopic,
    DEFAULT_BARRIER_STATE_PARTITIONS, DEFAULT_BARRIER_STATE_REPLICATION_FACTOR, GroupDefinition,
    InjectionStart, InjectionTarget, NO_EPOCH, RecordKind, TopicPartition, decode_record,
    decode_value, group_partition, is_tombstone,
};
pub use unknown_group::{UnknownGroup, require_group};
