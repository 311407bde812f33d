use super::*;
use crate::engine::columnar::barrier::NO_EPOCH;
use crate::engine::columnar::barrier::record::{
    BarrierStateKey, Cut, CutOffset, CutStatus, CutTopic,
};

use crate::engine::columnar::barrier::in_memory::InMemoryConsumer;

/// Appends a complete cut of `group` at `epoch` (reading `in`-0 up to offset `epoch`).
fn append_cut(consumer: &mut InMemoryConsumer, partition: i32, group: &str, epoch: i64) {
    let cut = Cut {
        triggered_at: 10 * epoch,
        completed_at: 10 * epoch + 1,
        status: CutStatus::Complete,
        topics: vec![CutTopic {
            topic: "in".into(),
            partitions: vec![CutOffset {
                partition: 0,
                offset: epoch,
            }],
        }],
        missing: vec![],
    };
    let key = BarrierStateKey::cut(group, epoch).encode().unwrap();
    consumer.append(partition, key, Some(cut.encode().unwrap()));
}

fn reader(consumer: InMemoryConsumer, partitions: i32) -> CutReader<InMemoryConsumer> {
    CutReader::new(consumer, partitions, CutReaderOptions::default()).unwrap()
}

#[test]
fn constructor_rejects_no_partitions_no_idle_polls_and_no_topic() {
    let err = |partitions, options| {
        CutReader::new(InMemoryConsumer::new(true), partitions, options)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(0, CutReaderOptions::default()),
        "a cut reader needs at least one partition"
    );
    let no_idle = CutReaderOptions {
        idle_polls: 0,
        ..CutReaderOptions::default()
    };
    assert_eq!(err(1, no_idle), "a cut reader needs at least one idle poll");
    let no_topic = CutReaderOptions {
        topic: String::new(),
        ..CutReaderOptions::default()
    };
    assert_eq!(err(1, no_topic), "a cut reader needs a topic");
}

#[test]
fn first_read_assigns_every_partition_and_seeks_each_to_zero_once() {
    let mut consumer = InMemoryConsumer::new(true);
    append_cut(&mut consumer, 1, "audit", 1);
    let mut reader = reader(consumer, 2);
    reader.read().unwrap();
    reader.read().unwrap();
    let consumer = reader.consumer();
    let expected = vec![
        TopicPartition::new(BARRIER_STATE_TOPIC, 0),
        TopicPartition::new(BARRIER_STATE_TOPIC, 1),
    ];
    assert_eq!(consumer.assigned, expected);
    let seeks: Vec<_> = expected.into_iter().map(|tp| (tp, 0)).collect();
    assert_eq!(consumer.seeks, seeks);
}

