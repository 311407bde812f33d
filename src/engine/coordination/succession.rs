//! The succession of a role (semantics §9): folding the records of the role's
//! partition into a roster and a lease, ranking members, and deciding what a
//! member does next ([`Action`]).
//!
//! The fold has compaction semantics: per key the highest offset wins, so the
//! input order never matters. Nothing here reads Kafka; the caller passes the
//! records it read. Standard library only.

use std::collections::BTreeMap;
use std::fmt;

use super::lease::LeaseConfig;
use super::record::{
    CoordinationKey, LeaseValue, RecordError, RecordKind, RegistrationValue, is_tombstone,
};
use super::topic::COORDINATION_TOPIC;

/// One record of `__coordination_state` as read: offset, key bytes, value bytes
/// (`None` for a null value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateRecord {
    pub offset: i64,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

impl StateRecord {
    pub fn new(offset: i64, key: Vec<u8>, value: Option<Vec<u8>>) -> Self {
        StateRecord { offset, key, value }
    }
}

/// A live registration: the member's place is the offset of its registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterEntry {
    pub member: String,
    pub offset: i64,
    /// Epoch ms from the registration value.
    pub registered_at: i64,
}

/// The folded state of one role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Succession {
    role: String,
    roster: Vec<RosterEntry>,
    lease: Option<LeaseValue>,
}

/// Which part of a record failed to decode during the fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldStage {
    Key,
    Registration,
    Lease,
}

impl fmt::Display for FoldStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FoldStage::Key => "key",
            FoldStage::Registration => "registration",
            FoldStage::Lease => "lease",
        })
    }
}

/// A record of the partition failed to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldError {
    pub stage: FoldStage,
    pub offset: i64,
    pub source: RecordError,
}

impl fmt::Display for FoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "decode the {} at offset {} of {COORDINATION_TOPIC}: {}",
            self.stage, self.offset, self.source
        )
    }
}

impl std::error::Error for FoldError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// What a member should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The member has no live registration: register first.
    NotRegistered,
    /// The member holds a live lease.
    Hold,
    /// The member's turn has come: mint an epoch and write a lease.
    Challenge,
    /// Not yet: re-evaluate at this time (epoch ms) at the latest.
    Wait(i64),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::NotRegistered => "not registered",
            Action::Hold => "hold",
            Action::Challenge => "challenge",
            Action::Wait(_) => "wait",
        })
    }
}

/// The latest record of one key seen so far: its offset and its value
/// (`None` = tombstone).
struct Slot<T> {
    offset: i64,
    value: Option<T>,
}

/// Keeps `value` at `offset` unless the slot already holds a higher offset.
fn keep_highest<T>(slot: &mut Option<Slot<T>>, offset: i64, value: Option<T>) {
    if slot.as_ref().is_none_or(|s| s.offset < offset) {
        *slot = Some(Slot { offset, value });
    }
}

impl Succession {
    /// Folds the records of `role`'s partition; records of other roles are dropped.
    /// Every record of the role is decoded, so a corrupt one fails the fold.
    pub fn fold<'a, I>(role: &str, records: I) -> Result<Self, FoldError>
    where
        I: IntoIterator<Item = &'a StateRecord>,
    {
        let mut registrations: BTreeMap<String, Option<Slot<RegistrationValue>>> = BTreeMap::new();
        let mut lease: Option<Slot<LeaseValue>> = None;
        for record in records {
            let fail = |stage, source| FoldError {
                stage,
                offset: record.offset,
                source,
            };
            let key = CoordinationKey::decode(&record.key).map_err(|e| fail(FoldStage::Key, e))?;
            if key.role() != role {
                continue;
            }
            let value = record.value.as_deref();
            let tombstone = is_tombstone(value);
            let bytes = value.unwrap_or_default();
            if key.kind() == RecordKind::REGISTRATION {
                let value = if tombstone {
                    None
                } else {
                    Some(
                        RegistrationValue::decode(bytes)
                            .map_err(|e| fail(FoldStage::Registration, e))?,
                    )
                };
                let slot = registrations.entry(key.member().to_string()).or_default();
                keep_highest(slot, record.offset, value);
            } else {
                let value = if tombstone {
                    None
                } else {
                    Some(LeaseValue::decode(bytes).map_err(|e| fail(FoldStage::Lease, e))?)
                };
                keep_highest(&mut lease, record.offset, value);
            }
        }
        let mut roster: Vec<RosterEntry> = registrations
            .into_iter()
            .filter_map(|(member, slot)| {
                let slot = slot?;
                let registration = slot.value?;
                Some(RosterEntry {
                    member,
                    offset: slot.offset,
                    registered_at: registration.registered_at(),
                })
            })
            .collect();
        roster.sort_by(|a, b| (a.offset, &a.member).cmp(&(b.offset, &b.member)));
        Ok(Succession {
            role: role.to_string(),
            roster,
            lease: lease.and_then(|slot| slot.value),
        })
    }

