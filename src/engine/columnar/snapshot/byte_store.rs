//! The krabka-streams-rs byte-backed state store payload (formats §8.4): `u32`
//! version 1, `u32` count, then per entry `u32` key length, key, `u32` value
//! length, value. Keys are opaque bytes; entries keep the payload's order and a
//! key may appear only once (a store is a map).

use std::collections::HashSet;

use crate::engine::bytes::Reader;

/// The only byte-store payload version.
pub const BYTE_STORE_VERSION: u32 = 1;

/// Why a byte-store payload could not be decoded (messages chosen here).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ByteStoreError {
    #[error("unsupported byte store snapshot version {0}")]
    UnsupportedVersion(u32),
    #[error("truncated byte store snapshot")]
    Truncated,
    #[error("trailing bytes in byte store snapshot")]
    Trailing,
    #[error("duplicate byte store key {}", hex::encode(.0))]
    DuplicateKey(Vec<u8>),
}

/// One key/value pair of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteStoreEntry {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// A Rust byte store snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ByteStore {
    pub entries: Vec<ByteStoreEntry>,
}

impl ByteStore {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&BYTE_STORE_VERSION.to_be_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_be_bytes());
        for entry in &self.entries {
            for bytes in [&entry.key, &entry.value] {
                out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                out.extend_from_slice(bytes);
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<ByteStore, ByteStoreError> {
        let mut reader = Reader::new(bytes);
        let version = reader.u32().ok_or(ByteStoreError::Truncated)?;
        if version != BYTE_STORE_VERSION {
            return Err(ByteStoreError::UnsupportedVersion(version));
        }
        let count = reader.u32().ok_or(ByteStoreError::Truncated)?;
        // An entry takes at least eight bytes (two lengths).
        let mut entries = Vec::with_capacity((count as usize).min(reader.remaining() / 8));
        let mut keys = HashSet::new();
        for _ in 0..count {
            let key = read_sized(&mut reader)?;
            if !keys.insert(key) {
                return Err(ByteStoreError::DuplicateKey(key.to_vec()));
            }
            let value = read_sized(&mut reader)?;
            entries.push(ByteStoreEntry {
                key: key.to_vec(),
                value: value.to_vec(),
            });
        }
        if !reader.is_empty() {
            return Err(ByteStoreError::Trailing);
        }
        Ok(ByteStore { entries })
    }
}

fn read_sized<'a>(reader: &mut Reader<'a>) -> Result<&'a [u8], ByteStoreError> {
    let len = reader.u32().ok_or(ByteStoreError::Truncated)?;
    reader.take(len as usize).ok_or(ByteStoreError::Truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_damage() {
        let store = ByteStore {
            entries: vec![
                ByteStoreEntry {
                    key: b"k2".to_vec(),
                    value: vec![],
                },
                ByteStoreEntry {
                    key: b"k1".to_vec(),
                    value: vec![0; 3],
                },
            ],
        };
        let bytes = store.encode();
        assert_eq!(ByteStore::decode(&bytes), Ok(store));
        assert_eq!(
            ByteStore::decode(&[0, 0, 0, 2, 0, 0, 0, 0]),
            Err(ByteStoreError::UnsupportedVersion(2))
        );
        assert_eq!(
            ByteStore::decode(&bytes[..bytes.len() - 1]),
            Err(ByteStoreError::Truncated)
        );
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(ByteStore::decode(&trailing), Err(ByteStoreError::Trailing));
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        let bytes = [
            0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, b'k', 0, 0, 0, 0, 0, 0, 0, 1, b'k', 0, 0, 0, 0,
        ];
        assert_eq!(
            ByteStore::decode(&bytes).unwrap_err().to_string(),
            "duplicate byte store key 6b"
        );
    }
}
