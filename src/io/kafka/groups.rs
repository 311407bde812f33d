//! Consumer-group offsets: reading committed offsets, checking that a group is
//! inactive, and setting its committed offsets (restore to a cut).

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::consumer::{CommitMode, Consumer};
use rdkafka::{Offset, TopicPartitionList};

use crate::engine::topic_partition::TopicPartition;
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::reader_context::{ReaderConsumer, ReaderContext};
use crate::io::kafka::settings::KafkaSettings;

fn group_consumer(settings: &KafkaSettings, group: &str) -> Result<ReaderConsumer, KafkaIoError> {
    settings.refuse_dead_bootstrap()?;
    let mut config = settings.client_config();
    config
        .set("group.id", group)
        .set("enable.auto.commit", "false");
    config
        .create_with_context(ReaderContext)
        .map_err(|e| KafkaIoError::failed(format!("create Kafka consumer for group {group}: {e}")))
}

fn tpl_of(
    tps: impl IntoIterator<Item = (TopicPartition, Offset)>,
) -> Result<TopicPartitionList, KafkaIoError> {
    let mut tpl = TopicPartitionList::new();
    for (
        TopicPartition {
            topic: t,
            partition: p,
        },
        o,
    ) in tps
    {
        tpl.add_partition_offset(&t, p, o)
            .map_err(|e| KafkaIoError::failed(format!("{t}-{p}: {e}")))?;
    }
    Ok(tpl)
}

/// Committed offsets of `group` for `tps`; `None` where nothing is committed.
pub fn committed_offsets(
    settings: &KafkaSettings,
    group: &str,
    tps: &[TopicPartition],
    timeout: Duration,
) -> Result<BTreeMap<TopicPartition, Option<i64>>, KafkaIoError> {
    let consumer = group_consumer(settings, group)?;
    let tpl = tpl_of(tps.iter().map(|tp| (tp.clone(), Offset::Invalid)))?;
    let got = consumer.committed_offsets(tpl, timeout).map_err(|e| {
        crate::io::kafka::auth_failure::serve_events(&consumer);
        KafkaIoError::from_kafka(format!("read committed offsets of group {group}"), &e)
    })?;
    let mut out = BTreeMap::new();
    for e in got.elements() {
        if let Err(err) = e.error() {
            return Err(KafkaIoError::failed(format!(
                "read committed offset of group {group} for {}-{}: {err}",
                e.topic(),
                e.partition()
            )));
        }
        let offset = match e.offset() {
            Offset::Offset(o) => Some(o),
            _ => None,
        };
        out.insert(TopicPartition::new(e.topic(), e.partition()), offset);
    }
    Ok(out)
}

/// What the broker says about a group: its state and how many members it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupActivity {
    pub state: String,
    pub members: usize,
}

impl GroupActivity {
    /// A group may have its offsets rewritten only when nobody consumes with it.
    pub fn is_inactive(&self) -> bool {
        self.members == 0 && matches!(self.state.as_str(), "Empty" | "Dead" | "" | "Unknown")
    }
}

/// The group's activity; a group the broker does not know is reported as `Dead` with no members.
pub fn group_activity(
    settings: &KafkaSettings,
    group: &str,
    timeout: Duration,
) -> Result<GroupActivity, KafkaIoError> {
    let consumer = group_consumer(settings, "krabka-streams-inspect-unused")?;
    let list = consumer
        .fetch_group_list(Some(group), timeout)
        .map_err(|e| {
            crate::io::kafka::auth_failure::serve_events(&consumer);
            KafkaIoError::from_kafka(format!("describe group {group}"), &e)
        })?;
    Ok(match list.groups().iter().find(|g| g.name() == group) {
        Some(g) => GroupActivity {
            state: g.state().to_string(),
            members: g.members().len(),
        },
        None => GroupActivity {
            state: "Dead".into(),
            members: 0,
        },
    })
}

/// Sets `group`'s committed offsets (the group must be inactive; the caller checks).
pub fn commit_offsets(
    settings: &KafkaSettings,
    group: &str,
    offsets: &BTreeMap<TopicPartition, i64>,
    _timeout: Duration,
) -> Result<(), KafkaIoError> {
    let consumer = group_consumer(settings, group)?;
    let tpl = tpl_of(
        offsets
            .iter()
            .map(|(tp, o)| (tp.clone(), Offset::Offset(*o))),
    )?;
    consumer
        .commit(&tpl, CommitMode::Sync)
        .map_err(|e| KafkaIoError::from_kafka(format!("commit offsets of group {group}"), &e))
}
