//! The tail from plan to answer: build the decoders, position the consumer
//! (`--from`, `-e`, `-p`, `-g`), then run the pipeline — the poll side
//! (`poll_side`, this thread) fills arenas from the client, the decode side
//! (`decode_side`, a thread of its own) decodes and writes them — and on Ctrl-C or
//! any stop close the sink properly, commit (group mode) and count.
//!
//! [`run`] builds the real consumer and sinks; [`run_with`] is the same use case
//! over any [`TailClient`], which the unit tests drive with a fake.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arrow_schema::{Schema, SchemaRef};

use crate::engine::columnar::batch::{BatchDecoder, DECODED_KEY_COLUMN};
use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::columnar::reserved::{reserved_fields, topic_field, with_topic_column};
use crate::engine::columnar::reserved_types::typed_schema;
use crate::engine::columnar::text_view::TextView;
use crate::engine::columnarschema::writer_schemas::WriterSchemas;
use crate::engine::topic_partition::{PartitionOffset, TopicPartition};
use crate::io::batch_sink::SinkError;
use crate::io::kafka::tail_consumer::{TailConsumer, TailConsumerOptions};
use crate::ops::tail::dead_letter::{DeadLetterFile, DeadLetterSink};
use crate::ops::tail::decode_side::{DecodeSettings, DecodeSide};
use crate::ops::tail::formats;
use crate::ops::tail::handoff::{Report, Shared};
use crate::ops::tail::poll_side::{PollSide, Stops};
use crate::ops::tail::positions::{Start, Stop};
use crate::ops::tail::sink::TailSink;
use crate::ops::tail::source::TailClient;
use crate::ops::tail::{
    Finished, OnError, Progress, Rows, Summary, TailContext, TailHost, TailPlan,
};
use crate::ops::{Error, ErrorKind, Result};

/// Filled arenas queued for the decode side: with the one being filled and the one
/// being decoded, at most four arenas of up to 16 MiB of values each are alive.
const HANDOFF_ARENAS: usize = 2;

/// What the pipeline runs with besides the consumer and the plan.
pub struct Parts<'a> {
    pub decoders: HashMap<String, BatchDecoder>,
    /// Opened when the plan says `OnError::DeadLetter`.
    pub dead_letter: Option<Box<dyn DeadLetterSink>>,
    pub sink: Box<dyn TailSink>,
    pub host: &'a dyn TailHost,
    pub timeout: Duration,
}

/// Runs `plan` against the broker of `ctx.settings`. An `Err` means the tail
/// failed before or after its pipeline (nothing to summarise); a pipeline that ran
/// answers [`Finished`], its outcome included.
pub fn run(mut plan: TailPlan, ctx: TailContext<'_>) -> Result<Finished> {
    let decoders = build_decoders(&mut plan, ctx.schemas.as_ref())?;
    let dead_letter = match &plan.on_error {
        OnError::DeadLetter(p) => Some(Box::new(DeadLetterFile::create(p).map_err(|e| {
            Error::usage(format!("cannot open dead-letter file {}: {e}", p.display()))
        })?) as Box<dyn DeadLetterSink>),
        _ => None,
    };
    let mut consumer = TailConsumer::new(
        &ctx.settings,
        &TailConsumerOptions {
            group: plan.group.clone(),
            isolation: plan.isolation.as_str().to_string(),
            auto_offset_reset: if plan.positions.start == Start::End {
                "latest".into()
            } else {
                "earliest".into()
            },
            timeout: ctx.timeout,
        },
    )?;
    let parts = Parts {
        decoders,
        dead_letter,
        sink: ctx.sink,
        host: ctx.host,
        timeout: ctx.timeout,
    };
    run_with(&mut consumer, plan, parts)
}

/// One decoder per topic; with `--where`, the predicate checked against the
/// columns each topic's codecs know before any record.
fn build_decoders(
    plan: &mut TailPlan,
    schemas: Option<&Arc<dyn WriterSchemas>>,
) -> Result<HashMap<String, BatchDecoder>> {
    let mut decoders: HashMap<String, BatchDecoder> = HashMap::new();
    for t in &plan.topics {
        let key = formats::decoder(&formats::format_for(&plan.key_specs, t), true, schemas)?;
        let value = formats::decoder(&formats::format_for(&plan.value_specs, t), false, schemas)?
            .expect("value decoders always exist");
        let mut decoder = BatchDecoder::new(key, value);
        if let Some(predicate) = plan.predicate.as_mut() {
            // An empty batch shows the columns the codecs know before any record.
            let learned = formats::format_for(&plan.key_specs, t).columns_from_data()
                || formats::format_for(&plan.value_specs, t).columns_from_data();
            if let Ok(empty) = decoder.decode(&[]) {
                let empty = match plan.topic_column {
                    true => {
                        with_topic_column(&empty, t).map_err(|e| Error::failure(e.to_string()))?
                    }
                    false => empty,
                };
                predicate.check_known_columns(t, &empty.schema(), learned)?;
            }
        }
        decoders.insert(t.clone(), decoder);
    }
    Ok(decoders)
}

