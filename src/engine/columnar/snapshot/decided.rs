//! Which state-topic records belong to committed transactions, from the
//! control markers in the log itself.
//!
//! A restore under exactly-once must take only snapshots whose transaction
//! committed. A read_committed consumer cannot be trusted with that: Tansu's
//! fetch does not hide aborted records (its aborted-transactions list is
//! always empty), and the group's committed offsets cannot stand in for the
//! outcome either, because Tansu applies a committed transaction's offsets
//! only once every transaction overlapping it has ended (with one output
//! partition, every member's transactions overlap). The markers can: a
//! transactional record counts when the next marker of its producer id is a
//! COMMIT, and is dropped when it is an ABORT or when no marker follows it in
//! what was read (still open). Records written outside a transaction count.

use super::state_record::ReadRecord;

/// One record as the log holds it, with its transactional framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logged {
    /// A data record; `transactional` when written inside a transaction.
    Data {
        producer_id: i64,
        transactional: bool,
        record: ReadRecord,
    },
    /// A control marker of `producer_id`: COMMIT (`commit`) or ABORT.
    Marker {
        offset: i64,
        producer_id: i64,
        commit: bool,
    },
}

/// The data records of committed transactions (and those written outside any),
/// in offset order. `logged` is in offset order, as fetched.
pub fn committed_records(logged: Vec<Logged>) -> Vec<ReadRecord> {
    let mut out = Vec::new();
    let mut open: std::collections::BTreeMap<i64, Vec<ReadRecord>> = Default::default();
    for entry in logged {
        match entry {
            Logged::Data {
                transactional: false,
                record,
                ..
            } => out.push(record),
            Logged::Data {
                producer_id,
                record,
                ..
            } => open.entry(producer_id).or_default().push(record),
            Logged::Marker {
                producer_id,
                commit,
                ..
            } => {
                let ended = open.remove(&producer_id).unwrap_or_default();
                if commit {
                    out.extend(ended);
                }
            }
        }
    }
    // Whatever is left in `open` has no outcome yet: it may still abort.
    out.sort_by_key(|r| r.offset);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(offset: i64, producer_id: i64, transactional: bool) -> Logged {
        Logged::Data {
            producer_id,
            transactional,
            record: ReadRecord {
                offset,
                key: format!("k{offset}"),
                value: Some(vec![1]),
                headers: Vec::new(),
            },
        }
    }

    fn marker(offset: i64, producer_id: i64, commit: bool) -> Logged {
        Logged::Marker {
            offset,
            producer_id,
            commit,
        }
    }

    #[test]
    fn only_committed_and_non_transactional_records_are_kept_in_offset_order() {
        let logged = vec![
            data(0, 3, true),
            // Another producer's transaction interleaves and commits first.
            data(1, 1, true),
            marker(2, 1, true),
            marker(3, 3, true),
            // Producer 3's next transaction is aborted when its id is initialised again.
            data(4, 3, true),
            data(5, 9, false),
            marker(6, 3, false),
            // Producer 1's last transaction has no outcome yet.
            data(7, 1, true),
        ];
        let kept: Vec<i64> = committed_records(logged).iter().map(|r| r.offset).collect();
        assert_eq!(kept, [0, 1, 5]);
    }
}
