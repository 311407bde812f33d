//! `cargo bench --bench tail`: the decoding and output ratios of the `tail` issue,
//! on the same bytes in one run (bounded sizes; `KRABKA_BENCH_RECORDS`, default 200000):
//!
//! * Avro → Arrow: krabka-streams' decoder vs apache-avro's `Value` path (target ≥ 8×)
//!   and vs arrow-avro's decoder (target ≥ 0.9×), on Confluent-framed order records
//!   (~120 B, 8 fields incl. a timestamp, a decimal and a nested record);
//! * output: decode + write Parquet (zstd) vs decode + write an Arrow IPC stream (target ≤ 1.5×).
//!
//! Times are the bench thread's CPU time, best of several interleaved rounds
//! (`KRABKA_BENCH_CLOCK=wall` for wall time): the ratios hold on a loaded machine. The broker-bound ratio (tail vs a
//! bare rdkafka consumer) is `cargo bench --bench tail_broker`; both are `scripts/bench-tail`.
//! `KRABKA_BENCH_PARQUET_OUT=FILE` writes the Parquet file of the output ratio instead, to read it back.

#[path = "support/orders.rs"]
mod orders;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::Schema;
use krabka_streams::engine::columnar::codec::ValueDecoder;
use krabka_streams::engine::columnarschema::avro::codec::AvroValueDecoder;
use krabka_streams::engine::columnarschema::writer_schemas::{WriterSchema, WriterSchemas};
use krabka_streams::engine::schema::cache::SchemaCache;
use krabka_streams::engine::schema::framing;
use krabka_streams::engine::schema::registry::SchemaType;

use orders::{ORDER_SCHEMA, order, run_size};

const BATCH: usize = 8192;
const SCHEMA_ID: u32 = 1;

fn records(n: usize) -> Vec<Vec<u8>> {
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let writer = apache_avro::writer::datum::GenericDatumWriter::builder(&schema)
        .build()
        .unwrap();
    (0..n)
        .map(|i| framing::encode(SCHEMA_ID, &writer.write_value_to_vec(order(i)).unwrap()))
        .collect()
}

/// CPU time of the calling thread: on a shared machine wall time mostly measures the
/// other processes, while every measured path here runs on this one thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Best of `runs` thread CPU times (`KRABKA_BENCH_CLOCK=wall`: wall times).
fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    let wall = std::env::var("KRABKA_BENCH_CLOCK").as_deref() == Ok("wall");
    (0..runs)
        .map(|_| {
            let (t, cpu) = (Instant::now(), thread_cpu());
            f();
            if wall {
                t.elapsed()
            } else {
                thread_cpu() - cpu
            }
        })
        .min()
        .unwrap()
}

/// The offline cache holding the order schema under its id.
fn order_schemas() -> Arc<dyn WriterSchemas> {
    let cache = SchemaCache::offline();
    cache.seed_writer(WriterSchema {
        id: SCHEMA_ID as i32,
        schema_type: SchemaType::Avro,
        text: ORDER_SCHEMA.to_string(),
        message_type: None,
        references: Vec::new(),
    });
    Arc::new(cache)
}

fn krabka_batches(framed: &[Vec<u8>]) -> Vec<RecordBatch> {
    let schemas = order_schemas();
    let mut d = AvroValueDecoder::new(schemas);
    let mut out = Vec::new();
    for chunk in framed.chunks(BATCH) {
        for v in chunk {
            d.append(Some(v)).unwrap();
        }
        let cols = d.finish().unwrap();
        let (fields, arrays): (Vec<_>, Vec<_>) = cols.into_iter().unzip();
        out.push(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap());
    }
    out
}

