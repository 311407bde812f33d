//! The state snapshot container: one file = a map of node/store name → payload bytes
//! (formats §8.1, §8.2).
//!
//! Gen B (Java 1.3+, Go, Rust) is the only format written: `u32` version 1, `u32`
//! count, then per entry `u32` name length, UTF-8 name, `u32` value length and the
//! value, ascending by the unsigned bytes of the name. Gen A (Java ≤ 1.2) is read
//! only: `i32` version and count, names as `u16` length + Java modified UTF-8,
//! `i32` value lengths, in map iteration order. [`read`] tries gen B strictly,
//! then gen A, which is how the two are told apart. No epoch, group or task is
//! stored inside: the file name carries them (see `naming`).

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::bytes::Reader;

/// The container version of both generations.
pub const SNAPSHOT_VERSION: u32 = 1;

/// Why a container could not be read or written. Gen B messages follow
/// krabka-streams-rs, the gen A ones Java 1.2; `DuplicateName` is our decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("unsupported state snapshot version {0}{hint}", hint = not_a_container(*.0))]
    UnsupportedVersion(u32),
    /// Gen A (Java 1.2) says it without the number.
    #[error("unsupported state snapshot version")]
    UnsupportedLegacyVersion,
    #[error("negative state snapshot entry count")]
    NegativeEntryCount,
    #[error("negative state snapshot length")]
    NegativeLength,
    #[error("truncated state snapshot")]
    Truncated,
    #[error("trailing bytes in state snapshot")]
    Trailing,
    #[error("non-UTF-8 store name")]
    NonUtf8Name,
    #[error("duplicate store name {0}")]
    DuplicateName(String),
}

/// A version no container ever had (any above 255) means the bytes are not a
/// container at all: say so, and show the first bytes when they are text.
fn not_a_container(version: u32) -> String {
    if version <= 0xff {
        return String::new();
    }
    let bytes = version.to_be_bytes();
    let shown = if bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!(
            " (the file starts with the text {:?})",
            String::from_utf8_lossy(&bytes)
        )
    } else {
        format!(" (the file starts with {version:#010x})")
    };
    format!(": not a snapshot container, whose first 4 bytes are the version 1{shown}")
}

/// The container generation of a snapshot file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// The current format (Java 1.3+, Go, Rust).
    B,
    /// Legacy Java ≤ 1.2, read-only.
    A,
    /// `0000000100000000`: the same bytes and meaning in both generations.
    Empty,
}

impl Generation {
    /// A label for listings: `B`, `legacy (Java ≤ 1.2)` or `empty`.
    pub fn label(self) -> &'static str {
        match self {
            Generation::B => "B",
            Generation::A => "legacy (Java ≤ 1.2)",
            Generation::Empty => "empty",
        }
    }
}

/// One named entry, as found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotEntry {
    pub name: String,
    pub value: Vec<u8>,
}

/// A container read by [`read`]: its generation and the entries in file order
/// (gen B files are sorted; gen A files are in Java map iteration order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSnapshot {
    pub generation: Generation,
    pub entries: Vec<SnapshotEntry>,
}

impl ReadSnapshot {
    /// The entries as a map, which is also the order gen B writes them in.
    pub fn into_map(self) -> BTreeMap<String, Vec<u8>> {
        self.entries
            .into_iter()
            .map(|e| (e.name, e.value))
            .collect()
    }
}

/// Writes a gen B container. `String`'s order is the order of its UTF-8 bytes,
/// so the map already iterates in the required unsigned-byte order.
pub fn encode(entries: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    encode_sorted(
        entries
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_slice())),
    )
}

/// Writes a gen B container from entries in any order; names are sorted and a
/// repeated name is rejected rather than silently dropping one value. The
/// values are written straight from `entries`, never copied first.
pub fn encode_entries(entries: &[SnapshotEntry]) -> Result<Vec<u8>, SnapshotError> {
    let mut sorted: Vec<&SnapshotEntry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    if let Some(pair) = sorted.windows(2).find(|pair| pair[0].name == pair[1].name) {
        return Err(SnapshotError::DuplicateName(pair[0].name.clone()));
    }
    Ok(encode_sorted(
        sorted.iter().map(|e| (e.name.as_str(), e.value.as_slice())),
    ))
}

fn encode_sorted<'a>(entries: impl Iterator<Item = (&'a str, &'a [u8])> + Clone) -> Vec<u8> {
    let count = entries.clone().count();
    let size = 8 + entries
        .clone()
        .map(|(name, value)| 8 + name.len() + value.len())
        .sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&SNAPSHOT_VERSION.to_be_bytes());
    out.extend_from_slice(&(count as u32).to_be_bytes());
    for (name, value) in entries {
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(value.len() as u32).to_be_bytes());
        out.extend_from_slice(value);
    }
    out
}

