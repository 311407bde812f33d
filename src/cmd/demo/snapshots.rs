//! The demo's snapshot steps: the state a Go runner with a `by_user` GroupBy
//! (Sum of amount per user) would save for the demo orders at two barrier
//! epochs, in the Java/Go layout of a temp directory; then `snapshot list`,
//! `snapshot dump` of one file, and `snapshot restore` of epoch 2 to live state.

use std::collections::BTreeMap;

use serde_json::json;

use super::Walkthrough;
use super::orders::{ORDERS_PARTITIONS, Order};
use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::OutputArgs;
use crate::cmd::output::Ui;
use crate::cmd::render::snapshot::{
    copy_report_human, copy_report_json, dumped_human, dumped_json, list_human, list_json,
};
use crate::engine::columnar::snapshot::container;
use crate::engine::columnar::snapshot::groupby::{GroupByState, GroupState, NO_STREAM_TIME};
use crate::engine::columnar::snapshot::naming::{NO_EPOCH, SnapshotKey};
use crate::engine::columnar::snapshot::plan::SnapshotUnit;
use crate::engine::columnar::snapshot::tagged::TaggedValue;
use crate::engine::murmur2::mask_partition;
use crate::io::snapshot_dir::SnapshotDir;
use crate::ops::snapshot::list::ListReport;
use crate::ops::snapshot::restore::copy_epoch;

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
fn write_snapshots(dir: &SnapshotDir, orders: &[Order]) -> CliResult<usize> {
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
                .map_err(|e| CliError::failure(e.to_string()))?;
            dir.write(&name, &container::encode(&entries))
                .map_err(|e| CliError::failure(e.to_string()))?;
            written += 1;
        }
    }
    Ok(written)
}

pub(super) fn steps(w: &mut Walkthrough, orders: &[Order]) -> CliResult<()> {
    let tmp = tempfile::Builder::new()
        .prefix("krabka-demo-snapshots-")
        .tempdir()
        .map_err(|e| CliError::failure(format!("cannot create a temp directory: {e}")))?;
    let dir = SnapshotDir::open(tmp.path()).map_err(|e| CliError::failure(e.to_string()))?;
    let written = write_snapshots(&dir, orders)?;
    w.step(
        "write GroupBy snapshots (Go payload, Java/Go layout)",
        format!(
            "{written} files in {}: node `{NODE}` = Sum(amount), Count per user, at barrier epochs 1 and 2",
            tmp.path().display()
        ),
        json!({"dir": tmp.path().display().to_string(), "files": written}),
    );

    let listing = ListReport::collect(&dir)?;
    let mut text = Vec::new();
    list_human(&listing, &mut text)?;
    w.step(
        &format!("snapshot list {}", tmp.path().display()),
        String::from_utf8_lossy(&text).trim_end().to_owned(),
        list_json(&listing),
    );

    let name = SnapshotKey::JavaGo {
        partition: 0,
        epoch: 2,
    }
    .file_name()
    .map_err(|e| CliError::failure(e.to_string()))?;
    let bytes = dir
        .read(&name)
        .map_err(|e| CliError::failure(e.to_string()))?
        .unwrap_or_default();
    let dumped = crate::ops::snapshot::dump::dump_bytes(
        dir.path().join(&name).display().to_string(),
        Some(name),
        bytes,
    )?;
    let mut text = Vec::new();
    dumped_human(&dumped, &mut text)?;
    w.step(
        &format!(
            "snapshot dump {} --partition 0 --epoch 2",
            tmp.path().display()
        ),
        String::from_utf8_lossy(&text).trim_end().to_owned(),
        dumped_json(&dumped),
    );

    let ui = Ui::new(&OutputArgs {
        yes: true,
        ..OutputArgs::default()
    });
    let units: Vec<SnapshotUnit> = (0..ORDERS_PARTITIONS)
        .map(SnapshotUnit::Partition)
        .collect();
    let report = copy_epoch(&dir, &units, 2, NO_EPOCH, ui.dry_run, &|q| ui.confirm(q))?;
    let mut text = Vec::new();
    copy_report_human(&report, &mut text)?;
    w.step(
        &format!(
            "snapshot restore {} --partition 0-{} --from-epoch 2 --to-epoch live",
            tmp.path().display(),
            ORDERS_PARTITIONS - 1
        ),
        String::from_utf8_lossy(&text).trim_end().to_owned(),
        copy_report_json(&report),
    );
    Ok(())
}
