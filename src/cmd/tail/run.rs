//! The tail loop: resolve positions, poll a batch, filter, decode per topic, route
//! failures (hold a partition whose writer schema is pending, else fail, skip or
//! dead-letter), project, write, track stops, report progress; on Ctrl-C or any
//! stop, close the output properly.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::cmd::exit::{CliError, CliResult};
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::finish_stdout;
use crate::cmd::schema_cache::decoding_cache;
use crate::cmd::tail::dead_letter::DeadLetterFile;
use crate::cmd::tail::formats::{self, FormatSpec};
use crate::cmd::tail::outage::{Outage, round_failure};
use crate::cmd::tail::positions::{Positions, Start, Stop};
use crate::cmd::tail::predicate::WherePredicate;
use crate::cmd::tail::{OnError, OutputFormat, OutputPlan, table};
use crate::engine::columnar::batch::{BatchDecoder, RecordPart};
use crate::engine::columnar::raw_batch::{RawBatch, RawSelection};
use crate::engine::columnar::record::Record;
use crate::engine::columnar::record_filter::RecordFilter;
use crate::engine::columnar::reserved::reserved_fields;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::io::batch_sink::{BatchSink, SinkError, SinkOptions};
use crate::io::kafka::auth_failure;
use crate::io::kafka::tail_consumer::{Polled, TailConsumer, TailConsumerOptions};

/// Largest number of value bytes decoded into one batch.
const BATCH_BYTES: usize = 16 << 20;

/// Most messages taken from the client in one call.
const POLL_CHUNK: usize = 1000;

/// Everything `tail` was asked to do, validated.
pub struct TailPlan {
    pub topics: Vec<String>,
    pub partitions: Vec<i32>,
    pub positions: Positions,
    pub max_records: Option<u64>,
    pub group: Option<String>,
    pub isolation: String,
    pub filter: RecordFilter,
    /// `--where`: rows of the decoded batches to keep.
    pub predicate: Option<WherePredicate>,
    pub columns: Vec<String>,
    pub key_specs: Vec<FormatSpec>,
    pub value_specs: Vec<FormatSpec>,
    pub output: OutputPlan,
    pub row_group_size: usize,
    pub rotate_rows: Option<u64>,
    pub rotate_bytes: Option<u64>,
    pub on_error: OnError,
    pub batch_records: usize,
    /// A `schema prewarm --write-cache` file seeding the schema cache.
    pub schema_cache: Option<std::path::PathBuf>,
    /// Print the summary (off when another command drives the tail, e.g. the demo).
    pub report: bool,
}

type Tp = (String, i32);

/// Sets the flag on Ctrl-C or SIGTERM.
fn watch_signals(flag: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("tail-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let Ok(mut term) =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                else {
                    return;
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {},
                    _ = term.recv() => {},
                }
            });
            flag.store(true, Ordering::SeqCst);
        });
}

/// A map keyed by partition, hashed cheaply (looked up per run of records).
type TpMap<V> = HashMap<Tp, V, foldhash::fast::RandomState>;

/// Where each assigned partition stands relative to its stop.
#[derive(Default)]
struct Stops {
    /// Exclusive stop offset per partition (bounded reads only).
    stop: TpMap<i64>,
    /// The stop is the end captured at start: a partition-EOF event also reaches it.
    stop_is_end: bool,
    done: BTreeSet<Tp>,
    /// Next offset to fetch per partition (last received + 1).
    next: TpMap<i64>,
}

impl Stops {
    fn bounded(&self) -> bool {
        !self.stop.is_empty() || self.stop_is_end
    }

    /// Records arrive in runs of one partition: its stop is looked up once per run.
    fn begin_run(&self, tp: Tp) -> Run {
        Run {
            stop: self.stop.get(&tp).copied(),
            tp,
            next: None,
            handle: std::ptr::null(),
            topic: 0,
        }
    }

