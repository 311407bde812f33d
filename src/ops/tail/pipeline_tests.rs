//! The whole tail use case (`run_with`: positioning, both sides of the pipeline,
//! the finish) against fakes, no broker: a consumer over an in-memory log that
//! honours pause, resume-at-offset, offset stores and commits as librdkafka does;
//! a value codec whose writer schema is pending until the test lets it arrive; an
//! in-memory sink and dead-letter sink. Each test states the rule it holds.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_schema::SchemaRef;

use crate::engine::columnar::batch::BatchDecoder;
use crate::engine::columnar::codec::raw::StringDecoder;
use crate::engine::columnar::codec::{CodecError, PayloadColumns, ValueDecoder};
use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::columnar::record::Record;
use crate::engine::columnar::record_filter::{Glob, RecordFilter};
use crate::engine::topic_partition::{PartitionOffset, TopicPartition};
use crate::io::batch_sink::SinkError;
use crate::io::kafka::error::KafkaIoError;
use crate::ops::ErrorKind;
use crate::ops::tail::dead_letter::DeadLetterSink;
use crate::ops::tail::positions::{Positions, Start, Stop};
use crate::ops::tail::sink::TailSink;
use crate::ops::tail::source::{
    FetchSource, Fetched, FetchedMessage, PartitionControl, PositionLookup,
};
use crate::ops::tail::{
    Finished, Isolation, OnError, Parts, Progress, Rows, TailHost, TailPlan, run_with,
};

/// A value that stays undecodable (writer schema pending) until the schema arrives.
const PENDING: &[u8] = b"pending";
/// A value that never decodes.
const BAD: &[u8] = b"bad";

/// The value codec of the tests: UTF-8 text, except [`PENDING`] (retriable until
/// `arrived`) and [`BAD`] (a decode failure).
struct SchemaCodec {
    text: StringDecoder,
    arrived: Arc<AtomicBool>,
}

impl ValueDecoder for SchemaCodec {
    fn append(&mut self, value: Option<&[u8]>) -> Result<usize, CodecError> {
        match value {
            Some(PENDING) if !self.arrived.load(Ordering::SeqCst) => Err(CodecError::Pending(
                "writer schema for id 7 is pending fetch".into(),
            )),
            Some(BAD) => Err(CodecError::invalid("not a record of this schema")),
            other => self.text.append(other),
        }
    }
    fn finish(&mut self) -> Result<PayloadColumns, CodecError> {
        self.text.finish()
    }
    fn reset(&mut self) {
        self.text.reset()
    }
}

/// One stored record of the fake log.
#[derive(Clone)]
struct Stored {
    key: Vec<u8>,
    value: Vec<u8>,
}

/// The broker side of the fake consumer: per partition its log (offsets from 0),
/// the consumer's fetch position, pause state; what the consumer was told.
#[derive(Default)]
struct Log {
    logs: BTreeMap<TopicPartition, Vec<Stored>>,
    position: BTreeMap<TopicPartition, i64>,
    paused: BTreeSet<TopicPartition>,
    /// An EOF event is due when a partition's position reaches its end.
    eof_sent: BTreeSet<TopicPartition>,
    pauses: Vec<TopicPartition>,
    /// (partition, offset resumed at, position the consumer had reached).
    resumes: Vec<(TopicPartition, i64, i64)>,
    stored: BTreeMap<TopicPartition, i64>,
    commits: u32,
    /// Offsets the consumer delivered, per partition, in order (a re-delivery
    /// shows up twice).
    delivered: BTreeMap<TopicPartition, Vec<i64>>,
    subscribed: bool,
}

/// A consumer over [`Log`]: each poll delivers at most `chunk` records, taken
/// round-robin from the partitions not paused, as a fetch would; `resume` seeks.
struct FakeConsumer {
    log: Mutex<Log>,
    chunk: usize,
    group: bool,
    /// Records of this partition at or past this offset are fetched only once the
    /// partition was paused (or after 15 s): the pause then always comes while the
    /// partition still has records to deliver, and some records after the pending
    /// one arrive before it takes effect.
    gate: Option<(TopicPartition, i64)>,
    /// The schema arrives once the held partition was paused and this many polls
    /// went by.
    arrive_after_polls: Option<(Arc<AtomicBool>, usize)>,
    polls_since_pause: AtomicUsize,
    started: Instant,
}

