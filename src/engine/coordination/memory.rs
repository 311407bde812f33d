//! An in-memory cluster implementing the four transport traits: one log per
//! partition, one epoch per role, fencing of superseded tokens, injected
//! failures and delayed visibility of appends. It stands in for Kafka in the
//! engine's tests and in the golden-vector tests. Standard library only.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use super::succession::StateRecord;
use super::token::FencingToken;
use super::transport::{
    Coordinator, LeaseWriter, Registrar, StateReader, TopicPartition, TransportError,
};

/// The transport operations, for failure injection and call counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Mint,
    Describe,
    Read,
    Append,
    WriteLease,
}

#[derive(Debug, Clone)]
struct StoredRecord {
    record: StateRecord,
    /// The read count from which on the record is visible.
    visible_from_read: u64,
}

#[derive(Debug, Default)]
struct State {
    logs: BTreeMap<TopicPartition, Vec<StoredRecord>>,
    current: HashMap<String, FencingToken>,
    minted: HashMap<FencingToken, String>,
    next_producer_id: i64,
    preset: HashMap<String, FencingToken>,
    faults: HashMap<Operation, VecDeque<TransportError>>,
    calls: HashMap<Operation, u64>,
    reads: u64,
    read_delay: u64,
}

/// A whole cluster in memory; share it between members with an `Arc`.
#[derive(Debug, Default)]
pub struct MemoryTransport {
    state: Mutex<State>,
}

impl MemoryTransport {
    /// An empty cluster whose first minted token is `1:0`.
    pub fn new() -> Self {
        let transport = MemoryTransport::default();
        transport.lock().next_producer_id = 1;
        transport
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next mint for `role` returns `token` (then epochs grow from it).
    pub fn preset_next_token(&self, role: &str, token: FencingToken) {
        self.lock().preset.insert(role.to_string(), token);
    }

    /// The next call of `op` fails with `error` (queued, one per call).
    pub fn fail_next(&self, op: Operation, error: TransportError) {
        self.lock().faults.entry(op).or_default().push_back(error);
    }

    /// Appended records become visible only after `reads` further reads.
    pub fn set_read_delay(&self, reads: u64) {
        self.lock().read_delay = reads;
    }

    /// How often `op` was called (failed calls included).
    pub fn calls(&self, op: Operation) -> u64 {
        self.lock().calls.get(&op).copied().unwrap_or(0)
    }

    /// Every record of a partition, visible or not, oldest first.
    pub fn log(&self, partition: &TopicPartition) -> Vec<StateRecord> {
        self.lock()
            .logs
            .get(partition)
            .map(|log| log.iter().map(|s| s.record.clone()).collect())
            .unwrap_or_default()
    }

    /// The current epoch of `role`, if it was ever taken.
    pub fn current_token(&self, role: &str) -> Option<FencingToken> {
        self.lock().current.get(role).copied()
    }

    /// Counts the call and pops an injected failure, if any.
    fn enter(&self, op: Operation) -> Result<std::sync::MutexGuard<'_, State>, TransportError> {
        let mut state = self.lock();
        *state.calls.entry(op).or_default() += 1;
        if let Some(error) = state.faults.get_mut(&op).and_then(VecDeque::pop_front) {
            return Err(error);
        }
        Ok(state)
    }
}

impl State {
    fn append(&mut self, partition: &TopicPartition, key: &[u8], value: Option<&[u8]>) {
        let visible_from_read = self.reads + self.read_delay;
        let log = self.logs.entry(partition.clone()).or_default();
        let offset = log.len() as i64;
        log.push(StoredRecord {
            record: StateRecord::new(offset, key.to_vec(), value.map(<[u8]>::to_vec)),
            visible_from_read,
        });
    }
}

impl Coordinator for MemoryTransport {
    fn acquire_epoch(&self, role: &str) -> Result<FencingToken, TransportError> {
        let mut state = self.enter(Operation::Mint)?;
        let token = if let Some(preset) = state.preset.remove(role) {
            preset
        } else {
            match state.current.get(role).copied() {
                Some(t) if t.producer_epoch() < i16::MAX => {
                    FencingToken::new(t.producer_id(), t.producer_epoch() + 1)
                        .map_err(|e| TransportError::failed(e.to_string()))?
                }
                _ => {
                    let id = state.next_producer_id;
                    state.next_producer_id += 1;
                    FencingToken::new(id, 0).map_err(|e| TransportError::failed(e.to_string()))?
                }
            }
        };
        state.current.insert(role.to_string(), token);
        state.minted.insert(token, role.to_string());
        Ok(token)
    }

    fn describe_epoch(&self, role: &str) -> Result<Option<FencingToken>, TransportError> {
        let state = self.enter(Operation::Describe)?;
        Ok(state.current.get(role).copied())
    }
}

impl StateReader for MemoryTransport {
    fn read_partition(
        &self,
        partition: &TopicPartition,
    ) -> Result<Vec<StateRecord>, TransportError> {
        let mut state = self.enter(Operation::Read)?;
        state.reads += 1;
        let reads = state.reads;
        Ok(state
            .logs
            .get(partition)
            .map(|log| {
                log.iter()
                    .filter(|s| s.visible_from_read < reads)
                    .map(|s| s.record.clone())
                    .collect()
            })
            .unwrap_or_default())
    }
}

impl Registrar for MemoryTransport {
    fn append(
        &self,
        partition: &TopicPartition,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), TransportError> {
        let mut state = self.enter(Operation::Append)?;
        state.append(partition, key, value);
        Ok(())
    }
}

impl LeaseWriter for MemoryTransport {
    fn write_lease(
        &self,
        partition: &TopicPartition,
        token: FencingToken,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), TransportError> {
        let mut state = self.enter(Operation::WriteLease)?;
        let Some(role) = state.minted.get(&token).cloned() else {
            return Err(TransportError::failed(format!(
                "memory transport did not mint token {token}"
            )));
        };
        if state.current.get(&role) != Some(&token) {
            return Err(TransportError::fenced(format!(
                "token {token} of role {role} is superseded"
            )));
        }
        state.append(partition, key, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_mint_fences_the_older_token() {
        let t = MemoryTransport::new();
        let tp = TopicPartition::new("s", 0);
        let first = t.acquire_epoch("r").unwrap();
        let second = t.acquire_epoch("r").unwrap();
        assert_eq!(
            (first.to_string(), second.to_string()),
            ("1:0".into(), "1:1".into())
        );
        assert!(t.write_lease(&tp, second, b"k", Some(b"v")).is_ok());
        assert!(
            t.write_lease(&tp, first, b"k", None)
                .unwrap_err()
                .is_fenced()
        );
        assert_eq!(t.describe_epoch("r").unwrap(), Some(second));
        assert_eq!(t.describe_epoch("other").unwrap(), None);
    }

    #[test]
    fn delayed_appends_show_up_after_the_given_reads() {
        let t = MemoryTransport::new();
        let tp = TopicPartition::new("s", 0);
        t.set_read_delay(1);
        t.append(&tp, b"k", Some(b"v")).unwrap();
        assert!(t.read_partition(&tp).unwrap().is_empty());
        assert_eq!(t.read_partition(&tp).unwrap().len(), 1);
    }
}