    /// Takes record `offset` of the run's partition; `false` when it lies beyond the stop.
    #[inline]
    fn observe(&mut self, run: &mut Run, offset: i64) -> bool {
        if run.stop.is_some_and(|s| offset >= s) {
            self.done.insert(run.tp.clone());
            return false;
        }
        run.next = Some(offset + 1);
        if run.stop.is_some_and(|s| offset + 1 >= s) {
            self.done.insert(run.tp.clone());
        }
        true
    }

    /// Records where the run's partition stands once its run ends.
    fn end_run(&mut self, run: Run) {
        if let Some(next) = run.next {
            match self.next.get_mut(&run.tp) {
                Some(n) => *n = next,
                None => {
                    self.next.insert(run.tp, next);
                }
            }
        }
    }
}

/// The partition whose records are arriving, its stop, and its next offset so far.
struct Run {
    tp: Tp,
    stop: Option<i64>,
    next: Option<i64>,
    /// The client's topic handle of the run's messages.
    handle: *const std::ffi::c_void,
    /// The topic's number in the batch.
    topic: u32,
}

/// Counters for the progress line and the summary.
#[derive(Default)]
struct Counters {
    records: u64,
    bytes: u64,
    skipped: u64,
    dead_lettered: u64,
}

/// The records of one partition waiting for a writer schema, since when, and why.
struct Held {
    records: Vec<Record>,
    since: Instant,
    why: String,
}

/// A duration as `--timeout` takes it (whole seconds, else milliseconds).
fn humantime_secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

enum Output {
    Data(Box<BatchSink>),
    Table,
}

