//! The decode-and-write side of the tail pipeline, on its own thread: takes the
//! arenas the poll side filled, filters, decodes per topic, routes failures (hold a
//! partition whose writer schema is pending, else fail, skip or dead-letter),
//! projects, writes, and hands each arena back for the next fetch.
//!
//! A held partition's records stay here, in fetch order: the ones of the failing
//! record on, then whatever of the partition the poll side still delivers before
//! its pause takes effect (later arenas). The poll side is told to pause the
//! partition and, once the held records are written, to resume it from the offset
//! after the last record it delivered — so nothing is fetched twice, nothing is
//! written twice, and a partition's rows keep their order.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use arrow::compute::filter_record_batch;
use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;

use crate::engine::columnar::batch::{BatchDecoder, RecordFailure, RecordPart};
use crate::engine::columnar::raw_batch::{RawBatch, RawSelection};
use crate::engine::columnar::record::Record;
use crate::engine::columnar::record_filter::RecordFilter;
use crate::engine::columnar::reserved::with_topic_column;
use crate::engine::columnar::reserved_types::to_typed;
use crate::engine::columnar::text_view::{TextView, text_view};
use crate::engine::topic_partition::TopicPartition;
use crate::io::batch_sink::SinkError;
use crate::ops::Error;
use crate::ops::tail::OnError;
use crate::ops::tail::dead_letter::DeadLetterSink;
use crate::ops::tail::handoff::{BATCH_BYTES, Report, Shared};
use crate::ops::tail::predicate::WherePredicate;
use crate::ops::tail::sink::TailSink;

/// One topic's rows of an arena (indices, fetch order).
type TopicRows<'b> = (&'b str, Vec<u32>);

/// How long the decode side waits for an arena before retrying held records.
const RETRY_EVERY: Duration = Duration::from_millis(20);

/// What the decode side does with the records it is given (the plan's part).
pub struct DecodeSettings {
    pub filter: RecordFilter,
    pub predicate: Option<WherePredicate>,
    pub columns: Vec<String>,
    pub max_records: Option<u64>,
    pub on_error: OnError,
    /// How long a writer schema may stay pending (`--timeout`).
    pub timeout: Duration,
    /// Group mode: report processed offsets for commits.
    pub report_offsets: bool,
    /// Most records decoded into one batch (`--batch-records`), held ones retried too.
    pub batch_records: usize,
    /// Add the `__topic` column to every decoded batch.
    pub topic_column: bool,
    /// Text outputs (NDJSON, table): how each topic's batches are shown.
    pub text_views: HashMap<String, TextView>,
    /// Arrow IPC and Parquet: write `__timestamp` and `__headers` typed.
    pub typed_reserved: bool,
}

/// The records of one partition waiting for a writer schema, since when, and why.
struct Held {
    records: Vec<Record>,
    since: Instant,
    why: String,
}

/// How processing stops early.
enum End {
    /// A normal end: the output's reader went away, or `--max-records` was reached.
    Quiet,
    Failed(Error),
}

impl From<Error> for End {
    fn from(e: Error) -> Self {
        End::Failed(e)
    }
}

/// The decode-and-write side: its settings, its output and what it has done.
pub struct DecodeSide {
    pub decoders: HashMap<String, BatchDecoder>,
    filter: RecordFilter,
    predicate: Option<WherePredicate>,
    columns: Vec<String>,
    max_records: Option<u64>,
    on_error: OnError,
    dead_letter: Option<Box<dyn DeadLetterSink>>,
    pub output: Box<dyn TailSink>,
    timeout: Duration,
    report_offsets: bool,
    batch_records: usize,
    topic_column: bool,
    text_views: HashMap<String, TextView>,
    typed_reserved: bool,
    pub records: u64,
    pub skipped: u64,
    pub dead_lettered: u64,
    /// The schema of the first batch written (a file with no rows still gets columns).
    pub first_schema: Option<SchemaRef>,
    held: BTreeMap<TopicPartition, Held>,
    /// Held records being retried are copied here.
    scratch: RawBatch,
}