/// Our decoder to Arrow record batches, each dropped like arrow-avro's below.
fn krabka_rows(framed: &[Vec<u8>]) -> usize {
    let schemas = order_schemas();
    let mut d = AvroValueDecoder::new(schemas);
    let mut rows = 0;
    for chunk in framed.chunks(BATCH) {
        for v in chunk {
            d.append(Some(v)).unwrap();
        }
        let (fields, arrays): (Vec<_>, Vec<_>) = d.finish().unwrap().into_iter().unzip();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap();
        rows += black_box(batch).num_rows();
    }
    rows
}

fn arrow_avro_rows(framed: &[Vec<u8>]) -> usize {
    use arrow_avro::reader::ReaderBuilder;
    use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore};
    let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
    store
        .set(
            Fingerprint::Id(SCHEMA_ID),
            AvroSchema::new(ORDER_SCHEMA.to_string()),
        )
        .unwrap();
    let mut d = ReaderBuilder::new()
        .with_batch_size(BATCH)
        .with_writer_schema_store(store)
        .build_decoder()
        .unwrap();
    let mut rows = 0;
    for chunk in framed.chunks(BATCH) {
        for v in chunk {
            d.decode(v).unwrap();
        }
        if let Some(b) = d.flush().unwrap() {
            rows += b.num_rows();
        }
    }
    rows
}

fn apache_values(framed: &[Vec<u8>]) -> usize {
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let reader = apache_avro::reader::datum::GenericDatumReader::builder(&schema)
        .build()
        .unwrap();
    let mut n = 0;
    for v in framed {
        let mut body = &v[5..];
        black_box(reader.read_value(&mut body).unwrap());
        n += 1;
    }
    n
}

/// apache-avro's Value path all the way to Arrow: decode a `Value`, then append it to
/// builders (what an Avro → Arrow decoder built on apache-avro does).
fn apache_to_arrow(framed: &[Vec<u8>]) -> usize {
    use apache_avro::types::Value as V;
    use arrow_array::builder::{
        Decimal128Builder, Int32Builder, StringBuilder, TimestampMillisecondBuilder,
    };
    let schema = apache_avro::Schema::parse_str(ORDER_SCHEMA).unwrap();
    let reader = apache_avro::reader::datum::GenericDatumReader::builder(&schema)
        .build()
        .unwrap();
    let mut rows = 0;
    for chunk in framed.chunks(BATCH) {
        let mut strings: Vec<StringBuilder> = (0..7).map(|_| StringBuilder::new()).collect();
        let mut amount = Decimal128Builder::new()
            .with_precision_and_scale(12, 2)
            .unwrap();
        let mut qty = Int32Builder::new();
        let mut ts = TimestampMillisecondBuilder::new().with_timezone("UTC");
        for v in chunk {
            let mut body = &v[5..];
            let V::Record(fields) = reader.read_value(&mut body).unwrap() else {
                panic!("not a record")
            };
            let mut s = 0;
            for (_, f) in fields {
                match f {
                    V::String(x) | V::Enum(_, x) => {
                        strings[s].append_value(x);
                        s += 1;
                    }
                    V::Decimal(d) => {
                        let b: Vec<u8> = d.try_into().unwrap();
                        let mut buf = [if b[0] & 0x80 != 0 { 0xff } else { 0 }; 16];
                        buf[16 - b.len()..].copy_from_slice(&b);
                        amount.append_value(i128::from_be_bytes(buf));
                    }
                    V::Int(i) => qty.append_value(i),
                    V::TimestampMillis(t) => ts.append_value(t),
                    V::Record(inner) => {
                        for (_, x) in inner {
                            match x {
                                V::String(x) => {
                                    strings[s].append_value(x);
                                    s += 1;
                                }
                                V::Union(_, b) => match *b {
                                    V::String(x) => {
                                        strings[s].append_value(x);
                                        s += 1;
                                    }
                                    _ => {
                                        strings[s].append_null();
                                        s += 1;
                                    }
                                },
                                _ => {}
                            }
                        }
                    }
                    V::Union(_, b) => match *b {
                        V::String(x) => {
                            strings[s].append_value(x);
                            s += 1;
                        }
                        _ => {
                            strings[s].append_null();
                            s += 1;
                        }
                    },
                    _ => {}
                }
            }
        }
        black_box(strings.iter_mut().map(|b| b.finish()).collect::<Vec<_>>());
        black_box((amount.finish(), qty.finish(), ts.finish()));
        rows += chunk.len();
    }
    rows
}

