//! Partition snapshots as records of a compacted Kafka state topic
//! (docs/topology.md "State in Kafka"): what a writer produces for one
//! (logical partition, epoch) and how a reader picks the latest complete
//! snapshot out of what it read.
//!
//! Key `partition-<p>` (live state, epoch −1) or `partition-<p>-epoch-<e>`: the
//! Java/Go file names without `.snapshot`. A snapshot that fits in one record
//! is one record whose value is exactly the gen B container (formats §8.1). A
//! larger one is written as chunk records keyed `<key>.chunk-<version>-<i>`
//! (values: consecutive slices of the container) and then one manifest record
//! under `<key>` with an empty value and a `krabka.state.chunks` header naming
//! the version, chunk count and total length. The manifest is written last, so
//! a writer killed mid-way leaves the previous manifest (and its chunks, which
//! are tombstoned only after the new manifest) in place: a reader never takes a
//! half-written snapshot. Every snapshot record carries the owner's identity
//! and the input offsets the state reflects, as headers.
//!
//! Between full snapshots of live state a writer may save a delta record
//! `<key>.delta-<version>-<seq>` (docs/formats.md §8.7): the byte delta of the
//! new container against the one it saved before, for the full of `version`
//! (its `krabka.state.version` header) and the `seq`-th delta after it. A
//! reader applies a full's deltas in order from 1 and stops at the first gap,
//! damaged delta or result whose length or checksum differs from the one the
//! record names: it then has the last complete state before it, never a wrong
//! one.

use std::collections::BTreeMap;

use crate::engine::columnar::headers::Header;
use crate::engine::columnar::snapshot::delta;
use crate::engine::columnar::snapshot::identity::StateIdentity;
use crate::engine::topic_partition::TopicPartition;

pub const GROUP_HEADER: &str = "krabka.state.group";
pub const FINGERPRINT_HEADER: &str = "krabka.state.fingerprint";
/// `topic:partition:next-offset` per source topic-partition, comma-separated.
pub const OFFSETS_HEADER: &str = "krabka.state.offsets";
/// `<version>/<chunk count>/<total bytes>` on a manifest record.
pub const CHUNKS_HEADER: &str = "krabka.state.chunks";
/// The version of a full snapshot (single record or manifest), which its deltas name.
pub const VERSION_HEADER: &str = "krabka.state.version";
/// `<full version>/<seq>/<result bytes>/<result CRC-32, 8 hex digits>` on a delta record.
pub const DELTA_HEADER: &str = "krabka.state.delta";
/// The identity's stateful-node lines, one per line, so a copy of the topic to
/// a directory can write its identity manifest (docs/topology.md "State identity").
pub const NODES_HEADER: &str = "krabka.state.nodes";

/// Source topic-partition → next offset the state reflects.
pub type InputOffsets = BTreeMap<TopicPartition, i64>;

/// The record key of a (logical partition, epoch).
pub fn snapshot_key(partition: i32, epoch: i64) -> String {
    if epoch < 0 {
        format!("partition-{partition}")
    } else {
        format!("partition-{partition}-epoch-{epoch}")
    }
}

fn chunk_key(key: &str, version: u64, index: usize) -> String {
    format!("{key}.chunk-{version}-{index}")
}

/// The key of the `seq`-th delta (from 1) after the full snapshot `version` of `key`.
pub fn delta_key(key: &str, version: u64, seq: u64) -> String {
    format!("{key}.delta-{version}-{seq}")
}

/// What a delta record names: the full it follows, its place after it, and
/// the length and CRC-32 of the container it results in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaInfo {
    pub version: u64,
    pub seq: u64,
    pub length: usize,
    pub checksum: u32,
}

impl DeltaInfo {
    fn header(&self) -> String {
        format!(
            "{}/{}/{}/{:08x}",
            self.version, self.seq, self.length, self.checksum
        )
    }

    fn parse(text: &str) -> Result<DeltaInfo, String> {
        let bad = || format!("malformed {DELTA_HEADER} header {text:?}");
        let parts: Vec<&str> = text.split('/').collect();
        let [version, seq, length, checksum] = parts[..] else {
            return Err(bad());
        };
        let info = DeltaInfo {
            version: version.parse().map_err(|_| bad())?,
            seq: seq.parse().map_err(|_| bad())?,
            length: length.parse().map_err(|_| bad())?,
            checksum: (checksum.len() == 8)
                .then(|| u32::from_str_radix(checksum, 16).ok())
                .flatten()
                .ok_or_else(bad)?,
        };
        if info.seq == 0 {
            return Err(bad());
        }
        Ok(info)
    }
}

fn identity_headers(identity: &StateIdentity, offsets: &InputOffsets) -> Vec<Header> {
    vec![
        header(GROUP_HEADER, identity.consumer_group.clone()),
        header(FINGERPRINT_HEADER, identity.fingerprint()),
        header(OFFSETS_HEADER, encode_offsets(offsets)),
        header(NODES_HEADER, identity.nodes.join("\n")),
    ]
}

