//! Offset lists as inclusive ranges (`0-4, 7, 9-12`), so a report of a million missing
//! offsets stays one line.

use std::fmt;

/// Ascending, non-overlapping, non-adjacent inclusive ranges of offsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OffsetRanges {
    ranges: Vec<(i64, i64)>,
}

/// How many ranges [`OffsetRanges`]'s `Display` shows before summarising the rest.
const DISPLAY_RANGES: usize = 8;

impl OffsetRanges {
    /// Builds the ranges from offsets in ascending order (duplicates allowed).
    pub fn from_sorted(offsets: impl IntoIterator<Item = i64>) -> Self {
        let mut out = OffsetRanges::default();
        for offset in offsets {
            out.push(offset);
        }
        out
    }

    /// Appends an offset ≥ every offset pushed before.
    pub fn push(&mut self, offset: i64) {
        match self.ranges.last_mut() {
            Some((_, end)) if offset <= end.saturating_add(1) => *end = (*end).max(offset),
            _ => self.ranges.push((offset, offset)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The number of offsets covered.
    pub fn count(&self) -> u64 {
        self.ranges
            .iter()
            .map(|(start, end)| end.abs_diff(*start) + 1)
            .sum()
    }

    /// The inclusive `(first, last)` ranges.
    pub fn ranges(&self) -> &[(i64, i64)] {
        &self.ranges
    }
}

impl fmt::Display for OffsetRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (start, end)) in self.ranges.iter().take(DISPLAY_RANGES).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        let more = self.ranges.len().saturating_sub(DISPLAY_RANGES);
        if more > 0 {
            write!(f, " (+{more} more ranges)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_and_repeated_offsets_merge_into_one_range() {
        let r = OffsetRanges::from_sorted([0, 1, 1, 2, 4, 6, 7]);
        assert_eq!(r.ranges(), &[(0, 2), (4, 4), (6, 7)]);
        assert_eq!(r.count(), 6);
        assert_eq!(r.to_string(), "0-2, 4, 6-7");
    }

    #[test]
    fn long_lists_are_summarised_after_eight_ranges() {
        let r = OffsetRanges::from_sorted((0..20).map(|i| i * 10));
        assert_eq!(r.count(), 20);
        assert!(r.to_string().ends_with("70 (+12 more ranges)"), "{r}");
    }

    #[test]
    fn extreme_offsets_do_not_overflow() {
        let r = OffsetRanges::from_sorted([i64::MIN, i64::MAX - 1, i64::MAX]);
        assert_eq!(
            r.ranges(),
            &[(i64::MIN, i64::MIN), (i64::MAX - 1, i64::MAX)]
        );
        assert_eq!(r.count(), 3);
    }
}
