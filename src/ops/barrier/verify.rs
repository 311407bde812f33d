//! `barrier verify`: read `__barrier_state`, pick the cut, gather each requested fact (a
//! consumer group's committed offsets, a snapshot directory, an Arrow input and the offsets
//! its topic holds) and hand them to the engine's pure comparisons
//! ([`crate::engine::columnar::barrier::verify`]). The answer is a [`VerifyReport`];
//! rendering it and choosing the exit code (3 when not verified) is the command's job.
//! Cuts are those of `docs/semantics.md` §8 (a partial cut is never verified).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::engine::columnar::barrier::record::TopicPartition;
use crate::engine::columnar::barrier::selection::{
    CutSelection, EpochSelector, logical_partitions, select_cut,
};
use crate::engine::columnar::barrier::verify::{
    CommittedOffsetCheck, InputReport, SnapshotNaming, SnapshotPartitionCheck,
    check_committed_offsets, check_input, check_snapshots, input_topic,
};
use crate::engine::columnar::barrier::{BarrierCut, Cut, require_group};
use crate::engine::columnar::snapshot::naming::{DirectoryLayout, SnapshotLayout, detect_layout};
use crate::io::barrier_verify::{InputError, input_offsets, read_snapshot, snapshot_names};
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::groups::committed_offsets;
use crate::io::kafka::partition_log::offsets_below;
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::barrier::read_state;
use crate::ops::{Error, Result};

/// What to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyRequest {
    pub group: String,
    pub epoch: EpochSelector,
    pub consumer_group: Option<ConsumerGroupRequest>,
    pub snapshots: Option<SnapshotDirRequest>,
    pub input: Option<InputRequest>,
}

/// `--consumer-group CG [--at-least]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupRequest {
    pub group: String,
    pub at_least: bool,
}

/// `--snapshot-dir DIR [--layout L] [--task-prefix P] [--snapshot-group G]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotDirRequest {
    pub dir: PathBuf,
    /// `None`: detect from the file names (decision D14).
    pub layout: Option<SnapshotLayout>,
    pub task_prefix: Option<String>,
    /// The group in Rust file names; the barrier group when `None`.
    pub snapshot_group: Option<String>,
}

/// `--input FILE|- [--topic T]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRequest {
    /// `None` reads stdin.
    pub path: Option<PathBuf>,
    pub topic: Option<String>,
}

/// How the snapshot layout was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutSource {
    Given,
    Detected,
    /// The directory holds no snapshot names; Java/Go naming is assumed.
    Assumed,
}

/// The committed-offsets check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedReport {
    pub group: String,
    pub at_least: bool,
    pub checks: Vec<CommittedOffsetCheck>,
}

impl CommittedReport {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.verdict.ok())
    }
}

/// The snapshot-directory check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotReport {
    pub dir: PathBuf,
    pub layout: SnapshotLayout,
    pub layout_source: LayoutSource,
    pub epoch: i64,
    pub checks: Vec<SnapshotPartitionCheck>,
}

impl SnapshotReport {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(SnapshotPartitionCheck::ok)
    }
}

/// The Arrow-input check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputCheckReport {
    /// The file path, or `-` for stdin.
    pub source: String,
    pub rows: u64,
    pub report: InputReport,
}

/// Everything `verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    pub group: String,
    pub selector: EpochSelector,
    pub selection: CutSelection,
    pub consumer_group: Option<CommittedReport>,
    pub snapshots: Option<SnapshotReport>,
    pub input: Option<InputCheckReport>,
}

impl VerifyReport {
    /// A complete cut, and every requested check holds.
    pub fn verified(&self) -> bool {
        matches!(self.selection, CutSelection::Complete(_))
            && self.consumer_group.as_ref().is_none_or(CommittedReport::ok)
            && self.snapshots.as_ref().is_none_or(SnapshotReport::ok)
            && self.input.as_ref().is_none_or(|i| i.report.ok())
    }
}