impl DecodeSide {
    /// `dead_letter` is required by `OnError::DeadLetter` and unused otherwise.
    pub fn new(
        decoders: HashMap<String, BatchDecoder>,
        settings: DecodeSettings,
        dead_letter: Option<Box<dyn DeadLetterSink>>,
        output: Box<dyn TailSink>,
    ) -> Self {
        let DecodeSettings {
            filter,
            predicate,
            columns,
            max_records,
            on_error,
            timeout,
            report_offsets,
            batch_records,
            topic_column,
            text_views,
            typed_reserved,
        } = settings;
        DecodeSide {
            decoders,
            filter,
            predicate,
            columns,
            max_records,
            on_error,
            dead_letter,
            output,
            timeout,
            report_offsets,
            batch_records,
            topic_column,
            text_views,
            typed_reserved,
            records: 0,
            skipped: 0,
            dead_lettered: 0,
            first_schema: None,
            held: BTreeMap::new(),
            scratch: RawBatch::new(),
        }
    }

    /// Serves arenas until the poll side closes the hand-off (then writes what is still
    /// held, as its schemas arrive), aborts, or processing ends; returns the outcome.
    pub fn serve(
        &mut self,
        work: &Receiver<RawBatch>,
        free: &Sender<RawBatch>,
        reports: &Sender<Report>,
        shared: &Shared,
    ) -> crate::ops::Result<()> {
        let result = self.serve_until_end(work, free, reports, shared);
        shared.over.store(true, Ordering::SeqCst);
        if let Some(waker) = shared.wake_poll.get() {
            waker.wake();
        }
        match result {
            Ok(()) | Err(End::Quiet) => Ok(()),
            Err(End::Failed(e)) => Err(e),
        }
    }

    fn serve_until_end(
        &mut self,
        work: &Receiver<RawBatch>,
        free: &Sender<RawBatch>,
        reports: &Sender<Report>,
        shared: &Shared,
    ) -> Result<(), End> {
        let mut open = true;
        loop {
            if self.max_records.is_some_and(|n| self.records >= n) {
                return Ok(());
            }
            let got = if !open {
                None
            } else if self.held.is_empty() {
                work.recv().ok()
            } else {
                match work.recv_timeout(RETRY_EVERY) {
                    Ok(b) => Some(b),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => {
                        open = false;
                        None
                    }
                }
            };
            if got.is_none() && open && self.held.is_empty() {
                // `recv` failed: the poll side is done.
                open = false;
            }
            if shared.cancelled.load(Ordering::SeqCst) {
                return Err(Error::cancelled().into());
            }
            if shared.abort.load(Ordering::SeqCst) {
                return Ok(());
            }
            if !open && got.is_none() && self.held.is_empty() {
                return Ok(());
            }
            self.retry_held(reports, shared)?;
            match got {
                Some(batch) => {
                    let result = self.process(&batch, reports, shared, &HashMap::new());
                    // The poll side may have ended: then the arena is simply dropped.
                    let _ = free.send(batch);
                    result?;
                }
                // Only held records left, the poll side done: wait for their schemas.
                None if !open && !self.held.is_empty() => std::thread::sleep(RETRY_EVERY),
                None => {}
            }
        }
    }

    /// Held partitions whose pending record now decodes (or fails for good) are
    /// processed again, in front of anything newer.
    fn retry_held(&mut self, reports: &Sender<Report>, shared: &Shared) -> Result<(), End> {
        if self.held.is_empty() {
            return Ok(());
        }
        let mut retrying: HashMap<TopicPartition, Instant> = HashMap::new();
        let mut retried: Vec<Vec<Record>> = Vec::new();
        for (tp, mut held) in std::mem::take(&mut self.held) {
            if held.since.elapsed() > self.timeout {
                let offset = held.records.first().map(|r| r.offset).unwrap_or_default();
                return Err(Error::unreachable(format!(
                    "{}/{} offset {offset}: {}; still pending after {} (--timeout): check that the schema registry is reachable, or prewarm the id into --schema-cache",
                    tp.topic,
                    tp.partition,
                    held.why,
                    humantime_secs(self.timeout)
                ))
                .into());
            }
            // Still pending? Its first record alone tells: then the records stay held
            // as they are instead of being copied out and back every few milliseconds.
            let pending = match (held.records.first(), self.decoders.get_mut(&tp.topic)) {
                (Some(first), Some(decoder)) => decoder
                    .decode(&[first])
                    .err()
                    .filter(|f| f.error.is_retriable()),
                _ => None,
            };
            if let Some(failure) = pending {
                // The latest word on the fetch (its last failed attempt).
                held.why = failure.error.to_string();
                self.held.insert(tp, held);
                continue;
            }
            retrying.insert(tp, held.since);
            retried.push(held.records);
        }
        if retrying.is_empty() {
            return Ok(());
        }
        // In batches of at most --batch-records (and the byte limit), as if fetched now.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let mut result = Ok(());
        for r in retried.iter().flatten() {
            scratch.push_record(r);
            if scratch.len() >= self.batch_records || scratch.payload_bytes() >= BATCH_BYTES {
                result = self.process(&scratch, reports, shared, &retrying);
                scratch.clear();
                if result.is_err() {
                    break;
                }
            }
        }
        if result.is_ok() {
            result = self.process(&scratch, reports, shared, &retrying);
        }
        self.scratch = scratch;
        result?;
        for tp in retrying.into_keys() {
            if !self.held.contains_key(&tp) {
                let _ = reports.send(Report::Resume(tp));
            }
        }
        Ok(())
    }