impl FakeConsumer {
    fn new(logs: BTreeMap<TopicPartition, Vec<Stored>>, chunk: usize, group: bool) -> Self {
        FakeConsumer {
            log: Mutex::new(Log {
                logs,
                ..Default::default()
            }),
            chunk,
            group,
            gate: None,
            arrive_after_polls: None,
            polls_since_pause: AtomicUsize::new(0),
            started: Instant::now(),
        }
    }

    fn gated(&self, log: &Log, tp: &TopicPartition, offset: i64) -> bool {
        self.gate.as_ref().is_some_and(|(g, from)| {
            g == tp
                && offset >= *from
                && !log.pauses.contains(tp)
                && self.started.elapsed() < Duration::from_secs(15)
        })
    }

    /// The next things to deliver: records of unpaused partitions, then EOFs.
    fn take(&self, max: usize) -> Vec<(TopicPartition, Taken)> {
        let mut log = self.log.lock().unwrap();
        let mut out = Vec::new();
        let tps: Vec<TopicPartition> = log.position.keys().cloned().collect();
        let mut progressed = true;
        while out.len() < max && progressed {
            progressed = false;
            for tp in &tps {
                if out.len() >= max || log.paused.contains(tp) {
                    continue;
                }
                let at = log.position[tp];
                let end = log.logs[tp].len() as i64;
                if at < end && !self.gated(&log, tp, at) {
                    let record = log.logs[tp][at as usize].clone();
                    log.position.insert(tp.clone(), at + 1);
                    log.delivered.entry(tp.clone()).or_default().push(at);
                    log.eof_sent.remove(tp);
                    out.push((tp.clone(), Taken::Record(at, record)));
                    progressed = true;
                } else if at == end && !log.eof_sent.contains(tp) {
                    log.eof_sent.insert(tp.clone());
                    out.push((tp.clone(), Taken::End(end)));
                    progressed = true;
                }
            }
        }
        out
    }
}

/// What one poll takes from the log.
enum Taken {
    Record(i64, Stored),
    /// The partition's end offset was reached.
    End(i64),
}

struct FakeMessage<'a> {
    topic: &'a str,
    partition: i32,
    offset: i64,
    record: &'a Stored,
}

impl FetchedMessage for FakeMessage<'_> {
    fn topic_handle(&self) -> *const std::ffi::c_void {
        self.topic.as_ptr().cast()
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
        batch.push_indexed(
            topic,
            self.partition,
            self.offset,
            0,
            Some(&self.record.key),
            Some(&self.record.value),
            |_| {},
        );
    }
}

impl FetchSource for FakeConsumer {
    type Message<'m> = FakeMessage<'m>;

