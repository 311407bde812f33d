//! Pipelined at-least-once rounds: offsets are committed (asynchronously) only
//! once every output of their round and of every earlier round is acknowledged;
//! a failed delivery rolls back every round in flight; a revoke and a close wait
//! for the acknowledgements and commit synchronously.

use super::*;

/// Records commits apart by how they were made.
#[derive(Default)]
struct Consumer {
    polls: Vec<Vec<Record>>,
    sync: Vec<BTreeMap<TopicPartition, i64>>,
    asynchronous: Vec<BTreeMap<TopicPartition, i64>>,
    seeks: Vec<(TopicPartition, i64)>,
    failed_async: bool,
}

impl super::Consumer for Consumer {
    type GroupMetadata = ();

    fn poll(&mut self, _timeout: Duration) -> Result<Vec<Record>, RunnerError> {
        Ok(if self.polls.is_empty() {
            Vec::new()
        } else {
            self.polls.remove(0)
        })
    }
    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError> {
        self.sync.push(offsets.clone());
        Ok(())
    }
    fn commit_async(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), RunnerError> {
        self.asynchronous.push(offsets.clone());
        Ok(())
    }
    fn commit_failed(&mut self) -> bool {
        std::mem::take(&mut self.failed_async)
    }
    fn assign(&mut self, _tps: &[TopicPartition]) -> Result<(), RunnerError> {
        Ok(())
    }
    fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), RunnerError> {
        self.seeks.push((tp.clone(), offset));
        Ok(())
    }
}

/// Acknowledges sealed batches only when told to (or on flush).
#[derive(Default)]
struct Producer {
    sent: Vec<(String, OutRecord)>,
    sealed: u64,
    acknowledged: u64,
    /// The next acknowledgement check (or flush) reports this failed delivery.
    failure: Option<String>,
    flushes: usize,
}

impl super::Producer for Producer {
    type GroupMetadata = ();

    fn send(&mut self, topic: &str, record: &OutRecord) -> Result<(), RunnerError> {
        self.sent.push((topic.to_owned(), record.clone()));
        Ok(())
    }
    fn flush(&mut self) -> Result<(), RunnerError> {
        self.flushes += 1;
        if let Some(failure) = self.failure.take() {
            return Err(RunnerError::new(failure));
        }
        self.acknowledged = self.sealed;
        Ok(())
    }
    fn seal(&mut self) -> Result<u64, RunnerError> {
        self.sealed += 1;
        Ok(self.sealed)
    }
    fn acknowledged(&mut self) -> Result<u64, RunnerError> {
        match self.failure.take() {
            Some(failure) => Err(RunnerError::new(failure)),
            None => Ok(self.acknowledged),
        }
    }
}

fn pipelined() -> GroupRunner<Consumer, Producer, FakeStore> {
    GroupRunner::new(
        topology(Arc::new(IpcValueCodec)),
        Consumer::default(),
        Producer::default(),
        FakeStore::default(),
        ErrorPolicy::Fail,
    )
}

fn in0(offset: i64) -> BTreeMap<TopicPartition, i64> {
    BTreeMap::from([(TopicPartition::new("in", 0), offset)])
}

fn totals(sent: &[(String, OutRecord)]) -> Vec<Option<i64>> {
    let out = sent.iter().rev().find(|(t, _)| t == "out").unwrap();
    let batch = ipc::read_batches(out.1.value.as_deref().unwrap())
        .unwrap()
        .1
        .remove(0);
    crate::engine::columnar::ops::testing::int64s(&batch, "total")
}

#[test]
fn a_round_is_committed_only_after_its_outputs_are_acknowledged_and_without_waiting() {
    let mut r = pipelined();
    r.consumer.polls = vec![vec![record(orders(&["a"], &[5]), 0, 0)]];
    assert_eq!(r.run_once().unwrap(), BTreeMap::new());
    assert_eq!(r.producer.sent.len(), 2, "sent before any acknowledgement");
    assert!(r.consumer.sync.is_empty() && r.consumer.asynchronous.is_empty());
    assert_eq!(r.producer.flushes, 0, "a round never waits for its acks");

    r.producer.acknowledged = 1;
    assert_eq!(r.run_once().unwrap(), in0(1));
    assert_eq!(r.consumer.asynchronous, [in0(1)]);
    assert!(r.consumer.sync.is_empty());
    assert_eq!(
        r.run_once().unwrap(),
        BTreeMap::new(),
        "nothing new: no second commit"
    );
    assert_eq!(r.consumer.asynchronous.len(), 1);
}

