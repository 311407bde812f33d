//! `barrier decode`: raw `__barrier_state` or barrier-marker key/value bytes, decoded
//! offline with the strict codecs; a failure carries the exact frozen error string
//! (`docs/formats.md` §7).

use std::path::PathBuf;

use crate::engine::columnar::barrier::{
    BarrierMarker, BarrierStateKey, BarrierStateValue, decode_marker_key, decode_value,
};
use crate::ops::{Error, Result};

/// Where a key's or value's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bytes {
    /// Hex on the command line (whitespace and a `0x` prefix allowed); `flag` names it in
    /// errors, and text that is not hex is a usage error.
    Hex { flag: &'static str, text: String },
    /// A file of raw bytes, read with the record size cap; `flag` names it in errors.
    File { flag: &'static str, path: PathBuf },
}

impl Bytes {
    fn read(self) -> Result<Vec<u8>> {
        match self {
            Bytes::Hex { flag, text } => {
                let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                let digits = compact
                    .strip_prefix("0x")
                    .or_else(|| compact.strip_prefix("0X"))
                    .unwrap_or(&compact);
                hex::decode(digits).map_err(|e| Error::usage(format!("{flag} is not hex: {e}")))
            }
            Bytes::File { flag, path } => {
                crate::io::bounded_read::read(&path, crate::io::bounded_read::RECORD).map_err(|e| {
                    Error::failure(format!("cannot read {flag}-file {}: {e}", path.display()))
                })
            }
        }
    }
}

/// What to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodePlan {
    pub key: Bytes,
    /// `None`: no value given (only the key is decoded); empty bytes are a tombstone.
    pub value: Option<Bytes>,
    /// Barrier marker bytes rather than a `__barrier_state` record.
    pub marker: bool,
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    State {
        key: BarrierStateKey,
        value: Option<BarrierStateValue>,
    },
    /// The key is the marker control key; the value, when given, a marker.
    Marker { value: Option<BarrierMarker> },
}

/// Reads the bytes (key first, then value) and decodes them; the first codec error is the
/// failure, its message the codec's own.
pub fn decode(plan: DecodePlan) -> Result<Decoded> {
    let key = plan.key.read()?;
    let value = plan.value.map(Bytes::read).transpose()?;
    let codec = |e: &dyn std::fmt::Display| Error::failure(e.to_string());
    if plan.marker {
        decode_marker_key(&key).map_err(|e| codec(&e))?;
        let value = value
            .as_deref()
            .map(BarrierMarker::decode)
            .transpose()
            .map_err(|e| codec(&e))?;
        return Ok(Decoded::Marker { value });
    }
    let key = BarrierStateKey::decode(&key).map_err(|e| codec(&e))?;
    let value = value
        .as_deref()
        .map(|v| decode_value(key.kind, Some(v)))
        .transpose()
        .map_err(|e| codec(&e))?;
    Ok(Decoded::State { key, value })
}
