//! The election over the in-memory transport with a manual clock: the acquire
//! loop, renewals, expiry, fencing and resignation (semantics §9).

use std::sync::{Arc, Mutex};

use super::*;

const ROLE: &str = "controller";

fn config() -> LeaseConfig {
    LeaseConfig::default()
}

struct World {
    transport: Arc<MemoryTransport>,
    clock: Arc<ManualClock>,
}

impl World {
    fn new(now: i64) -> Self {
        World {
            transport: Arc::new(MemoryTransport::new()),
            clock: Arc::new(ManualClock::new(now)),
        }
    }

    fn election(&self) -> Election<MemoryTransport> {
        Election::new(self.transport.clone(), self.clock.clone(), config())
    }

    fn partition(&self) -> TopicPartition {
        self.election().partition_of(ROLE).unwrap()
    }

    fn state(&self) -> Succession {
        let records = self.transport.log(&self.partition());
        Succession::fold(ROLE, &records).unwrap()
    }

    fn acquire(&self, member: &str) -> Result<Leadership, LeaderError> {
        self.election()
            .acquire(ROLE, member, &AcquireOptions::default())
    }
}

fn token(id: i64, epoch: i16) -> FencingToken {
    FencingToken::new(id, epoch).unwrap()
}

#[test]
fn coord_acquire_empty_log_takes_token_1_0_and_a_lease_from_now() {
    let w = World::new(1_000);
    let leadership = w.acquire("node-1").unwrap();
    assert_eq!(leadership.token(), token(1, 0));
    let lease = leadership.lease();
    assert_eq!(
        (
            lease.member(),
            lease.token(),
            lease.granted_at(),
            lease.deadline()
        ),
        ("node-1", token(1, 0), 1_000, 31_000)
    );
    let state = w.state();
    assert_eq!(state.lease(), Some(&lease));
    let roster: Vec<_> = state
        .roster()
        .iter()
        .map(|e| (e.member.as_str(), e.offset, e.registered_at))
        .collect();
    assert_eq!(roster, [("node-1", 0, 1_000)]);
    assert_eq!(w.clock.now_ms(), 1_000, "no wait on an empty log");
}

#[test]
fn the_registration_is_appended_once_while_the_read_lags() {
    let w = World::new(1_000);
    w.transport.set_read_delay(3);
    let leadership = w.acquire("node-1").unwrap();
    assert_eq!(w.transport.calls(Operation::Append), 1);
    // Three reads missed the registration; each missed read waited one poll.
    assert_eq!(leadership.lease().granted_at(), 1_000 + 3 * 1_000);
}

#[test]
fn a_standby_challenges_at_the_deadline_plus_its_rank_times_the_stagger() {
    let w = World::new(0);
    let holder = w.acquire("node-1").unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    // node-2 and node-3 register; node-1's lease ends at 30000 and is never renewed.
    w.election().register(ROLE, "node-2").unwrap();
    let options = AcquireOptions {
        observer: Some(Box::new(move |e| seen.lock().unwrap().push(e.clone()))),
        ..AcquireOptions::default()
    };
    w.election().register(ROLE, "node-3").unwrap();
    let third = w.election().acquire(ROLE, "node-3", &options).unwrap();
    // node-3 has rank 1: it challenges at 30000 + 5000, as node-2 never acts.
    assert_eq!(third.lease().granted_at(), 35_000);
    assert!(third.token().supersedes(holder.token()));
    let events = events.lock().unwrap();
    assert!(events.contains(&AcquireEvent::Waiting {
        rank: 1,
        until: 35_000,
        holder: Some("node-1".into()),
    }));
    // The deposed holder's next renewal is fenced and ends its leadership.
    let err = holder.renew().unwrap_err();
    assert!(err.is_fenced(), "{err}");
    assert_eq!(
        holder.ended().unwrap().to_string(),
        "role controller: fenced: another member holds the role"
    );
}

#[test]
fn the_holder_of_an_expired_lease_reclaims_at_its_deadline_with_a_new_epoch() {
    let w = World::new(0);
    let first = w.acquire("node-1").unwrap();
    w.clock.set(40_000);
    // A restarted incarnation of node-1 holds rank 0 and takes the role at once.
    let second = w.acquire("node-1").unwrap();
    assert_eq!(second.lease().granted_at(), 40_000);
    assert_eq!(second.token(), token(1, 1));
    assert!(first.renew().unwrap_err().is_fenced());
}