/// Where the consumer was positioned: per-partition stops and starts, the
/// partitions assigned by hand (none with a group), and every partition read.
struct Positioned {
    stops: Stops,
    assignment: Vec<PartitionOffset>,
    all_partitions: Vec<TopicPartition>,
}

/// Resolves `--from`/`-e`/`-p` against each partition's watermarks and assigns
/// (or, with a group, subscribes).
fn position<C: TailClient>(consumer: &mut C, plan: &TailPlan) -> Result<Positioned> {
    let mut stops = Stops {
        bounded: plan.positions.stop != Stop::Never,
        // A group is assigned partitions of every number: -p reads only its own.
        only: (plan.group.is_some() && !plan.partitions.is_empty())
            .then(|| plan.partitions.iter().copied().collect()),
        ..Default::default()
    };
    let mut all_partitions: Vec<TopicPartition> = Vec::new();
    for t in &plan.topics {
        for p in consumer.partitions(t)? {
            if plan.partitions.is_empty() || plan.partitions.contains(&p) {
                all_partitions.push(TopicPartition::new(t.clone(), p));
            }
        }
    }
    if let Some(&p) = plan.partitions.iter().find(|p| {
        !all_partitions
            .iter()
            .any(|TopicPartition { partition: q, .. }| q == *p)
    }) {
        return Err(Error::usage(format!(
            "partition {p} does not exist in the tailed topics"
        )));
    }
    let mut assignment = Vec::new();
    for TopicPartition {
        topic: t,
        partition: p,
    } in &all_partitions
    {
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
        if plan.group.is_some() {
            stops.add(TopicPartition::new(t.clone(), *p), None, stop);
            continue;
        }
        let start = match plan.positions.start {
            Start::Beginning => low,
            Start::End => high,
            Start::AfterStart(n) => (low + n).min(high),
            Start::BeforeEnd(n) => (high - n).max(low),
            // Below the log start the first record left is the one asked for.
            Start::Offset(o) => o.max(low),
            Start::Time(ts) => consumer.offset_for_time(t, *p, ts)?.unwrap_or(high),
        };
        if stops.add(TopicPartition::new(t.clone(), *p), Some(start), stop) {
            if start > high {
                // The broker answers a fetch past the end "out of range", and the client
                // then restarts at auto.offset.reset (the log start): a wrong answer.
                return Err(Error::usage(format!(
                    "--from: offset {start} is past the end of {t}/{p} (its next offset is {high}); use --from end to follow new records, or stop before the start (e.g. -e)"
                )));
            }
            assignment.push(PartitionOffset {
                tp: TopicPartition::new(t.clone(), *p),
                offset: start,
            });
        }
    }
    match &plan.group {
        Some(_) => consumer.subscribe(&plan.topics)?,
        None => consumer.assign(&assignment)?,
    }
    Ok(Positioned {
        stops,
        assignment,
        all_partitions,
    })
}

/// [`run`] over any client: positions it, runs the pipeline, finishes.
pub fn run_with<C: TailClient>(
    consumer: &mut C,
    mut plan: TailPlan,
    parts: Parts<'_>,
) -> Result<Finished> {
    let positioned = position(consumer, &plan)?;
    let cancelled = Arc::new(AtomicBool::new(false));
    parts.host.cooperate(cancelled.clone());
    let progress = parts.host.progress();
    let text_views = match plan.rows {
        Rows::Text(_) => text_views(&plan),
        Rows::Binary { .. } => HashMap::new(),
    };
    let settings = DecodeSettings {
        filter: std::mem::take(&mut plan.filter),
        predicate: plan.predicate.take(),
        columns: std::mem::take(&mut plan.columns),
        max_records: plan.max_records,
        on_error: plan.on_error.clone(),
        timeout: parts.timeout,
        report_offsets: plan.group.is_some(),
        batch_records: plan.batch_records,
        topic_column: plan.topic_column,
        text_views,
        typed_reserved: plan.rows.typed_reserved(),
    };
    let decode_side = DecodeSide::new(parts.decoders, settings, parts.dead_letter, parts.sink);
    let ran = pipeline(
        consumer,
        positioned,
        decode_side,
        progress,
        &plan,
        parts.timeout,
        cancelled,
    )?;
    finish(consumer, &plan, ran)
}

/// What the two sides left behind.
struct Ran {
    decode_side: DecodeSide,
    bytes: u64,
    outcome: Result<()>,
}