    fn poll_batch<F>(&mut self, _wait: Duration, max: usize, mut f: F) -> usize
    where
        F: FnMut(Result<Fetched<'_, FakeMessage<'_>>, KafkaIoError>) -> bool,
    {
        if let Some((arrived, after)) = &self.arrive_after_polls
            && !self.log.lock().unwrap().pauses.is_empty()
            && self.polls_since_pause.fetch_add(1, Ordering::SeqCst) >= *after
        {
            arrived.store(true, Ordering::SeqCst);
        }
        let taken = self.take(max.min(self.chunk));
        if taken.is_empty() {
            // Nothing ready: a real poll would wait; do not spin.
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut go = true;
        for (tp, item) in &taken {
            // Every taken item is handed over, even after `f` said stop.
            let answer = match item {
                Taken::Record(offset, record) => f(Ok(Fetched::Message(FakeMessage {
                    topic: &tp.topic,
                    partition: tp.partition,
                    offset: *offset,
                    record,
                }))),
                Taken::End(end) => f(Ok(Fetched::End {
                    topic: &tp.topic,
                    partition: tp.partition,
                    offset: *end,
                })),
            };
            go &= answer;
        }
        let _ = go;
        taken.len()
    }
    fn watermarks_quick(&self, topic: &str, partition: i32) -> Option<(i64, i64)> {
        self.watermarks(topic, partition).ok()
    }
}

impl PartitionControl for FakeConsumer {
    fn pause(&self, topic: &str, partition: i32) -> Result<(), KafkaIoError> {
        let mut log = self.log.lock().unwrap();
        let tp = TopicPartition::new(topic, partition);
        log.paused.insert(tp.clone());
        log.pauses.push(tp);
        Ok(())
    }
    fn resume(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        let mut log = self.log.lock().unwrap();
        let tp = TopicPartition::new(topic, partition);
        let reached = log.position.get(&tp).copied().unwrap_or_default();
        log.paused.remove(&tp);
        log.resumes.push((tp.clone(), next, reached));
        // A resume seeks: the fetch goes on from `next`, whatever was delivered.
        log.position.insert(tp.clone(), next);
        log.eof_sent.remove(&tp);
        Ok(())
    }
    fn store_offset(&self, topic: &str, partition: i32, next: i64) -> Result<(), KafkaIoError> {
        let mut log = self.log.lock().unwrap();
        let at = log
            .stored
            .entry(TopicPartition::new(topic, partition))
            .or_default();
        *at = (*at).max(next);
        Ok(())
    }
    fn commit_stored(&self) -> Result<(), KafkaIoError> {
        self.log.lock().unwrap().commits += 1;
        Ok(())
    }
    fn assignment(&self) -> Vec<TopicPartition> {
        let log = self.log.lock().unwrap();
        match self.group && log.subscribed {
            true => log.logs.keys().cloned().collect(),
            false => Vec::new(),
        }
    }
}

impl PositionLookup for FakeConsumer {
    fn partitions(&self, topic: &str) -> Result<Vec<i32>, KafkaIoError> {
        let log = self.log.lock().unwrap();
        Ok(log
            .logs
            .keys()
            .filter(|TopicPartition { topic: t, .. }| t == topic)
            .map(|TopicPartition { partition: p, .. }| *p)
            .collect())
    }
    fn watermarks(&self, topic: &str, partition: i32) -> Result<(i64, i64), KafkaIoError> {
        let log = self.log.lock().unwrap();
        let len = log.logs[&TopicPartition::new(topic, partition)].len() as i64;
        Ok((0, len))
    }
    fn offset_for_time(&self, _: &str, _: i32, _: i64) -> Result<Option<i64>, KafkaIoError> {
        Ok(None)
    }
    fn assign(&mut self, at: &[PartitionOffset]) -> Result<(), KafkaIoError> {
        let mut log = self.log.lock().unwrap();
        for at in at {
            log.position.insert(at.tp.clone(), at.offset);
        }
        Ok(())
    }
    fn subscribe(&self, _topics: &[String]) -> Result<(), KafkaIoError> {
        // No committed offsets: every partition starts at its log start.
        let mut log = self.log.lock().unwrap();
        log.subscribed = true;
        let tps: Vec<TopicPartition> = log.logs.keys().cloned().collect();
        for tp in tps {
            log.position.insert(tp, 0);
        }
        Ok(())
    }
}

/// Batches kept in memory; `finished` once the tail published its output.
#[derive(Clone, Default)]
struct MemorySink {
    batches: Arc<Mutex<Vec<RecordBatch>>>,
    finished: Arc<AtomicBool>,
}

impl TailSink for MemorySink {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        self.batches.lock().unwrap().push(batch.clone());
        Ok(())
    }
    fn finish(
        self: Box<Self>,
        _fallback: &SchemaRef,
    ) -> Result<Vec<std::path::PathBuf>, SinkError> {
        self.finished.store(true, Ordering::SeqCst);
        Ok(Vec::new())
    }
}

impl MemorySink {
    /// (topic, partition, offset, value) of every row written, in write order.
    fn rows(&self) -> Vec<(String, i32, i64, String)> {
        let mut out = Vec::new();
        for batch in self.batches.lock().unwrap().iter() {
            let topics = arrow::compute::cast(
                batch.column_by_name("__topic").unwrap(),
                &arrow_schema::DataType::Utf8,
            )
            .unwrap();
            let partitions = batch.column_by_name("__partition").unwrap();
            let offsets = batch.column_by_name("__offset").unwrap();
            let values = batch.column_by_name("value").unwrap();
            for i in 0..batch.num_rows() {
                out.push((
                    topics.as_string::<i32>().value(i).to_owned(),
                    partitions.as_primitive::<Int32Type>().value(i),
                    offsets.as_primitive::<Int64Type>().value(i),
                    values.as_string::<i32>().value(i).to_owned(),
                ));
            }
        }
        out
    }
}

/// Dead letters kept in memory: (topic, partition, offset, value, message).
#[derive(Clone, Default)]
struct MemoryDeadLetters(Arc<Mutex<Vec<DeadLetter>>>);

