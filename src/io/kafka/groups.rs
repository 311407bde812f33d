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

/// What the broker says about a group: its state and who its members are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupActivity {
    pub state: String,
    /// Each member as [`member_name`] says, so a refusal can say which
    /// processes to stop.
    pub members: Vec<String>,
}

impl GroupActivity {
    /// A group may have its offsets rewritten only when nobody consumes with it.
    pub fn is_inactive(&self) -> bool {
        self.members.is_empty() && matches!(self.state.as_str(), "Empty" | "Dead" | "" | "Unknown")
    }

    /// `state Stable, 2 members: m-1 (client a, host h1), m-2 (client b, host h2)`, for the refusals.
    pub fn describe(&self) -> String {
        if self.members.is_empty() {
            return format!("state {}, no members", self.state);
        }
        format!(
            "state {}, {} member{}: {}",
            self.state,
            self.members.len(),
            if self.members.len() == 1 { "" } else { "s" },
            self.members.join(", ")
        )
    }
}

/// A member as a refusal names it: its member id (which Kafka starts with the
/// client id), then the client id and host when the broker reports them
/// (Tansu reports neither).
pub fn member_name(id: &str, client_id: &str, host: &str) -> String {
    let known: Vec<String> = [("client", client_id), ("host", host)]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if known.is_empty() {
        id.to_owned()
    } else {
        format!("{id} ({})", known.join(", "))
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
            members: g
                .members()
                .iter()
                .map(|m| member_name(m.id(), m.client_id(), m.client_host()))
                .collect(),
        },
        None => GroupActivity {
            state: "Dead".into(),
            members: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_group_is_described_member_by_member() {
        let activity = GroupActivity {
            state: "Stable".into(),
            members: vec![
                member_name("app-1-uuid", "app-1", "/10.0.0.7"),
                member_name("krabka-streams/0.1.0 run-uuid", "", ""),
            ],
        };
        assert!(!activity.is_inactive());
        assert_eq!(
            activity.describe(),
            "state Stable, 2 members: app-1-uuid (client app-1, host /10.0.0.7), krabka-streams/0.1.0 run-uuid"
        );
        let empty = GroupActivity {
            state: "Empty".into(),
            members: Vec::new(),
        };
        assert!(empty.is_inactive());
        assert_eq!(empty.describe(), "state Empty, no members");
    }
}
