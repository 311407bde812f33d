//! Snapshot storage keys and file names (formats §8.3, behaviour D14/D15).
//!
//! Java 1.3+ and Go name files `partition-<p>.snapshot` (live state, epoch
//! [`NO_EPOCH`]) and `partition-<p>-epoch-<e>.snapshot` (barrier cuts); Rust names
//! them `<group>-<task>-epoch-<e>.snapshot` with every Unicode scalar outside
//! `[A-Za-z0-9._-]` replaced by `_`. Parsing goes the other way for directory
//! listings. Both writers only produce names made of `[A-Za-z0-9._-]` that end in
//! `.snapshot`, so a name can never hold a path separator or be `.`/`..`.
//!
//! Ambiguity is resolved deliberately: a name of the Java/Go shape is Java/Go
//! (as a Rust name its task would have no `-`, while Rust tasks are
//! `<subtopology>-<partition>`); a Rust stem `<group>-<task>` is only split when
//! the split is certain (see [`RustFileName::group_and_task`]).

use std::collections::BTreeMap;
use std::fmt;

/// The epoch of live/rebalance state in the Java/Go layout (Java `LIVE_EPOCH`).
pub const NO_EPOCH: i64 = -1;

/// Every snapshot file name ends with this.
pub const SNAPSHOT_FILE_SUFFIX: &str = ".snapshot";

const JAVA_GO_PREFIX: &str = "partition-";
const EPOCH_INFIX: &str = "-epoch-";

/// Which library's file naming a directory uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotLayout {
    /// `partition-<p>[-epoch-<e>].snapshot` (Java 1.3+ `FileColumnarStateStore`, Go `FileStateStore`).
    JavaGo,
    /// `<group>-<task>-epoch-<e>.snapshot` (krabka-streams-rs `FileSnapshotStore`).
    Rust,
}

impl SnapshotLayout {
    /// The spelling used by `--layout`.
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotLayout::JavaGo => "java-go",
            SnapshotLayout::Rust => "rust",
        }
    }
}

impl std::str::FromStr for SnapshotLayout {
    type Err = NamingError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "java-go" => Ok(SnapshotLayout::JavaGo),
            "rust" => Ok(SnapshotLayout::Rust),
            other => Err(NamingError::UnknownLayout(other.to_owned())),
        }
    }
}

impl fmt::Display for SnapshotLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A key that cannot be turned into a file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamingError {
    #[error("invalid snapshot partition {0}")]
    InvalidPartition(i32),
    #[error("invalid snapshot epoch {0}")]
    InvalidEpoch(i64),
    #[error("unknown snapshot layout {0:?} (expected java-go or rust)")]
    UnknownLayout(String),
}

/// Where one snapshot is stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SnapshotKey {
    /// Java/Go: one barrier group per runner, so no group; epoch [`NO_EPOCH`] = live state.
    JavaGo { partition: i32, epoch: i64 },
    /// Rust: barrier-cut state only; `task = <subtopology>-<partition>`.
    Rust {
        group: String,
        task: String,
        epoch: i64,
    },
}

impl SnapshotKey {
    pub fn layout(&self) -> SnapshotLayout {
        match self {
            SnapshotKey::JavaGo { .. } => SnapshotLayout::JavaGo,
            SnapshotKey::Rust { .. } => SnapshotLayout::Rust,
        }
    }

    pub fn epoch(&self) -> i64 {
        match self {
            SnapshotKey::JavaGo { epoch, .. } | SnapshotKey::Rust { epoch, .. } => *epoch,
        }
    }