/// (topic, partition, offset, value, message).
type DeadLetter = (String, i32, i64, Vec<u8>, String);

impl DeadLetterSink for MemoryDeadLetters {
    fn append(&mut self, r: &Record, message: &str) -> std::io::Result<()> {
        self.0.lock().unwrap().push((
            r.topic.clone(),
            r.partition,
            r.offset,
            r.value.clone().unwrap_or_default(),
            message.to_owned(),
        ));
        Ok(())
    }
}

/// No signals, no progress line.
struct QuietHost;

impl TailHost for QuietHost {
    fn cooperate(&self, _cancelled: Arc<AtomicBool>) {}
    fn progress(&self) -> Option<Box<dyn Progress>> {
        None
    }
}

/// A log of `n` records per partition; `value(topic, partition, offset)` and the
/// key `keep` (or `drop` where `drop_key` says so).
fn logs(
    partitions: &[(&str, i32, i64)],
    value: impl Fn(&str, i32, i64) -> Vec<u8>,
    drop_key: impl Fn(&str, i32, i64) -> bool,
) -> BTreeMap<TopicPartition, Vec<Stored>> {
    partitions
        .iter()
        .map(|&(t, p, n)| {
            let records = (0..n)
                .map(|o| Stored {
                    key: if drop_key(t, p, o) { b"drop" } else { b"keep" }.to_vec(),
                    value: value(t, p, o),
                })
                .collect();
            (TopicPartition::new(t, p), records)
        })
        .collect()
}

fn text(t: &str, p: i32, o: i64) -> Vec<u8> {
    format!("{t}/{p}/{o}").into_bytes()
}

fn plan(topics: &[&str], group: bool, max_records: Option<u64>, on_error: OnError) -> TailPlan {
    TailPlan {
        topics: topics.iter().map(|t| t.to_string()).collect(),
        topic_column: true,
        partitions: Vec::new(),
        positions: Positions {
            start: Start::Beginning,
            stop: Stop::End,
        },
        max_records,
        group: group.then(|| "g".to_owned()),
        isolation: Isolation::ReadUncommitted,
        filter: RecordFilter::default(),
        predicate: None,
        columns: Vec::new(),
        key_specs: Vec::new(),
        value_specs: Vec::new(),
        rows: Rows::Binary {
            typed_reserved: false,
        },
        on_error,
        batch_records: 10_000,
    }
}

/// What one tail did.
struct Tailed {
    finished: Finished,
    sink: MemorySink,
    dead: MemoryDeadLetters,
    consumer: FakeConsumer,
}

fn tail(mut consumer: FakeConsumer, plan: TailPlan, arrived: Arc<AtomicBool>) -> Tailed {
    let sink = MemorySink::default();
    let dead = MemoryDeadLetters::default();
    let decoders: HashMap<String, BatchDecoder> = plan
        .topics
        .iter()
        .map(|t| {
            let codec = SchemaCodec {
                text: StringDecoder::default(),
                arrived: arrived.clone(),
            };
            (t.clone(), BatchDecoder::new(None, Box::new(codec)))
        })
        .collect();
    let dead_letter = matches!(plan.on_error, OnError::DeadLetter(_))
        .then(|| Box::new(dead.clone()) as Box<dyn DeadLetterSink>);
    let parts = Parts {
        decoders,
        dead_letter,
        sink: Box::new(sink.clone()),
        host: &QuietHost,
        timeout: Duration::from_secs(20),
    };
    let finished = run_with(&mut consumer, plan, parts).expect("the pipeline runs");
    Tailed {
        finished,
        sink,
        dead,
        consumer,
    }
}

fn offsets_of(rows: &[(String, i32, i64, String)], topic: &str, partition: i32) -> Vec<i64> {
    rows.iter()
        .filter(|r| r.0 == topic && r.1 == partition)
        .map(|r| r.2)
        .collect()
}