pub fn run(global: &GlobalArgs, mut plan: TailPlan) -> CliResult<()> {
    let settings = global.connection.kafka_settings("tail")?;
    let timeout = global.connection.timeout;
    // The cache file is read before the broker is touched: a bad file fails fast.
    let schemas: Option<Arc<dyn WriterSchemas>> =
        decoding_cache(global, plan.schema_cache.as_deref())?
            .map(|c| Arc::new(c) as Arc<dyn WriterSchemas>);
    let mut decoders: HashMap<String, BatchDecoder> = HashMap::new();
    for t in &plan.topics {
        let key = formats::decoder(
            &formats::format_for(&plan.key_specs, t),
            true,
            schemas.as_ref(),
        )?;
        let value = formats::decoder(
            &formats::format_for(&plan.value_specs, t),
            false,
            schemas.as_ref(),
        )?
        .expect("value decoders always exist");
        let mut decoder = BatchDecoder::new(key, value);
        if let Some(predicate) = plan.predicate.as_mut() {
            // An empty batch shows the columns the codecs know before any record.
            let learned = formats::format_for(&plan.key_specs, t).columns_from_data()
                || formats::format_for(&plan.value_specs, t).columns_from_data();
            if let Ok(empty) = decoder.decode(&[]) {
                predicate.check_known_columns(t, &empty.schema(), learned)?;
            }
        }
        decoders.insert(t.clone(), decoder);
    }
    let mut dead_letter = match &plan.on_error {
        OnError::DeadLetter(p) => Some(DeadLetterFile::create(p).map_err(|e| {
            CliError::usage(format!("cannot open dead-letter file {}: {e}", p.display()))
        })?),
        _ => None,
    };

    let mut consumer = TailConsumer::new(
        &settings,
        &TailConsumerOptions {
            group: plan.group.clone(),
            isolation: plan.isolation.clone(),
            auto_offset_reset: if plan.positions.start == Start::End {
                "latest".into()
            } else {
                "earliest".into()
            },
            timeout,
        },
    )?;
    let mut stops = Stops {
        stop_is_end: plan.positions.stop == Stop::End,
        ..Default::default()
    };
    let mut all_partitions: Vec<Tp> = Vec::new();
    for t in &plan.topics {
        for p in consumer.partitions(t)? {
            if plan.partitions.is_empty() || plan.partitions.contains(&p) {
                all_partitions.push((t.clone(), p));
            }
        }
    }
    if let Some(&p) = plan
        .partitions
        .iter()
        .find(|p| !all_partitions.iter().any(|(_, q)| q == *p))
    {
        return Err(CliError::usage(format!(
            "partition {p} does not exist in the tailed topics"
        )));
    }
    let mut assignment = Vec::new();
    for (t, p) in &all_partitions {
        let bounded = plan.positions.stop != Stop::Never;
        let needs_marks = bounded
            || !matches!(plan.positions.start, Start::Beginning | Start::End)
            || plan.group.is_none();
        let (low, high) = if needs_marks {
            consumer.watermarks(t, *p)?
        } else {
            (0, 0)
        };
        let stop = match plan.positions.stop {
            Stop::Never => None,
            Stop::End => Some(high),
            Stop::Offset(o) => Some(o),
            Stop::Time(ts) => Some(consumer.offset_for_time(t, *p, ts)?.unwrap_or(high)),
        };
        if let Some(s) = stop {
            stops.stop.insert((t.clone(), *p), s);
        }
        if plan.group.is_some() {
            continue;
        }
        let start = match plan.positions.start {
            Start::Beginning => low,
            Start::End => high,
            Start::AfterStart(n) => (low + n).min(high),
            Start::BeforeEnd(n) => (high - n).max(low),
            Start::Offset(o) => o,
            Start::Time(ts) => consumer.offset_for_time(t, *p, ts)?.unwrap_or(high),
        };
        if stop.is_some_and(|s| start >= s) {
            stops.done.insert((t.clone(), *p));
            continue;
        }
        stops.next.insert((t.clone(), *p), start);
        assignment.push((t.clone(), *p, start));
    }
    match &plan.group {
        Some(_) => consumer.subscribe(&plan.topics)?,
        None => consumer.assign(&assignment)?,
    }

    let cancelled = Arc::new(AtomicBool::new(false));
    watch_signals(cancelled.clone());
    let mut output = match plan.output.data_format() {
        Some(format) => Output::Data(Box::new(BatchSink::new(SinkOptions {
            format,
            path: plan.output.path.clone(),
            row_group_size: plan.row_group_size,
            rotate_rows: plan.rotate_rows,
            rotate_bytes: plan.rotate_bytes,
        }))),
        None => Output::Table,
    };
    let show_progress = std::io::stderr().is_terminal()
        && global.output.quiet == 0
        && !matches!(global.output.output, crate::cmd::global::OutputMode::Json);
    let progress = show_progress.then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    let started = Instant::now();
    let mut counters = Counters::default();
    let mut held: BTreeMap<Tp, Held> = BTreeMap::new();
    let mut last_lag = Instant::now() - Duration::from_secs(10);
    let mut lag: Option<i64> = None;
    let mut first_schema: Option<SchemaRef> = None;
    let mut outcome: CliResult<()> = Ok(());
    let mut outage = Outage::default();
    // One arena for every fetch: after the first batches it has grown and a message
    // costs a copy into it, no allocation.
    let mut batch = RawBatch::new();

    'outer: loop {
        if cancelled.load(Ordering::SeqCst) {
            outcome = Err(CliError::cancelled());
            break;
        }
        if plan.max_records.is_some_and(|n| counters.records >= n) {
            break;
        }
        if stops.bounded() && held.is_empty() {
            let pending: Vec<Tp> = if plan.group.is_some() {
                // Only partitions this tail reads (-p) and was given count; none yet: wait.
                let a = consumer.assignment();
                if a.is_empty() {
                    vec![("".into(), -1)]
                } else {
                    a.into_iter()
                        .filter(|tp| stops.stop.contains_key(tp) && !stops.done.contains(tp))
                        .collect()
                }
            } else {
                assignment
                    .iter()
                    .map(|(t, p, _)| (t.clone(), *p))
                    .filter(|tp| !stops.done.contains(tp))
                    .collect()
            };
            if pending.is_empty() {
                break;
            }
        }
        // Held records (waiting for a writer schema) come first, then new ones.
        batch.clear();
        // Held partitions whose schema is still pending: their records stay in `held`,
        // and any of theirs fetched meanwhile queue up behind them.
        let mut still_pending: BTreeSet<Tp> = BTreeSet::new();
        for (tp, held_part) in std::mem::take(&mut held) {
            if held_part.since.elapsed() > timeout {
                let offset = held_part
                    .records
                    .first()
                    .map(|r| r.offset)
                    .unwrap_or_default();
                outcome = Err(CliError::unreachable(format!(
                    "{}/{} offset {offset}: {}; still pending after {} (--timeout): check that the schema registry is reachable, or prewarm the id into --schema-cache",
                    tp.0,
                    tp.1,
                    held_part.why,
                    humantime_secs(timeout)
                )));
                break 'outer;
            }
            // Still pending? Its first record alone tells: then the partition's records stay
            // held as they are, instead of being copied into the batch, failing again and
            // copied out again every few milliseconds while the schema is fetched.
            let pending = match (held_part.records.first(), decoders.get_mut(&tp.0)) {
                (Some(first), Some(decoder)) => decoder
                    .decode(&[first])
                    .err()
                    .filter(|f| f.error.is_retriable()),
                _ => None,
            };
            if let Some(failure) = pending {
                still_pending.insert(tp.clone());
                held.insert(
                    tp,
                    Held {
                        // The latest word on the fetch (its last failed attempt).
                        why: failure.error.to_string(),
                        ..held_part
                    },
                );
                continue;
            }
            for r in &held_part.records {
                batch.push_record(r);
            }
            held.insert(
                tp,
                Held {
                    records: Vec::new(),
                    ..held_part
                },
            );
        }
        let held_before: BTreeSet<Tp> = held.keys().cloned().collect();
        // Retrying held records only: give the background fetch a moment instead of
        // spinning (a poll still returns at once when other partitions have data).
        let mut wait = if !held_before.is_empty() {
            Duration::from_millis(20)
        } else if batch.is_empty() {
            Duration::from_millis(100)
        } else {
            Duration::ZERO
        };
        // Records kept held count toward the batch's limits, as when they were retried
        // in it: what a paused partition still delivers joins them, and the batch they
        // end up in stays within --batch-records.
        let (held_rows, held_bytes) =
            still_pending
                .iter()
                .filter_map(|tp| held.get(tp))
                .fold((0, 0), |(rows, bytes), h| {
                    (
                        rows + h.records.len(),
                        bytes + h.records.iter().map(Record::payload_len).sum::<usize>(),
                    )
                });
        let mut run: Option<Run> = None;
        let mut round_over = false;
        let mut fatal = None;
        let mut polled = false;
        while !round_over
            && batch.len() + held_rows < plan.batch_records
            && batch.payload_bytes() + held_bytes < BATCH_BYTES
        {
            polled = true;
            // Messages taken from the client must all be kept: take at most the records
            // left, and about the bytes left at the batch's average record size.
            let (rows, bytes) = (batch.len() + held_rows, batch.payload_bytes() + held_bytes);
            let average = match rows {
                0 => 1024,
                n => (bytes / n).max(1),
            };
            let max = (plan.batch_records - rows)
                .min(((BATCH_BYTES - bytes) / average).max(1))
                .min(POLL_CHUNK);
            let taken = consumer.poll_batch(wait, max, |polled| {
                match polled {
                    // A lost broker is retried by the client; it fails the tail only when
                    // it lasts the whole timeout (see `outage`).
                    Err(e) if e.unreachable => {
                        outage.observe(&e);
                        round_over = true;
                    }
                    Err(e) => {
                        fatal.get_or_insert(e);
                        round_over = true;
                    }
                    Ok(Polled::PartitionEof(p)) => {
                        outage.clear();
                        if stops.stop_is_end {
                            let candidates: Vec<Tp> = stops
                                .stop
                                .keys()
                                .filter(|(_, q)| *q == p)
                                .filter(|tp| !stops.done.contains(*tp) && !held.contains_key(*tp))
                                .cloned()
                                .collect();
                            if candidates.len() == 1 {
                                stops.done.insert(candidates[0].clone());
                            }
                        }
                    }
                    Ok(Polled::Message(m)) => {
                        outage.clear();
                        let (handle, partition) = (m.topic_handle(), m.partition());
                        // The topic's name is read and looked up once per run of messages.
                        if !run
                            .as_ref()
                            .is_some_and(|run| run.tp.1 == partition && run.handle == handle)
                        {
                            if let Some(ended) = run.take() {
                                stops.end_run(ended);
                            }
                            let topic = m.topic();
                            let mut started = stops.begin_run((topic.to_owned(), partition));
                            started.handle = handle;
                            started.topic = batch.topic_index(topic);
                            run = Some(started);
                        }
                        let run = run.as_mut().expect("set above");
                        if stops.observe(run, m.offset()) {
                            m.append_to(run.topic, &mut batch);
                        }
                    }
                }
                !round_over
            });
            if taken == 0 {
                break;
            }
            wait = Duration::ZERO;
        }
        // Credentials rotated or a certificate expired mid-tail: librdkafka would retry
        // the login for ever, and the outage clock would call it unreachable.
        if let Some(e) = round_failure(fatal, &auth_failure::WATCH) {
            outcome = Err(e.into());
            break 'outer;
        }
        if !polled && batch.is_empty() {
            // Only held records, too many to take more: wait for the fetch, do not spin.
            std::thread::sleep(wait);
        }
        if let Some(ended) = run.take() {
            stops.end_run(ended);
        }
        if let Err(e) = outage.check(timeout, || {
            all_partitions
                .first()
                .is_some_and(|(t, p)| consumer.watermarks_quick(t, *p).is_some())
        }) {
            outcome = Err(e);
            break;
        }
        if batch.is_empty() {
            held.retain(|_, h| !h.records.is_empty());
            continue;
        }
        // Filter, then group per topic (rows of the batch), keeping fetch order.
        counters.bytes += batch.payload_bytes() as u64;
        let mut processed_next: HashMap<Tp, i64> = HashMap::new();
        // Rows per topic number, then in topic-name order (as before, a BTreeMap by name).
        let mut by_topic: Vec<Vec<u32>> = vec![Vec::new(); batch.topic_count()];
        let filtering = !plan.filter.is_empty();
        for i in 0..batch.len() {
            if filtering {
                let r = batch.get(i);
                if !plan.filter.keeps_view(&r) {
                    processed_next.insert((r.topic.to_owned(), r.partition), r.offset + 1);
                    continue;
                }
            }
            if !still_pending.is_empty() {
                let r = batch.get(i);
                let tp = (r.topic.to_owned(), r.partition);
                if still_pending.contains(&tp) {
                    held.get_mut(&tp)
                        .expect("kept in held above")
                        .records
                        .push(r.to_record());
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
        for (topic, mut records) in per_topic {
            let decoder = decoders.get_mut(topic).expect("a decoder per topic");
            loop {
                if records.is_empty() {
                    break;
                }
                let selection = RawSelection {
                    batch: &batch,
                    rows: &records,
                };
                match decoder.decode_from(&selection) {
                    Ok(decoded) => {
                        // The last offset per partition: records come in runs of one
                        // partition, so the map is touched once per run, not per record.
                        let mut last: HashMap<(u32, i32), i64, foldhash::fast::RandomState> =
                            HashMap::default();
                        let mut previous: Option<(u32, i32, i64)> = None;
                        for &row in &records {
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
                            processed_next.insert((batch.topic_name(t).to_owned(), p), next);
                        }
                        let decoded = match plan.predicate.as_mut() {
                            Some(p) => match p.apply(topic, &decoded) {
                                Ok(b) => b,
                                Err(e) => {
                                    outcome = Err(e);
                                    break 'outer;
                                }
                            },
                            None => decoded,
                        };
                        let decoded = match project(&decoded, &plan.columns) {
                            Ok(b) => b,
                            Err(e) => {
                                outcome = Err(e);
                                break 'outer;
                            }
                        };
                        let decoded = match plan.max_records {
                            Some(n) if counters.records + decoded.num_rows() as u64 > n => {
                                decoded.slice(0, (n - counters.records) as usize)
                            }
                            _ => decoded,
                        };
                        if first_schema.is_none() {
                            first_schema = Some(decoded.schema());
                        }
                        counters.records += decoded.num_rows() as u64;
                        // A batch --where emptied is not written (a table would print an empty frame).
                        let written = if decoded.num_rows() == 0 && plan.predicate.is_some() {
                            Ok(())
                        } else {
                            write(&mut output, &decoded)
                        };
                        match written {
                            Ok(()) => {}
                            // The reader of stdout went away: a normal end.
                            Err(SinkError::Closed) => break 'outer,
                            Err(SinkError::Failed(m)) => {
                                outcome = Err(CliError::failure(format!("topic {topic}: {m}")));
                                break 'outer;
                            }
                        }
                        break;
                    }
                    Err(failure) => {
                        let bad = batch.get(records[failure.index] as usize);
                        let tp = (bad.topic.to_owned(), bad.partition);
                        if failure.error.is_retriable() {
                            // Hold this partition from the pending record on; pause its fetches.
                            let from = bad.offset;
                            let (moved, kept): (Vec<u32>, Vec<u32>) =
                                records.into_iter().partition(|&row| {
                                    let r = batch.get(row as usize);
                                    r.partition == tp.1 && r.offset >= from
                                });
                            records = kept;
                            let moved: Vec<Record> = moved
                                .into_iter()
                                .map(|row| batch.get(row as usize).to_record())
                                .collect();
                            if !held_before.contains(&tp)
                                && let Err(e) = consumer.pause(&tp.0, tp.1)
                            {
                                outcome = Err(e.into());
                                break 'outer;
                            }
                            // Records still held for the partition (none: its rows were
                            // retried in this batch) stay in front.
                            let (since, mut kept) = held.remove(&tp).map_or_else(
                                || (Instant::now(), Vec::new()),
                                |h| (h.since, h.records),
                            );
                            kept.extend(moved);
                            held.insert(
                                tp,
                                Held {
                                    records: kept,
                                    since,
                                    why: failure.error.to_string(),
                                },
                            );
                            continue;
                        }
                        let part = match failure.part {
                            RecordPart::Key => "key",
                            RecordPart::Value => "value",
                        };
                        let message = format!(
                            "cannot decode the {part} of {}/{} offset {}: {}",
                            bad.topic, bad.partition, bad.offset, failure.error
                        );
                        match &plan.on_error {
                            OnError::Fail => {
                                outcome = Err(CliError::failure(message));
                                break 'outer;
                            }
                            OnError::Skip => {
                                tracing::warn!("skipping: {message}");
                                counters.skipped += 1;
                            }
                            OnError::DeadLetter(path) => {
                                let dl = dead_letter.as_mut().expect("opened for this policy");
                                if let Err(e) =
                                    dl.append(&bad.to_record(), &failure.error.to_string())
                                {
                                    outcome = Err(CliError::failure(format!(
                                        "cannot write dead-letter file {}: {e}",
                                        path.display()
                                    )));
                                    break 'outer;
                                }
                                tracing::warn!("dead-lettered: {message}");
                                counters.dead_lettered += 1;
                            }
                        }
                        records.remove(failure.index);
                        processed_next.insert(tp, bad.offset + 1);
                    }
                }
            }
        }
        // Partitions that were held and are now drained resume from their next offset.
        let drained: Vec<Tp> = held
            .iter()
            .filter(|(_, h)| h.records.is_empty())
            .map(|(tp, _)| tp.clone())
            .collect();
        for tp in drained {
            held.remove(&tp);
            let next = stops.next.get(&tp).copied().unwrap_or_default();
            if let Err(e) = consumer.resume(&tp.0, tp.1, next) {
                outcome = Err(e.into());
                break 'outer;
            }
        }
        for ((t, p), next) in processed_next {
            if held.contains_key(&(t.clone(), p)) {
                continue;
            }
            if let Err(e) = consumer.store_offset(&t, p, next) {
                outcome = Err(e.into());
                break 'outer;
            }
        }
        if let Some(bar) = &progress {
            if last_lag.elapsed() > Duration::from_secs(2) {
                last_lag = Instant::now();
                lag = compute_lag(&consumer, &stops);
            }
            let secs = started.elapsed().as_secs_f64().max(0.001);
            bar.set_message(format!(
                "{} records, {}, {:.0} records/s{}",
                counters.records,
                indicatif::HumanBytes(counters.bytes),
                counters.records as f64 / secs,
                lag.map_or_else(String::new, |l| format!(", lag {l}"))
            ));
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let fallback: SchemaRef =
        first_schema.unwrap_or_else(|| Arc::new(Schema::new(reserved_fields().to_vec())));
    let files = match output {
        Output::Data(sink) => {
            if outcome
                .as_ref()
                .is_err_and(|e| e.code != crate::cmd::exit::ExitCode::Cancelled)
            {
                // A failed tail publishes nothing (the temp file is removed on drop).
                drop(sink);
                Vec::new()
            } else {
                match sink.finish(&fallback) {
                    Ok(f) => f,
                    Err(SinkError::Closed) => Vec::new(),
                    Err(SinkError::Failed(m)) => return Err(CliError::failure(m)),
                }
            }
        }
        Output::Table => Vec::new(),
    };
    if outcome.is_ok()
        || outcome
            .as_ref()
            .is_err_and(|e| e.code == crate::cmd::exit::ExitCode::Cancelled)
    {
        consumer.commit_stored()?;
    }
    if plan.report {
        summary(global, &plan, &counters, &files);
    }
    outcome
}

fn write(output: &mut Output, batch: &RecordBatch) -> Result<(), SinkError> {
    match output {
        Output::Data(sink) => sink.write(batch),
        Output::Table => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            table::render(&mut out, batch)
                .and_then(|_| out.flush())
                .map_err(SinkError::from)
        }
    }
}

fn project(batch: &RecordBatch, columns: &[String]) -> CliResult<RecordBatch> {
    if columns.is_empty() {
        return Ok(batch.clone());
    }
    let schema = batch.schema();
    let indices = columns
        .iter()
        .map(|c| {
            schema
                .index_of(c)
                .map_err(|_| CliError::usage(format!("Arrow column does not exist: {c}")))
        })
        .collect::<CliResult<Vec<_>>>()?;
    batch
        .project(&indices)
        .map_err(|e| CliError::failure(format!("cannot project columns: {e}")))
}

fn compute_lag(consumer: &TailConsumer, stops: &Stops) -> Option<i64> {
    let mut lag = 0;
    for (tp, next) in &stops.next {
        let end = match stops.stop.get(tp) {
            Some(s) => *s,
            None => consumer.watermarks_quick(&tp.0, tp.1)?.1,
        };
        lag += (end - next).max(0);
    }
    Some(lag)
}

fn summary(global: &GlobalArgs, plan: &TailPlan, c: &Counters, files: &[std::path::PathBuf]) {
    if global.output.output == crate::cmd::global::OutputMode::Json {
        let doc = json!({"data": {
            "records": c.records,
            "bytes": c.bytes,
            "skipped": c.skipped,
            "dead_lettered": c.dead_lettered,
            "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        }});
        // Data on stdout → the report goes to stderr.
        if plan.output.path.is_some() {
            let _ = finish_stdout(writeln!(std::io::stdout(), "{doc}"));
        } else {
            eprintln!("{doc}");
        }
        return;
    }
    let mut line = format!("Processed a total of {} records", c.records);
    if c.skipped > 0 {
        line.push_str(&format!(" ({} undecodable skipped)", c.skipped));
    }
    if c.dead_lettered > 0 {
        line.push_str(&format!(" ({} dead-lettered)", c.dead_lettered));
    }
    eprintln!("{line}");
    if plan.output.format != OutputFormat::Table {
        for f in files {
            tracing::info!("wrote {}", f.display());
        }
    }
}