#[test]
fn a_fresh_registration_moves_a_restarted_member_to_the_tail() {
    let w = World::new(0);
    let e = w.election();
    e.register(ROLE, "node-1").unwrap();
    e.register(ROLE, "node-2").unwrap();
    w.transport.set_read_delay(1);
    let options = AcquireOptions {
        fresh_registration: true,
        deadline: Some(3_000),
        ..AcquireOptions::default()
    };
    // node-1 re-registers at 0 behind node-2: with no lease node-2 (rank 0)
    // is due at its own registeredAt, node-1 waits rank 1 × 5 s.
    let err = e.acquire(ROLE, "node-1", &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        "role controller: the deadline 3000 passed before the member held the role"
    );
    let members: Vec<_> = w
        .state()
        .roster()
        .iter()
        .map(|r| r.member.clone())
        .collect();
    assert_eq!(members, ["node-2", "node-1"]);
    assert_eq!(w.transport.calls(Operation::Append), 3);
}

#[test]
fn a_lost_race_loops_and_waits_for_the_winner() {
    let w = World::new(0);
    w.transport.fail_next(
        Operation::WriteLease,
        TransportError::fenced("PRODUCER_FENCED (90)"),
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let options = AcquireOptions {
        observer: Some(Box::new(move |e| seen.lock().unwrap().push(e.clone()))),
        ..AcquireOptions::default()
    };
    let leadership = w.election().acquire(ROLE, "node-1", &options).unwrap();
    assert_eq!(leadership.token(), token(1, 1));
    assert_eq!(leadership.lease().granted_at(), 1_000);
    assert!(events.lock().unwrap().iter().any(|e| matches!(
        e,
        AcquireEvent::LostRace { cause } if cause.is_fenced()
    )));
}

#[test]
fn step_errors_carry_their_wrappers() {
    let cases = [
        (Operation::Read, "read the state of role controller: broken"),
        (
            Operation::Append,
            "register member node-1 for role controller: broken",
        ),
        (Operation::Mint, "mint the epoch of role controller: broken"),
        (
            Operation::WriteLease,
            "write the lease of role controller: broken",
        ),
    ];
    for (op, text) in cases {
        let w = World::new(0);
        w.transport.fail_next(op, TransportError::failed("broken"));
        let err = w.acquire("node-1").unwrap_err();
        assert_eq!(err.to_string(), text);
    }
}

#[test]
fn a_corrupt_record_fails_the_read_with_its_offset() {
    let w = World::new(0);
    let tp = w.partition();
    w.transport.append(&tp, &[0, 0, 0], Some(b"x")).unwrap();
    let err = w.acquire("node-1").unwrap_err();
    assert_eq!(
        err.to_string(),
        "read the state of role controller: decode the key at offset 0 of __coordination_state: truncated coordination state key"
    );
}

#[test]
fn a_raised_stop_signal_cancels_the_acquisition() {
    let w = World::new(0);
    let options = AcquireOptions::default();
    options.stop.raise();
    let err = w.election().acquire(ROLE, "node-1", &options).unwrap_err();
    assert!(matches!(err, LeaderError::Cancelled { .. }), "{err}");
    assert_eq!(w.transport.calls(Operation::Read), 0);
}

#[test]
fn invalid_identities_are_refused_before_any_call() {
    let w = World::new(0);
    let err = w
        .election()
        .acquire("", "m", &AcquireOptions::default())
        .unwrap_err();
    assert_eq!(err.to_string(), "a coordination role must not be empty");
    let long = "m".repeat(250);
    let err = w
        .election()
        .acquire(ROLE, &long, &AcquireOptions::default())
        .unwrap_err();
    assert!(
        err.to_string().contains("longer than the 249-byte maximum"),
        "{err}"
    );
    assert_eq!(w.transport.calls(Operation::Read), 0);
}

#[test]
fn renewals_write_fresh_grants_with_the_same_token_until_fenced() {
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    w.clock.set(10_000);
    leadership.renew().unwrap();
    let lease = leadership.lease();
    assert_eq!((lease.granted_at(), lease.deadline()), (10_000, 40_000));
    assert_eq!(lease.token(), token(1, 0));
    assert_eq!(w.state().lease(), Some(&lease));
    // A rival mints a newer epoch: the loop's next renewal (at 20 s) is fenced.
    assert_eq!(w.transport.acquire_epoch(ROLE).unwrap(), token(1, 1));
    let end = leadership.run_renewals();
    assert_eq!(
        end.to_string(),
        "role controller: fenced: another member holds the role"
    );
    assert_eq!(w.clock.now_ms(), 20_000);
    assert_eq!(w.transport.calls(Operation::WriteLease), 3);
    assert_eq!(
        w.state().lease(),
        Some(&lease),
        "the fenced grant never landed"
    );
}

#[test]
fn failed_renewals_retry_every_poll_until_the_lease_expires() {
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    for _ in 0..100 {
        w.transport.fail_next(
            Operation::WriteLease,
            TransportError::unreachable("timed out"),
        );
    }
    let end = leadership.run_renewals();
    assert_eq!(
        end.to_string(),
        "role controller: the lease expired at 30000 after a failed renewal: renew the lease of role controller: timed out"
    );
    assert!(end.is_unreachable());
    // Attempts at 10 s, 11 s, … 30 s: 21 writes after the first lease.
    assert_eq!(w.transport.calls(Operation::WriteLease), 1 + 21);
    assert_eq!(w.clock.now_ms(), 30_000);
}

#[test]
fn one_failed_renewal_is_retried_and_the_leadership_goes_on() {
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    w.transport.fail_next(
        Operation::WriteLease,
        TransportError::failed("NOT_LEADER_OR_FOLLOWER (6)"),
    );
    let runner = leadership.clone();
    let clock = w.clock.clone();
    let stopper = std::thread::spawn(move || {
        while clock.now_ms() < 12_000 {
            std::thread::yield_now();
        }
        runner.resign().unwrap();
    });
    let end = leadership.run_renewals();
    stopper.join().unwrap();
    assert!(end.is_not_held(), "{end}");
    assert!(leadership.lease().granted_at() >= 11_000);
}

#[test]
fn resigning_clears_the_lease_once_and_ends_the_leadership() {
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    leadership.resign().unwrap();
    assert_eq!(w.state().lease(), None);
    assert_eq!(
        leadership.ended().unwrap().to_string(),
        "role controller: the member no longer holds the role"
    );
    let writes = w.transport.calls(Operation::WriteLease);
    leadership.resign().unwrap();
    assert_eq!(w.transport.calls(Operation::WriteLease), writes);
    let err = leadership.renew().unwrap_err();
    assert!(err.is_not_held());
    assert!(leadership.ended_signal().is_raised());
    // The epoch is not given back: it stays the broker's current one.
    assert_eq!(w.transport.current_token(ROLE), Some(leadership.token()));
}

#[test]
fn resigning_ignores_a_fence_but_reports_other_failures() {
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    w.transport.fail_next(
        Operation::WriteLease,
        TransportError::fenced("PRODUCER_FENCED (90)"),
    );
    leadership.resign().unwrap();
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    w.transport.fail_next(
        Operation::WriteLease,
        TransportError::unreachable("timed out"),
    );
    assert_eq!(
        leadership.resign().unwrap_err().to_string(),
        "clear the lease of role controller: timed out"
    );
}

#[test]
fn after_a_resignation_the_next_member_challenges_at_once() {
    let w = World::new(0);
    let first = w.acquire("node-1").unwrap();
    w.election().register(ROLE, "node-2").unwrap();
    w.clock.set(5_000);
    first.resign().unwrap();
    let second = w.acquire("node-2").unwrap();
    // No lease: node-2 (rank 1 behind node-1) is due at registeredAt 0 + 5 s.
    assert_eq!(second.lease().granted_at(), 5_000);
}

#[test]
fn coord_describe_text_reports_no_epoch_then_the_minted_token() {
    let w = World::new(0);
    let status = w.election().describe(ROLE).unwrap();
    assert_eq!(status.to_string(), "role controller: no epoch");
    assert!(!status.held);
    w.transport.preset_next_token(ROLE, token(4242, 7));
    let leadership = w.acquire("node-1").unwrap();
    let status = w.election().describe(ROLE).unwrap();
    assert_eq!(status.to_string(), "role controller: epoch 4242:7");
    assert!(status.is_authoritative(leadership.token()));
    w.transport.fail_next(
        Operation::Describe,
        TransportError::failed("UNSUPPORTED_VERSION (35)"),
    );
    assert_eq!(
        w.election().describe(ROLE).unwrap_err().to_string(),
        "describe the epoch of role controller: UNSUPPORTED_VERSION (35)"
    );
}

#[test]
fn deregistering_removes_the_member_from_the_roster() {
    let w = World::new(0);
    let e = w.election();
    e.register(ROLE, "node-1").unwrap();
    e.register(ROLE, "node-2").unwrap();
    e.deregister(ROLE, "node-1").unwrap();
    let state = e.read_state(ROLE).unwrap();
    assert_eq!(state.roster().len(), 1);
    assert_eq!(state.rank_of("node-2"), Some(0));
}

#[test]
fn a_refused_login_ends_the_leadership_at_the_first_renewal() {
    let w = World::new(0);
    let leadership = w.acquire("node-1").unwrap();
    for _ in 0..100 {
        w.transport.fail_next(
            Operation::WriteLease,
            TransportError::refused("SASL_AUTHENTICATION_FAILED (58)"),
        );
    }
    let end = leadership.run_renewals();
    assert_eq!(
        end.to_string(),
        "renew the lease of role controller: SASL_AUTHENTICATION_FAILED (58)"
    );
    assert!(end.is_refused() && !end.is_unreachable() && !end.is_fenced());
    assert_eq!(leadership.ended(), Some(end));
    // One refused renewal at 10 s, none retried until the 30 s deadline.
    assert_eq!(w.transport.calls(Operation::WriteLease), 1 + 1);
    assert_eq!(w.clock.now_ms(), 10_000);
}