fn write_ipc(batches: &[RecordBatch]) -> usize {
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batches[0].schema()).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
    w.into_inner().unwrap().len()
}

/// Parquet with the writer settings `tail` uses.
fn write_parquet(batches: &[RecordBatch]) -> usize {
    parquet_bytes(batches).len()
}

fn parquet_bytes(batches: &[RecordBatch]) -> Vec<u8> {
    let props =
        krabka_streams::io::batch_sink::parquet_properties(&batches[0].schema(), 128 * 1024);
    let mut w =
        parquet::arrow::ArrowWriter::try_new(Vec::new(), batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.into_inner().unwrap()
}

/// `KRABKA_BENCH_ONLY=parquet`: Parquet writer settings against the IPC stream writer,
/// writing alone (decoded batches reused), to choose `tail`'s settings.
fn parquet_settings(framed: &[Vec<u8>]) {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
    let batches = krabka_batches(framed);
    let write = |props: WriterProperties| {
        let mut w =
            parquet::arrow::ArrowWriter::try_new(Vec::new(), batches[0].schema(), Some(props))
                .unwrap();
        for b in &batches {
            w.write(b).unwrap();
        }
        w.into_inner().unwrap().len()
    };
    let base = || {
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_dictionary_enabled(false)
            .set_max_row_group_row_count(Some(128 * 1024))
    };
    let mut ipc_bytes = 0;
    let ipc = best(5, || ipc_bytes = write_ipc(&batches));
    println!("write   Arrow IPC stream: {ipc:?}, {ipc_bytes} bytes");
    let variants: Vec<(&str, WriterProperties)> = vec![
        (
            "tail's settings",
            krabka_streams::io::batch_sink::parquet_properties(&batches[0].schema(), 128 * 1024),
        ),
        ("zstd 1, no dictionary, page statistics", base().build()),
        (
            "  + chunk statistics only",
            base()
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .build(),
        ),
        (
            "  + no statistics",
            base()
                .set_statistics_enabled(EnabledStatistics::None)
                .build(),
        ),
        (
            "  + chunk statistics, data page v2",
            base()
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .build(),
        ),
        (
            "  + chunk statistics, write batches of 8192",
            base()
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .set_write_batch_size(8192)
                .build(),
        ),
        (
            "  + chunk statistics, zstd -1",
            base()
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(-1).unwrap()))
                .build(),
        ),
        (
            "  + chunk statistics, 4 MiB pages",
            base()
                .set_statistics_enabled(EnabledStatistics::Chunk)
                .set_data_page_size_limit(4 << 20)
                .build(),
        ),
        (
            "  + no statistics, zstd -1",
            base()
                .set_statistics_enabled(EnabledStatistics::None)
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(-1).unwrap()))
                .build(),
        ),
        (
            "  with dictionary",
            base().set_dictionary_enabled(true).build(),
        ),
        (
            "  zstd 3",
            base()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
                .build(),
        ),
    ];
    for (name, props) in variants {
        let mut bytes = 0;
        let t = best(5, || bytes = write(props.clone()));
        println!(
            "write   Parquet {name}: {:.2}x IPC time, {bytes} bytes",
            t.as_secs_f64() / ipc.as_secs_f64()
        );
    }
}

fn rate(n: usize, d: Duration) -> String {
    format!("{:>10.0} records/s", n as f64 / d.as_secs_f64())
}

