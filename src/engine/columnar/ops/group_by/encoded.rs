//! The group-by's last snapshot kept as bytes, with where each group begins in
//! them, and the groups touched since: the next snapshot re-encodes only those
//! (plus the header and the groups created since) and copies the rest. The
//! group runner takes a snapshot of every partition it processes each round
//! (its rollback point, and the save of a store that saves every round), so
//! without this a round touching 1% of a million groups re-encoded all of them,
//! twice. The bytes are exactly [`GroupByState::encode`]'s (formats §8.5).
//!
//! [`GroupByState::encode`]: crate::engine::columnar::snapshot::groupby::GroupByState::encode

use std::ops::Range;

use crate::engine::columnar::snapshot::groupby::{HEADER_LEN, encode_header};

/// What a snapshot is built from: the processor's groups, read one at a time.
pub(super) trait Groups {
    fn count(&self) -> usize;
    fn stream_time(&self) -> i64;
    /// Appends group `g` as `snapshot::groupby::encode_group` does.
    fn encode(&self, g: usize, out: &mut Vec<u8>);
}

#[derive(Debug, Default)]
pub(super) struct Encoded {
    /// The last snapshot (header included); meaningless while `stale`.
    bytes: Vec<u8>,
    /// `starts[g]`: where group `g` begins in `bytes`; one more entry, the end.
    starts: Vec<usize>,
    /// Groups of `bytes` touched since it was taken (unsorted, repeats allowed).
    touched: Vec<u32>,
    /// Nothing kept can be reused (never taken, restored, pruned, or too much touched).
    stale: bool,
}

impl Encoded {
    pub fn new() -> Self {
        Encoded {
            stale: true,
            ..Encoded::default()
        }
    }

