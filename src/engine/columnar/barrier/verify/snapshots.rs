//! Snapshot files against a cut: for every logical partition of the cut (a partition number,
//! across all of the cut's topics, as the runners key state) a snapshot of the cut's epoch
//! exists and decodes strictly (formats §8).
//!
//! Java/Go name it `partition-<p>-epoch-<e>.snapshot`. Rust names it
//! `<group>-<subtopology>-<p>-epoch-<e>.snapshot`: with a task prefix (the subtopology) exactly
//! one name is expected; without one, every subtopology's file for the partition counts, at
//! least one must exist and all must decode. The directory listing and the file reads are the
//! caller's; this module only matches names and judges bytes.

use std::collections::BTreeSet;

use crate::engine::columnar::snapshot::container::{self, Generation};
use crate::engine::columnar::snapshot::naming::{
    SnapshotFileName, SnapshotKey, SnapshotLayout, parse_file_name, sanitise,
};

/// How the runner named its snapshot files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotNaming {
    /// `partition-<p>-epoch-<e>.snapshot`.
    JavaGo,
    /// `<group>-<task>-epoch-<e>.snapshot`, `task = <subtopology>-<p>`.
    Rust {
        group: String,
        /// The subtopology part of the task; `None` accepts every subtopology.
        task_prefix: Option<String>,
    },
}

impl SnapshotNaming {
    pub fn layout(&self) -> SnapshotLayout {
        match self {
            SnapshotNaming::JavaGo => SnapshotLayout::JavaGo,
            SnapshotNaming::Rust { .. } => SnapshotLayout::Rust,
        }
    }

    /// The file name (or name pattern) expected for one partition at one epoch.
    pub fn expected_name(&self, partition: i32, epoch: i64) -> String {
        if let SnapshotNaming::Rust {
            group,
            task_prefix: None,
        } = self
        {
            return format!(
                "{}-<subtopology>-{partition}-epoch-{epoch}.snapshot",
                sanitise(group)
            );
        }
        self.exact_name(partition, epoch)
            .map(|name| name.unwrap_or_else(|error| format!("<{error}>")))
            .unwrap_or_default()
    }

    /// The one name expected, or `None` when several subtopologies may match.
    fn exact_name(&self, partition: i32, epoch: i64) -> Option<Result<String, String>> {
        let key = match self {
            SnapshotNaming::JavaGo => SnapshotKey::JavaGo { partition, epoch },
            SnapshotNaming::Rust {
                group,
                task_prefix: Some(prefix),
            } => SnapshotKey::Rust {
                group: group.clone(),
                task: format!("{}-{partition}", prefix.trim_end_matches('-')),
                epoch,
            },
            SnapshotNaming::Rust {
                task_prefix: None, ..
            } => return None,
        };
        Some(key.file_name().map_err(|e| e.to_string()))
    }

    /// Whether a directory entry is a snapshot of this partition and epoch.
    fn matches(&self, name: &str, partition: i32, epoch: i64) -> bool {
        if let Some(exact) = self.exact_name(partition, epoch) {
            return exact.is_ok_and(|expected| expected == name);
        }
        let SnapshotNaming::Rust { group, .. } = self else {
            return false;
        };
        let Some(SnapshotFileName::Rust(file)) = parse_file_name(name) else {
            return false;
        };
        let group_prefix = format!("{}-", sanitise(group));
        let task_suffix = format!("-{partition}");
        file.epoch == epoch
            && file
                .stem
                .strip_prefix(&group_prefix)
                .and_then(|task| task.strip_suffix(&task_suffix))
                .is_some_and(|subtopology| {
                    !subtopology.is_empty() && subtopology.bytes().all(|b| b.is_ascii_digit())
                })
    }
}

/// What one snapshot file held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    pub generation: Generation,
    pub entries: usize,
    pub bytes: u64,
}

/// One matching file and whether it decodes (the error text otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFileCheck {
    pub name: String,
    pub outcome: Result<SnapshotSummary, String>,
}

/// One logical partition: the name expected and every matching file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotPartitionCheck {
    pub partition: i32,
    pub expected: String,
    pub files: Vec<SnapshotFileCheck>,
}

impl SnapshotPartitionCheck {
    /// At least one file, and every file decodes.
    pub fn ok(&self) -> bool {
        !self.files.is_empty() && self.files.iter().all(|f| f.outcome.is_ok())
    }
}

/// Checks every partition against the directory's `names`, reading matching files with
/// `read` (its error text is reported as the file's outcome).
pub fn check_snapshots(
    partitions: &BTreeSet<i32>,
    epoch: i64,
    naming: &SnapshotNaming,
    names: &[String],
    mut read: impl FnMut(&str) -> Result<Vec<u8>, String>,
) -> Vec<SnapshotPartitionCheck> {
    partitions
        .iter()
        .map(|&partition| {
            let mut matching: Vec<&String> = names
                .iter()
                .filter(|name| naming.matches(name, partition, epoch))
                .collect();
            matching.sort();
            let files = matching
                .into_iter()
                .map(|name| SnapshotFileCheck {
                    name: name.clone(),
                    outcome: read(name).and_then(|bytes| judge(&bytes)),
                })
                .collect();
            SnapshotPartitionCheck {
                partition,
                expected: naming.expected_name(partition, epoch),
                files,
            }
        })
        .collect()
}