    pub fn role(&self) -> &str {
        &self.role
    }

    /// Live registrations, oldest registration offset first.
    pub fn roster(&self) -> &[RosterEntry] {
        &self.roster
    }

    /// The latest lease, live or expired; `None` if never written or cleared.
    pub fn lease(&self) -> Option<&LeaseValue> {
        self.lease.as_ref()
    }

    /// The member named by the lease, even after the lease expired.
    pub fn holder(&self) -> Option<&str> {
        self.lease.as_ref().map(LeaseValue::member)
    }

    /// The member's live registration.
    pub fn registration(&self, member: &str) -> Option<&RosterEntry> {
        self.roster.iter().find(|entry| entry.member == member)
    }

    /// The member's rank: 0 for the holder, otherwise its index in the roster
    /// with the holder removed. `None` when the member is not registered
    /// (the (0, not registered) of semantics §9).
    pub fn rank_of(&self, member: &str) -> Option<i64> {
        let position = self.roster.iter().position(|e| e.member == member)?;
        let holder = self.holder();
        if holder == Some(member) {
            return Some(0);
        }
        let holder_ahead = self.roster[..position]
            .iter()
            .any(|e| Some(e.member.as_str()) == holder);
        Some(position as i64 - i64::from(holder_ahead))
    }

    /// What `member` should do at `now` (epoch ms):
    /// not registered → [`Action::NotRegistered`]; the member's live lease →
    /// [`Action::Hold`]; otherwise challenge once `now` reaches the anchor
    /// (lease deadline, or without a lease the member's own registeredAt, plus
    /// rank × stagger), else wait until the anchor. The holder of an expired
    /// lease keeps rank 0 and reclaims at its deadline.
    pub fn evaluate(&self, config: &LeaseConfig, member: &str, now: i64) -> Action {
        let (Some(rank), Some(registration)) = (self.rank_of(member), self.registration(member))
        else {
            return Action::NotRegistered;
        };
        let anchor = match &self.lease {
            Some(lease) if lease.member() == member && lease.term().is_live(now) => {
                return Action::Hold;
            }
            Some(lease) => lease.term().challenge_at(config, rank),
            None => registration
                .registered_at
                .saturating_add(config.challenge_delay(rank)),
        };
        if now >= anchor {
            Action::Challenge
        } else {
            Action::Wait(anchor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::coordination::lease::LeaseTerm;
    use crate::engine::coordination::token::FencingToken;

    const ROLE: &str = "controller";

    fn reg(offset: i64, member: &str, at: i64) -> StateRecord {
        StateRecord::new(
            offset,
            CoordinationKey::registration(ROLE, member)
                .unwrap()
                .encode(),
            Some(RegistrationValue::new(member, at).unwrap().encode()),
        )
    }

    fn lease(offset: i64, member: &str, granted_at: i64, deadline: i64) -> StateRecord {
        let token = FencingToken::new(1, 0).unwrap();
        let term = LeaseTerm {
            granted_at,
            deadline,
        };
        StateRecord::new(
            offset,
            CoordinationKey::lease(ROLE).unwrap().encode(),
            Some(LeaseValue::new(member, token, term).unwrap().encode()),
        )
    }

    fn members(s: &Succession) -> Vec<&str> {
        s.roster().iter().map(|e| e.member.as_str()).collect()
    }

    #[test]
    fn an_empty_log_folds_to_nobody() {
        let s = Succession::fold(ROLE, &[]).unwrap();
        assert!(s.roster().is_empty());
        assert_eq!(s.holder(), None);
        assert_eq!(s.rank_of("node-1"), None);
        assert_eq!(
            s.evaluate(&LeaseConfig::default(), "node-1", 0),
            Action::NotRegistered
        );
    }

    #[test]
    fn an_empty_value_is_a_registration_tombstone() {
        let mut tomb = reg(20, "node-1", 0);
        tomb.value = Some(Vec::new());
        let s = Succession::fold(ROLE, &[reg(10, "node-1", 0), tomb]).unwrap();
        assert!(s.roster().is_empty());
    }

    #[test]
    fn an_older_lease_arriving_after_a_tombstone_stays_cleared() {
        let mut tomb = lease(20, "x", 0, 0);
        tomb.value = None;
        let s = Succession::fold(ROLE, &[tomb, lease(10, "node-1", 0, 30_000)]).unwrap();
        assert_eq!(s.lease(), None);
    }

    #[test]
    fn a_corrupt_key_fails_the_fold_with_its_offset() {
        let bad = StateRecord::new(7, vec![0, 0], None);
        let err = Succession::fold(ROLE, &[reg(1, "node-1", 0), bad]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "decode the key at offset 7 of __coordination_state: truncated coordination state key"
        );
    }

    #[test]
    fn a_corrupt_registration_value_names_the_registration() {
        let mut bad = reg(3, "node-1", 0);
        bad.value = Some(vec![0, 1]);
        let err = Succession::fold(ROLE, &[bad]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "decode the registration at offset 3 of __coordination_state: unsupported coordination state registration value version 1"
        );
    }

    #[test]
    fn a_corrupt_lease_value_names_the_lease() {
        let mut bad = lease(4, "node-1", 0, 1);
        bad.value.as_mut().unwrap().push(0);
        let err = Succession::fold(ROLE, &[bad]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "decode the lease at offset 4 of __coordination_state: trailing bytes in coordination state lease value"
        );
        assert_eq!(err.stage, FoldStage::Lease);
    }

    #[test]
    fn values_of_other_roles_are_not_decoded() {
        let other = StateRecord::new(
            5,
            CoordinationKey::registration("other", "node-1")
                .unwrap()
                .encode(),
            Some(vec![0xff]),
        );
        let s = Succession::fold(ROLE, &[other]).unwrap();
        assert!(s.roster().is_empty());
    }

    #[test]
    fn an_unregistered_holder_has_no_rank_and_others_rank_from_zero() {
        // node-1 holds the lease but its registration was tombstoned.
        let mut tomb = reg(30, "node-1", 0);
        tomb.value = None;
        let records = [
            reg(10, "node-1", 0),
            reg(20, "node-2", 0),
            lease(25, "node-1", 0, 30_000),
            tomb,
        ];
        let s = Succession::fold(ROLE, &records).unwrap();
        assert_eq!(members(&s), ["node-2"]);
        assert_eq!(s.holder(), Some("node-1"));
        assert_eq!(s.rank_of("node-1"), None);
        assert_eq!(s.rank_of("node-2"), Some(0));
        let config = LeaseConfig::default();
        assert_eq!(s.evaluate(&config, "node-1", 0), Action::NotRegistered);
        assert_eq!(s.evaluate(&config, "node-2", 0), Action::Wait(30_000));
    }

    #[test]
    fn a_holder_behind_others_does_not_shift_those_ahead() {
        let records = [
            reg(10, "node-1", 0),
            reg(20, "node-2", 0),
            reg(30, "node-3", 0),
            lease(40, "node-3", 0, 30_000),
        ];
        let s = Succession::fold(ROLE, &records).unwrap();
        assert_eq!(
            ["node-3", "node-1", "node-2"].map(|m| s.rank_of(m)),
            [Some(0), Some(0), Some(1)]
        );
    }

    #[test]
    fn the_challenge_anchor_saturates() {
        let records = [
            reg(1, "node-1", i64::MAX - 1),
            reg(2, "node-2", i64::MAX - 1),
        ];
        let s = Succession::fold(ROLE, &records).unwrap();
        let config = LeaseConfig::default();
        assert_eq!(s.evaluate(&config, "node-2", 0), Action::Wait(i64::MAX));
        assert_eq!(s.evaluate(&config, "node-2", i64::MAX), Action::Challenge);
    }

    #[test]
    fn action_display_strings() {
        let shown = [
            Action::NotRegistered,
            Action::Hold,
            Action::Challenge,
            Action::Wait(5),
        ]
        .map(|a| a.to_string());
        assert_eq!(shown, ["not registered", "hold", "challenge", "wait"]);
    }
}
