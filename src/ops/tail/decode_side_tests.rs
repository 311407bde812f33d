//! The decode side's commit rule with a real sink (an Arrow stream in a temporary
//! file): in group mode the offsets it reports as processed cover exactly the records
//! it wrote or deliberately dropped (`--where`, key filters) — never one that
//! `--max-records` left unwritten — per topic-partition, over several topics.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, sync_channel};
use std::time::Duration;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};

use super::{DecodeSettings, DecodeSide};
use crate::engine::columnar::batch::BatchDecoder;
use crate::engine::columnar::raw_batch::RawBatch;
use crate::engine::columnar::record::Record;
use crate::engine::columnar::record_filter::{Glob, RecordFilter};
use crate::engine::topic_partition::TopicPartition;
use crate::io::batch_sink::{BatchSink, DataFormat, SinkOptions};
use crate::ops::tail::OnError;
use crate::ops::tail::formats::{self, Format};
use crate::ops::tail::handoff::{Report, Shared};
use crate::ops::tail::predicate::WherePredicate;

fn record(topic: &str, partition: i32, offset: i64, key: &str) -> Record {
    Record {
        topic: topic.into(),
        partition,
        offset,
        timestamp: 0,
        key: Some(key.as_bytes().to_vec()),
        value: Some(format!("{topic}/{partition}/{offset}").into_bytes()),
        headers: Vec::new(),
    }
}

fn arena(records: &[Record]) -> RawBatch {
    let mut batch = RawBatch::new();
    for r in records {
        batch.push_record(r);
    }
    batch
}

/// What a decode side did with `arenas`: (topic, partition, offset) written, and the
/// processed offsets it reported, merged per partition (highest wins).
struct Decoded {
    written: Vec<(String, i32, i64)>,
    processed: BTreeMap<TopicPartition, i64>,
}

fn decode(
    arenas: Vec<RawBatch>,
    max: Option<u64>,
    predicate: Option<&str>,
    filter: RecordFilter,
) -> Decoded {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.arrows");
    let mut decoders = HashMap::new();
    for t in ["ta", "tb"] {
        let value = formats::decoder(&Format::Raw, false, None)
            .unwrap()
            .unwrap();
        decoders.insert(t.to_owned(), BatchDecoder::new(None, value));
    }
    let sink = BatchSink::new(SinkOptions {
        format: DataFormat::ArrowStream,
        path: Some(path.clone()),
        row_group_size: 1000,
        rotate_rows: None,
        rotate_bytes: None,
    });
    let settings = DecodeSettings {
        filter,
        predicate: predicate.map(|p| WherePredicate::parse(p).unwrap()),
        columns: Vec::new(),
        max_records: max,
        on_error: OnError::Fail,
        timeout: Duration::from_secs(5),
        report_offsets: true,
        batch_records: 10_000,
        topic_column: true,
        text_views: HashMap::new(),
        typed_reserved: false,
    };
    let mut side = DecodeSide::new(decoders, settings, None, Box::new(sink));
    let (work_tx, work_rx) = sync_channel(arenas.len() + 1);
    for a in arenas {
        work_tx.send(a).unwrap();
    }
    drop(work_tx);
    let (free_tx, _free_rx) = channel();
    let (report_tx, report_rx) = channel();
    let shared = Shared::new(Arc::new(AtomicBool::new(false)));
    side.serve(&work_rx, &free_tx, &report_tx, &shared).unwrap();
    let schema = side
        .first_schema
        .clone()
        .unwrap_or_else(|| Arc::new(arrow_schema::Schema::empty()));
    side.output.finish(&schema).unwrap();
    let mut processed: BTreeMap<TopicPartition, i64> = BTreeMap::new();
    for report in report_rx.try_iter() {
        if let Report::Processed(offsets) = report {
            for (tp, next) in offsets {
                let at = processed.entry(tp).or_insert(next);
                *at = (*at).max(next);
            }
        }
    }
    let file = std::fs::File::open(&path).unwrap();
    let mut written = Vec::new();
    for batch in arrow_ipc::reader::StreamReader::try_new(file, None).unwrap() {
        let batch = batch.unwrap();
        let topics = arrow::compute::cast(
            batch.column_by_name("__topic").unwrap(),
            &arrow_schema::DataType::Utf8,
        )
        .unwrap();
        let partitions = batch.column_by_name("__partition").unwrap();
        let offsets = batch.column_by_name("__offset").unwrap();
        for i in 0..batch.num_rows() {
            written.push((
                topics.as_string::<i32>().value(i).to_owned(),
                partitions.as_primitive::<Int32Type>().value(i),
                offsets.as_primitive::<Int64Type>().value(i),
            ));
        }
    }
    Decoded { written, processed }
}