/// The record of a delta (`patch` from `snapshot::delta::diff`) that turns the
/// container saved before into one of `info.length` bytes with `info.checksum`.
pub fn delta_record(
    key: &str,
    patch: Vec<u8>,
    info: DeltaInfo,
    identity: &StateIdentity,
    offsets: &InputOffsets,
) -> StateRecord {
    let mut headers = identity_headers(identity, offsets);
    headers.push(header(DELTA_HEADER, info.header()));
    StateRecord {
        key: delta_key(key, info.version, info.seq),
        value: Some(patch),
        headers,
    }
}

/// Tombstones for records that a newer full snapshot made unneeded.
pub fn tombstones(keys: impl IntoIterator<Item = String>) -> Vec<StateRecord> {
    keys.into_iter()
        .map(|key| StateRecord {
            key,
            value: None,
            headers: Vec::new(),
        })
        .collect()
}

/// The delta keys of `key` whose last record in `records` holds a delta (not
/// a tombstone): what the next full snapshot of `key` tombstones.
pub fn live_delta_keys(records: &[ReadRecord], key: &str) -> Vec<String> {
    let prefix = format!("{key}.delta-");
    let mut last: BTreeMap<&str, bool> = BTreeMap::new();
    for record in records.iter().filter(|r| r.key.starts_with(&prefix)) {
        last.insert(&record.key, record.value.is_some());
    }
    last.into_iter()
        .filter(|(_, live)| *live)
        .map(|(k, _)| k.to_owned())
        .collect()
}

/// One record to produce (a `None` value is a tombstone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateRecord {
    pub key: String,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

/// A record read back from the state topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    pub offset: i64,
    pub key: String,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

fn header(key: &str, value: String) -> Header {
    Header {
        key: key.to_owned(),
        value: Some(value.into_bytes()),
    }
}

fn header_text<'a>(headers: &'a [Header], key: &str) -> Option<&'a str> {
    headers
        .iter()
        .rev()
        .find(|h| h.key == key)
        .and_then(|h| h.value.as_deref())
        .and_then(|v| std::str::from_utf8(v).ok())
}

pub fn encode_offsets(offsets: &InputOffsets) -> String {
    offsets
        .iter()
        .map(|(tp, offset)| format!("{}:{}:{offset}", tp.topic, tp.partition))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn decode_offsets(text: &str) -> Result<InputOffsets, String> {
    let mut offsets = InputOffsets::new();
    for item in text.split(',').filter(|i| !i.is_empty()) {
        let bad = || format!("malformed input offset {item:?}");
        // Topic names may not hold ':' (Kafka allows [A-Za-z0-9._-]), so split from the right.
        let (rest, offset) = item.rsplit_once(':').ok_or_else(bad)?;
        let (topic, partition) = rest.rsplit_once(':').ok_or_else(bad)?;
        let partition: i32 = partition.parse().map_err(|_| bad())?;
        let offset: i64 = offset.parse().map_err(|_| bad())?;
        if topic.is_empty() || partition < 0 || offset < 0 {
            return Err(bad());
        }
        offsets.insert(TopicPartition::new(topic, partition), offset);
    }
    Ok(offsets)
}

/// The records that save `container` under (partition, epoch): one record when
/// it fits in `max_record` value bytes, else chunks then the manifest.
/// `version` must differ from the previous save's (it names the chunks and,
/// in the `krabka.state.version` header, the full its deltas follow).
pub fn snapshot_records(
    partition: i32,
    epoch: i64,
    container: &[u8],
    identity: &StateIdentity,
    offsets: &InputOffsets,
    max_record: usize,
    version: u64,
) -> Vec<StateRecord> {
    let key = snapshot_key(partition, epoch);
    let mut headers = identity_headers(identity, offsets);
    headers.push(header(VERSION_HEADER, version.to_string()));
    let max_record = max_record.max(1);
    if container.len() <= max_record {
        return vec![StateRecord {
            key,
            value: Some(container.to_vec()),
            headers,
        }];
    }
    let mut records: Vec<StateRecord> = container
        .chunks(max_record)
        .enumerate()
        .map(|(i, chunk)| StateRecord {
            key: chunk_key(&key, version, i),
            value: Some(chunk.to_vec()),
            headers: Vec::new(),
        })
        .collect();
    headers.push(header(
        CHUNKS_HEADER,
        format!("{version}/{}/{}", records.len(), container.len()),
    ));
    records.push(StateRecord {
        key,
        value: Some(Vec::new()),
        headers,
    });
    records
}

/// Tombstones for the chunks a manifest named, once a newer snapshot replaced it.
pub fn chunk_tombstones(key: &str, chunks: &Chunks) -> Vec<StateRecord> {
    (0..chunks.count)
        .map(|i| StateRecord {
            key: chunk_key(key, chunks.version, i),
            value: None,
            headers: Vec::new(),
        })
        .collect()
}

/// What a manifest record names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunks {
    pub version: u64,
    pub count: usize,
    pub total: usize,
}

