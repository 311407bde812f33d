//! Two state stores as one: the authority (the Kafka store) and a local copy
//! (a `state_dir` in the Java/Go layout) that is written whenever the authority
//! is, so a Go or Java runner, `snapshot list` or a backup can read the
//! directory (docs/topology.md "State stores"). Loads come from the authority
//! only, and what they give is written to the copy: a copy another machine left
//! behind, or one ahead of an aborted transaction, is never read back as state.
//!
//! A failure to write the copy fails the save: a directory that silently stops
//! following the topic would be a wrong answer for whoever reads it.

use std::collections::BTreeMap;

use super::group::{RunnerError, StateOut, StateStore, TopicPartition};

pub struct Mirrored<A, B> {
    pub authority: A,
    pub copy: B,
}

impl<A: StateStore, B: StateStore> Mirrored<A, B> {
    pub fn new(authority: A, copy: B) -> Self {
        Mirrored { authority, copy }
    }

    fn copy_of(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        self.copy.save(partition, epoch, state).map_err(|e| {
            RunnerError::new(format!(
                "the local copy of the state store (state_dir): {}",
                e.message
            ))
        })
    }
}

impl<A: StateStore, B: StateStore> StateStore for Mirrored<A, B> {
    fn load(
        &mut self,
        partition: i32,
        epoch: i64,
    ) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
        let state = self.authority.load(partition, epoch)?;
        self.copy_of(partition, epoch, &state)?;
        Ok(state)
    }

    fn save(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), RunnerError> {
        self.authority.save(partition, epoch, state)?;
        self.copy_of(partition, epoch, state)
    }

    fn save_many(
        &mut self,
        epoch: i64,
        states: &[(i32, BTreeMap<String, Vec<u8>>)],
    ) -> Result<(), RunnerError> {
        self.authority.save_many(epoch, states)?;
        states
            .iter()
            .try_for_each(|(partition, state)| self.copy_of(*partition, epoch, state))
    }

    fn epochs(&mut self, partition: i32) -> Result<Option<Vec<i64>>, RunnerError> {
        self.authority.epochs(partition)
    }

    fn reflect(&mut self, offsets: &BTreeMap<TopicPartition, i64>) {
        self.authority.reflect(offsets);
        self.copy.reflect(offsets);
    }

    /// The authority's records go in the transaction; the copy is written when
    /// they are handed over (a file cannot join a transaction). Like a plain
    /// `state_dir`, it may then be one round ahead of an aborted transaction;
    /// the next load, from the authority, rewrites it.
    fn transactional_records(
        &mut self,
        partition: i32,
        epoch: i64,
        state: &BTreeMap<String, Vec<u8>>,
    ) -> Result<Option<Vec<StateOut>>, RunnerError> {
        let records = self
            .authority
            .transactional_records(partition, epoch, state)?;
        if records.is_some() {
            self.copy_of(partition, epoch, state)?;
        }
        Ok(records)
    }

    fn forget_unconfirmed(&mut self) {
        self.authority.forget_unconfirmed();
        self.copy.forget_unconfirmed();
    }

    fn release(&mut self, partition: i32) {
        self.authority.release(partition);
        self.copy.release(partition);
    }

    fn restored_offsets(&mut self, partition: i32) -> BTreeMap<TopicPartition, i64> {
        self.authority.restored_offsets(partition)
    }

    fn saves_in_transaction(&self) -> bool {
        self.authority.saves_in_transaction()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that keeps every save and can be told to fail.
    #[derive(Default)]
    struct Kept {
        saved: BTreeMap<(i32, i64), BTreeMap<String, Vec<u8>>>,
        fail: bool,
        transactional: bool,
    }

    impl StateStore for Kept {
        fn load(&mut self, p: i32, e: i64) -> Result<BTreeMap<String, Vec<u8>>, RunnerError> {
            Ok(self.saved.get(&(p, e)).cloned().unwrap_or_default())
        }
        fn save(
            &mut self,
            p: i32,
            e: i64,
            state: &BTreeMap<String, Vec<u8>>,
        ) -> Result<(), RunnerError> {
            if self.fail {
                return Err(RunnerError::new("No space left on device"));
            }
            self.saved.insert((p, e), state.clone());
            Ok(())
        }
        fn epochs(&mut self, p: i32) -> Result<Option<Vec<i64>>, RunnerError> {
            Ok(Some(
                self.saved
                    .keys()
                    .filter(|(q, e)| *q == p && *e >= 0)
                    .map(|(_, e)| *e)
                    .collect(),
            ))
        }
        fn transactional_records(
            &mut self,
            p: i32,
            _: i64,
            _: &BTreeMap<String, Vec<u8>>,
        ) -> Result<Option<Vec<StateOut>>, RunnerError> {
            Ok(self.transactional.then(|| {
                vec![(
                    "t".to_owned(),
                    p,
                    crate::engine::columnar::record::OutRecord {
                        key: None,
                        value: None,
                        timestamp: 0,
                        headers: vec![],
                    },
                )]
            }))
        }
    }

    fn state(v: u8) -> BTreeMap<String, Vec<u8>> {
        BTreeMap::from([("n".to_owned(), vec![v])])
    }

    #[test]
    fn loads_come_from_the_authority_and_overwrite_a_stale_copy() {
        let mut authority = Kept::default();
        authority.saved.insert((0, -1), state(1));
        let mut copy = Kept::default();
        copy.saved.insert((0, -1), state(9));
        copy.saved.insert((1, -1), state(9));
        let mut m = Mirrored::new(authority, copy);
        assert_eq!(m.load(0, -1).unwrap(), state(1));
        assert_eq!(m.copy.saved[&(0, -1)], state(1));
        // Nothing in the authority: empty, and the copy says so too.
        assert!(m.load(1, -1).unwrap().is_empty());
        assert!(m.copy.saved[&(1, -1)].is_empty());
    }

    #[test]
    fn saves_go_to_both_and_a_failed_copy_fails_the_save() {
        let mut m = Mirrored::new(Kept::default(), Kept::default());
        m.save(2, 7, &state(3)).unwrap();
        assert_eq!(m.authority.saved[&(2, 7)], state(3));
        assert_eq!(m.copy.saved[&(2, 7)], state(3));
        assert_eq!(m.epochs(2).unwrap(), Some(vec![7]));
        m.copy.fail = true;
        let e = m.save(2, -1, &state(4)).unwrap_err().message;
        assert_eq!(
            e,
            "the local copy of the state store (state_dir): No space left on device"
        );
    }

    #[test]
    fn transactional_saves_hand_over_the_authoritys_records_and_write_the_copy() {
        let mut m = Mirrored::new(
            Kept {
                transactional: true,
                ..Kept::default()
            },
            Kept::default(),
        );
        let records = m.transactional_records(1, -1, &state(5)).unwrap().unwrap();
        assert_eq!(records.len(), 1);
        assert!(m.authority.saved.is_empty());
        assert_eq!(m.copy.saved[&(1, -1)], state(5));
        let mut plain = Mirrored::new(Kept::default(), Kept::default());
        assert!(
            plain
                .transactional_records(1, -1, &state(5))
                .unwrap()
                .is_none()
        );
        assert!(plain.copy.saved.is_empty());
    }
}
