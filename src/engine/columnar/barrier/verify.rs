//! Verifying the world against one barrier cut: pure comparisons, no I/O.
//!
//! The callers gather the facts (the folded [`super::CutLog`], a consumer group's committed
//! offsets, the names and bytes of a snapshot directory, the offsets an Arrow input holds and
//! the offsets the topic holds) and these functions answer, per partition, whether they match
//! the cut, keeping every difference so a report can show it.
//!
//! Which cut `--epoch E|latest` names is [`super::selection`]'s (shared with `barrier show`,
//! `snapshot restore-cut` and `run --restore-cut`); a partial or missing cut is a finding,
//! never something to verify against.
//!
//! * [`offsets`]: committed offsets equal to the cut (or at least at it).
//! * [`snapshots`]: a decodable snapshot file for every logical partition at the cut's epoch.
//! * [`input`]: an Arrow input holds exactly the records before the cut.
//! * [`ranges`]: offset lists compressed to inclusive ranges for reports.

pub mod input;
pub mod offsets;
pub mod ranges;
pub mod snapshots;

pub use input::{
    InputError, InputOffsets, InputPartitionCheck, InputReport, PartitionLog, check_input,
    input_offsets, input_topic,
};
pub use offsets::{CommittedOffsetCheck, OffsetVerdict, check_committed_offsets};
pub use ranges::OffsetRanges;
pub use snapshots::{
    SnapshotFileCheck, SnapshotNaming, SnapshotPartitionCheck, SnapshotSummary, check_snapshots,
};