#[test]
fn read_stops_at_the_captured_end_offsets_without_a_trailing_idle_poll() {
    let mut consumer = InMemoryConsumer::new(true);
    for epoch in 1..=3 {
        append_cut(&mut consumer, 1, "audit", epoch);
    }
    // One record per poll: three polls reach the end; no fourth, empty poll is needed.
    let mut reader = reader(consumer, 2);
    let cuts = reader.complete_cuts_after("audit", NO_EPOCH).unwrap();
    assert_eq!(cuts.iter().map(|c| c.epoch).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(reader.consumer().polls, 3);
}

#[test]
fn read_at_the_end_offsets_does_not_poll() {
    let mut reader = reader(InMemoryConsumer::new(true), 3);
    reader.read().unwrap();
    assert_eq!(reader.consumer().polls, 0);
}

#[test]
fn without_end_offsets_one_idle_poll_ends_the_read() {
    let mut consumer = InMemoryConsumer::new(false);
    append_cut(&mut consumer, 0, "audit", 1);
    append_cut(&mut consumer, 0, "audit", 2);
    let mut reader = reader(consumer, 1);
    assert_eq!(
        reader.latest_complete_cut("audit").unwrap().unwrap().epoch,
        2
    );
    assert_eq!(reader.consumer().polls, 3);
}

#[test]
fn idle_polls_option_sets_how_many_empty_polls_end_a_read() {
    let options = CutReaderOptions {
        idle_polls: 3,
        ..CutReaderOptions::default()
    };
    let mut reader = CutReader::new(InMemoryConsumer::new(false), 1, options).unwrap();
    reader.read().unwrap();
    assert_eq!(reader.consumer().polls, 3);
}

#[test]
fn a_slow_first_fetch_does_not_end_a_read_short_of_a_known_end() {
    let mut consumer = InMemoryConsumer::new(true);
    consumer.slow_polls = 8;
    append_cut(&mut consumer, 0, "audit", 1);
    let mut reader = reader(consumer, 1);
    assert_eq!(
        reader.latest_complete_cut("audit").unwrap().unwrap().epoch,
        1
    );
    assert_eq!(reader.consumer().polls, 9);
}

#[test]
fn a_gap_at_the_end_of_a_partition_is_waited_for_once_then_remembered() {
    let mut consumer = InMemoryConsumer::new(true);
    consumer.end_gap = 2;
    append_cut(&mut consumer, 0, "audit", 1);
    let options = CutReaderOptions {
        unreached_end_wait: Duration::from_secs(1),
        ..CutReaderOptions::default()
    };
    let mut reader = CutReader::new(consumer, 1, options).unwrap();
    assert_eq!(
        reader.latest_complete_cut("audit").unwrap().unwrap().epoch,
        1
    );
    // One poll brings the record, then 1 s of 250 ms empty polls gives up on the gap.
    assert_eq!(reader.consumer().polls, 5);
    reader.read().unwrap();
    assert_eq!(reader.consumer().polls, 5);
    // A new record moves the end: the next read fetches it and waits for the gap again.
    append_cut(reader.consumer_mut(), 0, "audit", 2);
    let cuts = reader.complete_cuts_after("audit", NO_EPOCH).unwrap();
    assert_eq!(cuts.iter().map(|c| c.epoch).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(reader.consumer().polls, 10);
}

#[test]
fn without_a_known_end_the_idle_rule_alone_ends_the_read() {
    let mut consumer = InMemoryConsumer::new(false);
    consumer.slow_polls = 1;
    append_cut(&mut consumer, 0, "audit", 1);
    let mut reader = reader(consumer, 1);
    assert!(reader.latest_complete_cut("audit").unwrap().is_none());
    assert_eq!(reader.consumer().polls, 1);
}

#[test]
fn later_reads_resume_and_pick_up_appended_cuts() {
    let mut consumer = InMemoryConsumer::new(true);
    append_cut(&mut consumer, 0, "audit", 1);
    let mut reader = reader(consumer, 1);
    assert_eq!(
        reader.latest_complete_cut("audit").unwrap().unwrap().epoch,
        1
    );
    append_cut(reader.consumer_mut(), 0, "audit", 2);
    let cuts = reader.complete_cuts_after("audit", NO_EPOCH).unwrap();
    assert_eq!(cuts.iter().map(|c| c.epoch).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(reader.consumer().seeks.len(), 1);
}

#[test]
fn malformed_record_fails_the_read_and_the_next_read_starts_over() {
    let mut consumer = InMemoryConsumer::new(true);
    append_cut(&mut consumer, 0, "audit", 1);
    let key = BarrierStateKey::cut("audit", 2).encode().unwrap();
    consumer.append(0, key, Some(vec![0, 0, 1]));
    let mut reader = reader(consumer, 1);
    let error = reader.read().unwrap_err();
    assert!(matches!(error, CutReadError::Malformed(_)));
    assert_eq!(
        error.to_string(),
        "malformed barrier state record at partition 0, offset 1: truncated barrier state cut value"
    );
    assert!(reader.log().all_cuts().is_empty());
    assert!(reader.read().is_err());
    assert_eq!(reader.consumer().seeks.len(), 2);
}

#[test]
fn consumer_failure_names_the_step_and_topic() {
    let mut consumer = InMemoryConsumer::new(false);
    consumer.fail_poll = true;
    let error = reader(consumer, 1).read().unwrap_err();
    assert_eq!(
        error.to_string(),
        "cut reader poll on __barrier_state failed: broker gone"
    );
}