/// Holds: the record at t/0 offset 3 waits for its writer schema. Its partition is
/// paused, the records from it on (those fetched before the pause took effect
/// included) are held and come out in fetch order once the schema arrives, the
/// partition resumes at the offset after the last record the consumer delivered —
/// so nothing is fetched or written twice and nothing is lost — and the other
/// partition flows meanwhile.
#[test]
fn a_pending_schema_holds_its_partition_then_writes_it_in_order_and_resumes_after_it() {
    let arrived = Arc::new(AtomicBool::new(false));
    let value = |t: &str, p: i32, o: i64| match (p, o) {
        (0, 3) => PENDING.to_vec(),
        _ => text(t, p, o),
    };
    let tp0: TopicPartition = TopicPartition::new("t", 0);
    let mut consumer = FakeConsumer::new(
        logs(&[("t", 0, 12), ("t", 1, 9)], value, |_, _, _| false),
        2,
        false,
    );
    consumer.gate = Some((tp0.clone(), 6));
    consumer.arrive_after_polls = Some((arrived.clone(), 20));
    let t = tail(consumer, plan(&["t"], false, None, OnError::Fail), arrived);
    t.finished.outcome.as_ref().expect("the tail succeeds");
    let rows = t.sink.rows();
    assert_eq!(
        offsets_of(&rows, "t", 0),
        (0..12).collect::<Vec<_>>(),
        "each record once, in order"
    );
    assert_eq!(offsets_of(&rows, "t", 1), (0..9).collect::<Vec<_>>());
    assert_eq!(
        rows.iter().find(|r| r.1 == 0 && r.2 == 3).unwrap().3,
        "pending"
    );
    assert_eq!(t.finished.summary.records, 21);
    let log = t.consumer.log.lock().unwrap();
    assert_eq!(
        log.pauses,
        vec![tp0.clone()],
        "the held partition is paused, once"
    );
    assert_eq!(log.resumes.len(), 1, "and resumed once");
    let (tp, next, reached) = log.resumes[0].clone();
    assert_eq!(tp, tp0);
    assert_eq!(
        next, reached,
        "resumed right after the last delivered record"
    );
    assert!(
        next > 3,
        "records after the pending one were delivered before the pause"
    );
    let d = &log.delivered[&tp0];
    assert_eq!(d, &(0..12).collect::<Vec<_>>(), "nothing fetched twice");
    assert!(t.sink.finished.load(Ordering::SeqCst));
}

/// `--max-records N`: exactly N rows, cut across batches of mixed partitions of two
/// topics; in group mode the commit covers exactly the rows written, per
/// topic-partition, and is made.
#[test]
fn max_records_cuts_exactly_and_the_group_commits_only_what_was_written() {
    let parts = [("a", 0, 5), ("a", 1, 4), ("b", 0, 6), ("b", 2, 0)];
    for n in [0u64, 1, 2, 3, 7, 11, 15, 40] {
        let consumer = FakeConsumer::new(logs(&parts, text, |_, _, _| false), 3, true);
        let arrived = Arc::new(AtomicBool::new(true));
        let t = tail(
            consumer,
            plan(&["a", "b"], true, Some(n), OnError::Fail),
            arrived,
        );
        t.finished.outcome.as_ref().expect("the tail succeeds");
        let rows = t.sink.rows();
        assert_eq!(rows.len() as u64, n.min(15), "-n {n}");
        assert_eq!(t.finished.summary.records, n.min(15));
        let mut written: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        for (topic, p, o, _) in &rows {
            let at = written
                .entry(TopicPartition::new(topic.clone(), *p))
                .or_default();
            assert_eq!(*at, *o, "-n {n}: {topic}/{p} written in order, no gap");
            *at = o + 1;
        }
        let log = t.consumer.log.lock().unwrap();
        assert_eq!(log.stored, written, "-n {n}: stored offsets = rows written");
        assert_eq!(log.commits, 1, "-n {n}: committed once at the end");
    }
}