/// The two threads and their hand-off, until both ended.
fn pipeline<C: TailClient>(
    consumer: &mut C,
    positioned: Positioned,
    mut decode_side: DecodeSide,
    progress: Option<Box<dyn Progress>>,
    plan: &TailPlan,
    timeout: Duration,
    cancelled: Arc<AtomicBool>,
) -> Result<Ran> {
    let shared = Arc::new(Shared::new(cancelled.clone()));
    if let Some(waker) = consumer.waker() {
        let _ = shared.wake_poll.set(waker);
    }
    // The hand-off: arenas go to the decode side through a short queue and come back
    // for the next fetches; reports (holds, written offsets) come back unbounded, as
    // the decode side must never wait for the poll side.
    let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<RawBatch>(HANDOFF_ARENAS);
    let (free_tx, free_rx) = std::sync::mpsc::channel::<RawBatch>();
    let (report_tx, report_rx) = std::sync::mpsc::channel::<Report>();
    let decoding = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("tail-decode".into())
            .spawn(move || {
                let outcome = decode_side.serve(&work_rx, &free_tx, &report_tx, &shared);
                (decode_side, outcome)
            })
            .map_err(|e| Error::failure(format!("cannot start the decode thread: {e}")))?
    };
    let mut poll_side = PollSide {
        consumer,
        stops: positioned.stops,
        assignment: positioned.assignment,
        all_partitions: positioned.all_partitions,
        group: plan.group.is_some(),
        batch_records: plan.batch_records,
        timeout,
        cancelled: &cancelled,
        shared: &shared,
        progress,
        bytes: 0,
    };
    let polled = poll_side.fetch(&work_tx, &free_rx, &report_rx);
    if polled.is_err() {
        shared.abort.store(true, Ordering::SeqCst);
    }
    // Closing the hand-off lets the decode side write what it was given, then end.
    drop(work_tx);
    let (decode_side, decoded) = match decoding.join() {
        Ok(ended) => ended,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    // Offsets written after the poll side stopped are stored too, before the commit.
    let mut paused = BTreeSet::new();
    let mut stored: Result<()> = Ok(());
    for report in report_rx.try_iter() {
        if let Report::Processed(_) = report
            && stored.is_ok()
        {
            stored = poll_side.act_on(report, &mut paused);
        }
    }
    if let Some(bar) = poll_side.progress.take() {
        bar.clear();
    }
    Ok(Ran {
        decode_side,
        bytes: poll_side.bytes,
        outcome: polled.and(decoded).and(stored),
    })
}

/// Closes the sink (a failed tail publishes nothing), commits what was written
/// (group mode; also on Ctrl-C) and counts.
fn finish<C: TailClient>(consumer: &mut C, plan: &TailPlan, ran: Ran) -> Result<Finished> {
    let Ran {
        decode_side,
        bytes,
        outcome,
    } = ran;
    let cancelled = outcome
        .as_ref()
        .is_err_and(|e| e.kind == ErrorKind::Cancelled);
    let mut summary = Summary {
        records: decode_side.records,
        bytes,
        skipped: decode_side.skipped,
        dead_lettered: decode_side.dead_lettered,
        files: Vec::new(),
    };
    let fallback = fallback_schema(plan, decode_side.first_schema.clone());
    if outcome.is_err() && !cancelled {
        // The temp file is removed on drop.
        drop(decode_side.output);
    } else {
        match decode_side.output.finish(&fallback) {
            Ok(f) => summary.files = f,
            Err(SinkError::Closed) => {}
            Err(SinkError::Failed(m)) => return Err(Error::failure(m)),
        }
    }
    if outcome.is_ok() || cancelled {
        consumer.commit_stored()?;
    }
    Ok(Finished { summary, outcome })
}

/// The schema of an output no batch reached: the reserved columns.
fn fallback_schema(plan: &TailPlan, first: Option<SchemaRef>) -> SchemaRef {
    first.unwrap_or_else(|| {
        let mut fields = reserved_fields().to_vec();
        if plan.topic_column {
            fields.insert(0, topic_field());
        }
        let library = Schema::new(fields);
        Arc::new(if plan.rows.typed_reserved() {
            typed_schema(&library)
        } else {
            library
        })
    })
}

/// How each topic's rows are shown in NDJSON and the table.
fn text_views(plan: &TailPlan) -> HashMap<String, TextView> {
    let Rows::Text(binary) = plan.rows else {
        return HashMap::new();
    };
    plan.topics
        .iter()
        .map(|t| {
            let view = TextView {
                binary,
                raw_value: formats::format_for(&plan.value_specs, t).is_raw(),
                decoded_key: formats::format_for(&plan.key_specs, t) != formats::Format::Raw,
                keep_decoded_key: plan.columns.iter().any(|c| c == DECODED_KEY_COLUMN),
                key_is_json: matches!(
                    formats::format_for(&plan.key_specs, t),
                    formats::Format::Json(_)
                ),
            };
            (t.clone(), view)
        })
        .collect()
}