fn parse_chunks(text: &str) -> Result<Chunks, String> {
    let bad = || format!("malformed {CHUNKS_HEADER} header {text:?}");
    let mut parts = text.split('/');
    let mut next = || parts.next().ok_or_else(bad);
    let version = next()?.parse().map_err(|_| bad())?;
    let count = next()?.parse().map_err(|_| bad())?;
    let total = next()?.parse().map_err(|_| bad())?;
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(Chunks {
        version,
        count,
        total,
    })
}

/// The latest complete snapshot of one key, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub container: Vec<u8>,
    pub group: Option<String>,
    pub fingerprint: Option<String>,
    /// The identity's node lines, when the writer recorded them.
    pub nodes: Option<Vec<String>>,
    pub offsets: InputOffsets,
    /// The chunks it was assembled from, if it was chunked.
    pub chunks: Option<Chunks>,
    /// The state-topic offset of its (manifest) record.
    pub offset: i64,
}

impl Found {
    /// The identity the snapshot was written under, when its records say all of
    /// it (group and node lines) and the lines match its fingerprint.
    pub fn identity(&self) -> Option<StateIdentity> {
        let identity = StateIdentity {
            consumer_group: self.group.clone()?,
            nodes: self.nodes.clone()?,
        };
        (self.fingerprint.as_deref() == Some(identity.fingerprint().as_str())).then_some(identity)
    }
}

/// The (logical partition, epoch) a snapshot key names (`partition-<p>` is
/// live state, epoch −1); `None` for chunk keys and foreign keys.
pub fn parse_key(key: &str) -> Option<(i32, i64)> {
    let rest = key.strip_prefix("partition-")?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let (partition, epoch) = match rest.split_once("-epoch-") {
        Some((p, e)) if digits(p) && digits(e) => (p.parse().ok()?, e.parse().ok()?),
        None if digits(rest) => (rest.parse().ok()?, -1),
        _ => return None,
    };
    (snapshot_key(partition, epoch) == key).then_some((partition, epoch))
}

/// Every snapshot key of one state-topic partition's records (read in offset
/// order) with its latest complete snapshot, or why it cannot be assembled;
/// keys whose last record is a tombstone are left out. Key order.
pub fn latest_by_key(records: &[ReadRecord]) -> Vec<(String, Result<Found, String>)> {
    let keys: std::collections::BTreeSet<(i32, i64)> =
        records.iter().filter_map(|r| parse_key(&r.key)).collect();
    let mut out = Vec::new();
    for (partition, epoch) in keys {
        let key = snapshot_key(partition, epoch);
        match latest(records, partition, epoch) {
            Ok(Some(found)) => out.push((key, Ok(found))),
            Ok(None) => {}
            Err(e) => out.push((key, Err(e))),
        }
    }
    out
}

/// The epochs of `partition` whose last record in `records` (read in offset
/// order) is a snapshot, not a tombstone, ascending.
pub fn live_epochs(records: &[ReadRecord], partition: i32) -> Vec<i64> {
    let prefix = format!("{}-epoch-", snapshot_key(partition, -1));
    let mut last: BTreeMap<i64, bool> = BTreeMap::new();
    for record in records {
        if let Some(epoch) = record
            .key
            .strip_prefix(&prefix)
            .and_then(|e| e.parse::<i64>().ok())
            .filter(|e| *e >= 0)
        {
            last.insert(epoch, record.value.is_some());
        }
    }
    last.into_iter()
        .filter_map(|(epoch, present)| present.then_some(epoch))
        .collect()
}

/// Picks the snapshot of (partition, epoch) out of `records` (one state-topic
/// partition read from its start, in offset order): the highest-offset record
/// under the key wins, as compaction keeps it; a tombstone means none. A
/// manifest is assembled from its chunk records (each written once, under a
/// key of its own version); a chunk missing or of the wrong length is an error,
/// never a partial container (the manifest is written after its chunks, so this
/// means the topic was damaged).
pub fn latest(records: &[ReadRecord], partition: i32, epoch: i64) -> Result<Option<Found>, String> {
    latest_where(records, partition, epoch, |_| true)
}

/// [`latest`], skipping newer snapshots `accept` refuses: under exactly-once
/// on a broker whose `read_committed` still shows aborted records (Tansu), a
/// snapshot ahead of the committed offsets belongs to an aborted transaction,
/// and the one before it is the committed state.
pub fn latest_where(
    records: &[ReadRecord],
    partition: i32,
    epoch: i64,
    accept: impl Fn(&Found) -> bool,
) -> Result<Option<Found>, String> {
    Ok(latest_chain_where(records, partition, epoch, accept)?.map(|(found, _)| found))
}

/// How the state [`latest_chain_where`] found was put together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chain {
    /// The version of the full snapshot it starts from, when it names one.
    pub version: Option<u64>,
    /// How many of the full's deltas were applied on top of it.
    pub applied: u64,
    /// Deltas after it that were not taken, and why (a gap, a mismatch):
    /// for a warning, as the state is the one before them.
    pub skipped: Vec<String>,
}

