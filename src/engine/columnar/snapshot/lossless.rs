//! The lossless JSON dump of one snapshot container: what `snapshot dump
//! --lossless` writes and `snapshot restore --from-json` reads back.
//!
//! ```json
//! {"format":"krabka-streams.snapshot-dump","version":1,"generation":"B",
//!  "source":"partition-3-epoch-41.snapshot",
//!  "entries":[{"name":"by_user","name_hex":"62795f75736572","size":3,"value_base64":"AQID"}]}
//! ```
//!
//! `name_hex` and `value_base64` are authoritative; `name` and `size` are there
//! for people and are checked against them, so an edited document cannot mean
//! something other than what it shows. Restoring a gen B (or empty) dump writes
//! the original file byte for byte, because gen B writers sort names and the
//! encoder sorts them the same way. A gen A dump is refused unless conversion
//! is asked for (D13), which writes gen B. The writer streams: a value is
//! base64-encoded straight into the output, never held twice in memory.

use std::borrow::Cow;
use std::io::{self, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::container::{self, Generation, ReadSnapshot, SnapshotEntry, SnapshotError};

/// The `format` field of every lossless dump.
pub const LOSSLESS_FORMAT: &str = "krabka-streams.snapshot-dump";
/// The `version` field this build writes and reads.
pub const LOSSLESS_VERSION: u32 = 1;

/// Why a document is not a usable lossless dump.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LosslessError {
    #[error("not a lossless snapshot dump: {0}")]
    Json(String),
    #[error("not a lossless snapshot dump: format is {0:?}, expected {LOSSLESS_FORMAT:?}")]
    Format(String),
    #[error("unsupported lossless snapshot dump version {0} (this build reads {LOSSLESS_VERSION})")]
    Version(u32),
    #[error("unknown generation {0:?} in lossless snapshot dump (expected B, A or empty)")]
    Generation(String),
    #[error("entry {index}: {message}")]
    Entry { index: usize, message: String },
    #[error(
        "the dump is of a legacy gen A (Java ≤ 1.2) container; krabka-streams writes gen B only: pass --convert-legacy to write it as gen B (names re-sorted)"
    )]
    LegacyNotConverted,
    #[error("{0}")]
    Container(#[from] SnapshotError),
}

/// A lossless dump read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LosslessDump {
    pub generation: Generation,
    pub source: Option<String>,
    pub entries: Vec<SnapshotEntry>,
}

impl LosslessDump {
    /// The gen B container this dump restores to. A gen A dump needs `convert_legacy`.
    pub fn to_container(&self, convert_legacy: bool) -> Result<Vec<u8>, LosslessError> {
        if self.generation == Generation::A && !convert_legacy {
            return Err(LosslessError::LegacyNotConverted);
        }
        Ok(container::encode_entries(&self.entries)?)
    }
}

fn generation_name(generation: Generation) -> &'static str {
    match generation {
        Generation::B => "B",
        Generation::A => "A",
        Generation::Empty => "empty",
    }
}

/// Writes the lossless dump of `snapshot` (whose file was `source`) to `out`.
pub fn write_lossless(
    out: &mut dyn Write,
    source: Option<&str>,
    snapshot: &ReadSnapshot,
) -> io::Result<()> {
    write!(
        out,
        "{{\"format\":\"{LOSSLESS_FORMAT}\",\"version\":{LOSSLESS_VERSION},\"generation\":\"{}\",\"source\":",
        generation_name(snapshot.generation)
    )?;
    serde_json::to_writer(&mut *out, &source).map_err(io::Error::other)?;
    out.write_all(b",\"entries\":[")?;
    for (i, entry) in snapshot.entries.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"{\"name\":")?;
        serde_json::to_writer(&mut *out, &entry.name).map_err(io::Error::other)?;
        write!(
            out,
            ",\"name_hex\":\"{}\",\"size\":{},\"value_base64\":\"",
            hex::encode(entry.name.as_bytes()),
            entry.value.len()
        )?;
        {
            let mut encoder = base64::write::EncoderWriter::new(&mut *out, &STANDARD);
            encoder.write_all(&entry.value)?;
            encoder.finish()?;
        }
        out.write_all(b"\"}")?;
    }
    out.write_all(b"]}\n")
}

#[derive(Deserialize)]
struct Document<'a> {
    format: String,
    version: u32,
    generation: String,
    #[serde(default)]
    source: Option<String>,
    #[serde(borrow)]
    entries: Vec<DocumentEntry<'a>>,
}

#[derive(Deserialize)]
struct DocumentEntry<'a> {
    #[serde(default)]
    name: Option<String>,
    name_hex: String,
    #[serde(default)]
    size: Option<u64>,
    #[serde(borrow)]
    value_base64: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    data: Document<'a>,
}

