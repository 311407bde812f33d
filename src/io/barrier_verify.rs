//! `barrier verify` end to end: read `__barrier_state`, pick the cut, gather each requested
//! fact (a consumer group's committed offsets, a snapshot directory, an Arrow input and the
//! offsets its topic holds) and hand them to the engine's pure comparisons
//! ([`crate::engine::columnar::barrier::verify`]). The answer is a [`VerifyReport`]; rendering
//! it and choosing the exit code is the command's job.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::engine::columnar::barrier::record::TopicPartition;
use crate::engine::columnar::barrier::verify::{
    CommittedOffsetCheck, CutSelection, EpochSelector, InputOffsets, InputReport, SnapshotNaming,
    SnapshotPartitionCheck, check_committed_offsets, check_input, check_snapshots, input_topic,
    logical_partitions, select_cut,
};
use crate::engine::columnar::barrier::{BarrierCut, Cut, UnknownGroup, require_group};
use crate::engine::columnar::ipc::{self, IPC_FILE_HEADER, IPC_FILE_TRAILER, IpcFormat};
use crate::engine::columnar::ipc_stream::StreamBatches;
use crate::engine::columnar::snapshot::naming::{DirectoryLayout, SnapshotLayout, detect_layout};
use crate::io::kafka::barrier_state::{BarrierStateReadError, read_barrier_state};
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::groups::committed_offsets;
use crate::io::kafka::partition_log::offsets_below;
use crate::io::kafka::settings::KafkaSettings;

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