/// Reads a gen B container strictly. Entry order in the file is not enforced
/// (the container is a map), but a name may appear only once.
pub fn decode(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>, SnapshotError> {
    collect_unique(
        decode_gen_b_entries(bytes)?
            .into_iter()
            .map(|e| (e.name, e.value)),
    )
}

/// Reads a legacy gen A container strictly, keeping the file's entry order.
pub fn decode_gen_a(bytes: &[u8]) -> Result<Vec<SnapshotEntry>, SnapshotError> {
    let mut reader = Reader::new(bytes);
    let version = reader.i32().ok_or(SnapshotError::Truncated)?;
    if version != SNAPSHOT_VERSION as i32 {
        return Err(SnapshotError::UnsupportedLegacyVersion);
    }
    let count = reader.i32().ok_or(SnapshotError::Truncated)?;
    if count < 0 {
        return Err(SnapshotError::NegativeEntryCount);
    }
    // An entry takes at least 6 bytes (u16 name length + i32 value length).
    let mut entries = Vec::with_capacity((count as usize).min(reader.remaining() / 6));
    let mut seen = BTreeSet::new();
    for _ in 0..count {
        let name_len = reader.u16().ok_or(SnapshotError::Truncated)?;
        let name = reader
            .take(usize::from(name_len))
            .ok_or(SnapshotError::Truncated)?;
        let name = decode_modified_utf8(name)?;
        let value_len = reader.i32().ok_or(SnapshotError::Truncated)?;
        if value_len < 0 {
            return Err(SnapshotError::NegativeLength);
        }
        let value = reader
            .take(value_len as usize)
            .ok_or(SnapshotError::Truncated)?;
        if !seen.insert(name.clone()) {
            return Err(SnapshotError::DuplicateName(name));
        }
        entries.push(SnapshotEntry {
            name,
            value: value.to_vec(),
        });
    }
    if !reader.is_empty() {
        return Err(SnapshotError::Trailing);
    }
    Ok(entries)
}

/// Reads a container of either generation (formats §8.2 recognition): strictly as
/// gen B, else strictly as gen A. When both fail the gen B error is returned,
/// since gen B is the format every current writer uses.
pub fn read(bytes: &[u8]) -> Result<ReadSnapshot, SnapshotError> {
    match decode_gen_b_entries(bytes).and_then(|entries| {
        // Duplicates are checked here so that they are reported as gen B errors.
        collect_unique(entries.iter().map(|e| (e.name.clone(), ())))?;
        Ok(entries)
    }) {
        Ok(entries) => {
            let generation = if entries.is_empty() {
                Generation::Empty
            } else {
                Generation::B
            };
            Ok(ReadSnapshot {
                generation,
                entries,
            })
        }
        Err(gen_b_error) => match decode_gen_a(bytes) {
            Ok(entries) => Ok(ReadSnapshot {
                generation: Generation::A,
                entries,
            }),
            Err(_) => Err(gen_b_error),
        },
    }
}

/// The generation of a container, or why it is neither. A gen B file is only
/// scanned, its values never copied, so checking a large file costs one pass.
pub fn detect(bytes: &[u8]) -> Result<Generation, SnapshotError> {
    match scan_gen_b(bytes).and_then(|entries| {
        collect_unique(entries.iter().map(|(name, _)| (name.to_string(), ())))?;
        Ok(entries.len())
    }) {
        Ok(0) => Ok(Generation::Empty),
        Ok(_) => Ok(Generation::B),
        Err(gen_b_error) => match decode_gen_a(bytes) {
            Ok(_) => Ok(Generation::A),
            Err(_) => Err(gen_b_error),
        },
    }
}

fn decode_gen_b_entries(bytes: &[u8]) -> Result<Vec<SnapshotEntry>, SnapshotError> {
    Ok(scan_gen_b(bytes)?
        .into_iter()
        .map(|(name, value)| SnapshotEntry {
            name: name.to_owned(),
            value: value.to_vec(),
        })
        .collect())
}

/// Parses a gen B container strictly into borrowed (name, value) pairs, in file order.
fn scan_gen_b(bytes: &[u8]) -> Result<Vec<(&str, &[u8])>, SnapshotError> {
    let mut reader = Reader::new(bytes);
    let version = reader.u32().ok_or(SnapshotError::Truncated)?;
    if version != SNAPSHOT_VERSION {
        return Err(SnapshotError::UnsupportedVersion(version));
    }
    let count = reader.u32().ok_or(SnapshotError::Truncated)?;
    // An entry takes at least 8 bytes: never reserve more than the input can hold.
    let mut entries = Vec::with_capacity((count as usize).min(reader.remaining() / 8));
    for _ in 0..count {
        let name_len = reader.u32().ok_or(SnapshotError::Truncated)?;
        let name = reader
            .take(name_len as usize)
            .ok_or(SnapshotError::Truncated)?;
        let name = std::str::from_utf8(name).map_err(|_| SnapshotError::NonUtf8Name)?;
        let value_len = reader.u32().ok_or(SnapshotError::Truncated)?;
        let value = reader
            .take(value_len as usize)
            .ok_or(SnapshotError::Truncated)?;
        entries.push((name, value));
    }
    if !reader.is_empty() {
        return Err(SnapshotError::Trailing);
    }
    Ok(entries)
}

fn collect_unique<V>(
    entries: impl IntoIterator<Item = (String, V)>,
) -> Result<BTreeMap<String, V>, SnapshotError> {
    let mut map = BTreeMap::new();
    for (name, value) in entries {
        if map.contains_key(&name) {
            return Err(SnapshotError::DuplicateName(name));
        }
        map.insert(name, value);
    }
    Ok(map)
}

/// Decodes Java modified UTF-8 as `DataInputStream.readUTF` does (NUL may be
/// `c0 80`, supplementary characters are two 3-byte surrogates), then requires
/// the UTF-16 result to be well formed, since a Rust string cannot hold a lone
/// surrogate.
fn decode_modified_utf8(bytes: &[u8]) -> Result<String, SnapshotError> {
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let continuation = |b: Option<&u8>| match b {
        Some(&b) if b & 0xc0 == 0x80 => Ok(u16::from(b & 0x3f)),
        _ => Err(SnapshotError::NonUtf8Name),
    };
    while i < bytes.len() {
        let b = bytes[i];
        match b >> 4 {
            0..=7 => {
                units.push(u16::from(b));
                i += 1;
            }
            12 | 13 => {
                let c2 = continuation(bytes.get(i + 1))?;
                units.push((u16::from(b & 0x1f) << 6) | c2);
                i += 2;
            }
            14 => {
                let c2 = continuation(bytes.get(i + 1))?;
                let c3 = continuation(bytes.get(i + 2))?;
                units.push((u16::from(b & 0x0f) << 12) | (c2 << 6) | c3);
                i += 3;
            }
            _ => return Err(SnapshotError::NonUtf8Name),
        }
    }
    String::from_utf16(&units).map_err(|_| SnapshotError::NonUtf8Name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_a_with_name(name: &[u8]) -> Vec<u8> {
        let mut out = vec![0, 0, 0, 1, 0, 0, 0, 1];
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&[0, 0, 0, 1, 0x2a]);
        out
    }

    #[test]
    fn gen_a_reads_modified_utf8_nul_and_surrogate_pairs() {
        // "a\0😀": NUL as c0 80, U+1F600 as the surrogates D83D DE00 in 3-byte form.
        let name = [0x61, 0xc0, 0x80, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80];
        let bytes = gen_a_with_name(&name);
        let snapshot = read(&bytes).unwrap();
        assert_eq!(snapshot.generation, Generation::A);
        assert_eq!(snapshot.entries[0].name, "a\0😀");
        assert_eq!(snapshot.entries[0].value, vec![0x2a]);
    }

    #[test]
    fn gen_a_rejects_lone_surrogates_and_bad_continuations() {
        for name in [
            &[0xed, 0xa0, 0xbd][..],
            &[0xc3, 0x41],
            &[0x80],
            &[0xf0, 0x9f],
        ] {
            assert_eq!(
                decode_gen_a(&gen_a_with_name(name)),
                Err(SnapshotError::NonUtf8Name),
                "{name:02x?}"
            );
        }
    }

    #[test]
    fn gen_a_errors_follow_java_1_2() {
        assert_eq!(
            decode_gen_a(&[0, 0, 0, 2, 0, 0, 0, 0]),
            Err(SnapshotError::UnsupportedLegacyVersion)
        );
        assert_eq!(
            decode_gen_a(&[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]),
            Err(SnapshotError::NegativeEntryCount)
        );
        assert_eq!(
            decode_gen_a(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0x61, 0x80, 0, 0, 0]),
            Err(SnapshotError::NegativeLength)
        );
        assert_eq!(
            SnapshotError::NegativeLength.to_string(),
            "negative state snapshot length"
        );
    }

    #[test]
    fn gen_a_duplicates_are_rejected() {
        let bytes = [
            0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0x61, 0, 0, 0, 0, 0, 1, 0x61, 0, 0, 0, 0,
        ];
        assert_eq!(
            read(&bytes),
            Err(SnapshotError::Truncated),
            "the gen B error wins when both fail"
        );
        assert_eq!(
            decode_gen_a(&bytes),
            Err(SnapshotError::DuplicateName("a".into()))
        );
    }

    #[test]
    fn names_sort_by_unsigned_bytes() {
        let mut map = BTreeMap::new();
        map.insert("é".to_string(), vec![]); // c3 a9 sorts after every ASCII name
        map.insert("z".to_string(), vec![]);
        map.insert("Z".to_string(), vec![]);
        let bytes = encode(&map);
        let names: Vec<String> = read(&bytes)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["Z", "z", "é"]);
    }

    #[test]
    fn encode_entries_rejects_duplicates() {
        let entry = SnapshotEntry {
            name: "a".into(),
            value: vec![],
        };
        assert_eq!(
            encode_entries(&[entry.clone(), entry]),
            Err(SnapshotError::DuplicateName("a".into()))
        );
    }

    #[test]
    fn huge_counts_and_lengths_do_not_allocate() {
        let bytes = [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(decode(&bytes), Err(SnapshotError::Truncated));
        assert_eq!(read(&bytes), Err(SnapshotError::Truncated));
    }
}