/// Reads a lossless dump. A `{"data": …}` envelope around it is accepted too.
pub fn read_lossless(bytes: &[u8]) -> Result<LosslessDump, LosslessError> {
    // Parsed straight into the document (base64 text borrowed, not copied): a
    // dump of a large container is parsed once.
    let doc = match serde_json::from_slice::<Document<'_>>(bytes) {
        Ok(doc) => doc,
        Err(direct) => match serde_json::from_slice::<Envelope<'_>>(bytes) {
            Ok(envelope) => envelope.data,
            Err(_) => return Err(LosslessError::Json(direct.to_string())),
        },
    };
    if doc.format != LOSSLESS_FORMAT {
        return Err(LosslessError::Format(doc.format));
    }
    if doc.version != LOSSLESS_VERSION {
        return Err(LosslessError::Version(doc.version));
    }
    let generation = match doc.generation.as_str() {
        "B" => Generation::B,
        "A" => Generation::A,
        "empty" => Generation::Empty,
        other => return Err(LosslessError::Generation(other.to_owned())),
    };
    let mut entries = Vec::with_capacity(doc.entries.len());
    for (index, entry) in doc.entries.into_iter().enumerate() {
        let fail = |message: String| LosslessError::Entry { index, message };
        let name_bytes =
            hex::decode(&entry.name_hex).map_err(|e| fail(format!("name_hex is not hex: {e}")))?;
        let name = String::from_utf8(name_bytes)
            .map_err(|_| fail("name_hex is not UTF-8 (non-UTF-8 store name)".into()))?;
        if let Some(shown) = &entry.name
            && *shown != name
        {
            return Err(fail(format!(
                "name {shown:?} does not match name_hex ({name:?})"
            )));
        }
        let value = STANDARD
            .decode(entry.value_base64.as_bytes())
            .map_err(|e| fail(format!("value_base64 of {name:?} is not base64: {e}")))?;
        if let Some(size) = entry.size
            && size != value.len() as u64
        {
            return Err(fail(format!(
                "size of {name:?} is {size} but value_base64 holds {} bytes",
                value.len()
            )));
        }
        entries.push(SnapshotEntry { name, value });
    }
    if generation == Generation::Empty && !entries.is_empty() {
        return Err(LosslessError::Generation(
            "empty (but the dump has entries)".into(),
        ));
    }
    Ok(LosslessDump {
        generation,
        source: doc.source,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn dump_of(bytes: &[u8]) -> Vec<u8> {
        let snapshot = container::read(bytes).unwrap();
        let mut out = Vec::new();
        write_lossless(&mut out, Some("partition-0.snapshot"), &snapshot).unwrap();
        out
    }

    #[test]
    fn gen_b_round_trips_byte_for_byte() {
        let mut map = BTreeMap::new();
        map.insert("by_user".to_string(), vec![1, 2, 3]);
        map.insert("empty".to_string(), vec![]);
        map.insert("é\u{0}\"quoted\"".to_string(), (0..=255).collect());
        for original in [container::encode(&map), container::encode(&BTreeMap::new())] {
            let doc = dump_of(&original);
            let back = read_lossless(&doc).unwrap();
            assert_eq!(back.to_container(false).unwrap(), original);
        }
    }

    #[test]
    fn the_envelope_is_accepted() {
        let doc = dump_of(&[0, 0, 0, 1, 0, 0, 0, 0]);
        let wrapped = format!("{{\"data\":{}}}", String::from_utf8(doc).unwrap());
        assert_eq!(
            read_lossless(wrapped.as_bytes()).unwrap().generation,
            Generation::Empty
        );
    }

    #[test]
    fn legacy_dumps_need_an_explicit_conversion() {
        // Gen A {b: 01, a: 02}: converted, names come out sorted as gen B.
        let gen_a = [
            0, 0, 0, 1, 0, 0, 0, 2, 0, 1, b'b', 0, 0, 0, 1, 1, 0, 1, b'a', 0, 0, 0, 1, 2,
        ];
        let back = read_lossless(&dump_of(&gen_a)).unwrap();
        assert_eq!(back.generation, Generation::A);
        assert_eq!(
            back.to_container(false),
            Err(LosslessError::LegacyNotConverted)
        );
        let converted = back.to_container(true).unwrap();
        let read = container::read(&converted).unwrap();
        assert_eq!(read.generation, Generation::B);
        assert_eq!(read.entries[0].name, "a");
    }

    #[test]
    fn edited_documents_that_disagree_with_themselves_are_refused() {
        let doc = String::from_utf8(dump_of(&container::encode(&BTreeMap::from([(
            "a".to_string(),
            vec![7u8],
        )]))))
        .unwrap();
        let renamed = doc.replace("\"name\":\"a\"", "\"name\":\"b\"");
        assert!(
            read_lossless(renamed.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("does not match name_hex")
        );
        let resized = doc.replace("\"size\":1", "\"size\":2");
        assert!(
            read_lossless(resized.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("holds 1 bytes")
        );
        let bad_b64 = doc.replace("\"Bw==\"", "\"B!==\"");
        assert!(read_lossless(bad_b64.as_bytes()).is_err());
        let dup = doc.replace(
            "\"entries\":[",
            "\"entries\":[{\"name_hex\":\"61\",\"value_base64\":\"\"},",
        );
        assert_eq!(
            read_lossless(dup.as_bytes())
                .unwrap()
                .to_container(false)
                .unwrap_err()
                .to_string(),
            "duplicate store name a"
        );
        assert!(matches!(
            read_lossless(b"{\"format\":\"x\",\"version\":1,\"generation\":\"B\",\"entries\":[]}"),
            Err(LosslessError::Format(_))
        ));
        assert!(matches!(
            read_lossless(b"[1, 2"),
            Err(LosslessError::Json(_))
        ));
    }
}