/// Group commits with a key filter: records the filter drops count as processed in
/// a batch gone through whole (the partition's last record is filtered, its offset
/// is committed past), but a `--max-records` cut leaves filtered records after the
/// last written row uncommitted.
#[test]
fn a_group_commits_filtered_records_only_of_a_batch_not_cut() {
    let drop_key = |_: &str, p: i32, o: i64| p == 0 && (o % 2 == 1);
    let mut whole = plan(&["t"], true, None, OnError::Fail);
    whole.filter = RecordFilter {
        key: Some(Glob::new("keep").unwrap()),
        ..Default::default()
    };
    let consumer = FakeConsumer::new(logs(&[("t", 0, 6), ("t", 1, 3)], text, drop_key), 4, true);
    let t = tail(consumer, whole, Arc::new(AtomicBool::new(true)));
    t.finished.outcome.as_ref().unwrap();
    assert_eq!(offsets_of(&t.sink.rows(), "t", 0), vec![0, 2, 4]);
    let log = t.consumer.log.lock().unwrap();
    assert_eq!(
        log.stored[&TopicPartition::new("t", 0)],
        6,
        "offset 5 was filtered, gone through"
    );
    assert_eq!(log.stored[&TopicPartition::new("t", 1)], 3);
    drop(log);

    let mut cut = plan(&["t"], true, Some(1), OnError::Fail);
    cut.filter = RecordFilter {
        key: Some(Glob::new("keep").unwrap()),
        ..Default::default()
    };
    let consumer = FakeConsumer::new(logs(&[("t", 0, 6)], text, drop_key), 4, true);
    let t = tail(consumer, cut, Arc::new(AtomicBool::new(true)));
    t.finished.outcome.as_ref().unwrap();
    assert_eq!(offsets_of(&t.sink.rows(), "t", 0), vec![0]);
    let log = t.consumer.log.lock().unwrap();
    assert_eq!(
        log.stored.get(&TopicPartition::new("t", 0)),
        Some(&1),
        "only the written record; the filtered offset 1 after it stays uncommitted"
    );
}

/// `--on-error`: a record that fails to decode goes to the dead-letter sink with its
/// topic, partition, offset and bytes (and is committed past), or is skipped and
/// counted, or fails the tail naming it — then nothing is published or committed.
#[test]
fn undecodable_records_are_dead_lettered_skipped_or_fail_the_tail() {
    let value = |t: &str, p: i32, o: i64| match (p, o) {
        (1, 2) | (0, 4) => BAD.to_vec(),
        _ => text(t, p, o),
    };
    let data = || logs(&[("t", 0, 6), ("t", 1, 5)], value, |_, _, _| false);

    let path = std::path::PathBuf::from("dead.ndjson");
    let t = tail(
        FakeConsumer::new(data(), 3, true),
        plan(&["t"], true, None, OnError::DeadLetter(path)),
        Arc::new(AtomicBool::new(true)),
    );
    t.finished.outcome.as_ref().unwrap();
    let mut dead = t.dead.0.lock().unwrap().clone();
    dead.sort();
    assert_eq!(dead.len(), 2);
    assert_eq!((dead[0].0.as_str(), dead[0].1, dead[0].2), ("t", 0, 4));
    assert_eq!((dead[1].0.as_str(), dead[1].1, dead[1].2), ("t", 1, 2));
    assert!(
        dead.iter()
            .all(|d| d.3 == BAD && d.4.contains("not a record"))
    );
    let rows = t.sink.rows();
    assert_eq!(offsets_of(&rows, "t", 0), vec![0, 1, 2, 3, 5]);
    assert_eq!(offsets_of(&rows, "t", 1), vec![0, 1, 3, 4]);
    assert_eq!(t.finished.summary.dead_lettered, 2);
    assert_eq!(t.finished.summary.skipped, 0);
    let log = t.consumer.log.lock().unwrap();
    assert_eq!(log.stored[&TopicPartition::new("t", 0)], 6);
    assert_eq!(log.stored[&TopicPartition::new("t", 1)], 5);
    drop(log);

    let t = tail(
        FakeConsumer::new(data(), 3, false),
        plan(&["t"], false, None, OnError::Skip),
        Arc::new(AtomicBool::new(true)),
    );
    t.finished.outcome.as_ref().unwrap();
    assert_eq!(t.finished.summary.skipped, 2);
    assert_eq!(t.finished.summary.dead_lettered, 0);
    assert!(t.dead.0.lock().unwrap().is_empty());
    assert_eq!(t.sink.rows().len(), 9);

    let t = tail(
        FakeConsumer::new(data(), 3, true),
        plan(&["t"], true, None, OnError::Fail),
        Arc::new(AtomicBool::new(true)),
    );
    let e = t.finished.outcome.as_ref().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failure);
    assert!(
        e.message.starts_with("cannot decode the value of t/")
            && (e.message.contains("t/0 offset 4") || e.message.contains("t/1 offset 2")),
        "{}",
        e.message
    );
    assert!(
        !t.sink.finished.load(Ordering::SeqCst),
        "a failed tail publishes nothing"
    );
    assert_eq!(t.consumer.log.lock().unwrap().commits, 0, "nor commits");
}
