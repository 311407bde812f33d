//! One topic-partition for the whole engine: barrier cuts and their missing lists, barrier
//! reader assignments, offset checks and the coordination topic's partitions all name a
//! partition with this type. Standard library only, so `engine::coordination` may use it.
//!
//! It prints as `topic/partition`, the form barrier outputs carry (a cut's `missing`
//! list, docs/formats.md §7) and every diagnostic that names a partition.

use std::fmt;

/// A topic and one of its partitions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

/// A partition and the offset to read it from (a manual assignment's entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionOffset {
    pub tp: TopicPartition,
    pub offset: i64,
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.topic, self.partition)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_topic_slash_partition_and_orders_by_topic_then_partition() {
        assert_eq!(TopicPartition::new("orders", 3).to_string(), "orders/3");
        let mut tps = vec![
            TopicPartition::new("b", 0),
            TopicPartition::new("a", 10),
            TopicPartition::new("a", 2),
        ];
        tps.sort();
        assert_eq!(
            tps,
            [
                TopicPartition::new("a", 2),
                TopicPartition::new("a", 10),
                TopicPartition::new("b", 0)
            ]
        );
    }
}