    /// The file name this key is stored under.
    ///
    /// Java/Go accepts a partition ≥ 0 and an epoch ≥ 0 or [`NO_EPOCH`]; Rust has
    /// no live state, so its epoch must be ≥ 0.
    pub fn file_name(&self) -> Result<String, NamingError> {
        match self {
            SnapshotKey::JavaGo { partition, epoch } => {
                if *partition < 0 {
                    return Err(NamingError::InvalidPartition(*partition));
                }
                match *epoch {
                    NO_EPOCH => Ok(format!("{JAVA_GO_PREFIX}{partition}{SNAPSHOT_FILE_SUFFIX}")),
                    e if e >= 0 => Ok(format!(
                        "{JAVA_GO_PREFIX}{partition}{EPOCH_INFIX}{e}{SNAPSHOT_FILE_SUFFIX}"
                    )),
                    e => Err(NamingError::InvalidEpoch(e)),
                }
            }
            SnapshotKey::Rust { group, task, epoch } => {
                if *epoch < 0 {
                    return Err(NamingError::InvalidEpoch(*epoch));
                }
                Ok(format!(
                    "{}-{}{EPOCH_INFIX}{epoch}{SNAPSHOT_FILE_SUFFIX}",
                    sanitise(group),
                    sanitise(task)
                ))
            }
        }
    }
}

/// Rust's sanitising: each Unicode scalar value outside `[A-Za-z0-9._-]` becomes `_`.
pub fn sanitise(component: &str) -> String {
    component
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect()
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// A file name recognised while listing a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotFileName {
    /// `partition-<p>.snapshot` (epoch [`NO_EPOCH`]) or `partition-<p>-epoch-<e>.snapshot`.
    JavaGo { partition: i32, epoch: i64 },
    /// `<stem>-epoch-<e>.snapshot` with `stem = <sanitised group>-<sanitised task>`.
    Rust(RustFileName),
}

impl SnapshotFileName {
    pub fn layout(&self) -> SnapshotLayout {
        match self {
            SnapshotFileName::JavaGo { .. } => SnapshotLayout::JavaGo,
            SnapshotFileName::Rust(_) => SnapshotLayout::Rust,
        }
    }

    pub fn epoch(&self) -> i64 {
        match self {
            SnapshotFileName::JavaGo { epoch, .. } => *epoch,
            SnapshotFileName::Rust(name) => name.epoch,
        }
    }
}

/// A Rust layout file name. Sanitising is lossy and both group and task may
/// contain `-`, so the stem is kept whole; lookups compare names built from a
/// known group and task instead of splitting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustFileName {
    /// `<sanitised group>-<sanitised task>`.
    pub stem: String,
    pub epoch: i64,
}

impl RustFileName {
    /// Splits the stem into (group, task) when that is certain: the stem has a
    /// single `-`, or it ends in `-<subtopology>-<partition>` (two decimal numbers,
    /// the shape of every Rust task), in which case the group is the rest.
    /// Otherwise `None`: the split cannot be known from the name alone.
    pub fn group_and_task(&self) -> Option<(&str, &str)> {
        let mut dashes = self.stem.rmatch_indices('-').map(|(i, _)| i);
        let last = dashes.next()?;
        let Some(second) = dashes.next() else {
            return Some((&self.stem[..last], &self.stem[last + 1..]));
        };
        let subtopology = &self.stem[second + 1..last];
        let partition = &self.stem[last + 1..];
        if is_decimal(subtopology) && is_decimal(partition) {
            Some((&self.stem[..second], &self.stem[second + 1..]))
        } else {
            None
        }
    }
}

/// Recognises a snapshot file name; `None` for anything else (temp files,
/// other files, names with characters neither writer produces).
pub fn parse_file_name(name: &str) -> Option<SnapshotFileName> {
    if !name.chars().all(is_name_char) {
        return None;
    }
    let base = name.strip_suffix(SNAPSHOT_FILE_SUFFIX)?;
    if let Some(rest) = base.strip_prefix(JAVA_GO_PREFIX) {
        let (partition, epoch) = match rest.split_once(EPOCH_INFIX) {
            None => (rest, None),
            Some((partition, epoch)) => (partition, Some(epoch)),
        };
        if let Some(partition) = parse_decimal(partition).and_then(|p| i32::try_from(p).ok()) {
            match epoch {
                None => {
                    return Some(SnapshotFileName::JavaGo {
                        partition,
                        epoch: NO_EPOCH,
                    });
                }
                Some(e) => {
                    if let Some(epoch) = parse_decimal(e) {
                        return Some(SnapshotFileName::JavaGo { partition, epoch });
                    }
                }
            }
        }
    }
    let at = base.rfind(EPOCH_INFIX)?;
    let stem = &base[..at];
    let epoch = parse_decimal(&base[at + EPOCH_INFIX.len()..])?;
    if !stem.contains('-') {
        return None;
    }
    Some(SnapshotFileName::Rust(RustFileName {
        stem: stem.to_owned(),
        epoch,
    }))
}