fn two_topics() -> Vec<RawBatch> {
    let mut first = Vec::new();
    for o in 0..4 {
        first.push(record("ta", 0, o, if o % 2 == 0 { "keep" } else { "drop" }));
    }
    for o in 0..3 {
        first.push(record("tb", 0, o, "keep"));
    }
    let second = vec![record("ta", 1, 0, "keep"), record("ta", 1, 1, "keep")];
    vec![arena(&first), arena(&second)]
}

/// The partitions' next offsets after the rows written.
fn after_written(written: &[(String, i32, i64)]) -> BTreeMap<TopicPartition, i64> {
    let mut out = BTreeMap::new();
    for (t, p, o) in written {
        let at = out
            .entry(TopicPartition::new(t.clone(), *p))
            .or_insert(o + 1);
        *at = (*at).max(o + 1);
    }
    out
}

#[test]
fn everything_written_is_reported_processed_per_topic_partition() {
    let d = decode(two_topics(), None, None, RecordFilter::default());
    assert_eq!(d.written.len(), 9);
    assert_eq!(d.processed, after_written(&d.written));
    assert_eq!(d.processed[&TopicPartition::new("tb", 0)], 3);
}

#[test]
fn a_max_records_cut_reports_only_the_records_written() {
    for n in [0, 1, 3, 5, 8] {
        let d = decode(two_topics(), Some(n), None, RecordFilter::default());
        assert_eq!(d.written.len(), n as usize, "-n {n}");
        assert_eq!(
            d.processed,
            after_written(&d.written),
            "-n {n}: processed offsets are those of the rows written"
        );
    }
}

#[test]
fn rows_where_drops_and_records_a_key_filter_drops_count_as_processed() {
    let d = decode(
        two_topics(),
        None,
        Some("__offset >= 1 AND __topic = 'ta'"),
        RecordFilter::default(),
    );
    assert_eq!(
        d.written,
        vec![
            ("ta".into(), 0, 1),
            ("ta".into(), 0, 2),
            ("ta".into(), 0, 3),
            ("ta".into(), 1, 1)
        ]
    );
    // tb's rows were all dropped by --where: gone through, so committed past.
    assert_eq!(d.processed[&TopicPartition::new("tb", 0)], 3);
    assert_eq!(d.processed[&TopicPartition::new("ta", 1)], 2);

    let filter = RecordFilter {
        key: Some(Glob::new("keep").unwrap()),
        ..Default::default()
    };
    let d = decode(two_topics(), None, None, filter);
    assert!(
        d.written
            .iter()
            .all(|(t, p, o)| !(t == "ta" && *p == 0 && o % 2 == 1))
    );
    assert_eq!(
        d.processed[&TopicPartition::new("ta", 0)],
        4,
        "the last record was filtered"
    );

    // With a cut, records filtered after the last written row stay uncommitted.
    let filter = RecordFilter {
        key: Some(Glob::new("keep").unwrap()),
        ..Default::default()
    };
    let d = decode(two_topics(), Some(1), None, filter);
    assert_eq!(d.written, vec![("ta".into(), 0, 0)]);
    assert_eq!(d.processed, after_written(&d.written));
}