/// [`latest_where`], saying which full snapshot and how many of its deltas
/// make the state. The newest full not tombstoned is taken with the longest
/// run of its deltas, from 1 and in order, that apply cleanly (length and
/// CRC-32 as named, the same owner) and that `accept` takes: the state after
/// the last of them is a state that was saved, whatever follows it.
pub fn latest_chain_where(
    records: &[ReadRecord],
    partition: i32,
    epoch: i64,
    accept: impl Fn(&Found) -> bool,
) -> Result<Option<(Found, Chain)>, String> {
    let key = snapshot_key(partition, epoch);
    let chunk_prefix = format!("{key}.chunk-");
    let delta_prefix = format!("{key}.delta-");
    let mut manifests: Vec<&ReadRecord> = Vec::new();
    let mut chunks: BTreeMap<&str, &[u8]> = BTreeMap::new();
    let mut deltas: BTreeMap<&str, &ReadRecord> = BTreeMap::new();
    for record in records {
        if record.key == key {
            manifests.push(record);
        } else if record.value.is_none() {
            // A chunk or delta tombstone only ever follows a newer full: its
            // bytes stay valid for their own (older) full, should that be the
            // one taken (the newer was aborted).
        } else if record.key.starts_with(&chunk_prefix) {
            chunks.insert(&record.key, record.value.as_deref().unwrap_or_default());
        } else if record.key.starts_with(&delta_prefix) {
            deltas.insert(&record.key, record);
        }
    }
    for record in manifests.iter().rev() {
        let Some(value) = &record.value else {
            return Ok(None);
        };
        let found = assemble(record, value, &key, &chunks)?;
        if accept(&found) {
            return apply_chain(found, record, &key, &deltas, &accept).map(Some);
        }
    }
    Ok(None)
}

/// Applies the deltas of the full `found` (read from `record`) in order.
fn apply_chain(
    mut found: Found,
    record: &ReadRecord,
    key: &str,
    deltas: &BTreeMap<&str, &ReadRecord>,
    accept: &impl Fn(&Found) -> bool,
) -> Result<(Found, Chain), String> {
    let mut chain = Chain::default();
    let Some(text) = header_text(&record.headers, VERSION_HEADER) else {
        return Ok((found, chain));
    };
    let version: u64 = text.parse().map_err(|_| {
        format!(
            "{key} at offset {}: malformed {VERSION_HEADER} header {text:?}",
            record.offset
        )
    })?;
    chain.version = Some(version);
    let this_full = format!("{key}.delta-{version}-");
    loop {
        let name = delta_key(key, version, chain.applied + 1);
        let Some(delta) = deltas.get(name.as_str()) else {
            // A later delta of this full without this one is a gap: it cannot be applied.
            let later = deltas
                .keys()
                .filter(|k| k.starts_with(&this_full))
                .filter_map(|k| k[this_full.len()..].parse::<u64>().ok())
                .filter(|seq| *seq > chain.applied + 1)
                .min();
            if let Some(seq) = later {
                chain.skipped.push(format!(
                    "{} at and after offset {}: delta {} of {key} is missing",
                    delta_key(key, version, seq),
                    deltas[delta_key(key, version, seq).as_str()].offset,
                    chain.applied + 1
                ));
            }
            return Ok((found, chain));
        };
        match next_state(&found, delta, key, &name) {
            Ok(next) if accept(&next) => {
                found = next;
                chain.applied += 1;
            }
            // Ahead of what `accept` takes (an aborted round): so are the ones after it.
            Ok(_) => return Ok((found, chain)),
            Err(why) => {
                chain.skipped.push(why);
                return Ok((found, chain));
            }
        }
    }
}

/// The state after applying `delta` to `found`, or why it cannot be taken.
fn next_state(found: &Found, delta: &ReadRecord, key: &str, name: &str) -> Result<Found, String> {
    let at = |why: String| format!("{name} at offset {}: {why}", delta.offset);
    let info = header_text(&delta.headers, DELTA_HEADER)
        .ok_or_else(|| at(format!("no {DELTA_HEADER} header")))
        .and_then(|t| DeltaInfo::parse(t).map_err(at))?;
    if delta_key(key, info.version, info.seq) != name {
        return Err(at(format!("its header names delta {}", info.header())));
    }
    let group = header_text(&delta.headers, GROUP_HEADER);
    let fingerprint = header_text(&delta.headers, FINGERPRINT_HEADER);
    if group != found.group.as_deref() || fingerprint != found.fingerprint.as_deref() {
        return Err(at(format!(
            "written by group {}, fingerprint {}, not the owner of the full snapshot",
            group.unwrap_or("(none recorded)"),
            fingerprint.unwrap_or("(none recorded)")
        )));
    }
    let offsets =
        decode_offsets(header_text(&delta.headers, OFFSETS_HEADER).unwrap_or("")).map_err(at)?;
    let patch = delta.value.as_deref().unwrap_or_default();
    let container = delta::apply(&found.container, patch, info.length, info.checksum)
        .map_err(|e| at(e.to_string()))?;
    Ok(Found {
        container,
        group: found.group.clone(),
        fingerprint: found.fingerprint.clone(),
        nodes: found.nodes.clone(),
        offsets,
        chunks: found.chunks,
        offset: delta.offset,
    })
}

