//! The poll side's stop, position and commit rules against a fake source: several
//! topics with partitions of the same numbers, empty partitions, end-of-partition
//! events in any order, holds (pause, resume), a group's assignment and `-p`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, channel, sync_channel};
use std::time::Duration;

use super::{PollSide, Stops};
use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::topic_partition::{PartitionOffset, TopicPartition};
use crate::io::kafka::error::KafkaIoError;
use crate::ops::Result as OpsResult;
use crate::ops::tail::handoff::{Report, Shared};
use crate::ops::tail::source::{FetchSource, Fetched, FetchedMessage, PartitionControl};

/// What the fake delivers, in this order.
enum Event {
    Record(Arc<str>, i32, i64),
    End(Arc<str>, i32, i64),
    /// The decode side says this at this point (a hold, its end, written offsets).
    Say(Report),
}

struct FakeMessage<'a> {
    topic: &'a Arc<str>,
    partition: i32,
    offset: i64,
}

impl FetchedMessage for FakeMessage<'_> {
    fn topic_handle(&self) -> *const std::ffi::c_void {
        Arc::as_ptr(self.topic).cast()
    }
    fn topic(&self) -> &str {
        self.topic
    }
    fn partition(&self) -> i32 {
        self.partition
    }
    fn offset(&self) -> i64 {
        self.offset
    }
    fn append_to(&self, topic: u32, batch: &mut RawBatch) {
        let value = format!("{}/{}/{}", self.topic, self.partition, self.offset);
        batch.push_indexed(
            topic,
            self.partition,
            self.offset,
            0,
            None,
            Some(value.as_bytes()),
            |_| {},
        );
    }
}

/// A scripted consumer: delivers its events in order, holding back those of paused
/// partitions; records pauses, resumes and stores. Polls that find nothing to
/// deliver are counted: a poll side that would wait for ever is cancelled.
struct FakeSource {
    events: VecDeque<Event>,
    reports: Sender<Report>,
    paused: RefCell<BTreeSet<TopicPartition>>,
    resumed: RefCell<Vec<(TopicPartition, i64)>>,
    stored: RefCell<Vec<(TopicPartition, i64)>>,
    assigned: Vec<TopicPartition>,
    idle_polls: u32,
    cancel: Arc<AtomicBool>,
}

impl FakeSource {
    fn deliverable(&self) -> Option<usize> {
        let paused = self.paused.borrow();
        self.events.iter().position(|e| match e {
            Event::Record(t, p, _) | Event::End(t, p, _) => {
                !paused.contains(&TopicPartition::new(&**t, *p))
            }
            Event::Say(_) => true,
        })
    }
}

impl FetchSource for FakeSource {
    type Message<'m> = FakeMessage<'m>;

    fn poll_batch<F>(&mut self, _wait: Duration, max: usize, mut f: F) -> usize
    where
        F: FnMut(Result<Fetched<'_, FakeMessage<'_>>, KafkaIoError>) -> bool,
    {
        let mut n = 0;
        while n < max {
            let Some(i) = self.deliverable() else {
                break;
            };
            if matches!(self.events[i], Event::Say(_)) {
                // A report ends the poll round: the poll side acts on it before the
                // next events (a pause takes effect from there on).
                if n > 0 {
                    return n;
                }
                if let Some(Event::Say(report)) = self.events.remove(i) {
                    let _ = self.reports.send(report);
                }
                return 0;
            }
            let event = self.events.remove(i).expect("found above");
            n += 1;
            let go = match &event {
                Event::Record(t, p, o) => f(Ok(Fetched::Message(FakeMessage {
                    topic: t,
                    partition: *p,
                    offset: *o,
                }))),
                Event::End(t, p, o) => f(Ok(Fetched::End {
                    topic: t,
                    partition: *p,
                    offset: *o,
                })),
                Event::Say(_) => unreachable!("handled above"),
            };
            if !go {
                break;
            }
        }
        if n == 0 {
            self.idle_polls += 1;
            if self.idle_polls > 200 {
                self.cancel.store(true, Ordering::SeqCst);
            }
        }
        n
    }
    fn watermarks_quick(&self, _: &str, _: i32) -> Option<(i64, i64)> {
        Some((0, 0))
    }
}

