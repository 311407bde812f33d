//! Splitting one batch's rows over worker threads (`run --threads N`). Each
//! thread works on a contiguous range of rows and the results come back in
//! range order, so whoever merges them sees the rows in the order the
//! single-threaded path reads them (semantics §4: results stay the same at
//! every thread count). Scoped threads: nothing outlives the call, and a
//! range that panics takes the call with it as one thread would.

use std::ops::Range;

/// Fewer rows than this per thread are not worth a thread's start-up.
pub const MIN_ROWS_PER_THREAD: usize = 4096;

/// The thread count to use when none is asked for: the available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `rows` split into at most `threads` contiguous ranges of at least
/// [`MIN_ROWS_PER_THREAD`] rows each (one range when that leaves one), in order.
pub fn row_ranges(rows: usize, threads: usize) -> Vec<Range<usize>> {
    let parts = threads.max(1).min(rows / MIN_ROWS_PER_THREAD).max(1);
    let base = rows / parts;
    let extra = rows % parts;
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

/// `f` of every range, the first on the calling thread and the others on
/// threads of their own; the results in range order.
pub fn map_ranges<T, F>(ranges: &[Range<usize>], f: F) -> Vec<T>
where
    T: Send,
    F: Fn(Range<usize>) -> T + Sync,
{
    match ranges {
        [] => Vec::new(),
        [only] => vec![f(only.clone())],
        [first, rest @ ..] => std::thread::scope(|scope| {
            let f = &f;
            let handles: Vec<_> = rest
                .iter()
                .map(|range| {
                    let range = range.clone();
                    scope.spawn(move || f(range))
                })
                .collect();
            let mut out = Vec::with_capacity(ranges.len());
            out.push(f(first.clone()));
            for handle in handles {
                match handle.join() {
                    Ok(value) => out.push(value),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            out
        }),
    }
}

/// `f` of every index below `count` (columns, say), the indices shared out
/// in contiguous runs over at most `threads` threads; the results in index order.
pub fn map_indices<T, F>(count: usize, threads: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let per_thread = count.div_ceil(threads.max(1)).max(1);
    let runs: Vec<Range<usize>> = (0..count)
        .step_by(per_thread)
        .map(|start| start..(start + per_thread).min(count))
        .collect();
    map_ranges(&runs, |run| run.map(&f).collect::<Vec<T>>())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_row_once_in_order() {
        for rows in [0, 1, 4095, 4096, 8191, 8192, 65_536, 100_003] {
            for threads in [1, 2, 3, 4, 16] {
                let ranges = row_ranges(rows, threads);
                assert!(!ranges.is_empty());
                assert!(ranges.len() <= threads);
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges.last().unwrap().end, rows);
                for pair in ranges.windows(2) {
                    assert_eq!(pair[0].end, pair[1].start);
                }
                if ranges.len() > 1 {
                    assert!(ranges.iter().all(|r| r.len() >= MIN_ROWS_PER_THREAD));
                }
            }
        }
    }

    #[test]
    fn results_come_back_in_range_order() {
        let ranges = row_ranges(40_000, 4);
        assert_eq!(ranges.len(), 4);
        let starts = map_ranges(&ranges, |r| r.start);
        assert_eq!(starts, ranges.iter().map(|r| r.start).collect::<Vec<_>>());
    }

    #[test]
    fn every_index_is_mapped_once_in_order() {
        for count in [0, 1, 2, 5, 17] {
            for threads in [1, 2, 3, 8] {
                let out = map_indices(count, threads, |i| i * 10);
                assert_eq!(out, (0..count).map(|i| i * 10).collect::<Vec<_>>());
            }
        }
    }
}