/// The layout of a directory, judged from its file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectoryLayout {
    /// No snapshot file names at all.
    Empty,
    Only(SnapshotLayout),
    /// Both layouts' names are present: the caller must choose.
    Mixed,
}

/// Detects the layout from the names in a directory (D14); other names are ignored.
pub fn detect_layout<'a>(names: impl IntoIterator<Item = &'a str>) -> DirectoryLayout {
    let (mut java_go, mut rust) = (false, false);
    for name in names {
        match parse_file_name(name).map(|n| n.layout()) {
            Some(SnapshotLayout::JavaGo) => java_go = true,
            Some(SnapshotLayout::Rust) => rust = true,
            None => {}
        }
    }
    match (java_go, rust) {
        (false, false) => DirectoryLayout::Empty,
        (true, false) => DirectoryLayout::Only(SnapshotLayout::JavaGo),
        (false, true) => DirectoryLayout::Only(SnapshotLayout::Rust),
        (true, true) => DirectoryLayout::Mixed,
    }
}

/// D15: restoring an epoch whose file is missing fails (Go would load empty state).
/// The message is Java's, e.g.
/// `snapshot epoch 9 is not retained; available epochs by partition: {0=[7, 8]}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("snapshot epoch {epoch} is not retained; available epochs by partition: {}", java_map(.available))]
pub struct EpochNotRetained {
    pub epoch: i64,
    pub available: BTreeMap<i32, Vec<i64>>,
}