fn judge(bytes: &[u8]) -> Result<SnapshotSummary, String> {
    let snapshot = container::read(bytes).map_err(|e| e.to_string())?;
    Ok(SnapshotSummary {
        generation: snapshot.generation,
        entries: snapshot.entries.len(),
        bytes: bytes.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::columnar::barrier::record::Cut;
    use crate::engine::columnar::barrier::record::{CutOffset, CutStatus, CutTopic};
    use crate::engine::columnar::barrier::selection::logical_partitions;

    fn cut() -> Cut {
        let topic = |name: &str, partitions: &[i32]| CutTopic {
            topic: name.into(),
            partitions: partitions
                .iter()
                .map(|&partition| CutOffset {
                    partition,
                    offset: 1,
                })
                .collect(),
        };
        Cut {
            triggered_at: 0,
            completed_at: 0,
            status: CutStatus::Complete,
            topics: vec![topic("orders", &[0, 1, 2]), topic("payments", &[0, 3])],
            missing: vec![],
        }
    }

    fn good() -> Vec<u8> {
        container::encode(&BTreeMap::from([("count".to_owned(), vec![0, 0, 0, 1])]))
    }

    fn files(list: &[(&str, Vec<u8>)]) -> (Vec<String>, BTreeMap<String, Vec<u8>>) {
        let map: BTreeMap<String, Vec<u8>> = list
            .iter()
            .map(|(n, b)| (n.to_string(), b.clone()))
            .collect();
        (map.keys().cloned().collect(), map)
    }

    fn run(naming: &SnapshotNaming, list: &[(&str, Vec<u8>)]) -> Vec<SnapshotPartitionCheck> {
        let (names, map) = files(list);
        check_snapshots(&logical_partitions(&cut()), 5, naming, &names, |name| {
            map.get(name).cloned().ok_or_else(|| "gone".to_owned())
        })
    }

    #[test]
    fn logical_partitions_are_partition_numbers_across_topics() {
        assert_eq!(
            logical_partitions(&cut()).into_iter().collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
    }

    #[test]
    fn java_go_needs_one_decodable_epoch_file_per_logical_partition() {
        let checks = run(
            &SnapshotNaming::JavaGo,
            &[
                ("partition-0-epoch-5.snapshot", good()),
                ("partition-1-epoch-5.snapshot", vec![0, 0, 0, 1, 0, 0, 0, 1]),
                ("partition-2-epoch-4.snapshot", good()),
                ("partition-2.snapshot", good()),
                ("partition-3-epoch-5.snapshot", good()),
            ],
        );
        let ok: Vec<bool> = checks.iter().map(SnapshotPartitionCheck::ok).collect();
        assert_eq!(ok, [true, false, false, true]);
        assert_eq!(
            checks[1].files[0].outcome,
            Err("truncated state snapshot".to_owned())
        );
        assert!(checks[2].files.is_empty());
        assert_eq!(checks[2].expected, "partition-2-epoch-5.snapshot");
        assert_eq!(checks[0].files[0].outcome.as_ref().unwrap().entries, 1);
    }

    #[test]
    fn rust_with_a_task_prefix_expects_exactly_that_task() {
        let naming = SnapshotNaming::Rust {
            group: "orders/cut".into(),
            task_prefix: Some("1".into()),
        };
        let checks = run(
            &naming,
            &[
                ("orders_cut-1-0-epoch-5.snapshot", good()),
                ("orders_cut-0-1-epoch-5.snapshot", good()),
                ("orders_cut-1-2-epoch-5.snapshot", good()),
                ("orders_cut-1-3-epoch-5.snapshot", good()),
            ],
        );
        let ok: Vec<bool> = checks.iter().map(SnapshotPartitionCheck::ok).collect();
        assert_eq!(ok, [true, false, true, true]);
        assert_eq!(checks[1].expected, "orders_cut-1-1-epoch-5.snapshot");
    }

    #[test]
    fn rust_without_a_prefix_takes_every_subtopology_and_all_must_decode() {
        let naming = SnapshotNaming::Rust {
            group: "g".into(),
            task_prefix: None,
        };
        let checks = run(
            &naming,
            &[
                ("g-0-0-epoch-5.snapshot", good()),
                ("g-1-0-epoch-5.snapshot", good()),
                ("g-0-1-epoch-5.snapshot", good()),
                ("g-1-1-epoch-5.snapshot", vec![9]),
                ("g-x-2-epoch-5.snapshot", good()),
                ("gg-0-3-epoch-5.snapshot", good()),
            ],
        );
        assert_eq!(checks[0].files.len(), 2);
        assert!(checks[0].ok());
        assert!(!checks[1].ok(), "one of two files is corrupt");
        assert!(checks[2].files.is_empty(), "non-numeric subtopology");
        assert!(checks[3].files.is_empty(), "another group");
        assert_eq!(checks[3].expected, "g-<subtopology>-3-epoch-5.snapshot");
    }

    #[test]
    fn a_file_that_cannot_be_read_is_reported_with_the_read_error() {
        let naming = SnapshotNaming::JavaGo;
        let names = vec!["partition-0-epoch-5.snapshot".to_owned()];
        let checks = check_snapshots(&BTreeSet::from([0]), 5, &naming, &names, |_| {
            Err("permission denied".to_owned())
        });
        assert_eq!(
            checks[0].files[0].outcome,
            Err("permission denied".to_owned())
        );
        assert!(!checks[0].ok());
    }
}