fn assemble(
    record: &ReadRecord,
    value: &[u8],
    key: &str,
    chunks: &BTreeMap<&str, &[u8]>,
) -> Result<Found, String> {
    let offsets = match header_text(&record.headers, OFFSETS_HEADER) {
        Some(text) => {
            decode_offsets(text).map_err(|e| format!("{key} at offset {}: {e}", record.offset))?
        }
        None => InputOffsets::new(),
    };
    let mut found = Found {
        container: value.to_vec(),
        group: header_text(&record.headers, GROUP_HEADER).map(str::to_owned),
        fingerprint: header_text(&record.headers, FINGERPRINT_HEADER).map(str::to_owned),
        nodes: header_text(&record.headers, NODES_HEADER).map(|t| {
            t.split('\n')
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        }),
        offsets,
        chunks: None,
        offset: record.offset,
    };
    let Some(text) = header_text(&record.headers, CHUNKS_HEADER) else {
        return Ok(found);
    };
    let named =
        parse_chunks(text).map_err(|e| format!("{key} at offset {}: {e}", record.offset))?;
    // Every chunk is found before anything is allocated, and the container is
    // sized by the bytes they hold, never by what the header claims.
    let mut parts: Vec<&[u8]> = Vec::with_capacity(named.count.min(chunks.len()));
    for i in 0..named.count {
        let name = chunk_key(key, named.version, i);
        let chunk = chunks.get(name.as_str()).ok_or_else(|| {
            format!(
                "{key} at offset {} names chunk {name}, which the state topic does not hold",
                record.offset
            )
        })?;
        parts.push(chunk);
    }
    let held: usize = parts.iter().map(|p| p.len()).sum();
    if held != named.total {
        return Err(format!(
            "{key} at offset {}: its {} chunks hold {held} bytes, the manifest says {}",
            record.offset, named.count, named.total
        ));
    }
    found.container = parts.concat();
    found.chunks = Some(named);
    Ok(found)
}