fn main() {
    // `cargo test --all-targets` runs this target too (without `--bench`): a small smoke run then.
    let (_, n) = run_size("KRABKA_BENCH_RECORDS", 200_000);
    let framed = records(n);
    if std::env::var("KRABKA_BENCH_ONLY").as_deref() == Ok("krabka") {
        // For profilers: only our decoder, repeatedly.
        for _ in 0..20 {
            black_box(krabka_rows(&framed));
        }
        return;
    }
    if std::env::var("KRABKA_BENCH_ONLY").as_deref() == Ok("parquet") {
        parquet_settings(&framed);
        return;
    }
    if let Ok(path) = std::env::var("KRABKA_BENCH_PARQUET_OUT") {
        // The file the output ratio writes, for reading back with pyarrow or DuckDB.
        std::fs::write(&path, parquet_bytes(&krabka_batches(&framed))).unwrap();
        println!("wrote {path}");
        return;
    }
    let bytes: usize = framed.iter().map(Vec::len).sum();
    println!(
        "{n} Confluent-framed Avro orders, {:.0} B each on average; times: {}",
        bytes as f64 / n as f64,
        if std::env::var("KRABKA_BENCH_CLOCK").as_deref() == Ok("wall") {
            "wall"
        } else {
            "bench thread CPU (records/s = per CPU second)"
        }
    );
    assert_eq!(arrow_avro_rows(&framed), n);
    assert_eq!(krabka_rows(&framed), n);

    // Rounds interleave the decoders, each keeping its best: on a shared machine
    // the load changes between consecutive phases, and a ratio of two phases
    // measured seconds apart then mostly measures that change.
    let runs = 5;
    let (mut ours, mut arrow_avro, mut apache, mut apache_arrow) =
        (Duration::MAX, Duration::MAX, Duration::MAX, Duration::MAX);
    for _ in 0..runs {
        ours = ours.min(best(1, || {
            black_box(krabka_rows(&framed));
        }));
        arrow_avro = arrow_avro.min(best(1, || {
            black_box(arrow_avro_rows(&framed));
        }));
        apache = apache.min(best(1, || {
            black_box(apache_values(&framed));
        }));
        apache_arrow = apache_arrow.min(best(1, || {
            black_box(apache_to_arrow(&framed));
        }));
    }
    println!("decode  krabka-streams  {}", rate(n, ours));
    println!("decode  arrow-avro      {}", rate(n, arrow_avro));
    println!(
        "decode  apache-avro     {}  (Value only, no Arrow)",
        rate(n, apache)
    );
    println!(
        "decode  apache-avro     {}  (Value path to Arrow builders)",
        rate(n, apache_arrow)
    );
    let vs_apache = apache_arrow.as_secs_f64() / ours.as_secs_f64();
    println!(
        "ratio   vs apache-avro Value decoding alone: {:.2}x",
        apache.as_secs_f64() / ours.as_secs_f64()
    );
    let vs_arrow_avro = arrow_avro.as_secs_f64() / ours.as_secs_f64();
    println!("ratio   vs apache-avro Value path to Arrow: {vs_apache:.2}x (target >= 8x)");
    println!("ratio   vs arrow-avro:        {vs_arrow_avro:.2}x (target >= 0.9x)");

    // Interleaved like the decoders: each round runs both sides once.
    let (mut ipc, mut pq) = (Duration::MAX, Duration::MAX);
    for _ in 0..runs {
        ipc = ipc.min(best(1, || {
            let b = krabka_batches(&framed);
            black_box(write_ipc(&b));
        }));
        pq = pq.min(best(1, || {
            let b = krabka_batches(&framed);
            black_box(write_parquet(&b));
        }));
    }
    println!("output  decode + Arrow IPC stream  {}", rate(n, ipc));
    println!("output  decode + Parquet (zstd)    {}", rate(n, pq));
    println!(
        "ratio   Parquet / IPC time: {:.2}x (target <= 1.5x)",
        pq.as_secs_f64() / ipc.as_secs_f64()
    );
}
