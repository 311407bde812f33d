//! Which barrier-epoch snapshots of a partition the Kafka store keeps
//! (docs/topology.md "State in Kafka"). Every cut leaves a
//! `partition-<p>-epoch-<e>` key; compaction keeps one record per key, so
//! without tombstones the topic would grow by a snapshot per partition per
//! cut forever. The store keeps the newest `keep` epochs of each partition by
//! epoch number (Java 1.3+ keeps the newest 100 in a directory, docs/formats.md
//! §8.3) and, each time it saves an epoch, tombstones the older ones it knows
//! of (the key, then the chunks its manifest named).
//!
//! What the store knows is seeded once per partition from the topic and then
//! kept up to date by its own saves. Another member may have saved newer
//! epochs meanwhile: the known set is then a subset of the topic's, and an
//! epoch with `keep` newer known epochs has at least as many newer ones in the
//! topic, so no epoch among the topic's newest `keep` is ever tombstoned.

use std::collections::BTreeMap;

use super::state_record::{self, Chunks, ReadRecord, StateRecord, parse_key, snapshot_key};

/// The known epoch snapshots per logical partition, with the chunks each was
/// written in (`None`: one record).
#[derive(Debug, Clone)]
pub struct EpochRetention {
    keep: usize,
    known: BTreeMap<i32, BTreeMap<i64, Option<Chunks>>>,
}

impl EpochRetention {
    /// Keeps the newest `keep` epochs (at least one).
    pub fn new(keep: usize) -> Self {
        EpochRetention {
            keep: keep.max(1),
            known: BTreeMap::new(),
        }
    }

    /// Whether `partition`'s epochs were seeded from the topic.
    pub fn knows(&self, partition: i32) -> bool {
        self.known.contains_key(&partition)
    }

    /// The key prefix of `partition`'s epoch snapshots and their chunks.
    pub fn prefix(partition: i32) -> String {
        format!("{}-epoch-", snapshot_key(partition, -1))
    }

    /// Seeds `partition` from its state-topic partition's records (read in
    /// offset order): every epoch key whose last record is not a tombstone. One
    /// that cannot be assembled is known without chunks (its key still goes).
    pub fn seed(&mut self, partition: i32, records: &[ReadRecord]) {
        let epochs = self.known.entry(partition).or_default();
        for (key, found) in state_record::latest_by_key(records) {
            if let Some((p, epoch)) = parse_key(&key)
                && p == partition
                && epoch >= 0
            {
                epochs.insert(epoch, found.ok().and_then(|f| f.chunks));
            }
        }
    }

    /// Records that (partition, epoch) was just written (in `chunks`, when
    /// chunked) and returns the tombstones of the epochs it no longer keeps,
    /// oldest first.
    pub fn saved(
        &mut self,
        partition: i32,
        epoch: i64,
        chunks: Option<Chunks>,
    ) -> Vec<StateRecord> {
        let epochs = self.known.entry(partition).or_default();
        epochs.insert(epoch, chunks);
        let excess = epochs.len().saturating_sub(self.keep);
        // By epoch number: a late save of an epoch older than the newest `keep`
        // is retired at once, as a directory prune would.
        let retired: Vec<i64> = epochs.keys().copied().take(excess).collect();
        let mut tombstones = Vec::new();
        for old in retired {
            let Some(chunks) = epochs.remove(&old) else {
                continue;
            };
            let key = snapshot_key(partition, old);
            tombstones.push(StateRecord {
                key: key.clone(),
                value: None,
                headers: Vec::new(),
            });
            if let Some(chunks) = chunks {
                tombstones.extend(state_record::chunk_tombstones(&key, &chunks));
            }
        }
        tombstones
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(key: &str, offset: i64, value: Option<&[u8]>) -> ReadRecord {
        ReadRecord {
            offset,
            key: key.into(),
            value: value.map(<[u8]>::to_vec),
            headers: Vec::new(),
        }
    }

    fn keys(records: &[StateRecord]) -> Vec<&str> {
        records.iter().map(|r| r.key.as_str()).collect()
    }

    #[test]
    fn the_newest_epochs_stay_and_older_ones_get_tombstones_with_their_chunks() {
        let mut r = EpochRetention::new(2);
        assert!(!r.knows(3));
        r.seed(
            3,
            &[
                read("partition-3-epoch-1", 0, Some(b"a")),
                read("partition-3-epoch-2", 1, Some(b"b")),
                // Already tombstoned, another partition, live state: not counted.
                read("partition-3-epoch-0", 2, Some(b"c")),
                read("partition-3-epoch-0", 3, None),
                read("partition-4-epoch-0", 4, Some(b"d")),
                read("partition-3", 5, Some(b"e")),
            ],
        );
        assert!(r.knows(3));
        assert_eq!(keys(&r.saved(3, 3, None)), ["partition-3-epoch-1"]);
        let chunks = Chunks {
            version: 9,
            count: 2,
            total: 4,
        };
        assert!(
            r.saved(3, 4, Some(chunks))
                .iter()
                .all(|t| t.value.is_none())
        );
        let gone = r.saved(3, 5, None);
        assert_eq!(keys(&gone), ["partition-3-epoch-3"]);
        let gone = r.saved(3, 6, None);
        assert_eq!(
            keys(&gone),
            [
                "partition-3-epoch-4",
                "partition-3-epoch-4.chunk-9-0",
                "partition-3-epoch-4.chunk-9-1"
            ]
        );
        assert!(gone.iter().all(|t| t.value.is_none()));
    }

    #[test]
    fn at_least_one_epoch_is_kept_and_a_resave_is_not_counted_twice() {
        let mut r = EpochRetention::new(0);
        assert!(r.saved(0, 7, None).is_empty());
        assert!(r.saved(0, 7, None).is_empty());
        assert_eq!(keys(&r.saved(0, 8, None)), ["partition-0-epoch-7"]);
        // A late save of an epoch older than the newest `keep` is retired at once.
        let mut r = EpochRetention::new(2);
        r.saved(1, 5, None);
        r.saved(1, 6, None);
        assert_eq!(keys(&r.saved(1, 3, None)), ["partition-1-epoch-3"]);
        assert_eq!(EpochRetention::prefix(12), "partition-12-epoch-");
    }
}