/// Checks what a snapshot found says against this run: its owner, and that it
/// is not older than the group's committed offsets (at-least-once: state may
/// be ahead of them, counting a record twice after a crash, never behind,
/// which would miss records). `None` when it may be restored.
pub fn refusal(
    found: &Found,
    key: &str,
    identity: &StateIdentity,
    committed: &InputOffsets,
) -> Option<String> {
    let fingerprint = identity.fingerprint();
    if found.group.as_deref() != Some(identity.consumer_group.as_str())
        || found.fingerprint.as_deref() != Some(fingerprint.as_str())
    {
        return Some(format!(
            "{key} (state topic offset {}) holds the state of group {}, fingerprint {}; expected group {}, fingerprint {}",
            found.offset,
            found.group.as_deref().unwrap_or("(none recorded)"),
            found.fingerprint.as_deref().unwrap_or("(none recorded)"),
            identity.consumer_group,
            fingerprint
        ));
    }
    for (tp, committed) in committed {
        let reflected = found.offsets.get(tp).copied().unwrap_or(0);
        if reflected < *committed {
            return Some(format!(
                "{key} (state topic offset {}) reflects {}-{} up to offset {reflected}, but the group committed {committed}: restoring it would miss the records between",
                found.offset, tp.topic, tp.partition
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> StateIdentity {
        StateIdentity {
            consumer_group: "g".into(),
            nodes: vec!["group_by per-user keys=[user] aggregates=[sum(amount) AS total]".into()],
        }
    }

    fn read(records: &[StateRecord], from: i64) -> Vec<ReadRecord> {
        records
            .iter()
            .enumerate()
            .map(|(i, r)| ReadRecord {
                offset: from + i as i64,
                key: r.key.clone(),
                value: r.value.clone(),
                headers: r.headers.clone(),
            })
            .collect()
    }

    fn offsets(o: i64) -> InputOffsets {
        InputOffsets::from([(TopicPartition::new("orders", 3), o)])
    }

    #[test]
    fn keys_name_a_partition_and_epoch_and_every_live_key_is_listed_with_its_identity() {
        assert_eq!(parse_key("partition-3"), Some((3, -1)));
        assert_eq!(parse_key("partition-3-epoch-41"), Some((3, 41)));
        for foreign in [
            "partition-3.chunk-1-0",
            "partition-03",
            "partition--1",
            "partition-3-epoch-",
            "other",
            "partition-3-epoch-4x",
        ] {
            assert_eq!(parse_key(foreign), None, "{foreign}");
        }
        let mut records =
            snapshot_records(0, -1, &[1; 40], &identity(), &InputOffsets::new(), 16, 7);
        records.extend(snapshot_records(
            0,
            5,
            &[2; 4],
            &identity(),
            &InputOffsets::new(),
            16,
            8,
        ));
        records.push(StateRecord {
            key: "partition-1".into(),
            value: Some(vec![3]),
            headers: vec![],
        });
        records.push(StateRecord {
            key: "partition-1".into(),
            value: None,
            headers: vec![],
        });
        let all = latest_by_key(&read(&records, 0));
        let keys: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["partition-0", "partition-0-epoch-5"]);
        let live = all[0].1.as_ref().unwrap();
        assert_eq!(live.container, vec![1; 40]);
        assert_eq!(live.identity(), Some(identity()));
        // A record naming no node lines (an older writer) has no full identity.
        let mut bare = live.clone();
        bare.nodes = None;
        assert_eq!(bare.identity(), None);
    }

    #[test]
    fn live_epochs_are_the_epoch_keys_whose_last_record_is_a_snapshot() {
        let at = |offset: i64, key: &str, value: Option<&[u8]>| ReadRecord {
            offset,
            key: key.to_owned(),
            value: value.map(<[u8]>::to_vec),
            headers: Vec::new(),
        };
        let records = vec![
            at(0, "partition-1-epoch-8", Some(b"x")),
            at(1, "partition-1-epoch-3", Some(b"x")),
            at(2, "partition-1", Some(b"x")),
            at(3, "partition-11-epoch-4", Some(b"x")),
            at(4, "partition-1-epoch-5", Some(b"x")),
            at(5, "partition-1-epoch-5", None),
            at(6, "partition-1-epoch-9.chunk-1-0", Some(b"x")),
            at(7, "partition-1-epoch-2", None),
            at(8, "partition-1-epoch-2", Some(b"")),
        ];
        assert_eq!(live_epochs(&records, 1), vec![2, 3, 8]);
        assert_eq!(live_epochs(&records, 11), vec![4]);
        assert!(live_epochs(&records, 0).is_empty());
    }

    #[test]
    fn a_small_snapshot_is_one_record_whose_value_is_the_container() {
        let container = vec![0, 0, 0, 1, 0, 0, 0, 0];
        let records = snapshot_records(3, -1, &container, &identity(), &offsets(42), 1000, 7);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].key, "partition-3");
        assert_eq!(records[0].value.as_deref(), Some(&container[..]));
        assert_eq!(
            header_text(&records[0].headers, OFFSETS_HEADER),
            Some("orders:3:42")
        );
        let found = latest(&read(&records, 0), 3, -1).unwrap().unwrap();
        assert_eq!(found.container, container);
        assert_eq!(found.offsets, offsets(42));
        assert_eq!(
            refusal(&found, "partition-3", &identity(), &offsets(42)),
            None
        );
        assert_eq!(snapshot_key(3, 9), "partition-3-epoch-9");
        assert!(latest(&read(&records, 0), 3, 9).unwrap().is_none());
        assert!(latest(&read(&records, 0), 4, -1).unwrap().is_none());
    }

    #[test]
    fn a_large_snapshot_round_trips_in_chunks_and_a_killed_writer_leaves_the_previous_one() {
        let old: Vec<u8> = (0..25u8).collect();
        let new: Vec<u8> = (100..130u8).collect();
        let first = snapshot_records(0, -1, &old, &identity(), &offsets(10), 10, 1);
        assert_eq!(first.len(), 4, "3 chunks and the manifest");
        let mut log = read(&first, 0);
        assert_eq!(latest(&log, 0, -1).unwrap().unwrap().container, old);
        // The next writer dies after two of its four chunks: the old snapshot stands.
        let second = snapshot_records(0, -1, &new, &identity(), &offsets(20), 10, 2);
        log.extend(read(&second[..2], 10));
        let found = latest(&log, 0, -1).unwrap().unwrap();
        assert_eq!((found.container, found.offsets), (old.clone(), offsets(10)));
        // Written whole, then the old chunks tombstoned: the new one is read.
        log.extend(read(&second[2..], 20));
        log.extend(read(
            &chunk_tombstones("partition-0", &found.chunks.unwrap()),
            30,
        ));
        let found = latest(&log, 0, -1).unwrap().unwrap();
        assert_eq!((found.container, found.offsets), (new, offsets(20)));
        // A manifest whose chunk is gone is an error, never a partial container.
        let damaged: Vec<ReadRecord> = log
            .iter()
            .filter(|r| r.key != "partition-0.chunk-2-1")
            .cloned()
            .collect();
        let e = latest(&damaged, 0, -1).unwrap_err();
        assert!(e.contains("names chunk partition-0.chunk-2-1"), "{e}");
    }

    #[test]
    fn a_tombstone_deletes_and_the_highest_offset_wins() {
        let a = snapshot_records(1, -1, b"aaaa", &identity(), &offsets(1), 100, 1);
        let b = snapshot_records(1, -1, b"bbbb", &identity(), &offsets(2), 100, 2);
        let mut log = read(&a, 0);
        log.extend(read(&b, 1));
        assert_eq!(latest(&log, 1, -1).unwrap().unwrap().container, b"bbbb");
        log.push(ReadRecord {
            offset: 2,
            key: "partition-1".into(),
            value: None,
            headers: vec![],
        });
        assert!(latest(&log, 1, -1).unwrap().is_none());
    }

    #[test]
    fn an_aborted_snapshot_ahead_of_the_commit_is_skipped_for_the_committed_one() {
        let committed = snapshot_records(2, -1, &[1; 30], &identity(), &offsets(10), 10, 1);
        let aborted = snapshot_records(2, -1, &[2; 30], &identity(), &offsets(20), 10, 2);
        let mut log = read(&committed, 0);
        log.extend(read(&aborted, 10));
        // The aborted transaction also tombstoned the committed snapshot's chunks.
        log.extend(read(
            &chunk_tombstones(
                "partition-2",
                &Chunks {
                    version: 1,
                    count: 3,
                    total: 30,
                },
            ),
            20,
        ));
        let not_ahead = |f: &Found| f.offsets.values().all(|o| *o <= 10);
        let found = latest_where(&log, 2, -1, not_ahead).unwrap().unwrap();
        assert_eq!((found.container, found.offsets), (vec![1; 30], offsets(10)));
        assert!(
            latest_where(&log, 2, -1, |f| f.offsets.values().all(|o| *o <= 5))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn another_owner_or_state_behind_the_committed_offsets_is_refused() {
        let records = snapshot_records(3, -1, b"x", &identity(), &offsets(42), 100, 1);
        let found = latest(&read(&records, 5), 3, -1).unwrap().unwrap();
        let other = StateIdentity {
            consumer_group: "h".into(),
            ..identity()
        };
        let e = refusal(&found, "partition-3", &other, &offsets(0)).unwrap();
        assert!(
            e.contains("holds the state of group g, fingerprint ")
                && e.contains("expected group h"),
            "{e}"
        );
        let e = refusal(&found, "partition-3", &identity(), &offsets(50)).unwrap();
        assert!(
            e.contains("reflects orders-3 up to offset 42, but the group committed 50"),
            "{e}"
        );
        // Ahead of the commit (a crash between save and commit): restored, at least once.
        assert_eq!(
            refusal(&found, "partition-3", &identity(), &offsets(40)),
            None
        );
    }

    /// The delta record that turns `old` into `new` as the `seq`-th after full `version`.
    fn delta_of(old: &[u8], new: &[u8], version: u64, seq: u64, at: i64) -> StateRecord {
        let patch = delta::diff(old, new, usize::MAX).unwrap();
        let info = DeltaInfo {
            version,
            seq,
            length: new.len(),
            checksum: delta::checksum(new),
        };
        delta_record("partition-0", patch, info, &identity(), &offsets(at))
    }

    fn states() -> Vec<Vec<u8>> {
        let base: Vec<u8> = (0..400u32).map(|i| (i * 7 % 256) as u8).collect();
        (0..4u8)
            .map(|round| {
                let mut s = base.clone();
                s[10 + round as usize * 50] = round;
                s.extend(std::iter::repeat_n(round, round as usize * 3));
                s
            })
            .collect()
    }

    #[test]
    fn deltas_after_a_full_are_applied_in_order_and_a_full_replaces_them() {
        let s = states();
        let mut log = snapshot_records(0, -1, &s[0], &identity(), &offsets(10), 100, 7);
        assert_eq!(log.len(), 5, "4 chunks and the manifest");
        log.push(delta_of(&s[0], &s[1], 7, 1, 20));
        log.push(delta_of(&s[1], &s[2], 7, 2, 30));
        assert_eq!(log[5].key, "partition-0.delta-7-1");
        // A delta of another full is not this one's.
        log.push(delta_of(&s[0], &s[3], 6, 3, 99));
        let read_log = read(&log, 0);
        let (found, chain) = latest_chain_where(&read_log, 0, -1, |_| true)
            .unwrap()
            .unwrap();
        assert_eq!(found.container, s[2]);
        assert_eq!((found.offsets, found.offset), (offsets(30), 6));
        assert_eq!((chain.version, chain.applied), (Some(7), 2));
        assert!(chain.skipped.is_empty(), "{:?}", chain.skipped);
        // `latest_by_key` lists the key once, with the complete container.
        let all = latest_by_key(&read_log);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].1.as_ref().unwrap().container, s[2]);
        assert_eq!(
            live_delta_keys(&read_log, "partition-0"),
            [
                "partition-0.delta-6-3",
                "partition-0.delta-7-1",
                "partition-0.delta-7-2"
            ]
        );
        // A new full, then its predecessor's deltas tombstoned: the full alone.
        log.extend(snapshot_records(
            0,
            -1,
            &s[3],
            &identity(),
            &offsets(40),
            1000,
            8,
        ));
        log.extend(tombstones(live_delta_keys(&read_log, "partition-0")));
        let read_log = read(&log, 0);
        let (found, chain) = latest_chain_where(&read_log, 0, -1, |_| true)
            .unwrap()
            .unwrap();
        assert_eq!((found.container, chain.applied), (s[3].clone(), 0));
        assert!(live_delta_keys(&read_log, "partition-0").is_empty());
    }

    #[test]
    fn a_gap_or_a_damaged_delta_leaves_the_last_complete_state_never_a_wrong_one() {
        let s = states();
        let full = snapshot_records(0, -1, &s[0], &identity(), &offsets(10), 1000, 7);
        let d1 = delta_of(&s[0], &s[1], 7, 1, 20);
        let d2 = delta_of(&s[1], &s[2], 7, 2, 30);
        let d3 = delta_of(&s[2], &s[3], 7, 3, 40);
        // Delta 2 never landed (a writer killed mid-save): 3 cannot apply.
        let log = read(&[full.clone(), vec![d1.clone(), d3.clone()]].concat(), 0);
        let (found, chain) = latest_chain_where(&log, 0, -1, |_| true).unwrap().unwrap();
        assert_eq!(
            (found.container, found.offsets),
            (s[1].clone(), offsets(20))
        );
        assert!(
            chain.skipped[0].contains("delta 2 of partition-0 is missing"),
            "{:?}",
            chain.skipped
        );
        // A delta whose result is not what it names: refused, the state before it stands.
        let mut bad = d2.clone();
        let last = bad.headers.len() - 1;
        bad.headers[last].value =
            Some(format!("7/2/{}/{:08x}", s[2].len(), delta::checksum(&s[2]) ^ 1).into_bytes());
        let log = read(
            &[full.clone(), vec![d1.clone(), bad, d3.clone()]].concat(),
            0,
        );
        let (found, chain) = latest_chain_where(&log, 0, -1, |_| true).unwrap().unwrap();
        assert_eq!(found.container, s[1]);
        assert!(
            chain.skipped[0]
                .contains("partition-0.delta-7-2 at offset 2: state delta result has checksum"),
            "{:?}",
            chain.skipped
        );
        // A truncated delta value, or one of another owner: the same.
        let mut cut = d2.clone();
        cut.value.as_mut().unwrap().truncate(3);
        let mut foreign = d2.clone();
        foreign.headers[0].value = Some(b"other-group".to_vec());
        for damaged in [cut, foreign] {
            let log = read(&[full.clone(), vec![d1.clone(), damaged]].concat(), 0);
            let (found, chain) = latest_chain_where(&log, 0, -1, |_| true).unwrap().unwrap();
            assert_eq!((found.container, chain.applied), (s[1].clone(), 1));
            assert_eq!(chain.skipped.len(), 1);
        }
        // Refused against the committed offsets as a full is: older than the commit.
        let log = read(&[full, vec![d1]].concat(), 0);
        let found = latest(&log, 0, -1).unwrap().unwrap();
        let e = refusal(&found, "partition-0", &identity(), &offsets(30)).unwrap();
        assert!(
            e.contains("up to offset 20, but the group committed 30"),
            "{e}"
        );
    }

    #[test]
    fn deltas_ahead_of_the_commit_are_not_taken_under_exactly_once() {
        let s = states();
        let mut log = snapshot_records(0, -1, &s[0], &identity(), &offsets(10), 1000, 7);
        log.push(delta_of(&s[0], &s[1], 7, 1, 20));
        // An aborted round's delta, visible on a broker that shows aborted records.
        log.push(delta_of(&s[1], &s[2], 7, 2, 30));
        let log = read(&log, 0);
        let committed = |f: &Found| f.offsets.values().all(|o| *o <= 20);
        let found = latest_where(&log, 0, -1, committed).unwrap().unwrap();
        assert_eq!(
            (found.container, found.offsets),
            (s[1].clone(), offsets(20))
        );
        let found = latest_where(&log, 0, -1, |f| f.offsets.values().all(|o| *o <= 10));
        assert_eq!(found.unwrap().unwrap().container, s[0]);
    }

    #[test]
    fn a_manifest_claiming_more_than_its_chunks_hold_is_refused_before_allocating() {
        let mut records = snapshot_records(0, -1, &[5; 30], &identity(), &offsets(1), 10, 3);
        let manifest = records.last_mut().unwrap();
        let chunks = manifest
            .headers
            .iter_mut()
            .find(|h| h.key == CHUNKS_HEADER)
            .unwrap();
        chunks.value = Some(format!("3/3/{}", 1u64 << 40).into_bytes());
        let e = latest(&read(&records, 0), 0, -1).unwrap_err();
        assert!(
            e.contains("its 3 chunks hold 30 bytes, the manifest says 1099511627776"),
            "{e}"
        );
        assert_eq!(parse_key("partition-0.delta-3-1"), None);
    }

    #[test]
    fn offsets_round_trip_and_malformed_ones_are_refused() {
        let o = InputOffsets::from([
            (TopicPartition::new("a.b", 0), 5),
            (TopicPartition::new("c", 12), 0),
        ]);
        assert_eq!(decode_offsets(&encode_offsets(&o)), Ok(o));
        assert_eq!(decode_offsets(""), Ok(InputOffsets::new()));
        for bad in ["a:1", "a:x:1", ":1:2", "a:-1:2", "a:1:-2"] {
            assert!(decode_offsets(bad).is_err(), "{bad}");
        }
    }
}