    fn cached_groups(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Groups are about to change in place (`ids` holds one per row; ids
    /// past the kept ones are new groups, appended anyway).
    pub fn touch(&mut self, ids: &[u32]) {
        if self.stale {
            return;
        }
        let kept = self.cached_groups();
        self.touched
            .extend(ids.iter().copied().filter(|&id| (id as usize) < kept));
        // Past half of the groups, encoding them all is as cheap as sorting these.
        if self.touched.len() > kept / 2 + 1024 {
            self.invalidate();
        }
    }

    /// Groups were removed, reordered or replaced: the next snapshot encodes all.
    pub fn invalidate(&mut self) {
        self.stale = true;
        self.touched = Vec::new();
    }

    /// The snapshot of `groups`, reusing the kept bytes of every group not
    /// touched since the last one.
    pub fn snapshot(&mut self, groups: &impl Groups) -> Vec<u8> {
        let count = groups.count();
        if self.stale || self.cached_groups() > count {
            self.encode_all(groups);
        } else {
            self.update(groups);
        }
        self.stale = false;
        self.touched.clear();
        let mut header = Vec::with_capacity(HEADER_LEN);
        encode_header(&mut header, groups.stream_time(), count);
        self.bytes[..HEADER_LEN].copy_from_slice(&header);
        self.bytes.clone()
    }

    fn encode_all(&mut self, groups: &impl Groups) {
        let count = groups.count();
        let mut bytes = Vec::with_capacity(self.bytes.len().max(HEADER_LEN + count * 16));
        encode_header(&mut bytes, groups.stream_time(), count);
        let mut starts = Vec::with_capacity(count + 1);
        for g in 0..count {
            starts.push(bytes.len());
            groups.encode(g, &mut bytes);
        }
        starts.push(bytes.len());
        self.bytes = bytes;
        self.starts = starts;
    }

    /// Re-encodes the touched groups (in place when none changed length, else
    /// by copying the runs between them) and appends the new groups.
    fn update(&mut self, groups: &impl Groups) {
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        let mut fresh: Vec<u8> = Vec::new();
        // (group, its new bytes' range in `fresh`)
        let mut encoded: Vec<(usize, Range<usize>)> = Vec::with_capacity(touched.len());
        let mut same_length = true;
        for &g in &touched {
            let g = g as usize;
            let from = fresh.len();
            groups.encode(g, &mut fresh);
            same_length &= fresh.len() - from == self.starts[g + 1] - self.starts[g];
            encoded.push((g, from..fresh.len()));
        }
        if same_length {
            for (g, range) in &encoded {
                self.bytes[self.starts[*g]..self.starts[g + 1]]
                    .copy_from_slice(&fresh[range.clone()]);
            }
        } else {
            self.splice(&encoded, &fresh);
        }
        // Groups created since the last snapshot.
        let kept = self.cached_groups();
        self.starts.pop();
        for g in kept..groups.count() {
            self.starts.push(self.bytes.len());
            groups.encode(g, &mut self.bytes);
        }
        self.starts.push(self.bytes.len());
    }

    /// Rebuilds `bytes` and `starts` from the untouched runs of groups and the
    /// touched groups' new bytes (`encoded`: ascending, ranges of `fresh`).
    fn splice(&mut self, encoded: &[(usize, Range<usize>)], fresh: &[u8]) {
        let kept = self.cached_groups();
        let old = std::mem::take(&mut self.bytes);
        let old_starts = std::mem::take(&mut self.starts);
        let mut bytes = Vec::with_capacity(old.len() + fresh.len());
        let mut starts = Vec::with_capacity(old_starts.len());
        bytes.extend_from_slice(&old[..HEADER_LEN]);
        // Copies groups `from..to` unchanged, moving their starts.
        let run = |from: usize, to: usize, bytes: &mut Vec<u8>, starts: &mut Vec<usize>| {
            let (first, last) = (old_starts[from], old_starts[to]);
            let at = bytes.len();
            starts.extend(old_starts[from..to].iter().map(|s| s - first + at));
            bytes.extend_from_slice(&old[first..last]);
        };
        let mut next = 0;
        for (g, range) in encoded {
            run(next, *g, &mut bytes, &mut starts);
            starts.push(bytes.len());
            bytes.extend_from_slice(&fresh[range.clone()]);
            next = g + 1;
        }
        run(next, kept, &mut bytes, &mut starts);
        starts.push(bytes.len());
        self.bytes = bytes;
        self.starts = starts;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// Groups of given bytes that count how many are encoded.
    struct Fake {
        values: Vec<Vec<u8>>,
        stream_time: i64,
        encodes: Cell<usize>,
    }

    impl Groups for Fake {
        fn count(&self) -> usize {
            self.values.len()
        }
        fn stream_time(&self) -> i64 {
            self.stream_time
        }
        fn encode(&self, g: usize, out: &mut Vec<u8>) {
            self.encodes.set(self.encodes.get() + 1);
            out.extend_from_slice(&self.values[g]);
        }
    }

    fn whole(f: &Fake) -> Vec<u8> {
        let mut out = Vec::new();
        encode_header(&mut out, f.stream_time, f.values.len());
        for v in &f.values {
            out.extend_from_slice(v);
        }
        out
    }

    /// The snapshot, checked against encoding everything, and how many groups it encoded.
    fn taken(e: &mut Encoded, f: &Fake) -> usize {
        f.encodes.set(0);
        assert_eq!(e.snapshot(f), whole(f));
        f.encodes.get()
    }

    #[test]
    fn only_the_touched_and_the_new_groups_are_encoded_again() {
        let mut f = Fake {
            values: (0..100).map(|g| vec![g as u8; 3]).collect(),
            stream_time: i64::MIN,
            encodes: Cell::new(0),
        };
        let mut e = Encoded::new();
        assert_eq!(taken(&mut e, &f), 100);
        // Same lengths: rewritten in place; repeats and ids past the kept groups are fine.
        e.touch(&[5, 5, 70, u32::MAX]);
        f.values[5] = vec![9; 3];
        f.values[70] = vec![1; 3];
        assert_eq!(taken(&mut e, &f), 2);
        // A longer and an emptied group, and two new ones.
        e.touch(&[99, 10]);
        f.values[10] = vec![7; 9];
        f.values[99] = Vec::new();
        f.values.push(vec![4; 2]);
        f.values.push(vec![5]);
        assert_eq!(taken(&mut e, &f), 4);
        // Only the header moved.
        f.stream_time = 42;
        assert_eq!(taken(&mut e, &f), 0);
        // Touching most groups, or invalidating, encodes them all.
        e.touch(&(0..1_200).map(|g| g % 102).collect::<Vec<u32>>());
        assert_eq!(taken(&mut e, &f), 102);
        e.invalidate();
        assert_eq!(taken(&mut e, &f), 102);
        // Fewer groups than kept (a restore without invalidating would be a bug, but is safe).
        f.values.truncate(50);
        assert_eq!(taken(&mut e, &f), 50);
    }
}
