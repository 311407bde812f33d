//! The demo's snapshot steps: the state a Go runner with a `by_user` GroupBy
//! (Sum of amount per user) would save for the demo orders at two barrier
//! epochs, in the Java/Go layout of a temp directory; then `snapshot list`,
//! `snapshot dump` of one file, and `snapshot restore` of epoch 2 to live state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::engine::columnar::snapshot::container;
use crate::engine::columnar::snapshot::groupby::{GroupByState, GroupState, NO_STREAM_TIME};
use crate::engine::columnar::snapshot::naming::{NO_EPOCH, SnapshotKey};
use crate::engine::columnar::snapshot::plan::SnapshotUnit;
use crate::engine::columnar::snapshot::tagged::TaggedValue;
use crate::engine::murmur2::mask_partition;
use crate::io::snapshot_dir::SnapshotDir;
use crate::ops::demo::failed;
use crate::ops::demo::orders::{ORDERS_PARTITIONS, Order};
use crate::ops::snapshot::dump::{Dumped, dump_bytes};
use crate::ops::snapshot::list::ListReport;
use crate::ops::snapshot::restore::{CopyReport, copy_epoch};
use crate::ops::{Error, Result};

/// The GroupBy node whose state the demo snapshots hold.
pub const NODE: &str = "by_user";

/// Go's GroupBy state after `orders`, for the orders of one partition (first-appearance order).
fn group_by_state(orders: &[&Order]) -> GroupByState {
    let mut groups: Vec<(String, i64, i64)> = Vec::new();
    for o in orders {
        match groups.iter_mut().find(|(user, _, _)| *user == o.user) {
            Some(g) => {
                g.1 += o.amount;
                g.2 += 1;
            }
            None => groups.push((o.user.clone(), o.amount, 1)),
        }
    }
    GroupByState {
        stream_time: NO_STREAM_TIME,
        groups: groups
            .into_iter()
            .map(|(user, sum, count)| GroupState {
                parts: vec![TaggedValue::String(user)],
                // Integer sums are stored as big integers, counts as ints (formats §8.5).
                aggregates: vec![
                    TaggedValue::BigInt(sum.to_string()),
                    TaggedValue::Int(count),
                ],
            })
            .collect(),
    }
}

/// Writes epochs 1 (the first half of the orders) and 2 (all of them) for every partition.
fn write_snapshots(dir: &SnapshotDir, orders: &[Order]) -> Result<usize> {
    let mut written = 0;
    for (epoch, upto) in [(1, orders.len() / 2), (2, orders.len())] {
        for partition in 0..ORDERS_PARTITIONS {
            let mine: Vec<&Order> = orders[..upto]
                .iter()
                .filter(|o| mask_partition(&o.user, ORDERS_PARTITIONS as u32) as i32 == partition)
                .collect();
            let entries = BTreeMap::from([(NODE.to_owned(), group_by_state(&mine).encode())]);
            let name = SnapshotKey::JavaGo { partition, epoch }
                .file_name()
                .map_err(failed)?;
            dir.write(&name, &container::encode(&entries))
                .map_err(failed)?;
            written += 1;
        }
    }
    Ok(written)
}

/// The snapshot steps' results.
pub struct SnapshotSteps {
    /// The temp directory the snapshots were written to (removed since).
    pub dir: PathBuf,
    /// Snapshot files written.
    pub written: usize,
    /// `snapshot list DIR`.
    pub listing: ListReport,
    /// `snapshot dump DIR --partition 0 --epoch 2`.
    pub dumped: Dumped,
    /// `snapshot restore DIR --partition 0-2 --from-epoch 2 --to-epoch live --yes`.
    pub restored: CopyReport,
}

/// Writes the snapshots, lists them, dumps one and restores epoch 2 to live state.
pub fn steps(orders: &[Order]) -> Result<SnapshotSteps> {
    let tmp = tempfile::Builder::new()
        .prefix("krabka-demo-snapshots-")
        .tempdir()
        .map_err(|e| Error::failure(format!("cannot create a temp directory: {e}")))?;
    let dir = SnapshotDir::open(tmp.path()).map_err(failed)?;
    let written = write_snapshots(&dir, orders)?;
    let listing = ListReport::collect(&dir)?;
    let name = SnapshotKey::JavaGo {
        partition: 0,
        epoch: 2,
    }
    .file_name()
    .map_err(failed)?;
    let bytes = dir.read(&name).map_err(failed)?.unwrap_or_default();
    let dumped = dump_bytes(
        dir.path().join(&name).display().to_string(),
        Some(name),
        bytes,
    )?;
    let units: Vec<SnapshotUnit> = (0..ORDERS_PARTITIONS)
        .map(SnapshotUnit::Partition)
        .collect();
    // As with --yes: the directory is the demo's own.
    let restored = copy_epoch(&dir, &units, 2, NO_EPOCH, false, &|_| Ok(()))?;
    Ok(SnapshotSteps {
        dir: tmp.path().to_path_buf(),
        written,
        listing,
        dumped,
        restored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::demo::orders::{BASE_TS, orders};

    #[test]
    fn two_epochs_of_every_partition_are_listed_dumped_and_restored_to_live() {
        let s = steps(&orders(BASE_TS)).unwrap();
        assert_eq!(s.written, 2 * ORDERS_PARTITIONS as usize);
        assert_eq!(s.listing.rows.len(), s.written);
        assert_eq!(
            s.dumped.file_name.as_deref(),
            Some("partition-0-epoch-2.snapshot")
        );
        assert_eq!(s.restored.files.len(), ORDERS_PARTITIONS as usize);
        assert!(!s.restored.dry_run);
        // The directory is the step's own and is gone with it.
        assert!(!s.dir.exists());
    }
}