    /// Decodes and writes one arena. `retrying`: partitions whose held records the
    /// arena holds (still paused; a new hold keeps the first one's clock).
    fn process(
        &mut self,
        batch: &RawBatch,
        reports: &Sender<Report>,
        shared: &Shared,
        retrying: &HashMap<TopicPartition, Instant>,
    ) -> Result<(), End> {
        if batch.is_empty() || self.max_records.is_some_and(|n| self.records >= n) {
            return Ok(());
        }
        let mut processed_next: HashMap<TopicPartition, i64> = HashMap::new();
        let (per_topic, filtered_next) = self.route(batch);
        let mut reached_max = false;
        'topics: for (topic, mut records) in per_topic {
            while !records.is_empty() {
                if self.max_records.is_some_and(|n| self.records >= n) {
                    reached_max = true;
                    break 'topics;
                }
                let decoder = self.decoders.get_mut(topic).expect("a decoder per topic");
                let selection = RawSelection {
                    batch,
                    rows: &records,
                };
                match decoder.decode_from(&selection) {
                    Ok(decoded) => {
                        let rows = decoded.num_rows();
                        let consumed = self.write_decoded(topic, decoded, shared)?;
                        // Rows are records one to one, except Arrow-IPC values (many rows
                        // each): of those, a batch cut short commits none.
                        let consumed = if consumed == rows {
                            records.len()
                        } else if rows == records.len() {
                            consumed
                        } else {
                            0
                        };
                        note_processed(batch, &records[..consumed], &mut processed_next);
                        break;
                    }
                    Err(failure) if failure.error.is_retriable() => {
                        records = self.hold(batch, records, &failure, reports, retrying);
                    }
                    Err(failure) => {
                        let bad = batch.get(records[failure.index] as usize).to_record();
                        self.reject(&bad, &failure)?;
                        records.remove(failure.index);
                        processed_next.insert(
                            TopicPartition::new(bad.topic, bad.partition),
                            bad.offset + 1,
                        );
                    }
                }
            }
        }
        if self.report_offsets {
            self.report_processed(processed_next, filtered_next, reports);
        }
        if reached_max {
            return Err(End::Quiet);
        }
        Ok(())
    }

    /// Splits an arena into rows per topic (in topic-name order, each in fetch
    /// order), leaving out the records the key/header/partition filter drops and
    /// queueing a held partition's later records behind its held ones. Also answers
    /// the offset after the last filtered record per partition, to be merged into
    /// the processed offsets only when the whole arena was gone through (a
    /// `--max-records` cut leaves later records unread).
    fn route<'b>(
        &mut self,
        batch: &'b RawBatch,
    ) -> (Vec<TopicRows<'b>>, HashMap<TopicPartition, i64>) {
        let mut filtered_next: HashMap<TopicPartition, i64> = HashMap::new();
        let mut by_topic: Vec<Vec<u32>> = vec![Vec::new(); batch.topic_count()];
        let filtering = !self.filter.is_empty();
        for i in 0..batch.len() {
            if filtering {
                let r = batch.get(i);
                if !self.filter.keeps_view(&r) {
                    filtered_next.insert(TopicPartition::new(r.topic, r.partition), r.offset + 1);
                    continue;
                }
            }
            if !self.held.is_empty() {
                let r = batch.get(i);
                if let Some(held) = self
                    .held
                    .iter_mut()
                    .find(
                        |(
                            TopicPartition {
                                topic: t,
                                partition: p,
                            },
                            _,
                        )| *p == r.partition && t == r.topic,
                    )
                    .map(|(_, h)| h)
                {
                    held.records.push(r.to_record());
                    continue;
                }
            }
            let rows = &mut by_topic[batch.position(i).0 as usize];
            if rows.is_empty() {
                rows.reserve(batch.len() - i);
            }
            rows.push(i as u32);
        }
        let mut per_topic: Vec<(&str, Vec<u32>)> = by_topic
            .into_iter()
            .enumerate()
            .filter(|(_, rows)| !rows.is_empty())
            .map(|(t, rows)| (batch.topic_name(t as u32), rows))
            .collect();
        per_topic.sort_by(|a, b| a.0.cmp(b.0));
        (per_topic, filtered_next)
    }

    /// The record at `failure` waits for its writer schema: holds its partition from
    /// that record on (asking the poll side to pause it, unless it is being retried
    /// and so still paused) and answers the topic's rows left to decode now.
    fn hold(
        &mut self,
        batch: &RawBatch,
        records: Vec<u32>,
        failure: &RecordFailure,
        reports: &Sender<Report>,
        retrying: &HashMap<TopicPartition, Instant>,
    ) -> Vec<u32> {
        let bad = batch.get(records[failure.index] as usize);
        let tp = TopicPartition::new(bad.topic, bad.partition);
        let from = bad.offset;
        let (moved, kept): (Vec<u32>, Vec<u32>) = records.into_iter().partition(|&row| {
            let r = batch.get(row as usize);
            r.partition == tp.partition && r.offset >= from
        });
        let moved = moved
            .into_iter()
            .map(|row| batch.get(row as usize).to_record());
        match self.held.get_mut(&tp) {
            Some(held) => held.records.extend(moved),
            None => {
                let since = match retrying.get(&tp) {
                    Some(&since) => since,
                    None => {
                        let _ = reports.send(Report::Pause(tp.clone()));
                        Instant::now()
                    }
                };
                self.held.insert(
                    tp,
                    Held {
                        records: moved.collect(),
                        since,
                        why: failure.error.to_string(),
                    },
                );
            }
        }
        kept
    }

    /// A record that cannot be decoded, as `--on-error` says: fail the tail, or
    /// skip it, or dead-letter it (either way it counts as processed).
    fn reject(&mut self, bad: &Record, failure: &RecordFailure) -> Result<(), End> {
        let part = match failure.part {
            RecordPart::Key => "key",
            RecordPart::Value => "value",
        };
        let message = format!(
            "cannot decode the {part} of {}/{} offset {}: {}",
            bad.topic, bad.partition, bad.offset, failure.error
        );
        match &self.on_error {
            OnError::Fail => return Err(Error::failure(message).into()),
            OnError::Skip => {
                tracing::warn!("skipping: {message}");
                self.skipped += 1;
            }
            OnError::DeadLetter(path) => {
                let dl = self.dead_letter.as_mut().expect("opened for this policy");
                dl.append(bad, &failure.error.to_string()).map_err(|e| {
                    Error::failure(format!(
                        "cannot write dead-letter file {}: {e}",
                        path.display()
                    ))
                })?;
                tracing::warn!("dead-lettered: {message}");
                self.dead_lettered += 1;
            }
        }
        Ok(())
    }

    /// Group mode: tells the poll side which offsets may be committed — those after
    /// the records written or rejected, and after the filtered ones when no
    /// `--max-records` cut stopped the arena — for partitions not held.
    fn report_processed(
        &self,
        mut processed_next: HashMap<TopicPartition, i64>,
        filtered_next: HashMap<TopicPartition, i64>,
        reports: &Sender<Report>,
    ) {
        if self.max_records.is_none_or(|n| self.records < n) {
            for (tp, next) in filtered_next {
                let at = processed_next.entry(tp).or_insert(next);
                *at = (*at).max(next);
            }
        }
        let done: Vec<(TopicPartition, i64)> = processed_next
            .into_iter()
            .filter(|(tp, _)| !self.held.contains_key(tp))
            .collect();
        if !done.is_empty() {
            let _ = reports.send(Report::Processed(done));
        }
    }

    /// Applies `--where`, the projection and `--max-records`, then writes. Answers how
    /// many of `decoded`'s rows, from the first, are done with (written or dropped by
    /// `--where`): all of them, unless `--max-records` cut the batch short, so that a
    /// group's commit never covers a record that was not written.
    fn write_decoded(
        &mut self,
        topic: &str,
        decoded: RecordBatch,
        shared: &Shared,
    ) -> Result<usize, End> {
        let input_rows = decoded.num_rows();
        // Before --where and --columns, which may name it.
        let decoded = match self.topic_column {
            true => with_topic_column(&decoded, topic).map_err(|e| {
                Error::failure(format!("topic {topic}: cannot add the __topic column: {e}"))
            })?,
            false => decoded,
        };
        let (decoded, mask) = match self.predicate.as_mut() {
            Some(p) => {
                let mask = p.mask(topic, &decoded)?;
                let kept = filter_record_batch(&decoded, &mask).map_err(|e| {
                    Error::failure(format!("topic {topic}: cannot filter the batch: {e}"))
                })?;
                (kept, Some(mask))
            }
            None => (decoded, None),
        };
        // `--where` saw the typed columns; the text view is only how rows are shown.
        let decoded = match self.text_views.get(topic) {
            Some(view) => text_view(&decoded, view)
                .map_err(|e| Error::failure(format!("topic {topic}: {e}")))?,
            None => decoded,
        };
        let decoded = project(&decoded, &self.columns)?;
        let decoded = if self.typed_reserved {
            to_typed(&decoded).map_err(|e| Error::failure(format!("topic {topic}: {e}")))?
        } else {
            decoded
        };
        let (decoded, consumed) = match self.max_records {
            Some(n) if self.records + decoded.num_rows() as u64 > n => {
                let limit = (n - self.records) as usize;
                let consumed = match &mask {
                    // Up to and including the source row of the last row written.
                    Some(mask) => (0..input_rows)
                        .filter(|&i| mask.is_valid(i) && mask.value(i))
                        .nth(limit.wrapping_sub(1))
                        .map_or(0, |i| i + 1),
                    None => limit,
                };
                (decoded.slice(0, limit), consumed)
            }
            _ => (decoded, input_rows),
        };
        if self.first_schema.is_none() {
            self.first_schema = Some(decoded.schema());
        }
        self.records += decoded.num_rows() as u64;
        shared.records.store(self.records, Ordering::Relaxed);
        // A batch --where emptied is not written (a table would print an empty frame).
        if decoded.num_rows() == 0 && self.predicate.is_some() {
            return Ok(consumed);
        }
        match self.output.write(&decoded) {
            Ok(()) => Ok(consumed),
            // The reader of stdout went away: a normal end.
            Err(SinkError::Closed) => Err(End::Quiet),
            Err(SinkError::Failed(m)) => Err(Error::failure(format!("topic {topic}: {m}")).into()),
        }
    }
}