#[test]
fn only_rounds_up_to_the_acknowledged_batch_are_committed() {
    let mut r = pipelined();
    r.consumer.polls = vec![
        vec![record(orders(&["a"], &[5]), 0, 0)],
        vec![record(orders(&["a"], &[6]), 0, 1)],
        vec![record(orders(&["b"], &[7]), 1, 0)],
    ];
    for _ in 0..3 {
        r.run_once().unwrap();
    }
    r.producer.acknowledged = 1;
    assert_eq!(r.run_once().unwrap(), in0(1));
    r.producer.acknowledged = 3;
    let both = BTreeMap::from([
        (TopicPartition::new("in", 0), 2),
        (TopicPartition::new("in", 1), 1),
    ]);
    assert_eq!(r.run_once().unwrap(), both);
    assert_eq!(r.consumer.asynchronous, [in0(1), both]);
}

#[test]
fn a_failed_delivery_rolls_back_every_round_in_flight_and_rewinds_to_the_first() {
    let mut r = pipelined();
    r.consumer.polls = vec![
        vec![record(orders(&["a"], &[5]), 0, 0)],
        vec![record(orders(&["a"], &[6]), 0, 1)],
    ];
    r.run_once().unwrap();
    r.producer.acknowledged = 1;
    r.run_once().unwrap();
    assert_eq!(r.consumer.asynchronous, [in0(1)]);
    r.producer.failure = Some("cannot write to out: broker down".into());
    let err = r.run_once().unwrap_err();
    assert!(
        !err.retriable && err.message.contains("broker down"),
        "{err}"
    );
    assert_eq!(r.consumer.seeks, [(TopicPartition::new("in", 0), 1)]);
    assert_eq!(
        r.consumer.asynchronous,
        [in0(1)],
        "offset 2 never committed"
    );

    r.consumer.polls = vec![vec![record(orders(&["a"], &[6]), 0, 1)]];
    r.run_once().unwrap();
    assert_eq!(
        totals(&r.producer.sent),
        [Some(11)],
        "the state holds the acknowledged round only"
    );
}

#[test]
fn a_revoke_and_a_close_wait_for_the_acknowledgements_and_commit_synchronously() {
    let mut r = pipelined();
    let tp = TopicPartition::new("in", 0);
    r.on_assigned(std::slice::from_ref(&tp));
    r.consumer.polls = vec![vec![record(orders(&["a"], &[5]), 0, 0)]];
    r.run_once().unwrap();
    r.on_revoked(std::slice::from_ref(&tp));
    assert_eq!(r.producer.flushes, 1);
    assert_eq!(r.consumer.sync, [in0(1)]);
    assert!(r.consumer.asynchronous.is_empty());

    r.on_assigned(std::slice::from_ref(&tp));
    r.consumer.polls = vec![vec![record(orders(&["a"], &[1]), 0, 1)]];
    r.run_once().unwrap();
    r.close();
    assert_eq!(r.consumer.sync, [in0(1), in0(2)]);
}

#[test]
fn a_failed_asynchronous_commit_is_made_again() {
    let mut r = pipelined();
    r.consumer.polls = vec![vec![record(orders(&["a"], &[5]), 0, 0)]];
    r.producer.acknowledged = 1;
    r.run_once().unwrap();
    r.consumer.failed_async = true;
    r.run_once().unwrap();
    assert_eq!(r.consumer.asynchronous, [in0(1), in0(1)]);
}

#[test]
fn too_many_rounds_in_flight_wait_for_their_acknowledgements() {
    let mut r = pipelined();
    r.max_in_flight = 2;
    r.consumer.polls = (0..3)
        .map(|o| vec![record(orders(&["a"], &[1]), 0, o)])
        .collect();
    r.run_once().unwrap();
    r.run_once().unwrap();
    assert_eq!(r.producer.flushes, 0);
    assert_eq!(r.run_once().unwrap(), in0(3));
    assert_eq!(r.producer.flushes, 1);
}

#[test]
fn per_round_state_saves_keep_the_synchronous_round() {
    let mut r = pipelined();
    r.save_each_round = true;
    r.consumer.polls = vec![vec![record(orders(&["a"], &[5]), 0, 0)]];
    assert_eq!(r.run_once().unwrap(), in0(1));
    assert_eq!(r.consumer.sync, [in0(1)]);
    assert_eq!(r.producer.flushes, 1);
}

#[test]
fn a_lost_partition_is_never_committed_nor_rewound_from_its_rounds_in_flight() {
    let mut r = pipelined();
    let (lost, kept) = (TopicPartition::new("in", 0), TopicPartition::new("in", 1));
    r.on_assigned(&[lost.clone(), kept.clone()]);
    r.consumer.polls = vec![vec![
        record(orders(&["a"], &[5]), 0, 0),
        record(orders(&["b"], &[7]), 1, 0),
    ]];
    r.run_once().unwrap();
    r.on_lost(std::slice::from_ref(&lost));
    r.producer.failure = Some("cannot write to out: broker down".into());
    r.run_once().unwrap_err();
    assert_eq!(r.consumer.seeks, [(kept.clone(), 0)]);
    assert!(
        !r.topology.has_partition(0),
        "the lost partition stays released"
    );
    r.close();
    assert!(r.consumer.sync.iter().all(|c| !c.contains_key(&lost)));
}