impl PartitionControl for FakeSource {
    fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError> {
        self.paused
            .borrow_mut()
            .insert(TopicPartition::new(topic, partition));
        Ok(())
    }
    fn resume(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        let tp: TopicPartition = TopicPartition::new(topic, partition);
        self.paused.borrow_mut().remove(&tp);
        self.resumed.borrow_mut().push((tp, next));
        Ok(())
    }
    fn store_offset(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        self.stored
            .borrow_mut()
            .push((TopicPartition::new(topic, partition), next));
        Ok(())
    }
    fn commit_stored(&self) -> Result<(), KafkaIoError> {
        Ok(())
    }
    fn assignment(&self) -> Vec<TopicPartition> {
        self.assigned.clone()
    }
}

/// One partition of the script: topic, number, log start, end offset captured at start.
struct Part(&'static str, i32, i64, i64);

/// What a run of the poll side did.
struct Ran {
    outcome: OpsResult<()>,
    /// Records handed to the decode side, per partition, in order.
    handed: BTreeMap<TopicPartition, Vec<i64>>,
    source: FakeSource,
}

/// Runs the poll side over `parts` (stopping at their ends, `-e`) and `events`;
/// `group`: the fake assigns every part as a group would, with `only` as `-p`.
fn run(
    parts: &[Part],
    events: Vec<Event>,
    group: bool,
    only: Option<&[i32]>,
    batch_records: usize,
) -> Ran {
    let cancel = Arc::new(AtomicBool::new(false));
    let (report_tx, report_rx) = channel();
    let mut stops = Stops {
        bounded: true,
        only: only.map(|o| o.iter().copied().collect()),
        ..Default::default()
    };
    let mut assignment = Vec::new();
    let mut all = Vec::new();
    for Part(t, p, low, high) in parts {
        let tp = TopicPartition::new(*t, *p);
        if only.is_some_and(|o| !o.contains(p)) {
            continue;
        }
        all.push(tp.clone());
        let start = (!group).then_some(*low);
        if stops.add(tp.clone(), start, Some(*high)) && !group {
            assignment.push(PartitionOffset { tp, offset: *low });
        }
    }
    let mut source = FakeSource {
        events: events.into(),
        reports: report_tx,
        paused: RefCell::default(),
        resumed: RefCell::default(),
        stored: RefCell::default(),
        assigned: if group {
            parts
                .iter()
                .map(|Part(t, p, ..)| TopicPartition::new(*t, *p))
                .collect()
        } else {
            Vec::new()
        },
        idle_polls: 0,
        cancel: cancel.clone(),
    };
    let shared = Shared::new(cancel.clone());
    let (work_tx, work_rx) = sync_channel::<RawBatch>(10_000);
    let (_free_tx, free_rx) = channel::<RawBatch>();
    let mut side = PollSide {
        consumer: &mut source,
        stops,
        assignment,
        all_partitions: all,
        group,
        batch_records,
        timeout: Duration::from_secs(30),
        cancelled: &cancel,
        shared: &shared,
        progress: None,
        bytes: 0,
    };
    let outcome = side.fetch(&work_tx, &free_rx, &report_rx);
    // Reports said after the poll side ended are applied as `run` applies them.
    let mut paused = BTreeSet::new();
    for report in report_rx.try_iter() {
        if let Report::Processed(_) = report {
            side.act_on(report, &mut paused).unwrap();
        }
    }
    drop(side);
    drop(work_tx);
    let mut handed: BTreeMap<TopicPartition, Vec<i64>> = BTreeMap::new();
    for batch in work_rx.iter() {
        for i in 0..batch.len() {
            let r = batch.get(i);
            handed
                .entry(TopicPartition::new(r.topic, r.partition))
                .or_default()
                .push(r.offset);
        }
    }
    Ran {
        outcome,
        handed,
        source,
    }
}

fn records(topic: &Arc<str>, partition: i32, offsets: std::ops::Range<i64>) -> Vec<Event> {
    offsets
        .map(|o| Event::Record(topic.clone(), partition, o))
        .collect()
}

fn end(topic: &Arc<str>, partition: i32, offset: i64) -> Event {
    Event::End(topic.clone(), partition, offset)
}

fn tp(t: &str, p: i32) -> TopicPartition {
    TopicPartition::new(t, p)
}

#[test]
fn the_end_of_one_topics_partition_never_ends_another_topics_partition_of_that_number() {
    let (a, b): (Arc<str>, Arc<str>) = ("ta".into(), "tb".into());
    let parts = [
        Part("ta", 0, 0, 3),
        Part("ta", 3, 0, 20),
        Part("tb", 0, 0, 0),
        Part("tb", 3, 0, 5),
    ];
    // B/3 is read to its end and says so while A/3 is still at its first records.
    let mut events = records(&a, 3, 0..2);
    events.extend(records(&b, 3, 0..5));
    events.push(end(&b, 3, 5));
    events.extend(records(&a, 0, 0..3));
    events.push(end(&a, 0, 3));
    events.extend(records(&a, 3, 2..20));
    events.push(end(&a, 3, 20));
    for batch_records in [1, 7, 10_000] {
        let ran = run(&parts, events_clone(&events), false, None, batch_records);
        ran.outcome.unwrap();
        assert_eq!(ran.handed[&tp("ta", 3)], (0..20).collect::<Vec<_>>());
        assert_eq!(ran.handed[&tp("tb", 3)], (0..5).collect::<Vec<_>>());
        assert_eq!(ran.handed[&tp("ta", 0)], vec![0, 1, 2]);
        assert!(!ran.handed.contains_key(&tp("tb", 0)), "an empty partition");
    }
}

fn events_clone(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .map(|e| match e {
            Event::Record(t, p, o) => Event::Record(t.clone(), *p, *o),
            Event::End(t, p, o) => Event::End(t.clone(), *p, *o),
            Event::Say(_) => panic!("scripts with reports are not cloned"),
        })
        .collect()
}

#[test]
fn a_group_tail_ends_once_every_assigned_partition_reached_its_own_end_empty_ones_included() {
    let (a, b): (Arc<str>, Arc<str>) = ("ta".into(), "tb".into());
    let parts = [
        Part("ta", 0, 0, 0),
        Part("ta", 1, 0, 4),
        Part("tb", 0, 0, 0),
        Part("tb", 1, 0, 2),
    ];
    // Both topics' partition 0 are empty: each says so with an end at offset 0.
    let mut events = vec![end(&a, 0, 0), end(&b, 0, 0)];
    events.extend(records(&b, 1, 0..2));
    events.push(end(&b, 1, 2));
    events.extend(records(&a, 1, 0..4));
    events.push(end(&a, 1, 4));
    let ran = run(&parts, events, true, None, 10_000);
    ran.outcome.unwrap();
    assert_eq!(ran.handed[&tp("ta", 1)], vec![0, 1, 2, 3]);
    assert_eq!(ran.handed[&tp("tb", 1)], vec![0, 1]);
    assert!(ran.source.events.is_empty(), "read up to every end");
}

#[test]
fn an_end_below_the_stop_does_not_end_the_partition() {
    // read_committed: the end is the last stable offset, below the captured end
    // while a transaction is open; the records after it still come.
    let a: Arc<str> = "ta".into();
    let parts = [Part("ta", 0, 0, 5)];
    let mut events = records(&a, 0, 0..3);
    events.push(end(&a, 0, 3));
    events.extend(records(&a, 0, 3..5));
    let ran = run(&parts, events, false, None, 10_000);
    ran.outcome.unwrap();
    assert_eq!(ran.handed[&tp("ta", 0)], vec![0, 1, 2, 3, 4]);
}

#[test]
fn an_end_before_any_record_of_an_unfinished_partition_keeps_the_tail_waiting() {
    // Only B's end comes: A still has records below its stop, so the tail must not
    // end (the fake cancels it when nothing more arrives).
    let b: Arc<str> = "tb".into();
    let parts = [Part("ta", 2, 0, 3), Part("tb", 2, 0, 1)];
    let mut events = records(&b, 2, 0..1);
    events.push(end(&b, 2, 1));
    let ran = run(&parts, events, false, None, 10_000);
    assert!(ran.outcome.is_err(), "waited for A/2, then was cancelled");
    assert!(!ran.handed.contains_key(&tp("ta", 2)));
}

#[test]
fn records_at_or_beyond_a_stop_are_never_handed_over() {
    let a: Arc<str> = "ta".into();
    let parts = [Part("ta", 0, 0, 3), Part("ta", 1, 2, 4)];
    let mut events = records(&a, 0, 0..6);
    events.extend(records(&a, 1, 2..9));
    for batch_records in [1, 2, 10_000] {
        let ran = run(&parts, events_clone(&events), false, None, batch_records);
        ran.outcome.unwrap();
        assert_eq!(ran.handed[&tp("ta", 0)], vec![0, 1, 2]);
        assert_eq!(ran.handed[&tp("ta", 1)], vec![2, 3]);
    }
}

#[test]
fn a_held_partition_is_paused_and_resumed_after_the_last_record_delivered() {
    let a: Arc<str> = "ta".into();
    let parts = [Part("ta", 0, 0, 4), Part("ta", 1, 0, 1)];
    let mut events = records(&a, 0, 0..2);
    events.push(Event::Say(Report::Pause(tp("ta", 0))));
    // Held: the fake keeps A/0's events back while it is paused.
    events.push(Event::Say(Report::Resume(tp("ta", 0))));
    events.extend(records(&a, 0, 2..4));
    events.push(end(&a, 0, 4));
    events.extend(records(&a, 1, 0..1));
    let ran = run(&parts, events, false, None, 10_000);
    ran.outcome.unwrap();
    assert_eq!(
        *ran.source.resumed.borrow(),
        vec![(tp("ta", 0), 2)],
        "resumed after the last record delivered"
    );
    assert_eq!(ran.handed[&tp("ta", 0)], vec![0, 1, 2, 3]);
}

#[test]
fn a_partition_paused_by_a_hold_keeps_the_tail_going_until_it_is_resumed() {
    let a: Arc<str> = "ta".into();
    let parts = [Part("ta", 0, 0, 4)];
    let mut events = records(&a, 0, 0..2);
    events.push(Event::Say(Report::Pause(tp("ta", 0))));
    events.extend(records(&a, 0, 2..4));
    events.push(end(&a, 0, 4));
    let ran = run(&parts, events, false, None, 10_000);
    assert!(
        ran.outcome.is_err(),
        "waited for the resume (the fake cancels)"
    );
    assert_eq!(ran.handed[&tp("ta", 0)], vec![0, 1]);
}

#[test]
fn a_group_reads_only_the_p_partitions_of_every_topic_and_stores_only_what_was_written() {
    let (a, b): (Arc<str>, Arc<str>) = ("ta".into(), "tb".into());
    let parts = [
        Part("ta", 0, 0, 3),
        Part("ta", 3, 0, 2),
        Part("tb", 0, 0, 1),
        Part("tb", 3, 0, 1),
    ];
    let mut events = records(&a, 0, 0..3);
    events.extend(records(&b, 0, 0..1));
    events.extend(records(&a, 3, 0..2));
    events.push(end(&a, 3, 2));
    events.extend(records(&b, 3, 0..1));
    // The decode side wrote both partition-3 records and says so.
    events.push(Event::Say(Report::Processed(vec![
        (tp("ta", 3), 2),
        (tp("tb", 3), 1),
    ])));
    events.push(end(&b, 3, 1));
    let ran = run(&parts, events, true, Some(&[3]), 10_000);
    ran.outcome.unwrap();
    assert_eq!(
        ran.handed.keys().cloned().collect::<Vec<_>>(),
        vec![tp("ta", 3), tp("tb", 3)]
    );
    assert_eq!(
        *ran.source.paused.borrow(),
        BTreeSet::from([tp("ta", 0), tp("tb", 0)]),
        "the group's other partitions are paused"
    );
    assert_eq!(
        *ran.source.stored.borrow(),
        vec![(tp("ta", 3), 2), (tp("tb", 3), 1)],
        "only what the decode side wrote is stored for the commit"
    );
}