/// The offset after the last of `rows` per partition. Records come in runs of one
/// partition, so the map is touched once per run, not per record.
fn note_processed(
    batch: &RawBatch,
    rows: &[u32],
    processed_next: &mut HashMap<TopicPartition, i64>,
) {
    let mut last: HashMap<(u32, i32), i64, foldhash::fast::RandomState> = HashMap::default();
    let mut previous: Option<(u32, i32, i64)> = None;
    for &row in rows {
        let r = batch.position(row as usize);
        if let Some(p) = previous
            && (p.1 != r.1 || p.0 != r.0)
        {
            last.insert((p.0, p.1), p.2 + 1);
        }
        previous = Some(r);
    }
    if let Some(p) = previous {
        last.insert((p.0, p.1), p.2 + 1);
    }
    for ((t, p), next) in last {
        processed_next.insert(TopicPartition::new(batch.topic_name(t), p), next);
    }
}

/// A duration as `--timeout` takes it (whole seconds, else milliseconds).
fn humantime_secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn project(batch: &RecordBatch, columns: &[String]) -> crate::ops::Result<RecordBatch> {
    if columns.is_empty() {
        return Ok(batch.clone());
    }
    let schema = batch.schema();
    let indices = columns
        .iter()
        .map(|c| {
            schema
                .index_of(c)
                .map_err(|_| Error::usage(format!("Arrow column does not exist: {c}")))
        })
        .collect::<crate::ops::Result<Vec<_>>>()?;
    batch
        .project(&indices)
        .map_err(|e| Error::failure(format!("cannot project columns: {e}")))
}

#[cfg(test)]
#[path = "decode_side_tests.rs"]
mod tests;