/// Why verification could not run to an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The broker failed or could not be reached.
    #[error(transparent)]
    Kafka(#[from] KafkaIoError),
    /// `__barrier_state` holds a record that does not decode.
    #[error(transparent)]
    BarrierState(BarrierStateReadError),
    /// The command line does not say enough for this cut (e.g. which topic the input holds).
    #[error("{0}")]
    Usage(String),
    /// A file or directory could not be read or is not what it should be.
    #[error("{0}")]
    Input(String),
    /// `__barrier_state` holds no record of the group: nothing to verify against.
    #[error(transparent)]
    UnknownGroup(#[from] UnknownGroup),
}

impl From<BarrierStateReadError> for VerifyError {
    fn from(e: BarrierStateReadError) -> Self {
        match e {
            BarrierStateReadError::Kafka(k) => VerifyError::Kafka(k),
            other => VerifyError::BarrierState(other),
        }
    }
}

/// Runs every requested check against the cut the request names. A partial or missing cut
/// ends the run early with its selection as the finding: nothing is checked against it.
/// `timeout` bounds all broker requests together, not each one.
pub fn verify(
    settings: &KafkaSettings,
    timeout: Duration,
    request: &VerifyRequest,
) -> Result<VerifyReport, VerifyError> {
    let deadline = Deadline(Instant::now() + timeout);
    let state = read_barrier_state(settings, deadline.remaining("read __barrier_state")?)?;
    require_group(&state.log, state.topic_exists, &request.group)?;
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
    fn remaining(self, step: &str) -> Result<Duration, KafkaIoError> {
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
) -> Result<CommittedReport, VerifyError> {
    let tps: Vec<(String, i32)> = cut
        .offsets()
        .map(|(tp, _)| (tp.topic, tp.partition))
        .collect();
    let committed: BTreeMap<TopicPartition, Option<i64>> =
        committed_offsets(settings, &request.group, &tps, timeout)?
            .into_iter()
            .map(|((topic, partition), offset)| (TopicPartition::new(topic, partition), offset))
            .collect();
    Ok(CommittedReport {
        group: request.group.clone(),
        at_least: request.at_least,
        checks: check_committed_offsets(cut, &committed, request.at_least),
    })
}

/// Checks the snapshot directory; a missing or unreadable directory is an error, not a
/// finding (a wrong path must not read as "every snapshot is missing").
pub fn verify_snapshot_dir(
    cut: &BarrierCut,
    request: &SnapshotDirRequest,
) -> Result<SnapshotReport, VerifyError> {
    let dir = &request.dir;
    let names = list_names(dir)?;
    let (layout, layout_source) = match (request.layout, &request.task_prefix) {
        (Some(layout), _) => (layout, LayoutSource::Given),
        (None, Some(_)) => (SnapshotLayout::Rust, LayoutSource::Given),
        (None, None) => match detect_layout(names.iter().map(String::as_str)) {
            DirectoryLayout::Only(layout) => (layout, LayoutSource::Detected),
            DirectoryLayout::Empty => (SnapshotLayout::JavaGo, LayoutSource::Assumed),
            DirectoryLayout::Mixed => {
                return Err(VerifyError::Usage(format!(
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
        |name| {
            crate::io::bounded_read::read(&dir.join(name), crate::io::bounded_read::SNAPSHOT)
                .map_err(|e| format!("cannot read {}: {e}", dir.join(name).display()))
        },
    );
    Ok(SnapshotReport {
        dir: dir.clone(),
        layout,
        layout_source,
        epoch: cut.epoch,
        checks,
    })
}

fn list_names(dir: &Path) -> Result<Vec<String>, VerifyError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_owned(),
            std::io::ErrorKind::NotADirectory => "is not a directory".to_owned(),
            _ => format!("cannot be read: {e}"),
        };
        VerifyError::Input(format!("snapshot directory {} {why}", dir.display()))
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| VerifyError::Input(format!("cannot list {}: {e}", dir.display())))?;
        // Names that are not UTF-8 are no snapshot names either writer produces.
        if let Ok(name) = entry.file_name().into_string() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

fn verify_input(
    settings: &KafkaSettings,
    deadline: Deadline,
    cut: &Cut,
    request: &InputRequest,
) -> Result<InputCheckReport, VerifyError> {
    let topic = input_topic(cut, request.topic.as_deref()).map_err(VerifyError::Usage)?;
    let (source, offsets) = match &request.path {
        Some(path) => {
            let source = path.display().to_string();
            let file = std::fs::File::open(path).map_err(|e| {
                VerifyError::Input(format!("cannot read input {}: {e}", path.display()))
            })?;
            let offsets = read_input_offsets(std::io::BufReader::new(file), &source, &topic)?;
            (source, offsets)
        }
        None => (
            "-".to_owned(),
            read_input_offsets(std::io::stdin().lock(), "-", &topic)?,
        ),
    };
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

/// The `(__partition, __offset)` pairs of an Arrow input, folded batch by batch so memory
/// holds one message plus the offsets, whatever the input's size. An IPC stream (what `tail`
/// writes, and all a pipe can carry) is read as it comes; an IPC file is the same stream
/// between its 8-byte header and its footer, so it is read the same way (also from a pipe),
/// and then only the footer's frame is checked (its length and the closing `ARROW1`): the
/// batches were already read, and a file cut short before its footer is refused. Errors name
/// the input and the byte the reader had reached.
fn read_input_offsets(
    input: impl Read,
    source: &str,
    topic: &str,
) -> Result<InputOffsets, VerifyError> {
    let position = Cell::new(0u64);
    let mut input = Counted {
        inner: input,
        position: &position,
    };
    let failed = |e: &dyn std::fmt::Display| {
        VerifyError::Input(format!("input {source} (byte {}): {e}", position.get()))
    };
    let unreadable = |e: std::io::Error| match source {
        "-" => VerifyError::Input(format!("cannot read the input from stdin: {e}")),
        path => VerifyError::Input(format!("cannot read input {path}: {e}")),
    };
    let mut head = Vec::with_capacity(8);
    (&mut input)
        .take(8)
        .read_to_end(&mut head)
        .map_err(unreadable)?;
    let is_file = head == IPC_FILE_HEADER;
    if !is_file && ipc::sniff(&head) != IpcFormat::Stream {
        return Err(failed(&"not an Arrow IPC stream or file"));
    }
    // A stream's first 8 bytes are its first message; a file's are its header, which writers
    // may pad with zeros up to their alignment (arrow-rs: 64 bytes) before the first message.
    let replay = if is_file {
        first_non_zero_byte(&mut input).map_err(unreadable)?
    } else {
        head
    };
    let mut offsets = InputOffsets::for_topic(topic);
    for batch in StreamBatches::new(replay.as_slice().chain(&mut input)) {
        offsets
            .add_batch(&batch.map_err(|e| failed(&e))?)
            .map_err(|e| failed(&e))?;
    }
    if is_file {
        check_file_footer(&mut input).map_err(|e| match e {
            Some(io) => unreadable(io),
            None => failed(&"an Arrow IPC file without its footer (cut short?)"),
        })?;
    }
    Ok(offsets)
}

/// The first non-zero byte (as a one-byte vector), skipping zeros; empty at the end.
fn first_non_zero_byte(input: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut byte = [0u8];
    loop {
        match input.read(&mut byte) {
            Ok(0) => return Ok(Vec::new()),
            Ok(_) if byte[0] == 0 => {}
            Ok(_) => return Ok(byte.to_vec()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// What follows the end-of-stream marker of an IPC file: the footer, its length as a
/// little-endian `i32`, and `ARROW1`. Only the frame is checked, keeping the last 10 bytes
/// in memory. `Err(None)`: the frame is not there.
fn check_file_footer(rest: &mut impl Read) -> Result<(), Option<std::io::Error>> {
    let (mut total, mut last) = (0u64, Vec::with_capacity(10));
    let mut chunk = [0u8; 8192];
    loop {
        let n = match rest.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Some(e)),
        };
        total += n as u64;
        last.extend_from_slice(&chunk[..n]);
        let excess = last.len().saturating_sub(10);
        last.drain(..excess);
    }
    let framed = last.len() == 10 && last[4..] == IPC_FILE_TRAILER && {
        let footer_len = i32::from_le_bytes([last[0], last[1], last[2], last[3]]);
        u64::try_from(footer_len).is_ok_and(|len| len + 10 == total)
    };
    if framed { Ok(()) } else { Err(None) }
}

/// A reader that counts the bytes read through it into `position`.
struct Counted<'a, R> {
    inner: R,
    position: &'a Cell<u64>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.position.set(self.position.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array, RecordBatch};
    use arrow_ipc::writer::FileWriter;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::engine::columnar::test_support::{Trickle, ipc_stream_bytes};

    fn batch(partition: i32, from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("__partition", DataType::Int32, false),
            Field::new("__offset", DataType::Int64, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![partition; rows as usize])),
                Arc::new(Int64Array::from((from..from + rows).collect::<Vec<_>>())),
            ],
        )
        .unwrap()
    }

    fn batches() -> Vec<RecordBatch> {
        vec![batch(0, 0, 3), batch(1, 10, 2), batch(0, 3, 1)]
    }

    fn file_bytes() -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut writer = FileWriter::try_new(&mut bytes, &batches()[0].schema()).unwrap();
        for b in batches() {
            writer.write(&b).unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        bytes
    }

    fn stream_bytes() -> Vec<u8> {
        ipc_stream_bytes(&batches())
    }

    /// Five bytes per read, as a pipe may hand them out.
    fn trickle(bytes: &[u8]) -> Trickle<'_> {
        Trickle { bytes, step: 5 }
    }

    #[test]
    fn an_ipc_file_is_folded_batch_by_batch_from_a_pipe_like_a_stream() {
        let from_file = read_input_offsets(trickle(&file_bytes()), "f.arrow", "orders").unwrap();
        let from_stream =
            read_input_offsets(trickle(&stream_bytes()), "f.arrows", "orders").unwrap();
        assert_eq!(from_file.rows, 6);
        assert_eq!(from_file.by_partition, from_stream.by_partition);
        assert_eq!(from_file.by_partition[&0], [0, 1, 2, 3]);
    }

    #[test]
    fn an_ipc_file_cut_short_before_its_footer_is_refused_naming_the_input_and_byte() {
        let bytes = file_bytes();
        for keep in [bytes.len() - 1, bytes.len() - 12, bytes.len() - 40] {
            let VerifyError::Input(message) =
                read_input_offsets(&bytes[..keep], "f.arrow", "orders").unwrap_err()
            else {
                panic!("not an input error");
            };
            assert!(message.starts_with("input f.arrow (byte "), "{message}");
        }
    }

    #[test]
    fn a_broken_message_names_the_input_and_the_byte_reached() {
        let mut bytes = stream_bytes();
        bytes.truncate(bytes.len() - 20);
        let VerifyError::Input(message) =
            read_input_offsets(&bytes[..], "s.arrows", "orders").unwrap_err()
        else {
            panic!("not an input error");
        };
        assert!(
            message.contains(&format!("(byte {})", bytes.len())) && message.contains("truncated"),
            "{message}"
        );
        let VerifyError::Input(message) =
            read_input_offsets(&b"PAR1"[..], "x", "orders").unwrap_err()
        else {
            panic!("not an input error");
        };
        assert!(
            message.contains("not an Arrow IPC stream or file"),
            "{message}"
        );
    }
}
