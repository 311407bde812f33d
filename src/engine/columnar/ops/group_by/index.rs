//! The group index of `group_by`: every group's encoded key (the Go tagged
//! encoding) in one arena in first-appearance order, and a hash table of group
//! ids over it. The table holds 4-byte ids only, so with thousands of groups it
//! stays in cache; a probe that matches the hash tag compares against the arena.
//! (A table of inline keys was 40 bytes a slot and missed the cache on most rows.)

use std::hash::BuildHasher;

use hashbrown::HashTable;

#[derive(Default)]
pub(super) struct GroupIndex {
    table: HashTable<u32>,
    bytes: Vec<u8>,
    /// End of each group's key in `bytes`; it starts where the previous one ends.
    ends: Vec<usize>,
    hasher: foldhash::fast::RandomState,
}

#[inline(always)]
fn key_of<'a>(bytes: &'a [u8], ends: &[usize], id: usize) -> &'a [u8] {
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &bytes[start..ends[id]]
}

/// Key equality without a `memcmp` call for the usual short keys (a tagged
/// string of 3 to 11 bytes is 8 to 16): two overlapping 8-byte words.
#[inline(always)]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&s[at..at + 8]);
            u64::from_ne_bytes(w)
        };
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    a == b
}

impl GroupIndex {
    /// The number of groups.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Group `id`'s encoded key.
    #[inline(always)]
    pub fn key(&self, id: usize) -> &[u8] {
        key_of(&self.bytes, &self.ends, id)
    }

    /// The id of the group with this encoded key.
    #[inline(always)]
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        let hash = self.hasher.hash_one(key);
        self.table
            .find(hash, |&id| same_key(self.key(id as usize), key))
            .copied()
    }

    /// Appends a group with this key and returns its id (the next one). A key
    /// already present then finds the new group (a restored snapshot's later duplicate).
    pub fn push(&mut self, key: &[u8]) -> u32 {
        let id = self.ends.len() as u32;
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        let hash = self.hasher.hash_one(key);
        let (bytes, ends, hasher) = (&self.bytes, &self.ends, &self.hasher);
        if let Some(existing) = self
            .table
            .find_mut(hash, |&g| same_key(key_of(bytes, ends, g as usize), key))
        {
            *existing = id;
            return id;
        }
        self.table.insert_unique(hash, id, |&g| {
            hasher.hash_one(key_of(bytes, ends, g as usize))
        });
        id
    }

    /// Keeps the groups whose flag is set, renumbered in their order.
    pub fn retain(&mut self, keep: &[bool]) {
        let old = std::mem::take(self);
        self.hasher = old.hasher.clone();
        for (id, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            self.push(old.key(id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::GroupIndex;

    #[test]
    fn groups_are_numbered_in_first_appearance_order_and_renumbered_after_retain() {
        let mut index = GroupIndex::default();
        let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| format!("s{i}").into_bytes()).collect();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), None);
            assert_eq!(index.push(key), i as u32);
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), Some(i as u32));
            assert_eq!(index.key(i), key.as_slice());
        }
        assert_eq!(index.get(b""), None);
        let keep: Vec<bool> = (0..1000).map(|i| i % 3 == 0).collect();
        index.retain(&keep);
        assert_eq!(index.len(), 334);
        for (i, key) in keys.iter().enumerate() {
            let expected = (i % 3 == 0).then_some((i / 3) as u32);
            assert_eq!(index.get(key), expected, "{i}");
        }
        assert_eq!(index.push(b""), 334);
        assert_eq!(index.get(b""), Some(334));
    }

    #[test]
    fn keys_of_every_length_that_differ_in_one_byte_are_different_groups() {
        let mut index = GroupIndex::default();
        let mut keys = Vec::new();
        for len in 0..40usize {
            let base: Vec<u8> = (0..len as u8).collect();
            keys.push(base.clone());
            for at in 0..len {
                let mut other = base.clone();
                other[at] ^= 0x80;
                keys.push(other);
            }
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), None, "{key:?}");
            assert_eq!(index.push(key), i as u32);
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(index.get(key), Some(i as u32), "{key:?}");
        }
    }

    #[test]
    fn a_duplicate_key_pushed_again_finds_the_later_group() {
        let mut index = GroupIndex::default();
        index.push(b"a");
        index.push(b"b");
        assert_eq!(index.push(b"a"), 2);
        assert_eq!(index.get(b"a"), Some(2));
        assert_eq!(index.len(), 3);
    }
}