/// A map printed the way Java prints a `Map<K, List<Long>>`: `{0=[7, 8], 3=[]}`.
pub fn java_map<K: fmt::Display>(available: &BTreeMap<K, Vec<i64>>) -> String {
    let parts: Vec<String> = available
        .iter()
        .map(|(partition, epochs)| {
            let epochs: Vec<String> = epochs.iter().map(i64::to_string).collect();
            format!("{partition}=[{}]", epochs.join(", "))
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn is_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A non-negative decimal without sign or padding (`0`, `7`, `42`), as the writers print it.
fn parse_decimal(s: &str) -> Option<i64> {
    if !is_decimal(s) || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust_key(group: &str, task: &str, epoch: i64) -> SnapshotKey {
        SnapshotKey::Rust {
            group: group.into(),
            task: task.into(),
            epoch,
        }
    }

    #[test]
    fn sanitising_replaces_each_scalar_not_each_byte() {
        assert_eq!(sanitise("é/😀x"), "___x");
        assert_eq!(
            rust_key("grüße", "0-1", 2).file_name().unwrap(),
            "gr__e-0-1-epoch-2.snapshot"
        );
    }

    #[test]
    fn names_never_escape_the_directory() {
        for (group, task) in [("..", ".."), ("../..", "/"), ("a\\b", "c\0d"), ("", "")] {
            let name = rust_key(group, task, 0).file_name().unwrap();
            assert!(!name.contains('/') && !name.contains('\\') && !name.contains('\0'));
            assert!(name != "." && name != ".." && name.ends_with(SNAPSHOT_FILE_SUFFIX));
        }
        assert_eq!(parse_file_name("../partition-1.snapshot"), None);
        assert_eq!(parse_file_name("a/b-0-1-epoch-1.snapshot"), None);
    }

    #[test]
    fn java_go_names_parse_back() {
        for key in [(4, NO_EPOCH), (0, 0), (i32::MAX, i64::MAX)] {
            let name = SnapshotKey::JavaGo {
                partition: key.0,
                epoch: key.1,
            }
            .file_name()
            .unwrap();
            assert_eq!(
                parse_file_name(&name),
                Some(SnapshotFileName::JavaGo {
                    partition: key.0,
                    epoch: key.1
                })
            );
        }
    }

    #[test]
    fn invalid_keys_are_rejected() {
        let key = SnapshotKey::JavaGo {
            partition: -1,
            epoch: 1,
        };
        assert_eq!(key.file_name(), Err(NamingError::InvalidPartition(-1)));
        let key = SnapshotKey::JavaGo {
            partition: 1,
            epoch: -2,
        };
        assert_eq!(key.file_name(), Err(NamingError::InvalidEpoch(-2)));
        assert_eq!(
            rust_key("g", "0-1", NO_EPOCH).file_name(),
            Err(NamingError::InvalidEpoch(-1))
        );
    }

    #[test]
    fn padded_signed_or_foreign_names_are_not_snapshots() {
        for name in [
            "partition-04.snapshot",
            "partition-+4.snapshot",
            "partition-4-epoch-07.snapshot",
            "partition-4.snapshot.tmp",
            "partition-4-123.tmp",
            "partition-99999999999.snapshot",
            "nodash-epoch-1.snapshot",
            "g-0-1-epoch-.snapshot",
            "g-0-1-epoch--1.snapshot",
            "g-0-1.snapshot",
            "grüße-0-1-epoch-1.snapshot",
        ] {
            assert_eq!(parse_file_name(name), None, "{name}");
        }
    }

    #[test]
    fn rust_stems_split_only_when_certain() {
        let parse = |name: &str| match parse_file_name(name) {
            Some(SnapshotFileName::Rust(r)) => r,
            other => panic!("{name}: {other:?}"),
        };
        let name = parse("my-app-0-12-epoch-3.snapshot");
        assert_eq!(name.stem, "my-app-0-12");
        assert_eq!(name.epoch, 3);
        assert_eq!(name.group_and_task(), Some(("my-app", "0-12")));
        assert_eq!(
            parse(".._escape-0_1-epoch-3.snapshot").group_and_task(),
            Some((".._escape", "0_1"))
        );
        assert_eq!(parse("a-b-c-epoch-1.snapshot").group_and_task(), None);
        // A group containing "-epoch-" keeps it in the stem: the last infix is the epoch.
        let name = parse("x-epoch-5-0-1-epoch-6.snapshot");
        assert_eq!((name.stem.as_str(), name.epoch), ("x-epoch-5-0-1", 6));
    }

    #[test]
    fn java_go_shape_wins_and_layout_is_detected() {
        assert_eq!(
            parse_file_name("partition-4-epoch-7.snapshot").map(|n| n.layout()),
            Some(SnapshotLayout::JavaGo)
        );
        // Not a Java/Go partition number, so it is a Rust name of group "partition".
        assert_eq!(
            parse_file_name("partition-0-4-epoch-7.snapshot").map(|n| n.layout()),
            Some(SnapshotLayout::Rust)
        );
        assert_eq!(detect_layout(["x.tmp"]), DirectoryLayout::Empty);
        assert_eq!(
            detect_layout(["partition-1.snapshot", "partition-1-epoch-2.snapshot"]),
            DirectoryLayout::Only(SnapshotLayout::JavaGo)
        );
        assert_eq!(
            detect_layout(["g-0-1-epoch-2.snapshot", "g-0-1-epoch-2.snapshot.tmp"]),
            DirectoryLayout::Only(SnapshotLayout::Rust)
        );
        assert_eq!(
            detect_layout(["partition-1.snapshot", "g-0-1-epoch-2.snapshot"]),
            DirectoryLayout::Mixed
        );
    }

    #[test]
    fn layout_flag_spellings() {
        assert_eq!("java-go".parse(), Ok(SnapshotLayout::JavaGo));
        assert_eq!("rust".parse(), Ok(SnapshotLayout::Rust));
        assert!("go".parse::<SnapshotLayout>().is_err());
        assert_eq!(SnapshotLayout::JavaGo.to_string(), "java-go");
    }

    #[test]
    fn not_retained_message_is_java_style() {
        let err = EpochNotRetained {
            epoch: 9,
            available: BTreeMap::from([(0, vec![7, 8])]),
        };
        assert_eq!(
            err.to_string(),
            "snapshot epoch 9 is not retained; available epochs by partition: {0=[7, 8]}"
        );
    }
}