/// Runs every requested check against the cut the request names. A partial or missing cut
/// ends the run early with its selection as the finding: nothing is checked against it.
/// `timeout` bounds all broker requests together, not each one.
pub fn verify(
    settings: &KafkaSettings,
    timeout: Duration,
    request: &VerifyRequest,
) -> Result<VerifyReport> {
    let deadline = Deadline(Instant::now() + timeout);
    let state = read_state(settings, deadline.remaining("read __barrier_state")?)?;
    require_group(&state.log, state.topic_exists, &request.group)
        .map_err(|e| Error::failure(e.to_string()))?;
    let selection = select_cut(&state.log, &request.group, request.epoch);
    let mut report = VerifyReport {
        group: request.group.clone(),
        selector: request.epoch,
        selection: selection.clone(),
        consumer_group: None,
        snapshots: None,
        input: None,
    };
    let CutSelection::Complete(cut) = selection else {
        return Ok(report);
    };
    if let Some(cg) = &request.consumer_group {
        let timeout = deadline.remaining("read committed offsets")?;
        report.consumer_group = Some(verify_committed(settings, timeout, &cut.cut, cg)?);
    }
    if let Some(snapshots) = &request.snapshots {
        report.snapshots = Some(verify_snapshot_dir(&cut, snapshots)?);
    }
    if let Some(input) = &request.input {
        report.input = Some(verify_input(settings, deadline, &cut.cut, input)?);
    }
    Ok(report)
}

/// The end of the command's time for broker requests.
#[derive(Debug, Clone, Copy)]
struct Deadline(Instant);

impl Deadline {
    /// The time left for the next step, or the unreachable error once none is left.
    fn remaining(self, step: &str) -> std::result::Result<Duration, KafkaIoError> {
        let left = self.0.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(KafkaIoError::unreachable(format!(
                "timed out before the step \"{step}\""
            )))
        } else {
            Ok(left)
        }
    }
}

fn verify_committed(
    settings: &KafkaSettings,
    timeout: Duration,
    cut: &Cut,
    request: &ConsumerGroupRequest,
) -> Result<CommittedReport> {
    let tps: Vec<TopicPartition> = cut.offsets().map(|(tp, _)| tp).collect();
    let committed: BTreeMap<TopicPartition, Option<i64>> =
        committed_offsets(settings, &request.group, &tps, timeout)?;
    Ok(CommittedReport {
        group: request.group.clone(),
        at_least: request.at_least,
        checks: check_committed_offsets(cut, &committed, request.at_least),
    })
}

/// Checks the snapshot directory; a missing or unreadable directory is an error, not a
/// finding (a wrong path must not read as "every snapshot is missing").
fn verify_snapshot_dir(cut: &BarrierCut, request: &SnapshotDirRequest) -> Result<SnapshotReport> {
    let dir = &request.dir;
    let names = snapshot_names(dir).map_err(input_error)?;
    let (layout, layout_source) = match (request.layout, &request.task_prefix) {
        (Some(layout), _) => (layout, LayoutSource::Given),
        (None, Some(_)) => (SnapshotLayout::Rust, LayoutSource::Given),
        (None, None) => match detect_layout(names.iter().map(String::as_str)) {
            DirectoryLayout::Only(layout) => (layout, LayoutSource::Detected),
            DirectoryLayout::Empty => (SnapshotLayout::JavaGo, LayoutSource::Assumed),
            DirectoryLayout::Mixed => {
                return Err(Error::usage(format!(
                    "{} holds snapshot files of both layouts: pass --layout java-go or --layout rust",
                    dir.display()
                )));
            }
        },
    };
    let naming = match layout {
        SnapshotLayout::JavaGo => SnapshotNaming::JavaGo,
        SnapshotLayout::Rust => SnapshotNaming::Rust {
            group: request
                .snapshot_group
                .clone()
                .unwrap_or_else(|| cut.group.clone()),
            task_prefix: request.task_prefix.clone(),
        },
    };
    let checks = check_snapshots(
        &logical_partitions(&cut.cut),
        cut.epoch,
        &naming,
        &names,
        |name| read_snapshot(dir, name),
    );
    Ok(SnapshotReport {
        dir: dir.clone(),
        layout,
        layout_source,
        epoch: cut.epoch,
        checks,
    })
}

fn verify_input(
    settings: &KafkaSettings,
    deadline: Deadline,
    cut: &Cut,
    request: &InputRequest,
) -> Result<InputCheckReport> {
    let topic = input_topic(cut, request.topic.as_deref()).map_err(Error::usage)?;
    let (source, offsets) = input_offsets(request.path.as_deref(), &topic).map_err(input_error)?;
    let limits: BTreeMap<i32, i64> = cut
        .offsets()
        .filter(|(tp, _)| tp.topic == topic)
        .map(|(tp, offset)| (tp.partition, offset))
        .collect();
    let timeout = deadline.remaining("read the offsets of the input's topic")?;
    let logs = offsets_below(settings, &topic, &limits, timeout)?;
    Ok(InputCheckReport {
        source,
        rows: offsets.rows,
        report: check_input(cut, &topic, &offsets, &logs),
    })
}

fn input_error(e: InputError) -> Error {
    Error::failure(e.0)
}
