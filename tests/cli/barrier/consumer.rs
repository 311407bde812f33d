//! The engine's `CutReader` driving the rdkafka `KafkaBarrierConsumer` on a real broker: what
//! `barrier watch` uses now and the runner's cut alignment will use later.

use std::collections::BTreeMap;

use krabka_streams::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierConsumer, CutReader, CutReaderOptions, NO_EPOCH, TopicPartition,
};
use krabka_streams::io::kafka::barrier_consumer::KafkaBarrierConsumer;
use krabka_streams::io::kafka::settings::KafkaSettings;

use super::fixture::{Cluster, TIMEOUT, cut};

fn consumer(c: &Cluster) -> KafkaBarrierConsumer {
    let mut settings = KafkaSettings::new();
    settings.set("bootstrap.servers", c.bootstrap());
    KafkaBarrierConsumer::new(&settings, TIMEOUT).unwrap()
}

#[test]
fn the_cut_reader_reads_every_partition_to_its_end_offsets_and_then_only_new_records() {
    let mut c = Cluster::start();
    c.create_barrier_state(7);
    c.write_cut("audit", 1, &cut("orders", &[(0, 10)], &[]));
    c.write_cut("audit", 2, &cut("orders", &[(0, 20)], &[1]));
    c.write_cut("ledger", 1, &cut("payments", &[(0, 5)], &[]));
    let consumer = consumer(&c);
    let partitions = consumer
        .partition_count(BARRIER_STATE_TOPIC)
        .unwrap()
        .unwrap();
    assert_eq!(partitions, 7);
    let mut reader = CutReader::new(consumer, partitions, CutReaderOptions::default()).unwrap();
    assert_eq!(
        reader.latest_complete_cut("audit").unwrap().unwrap().epoch,
        1
    );
    assert_eq!(
        reader.latest_complete_cut("ledger").unwrap().unwrap().epoch,
        1
    );

    c.write_cut("audit", 3, &cut("orders", &[(0, 30)], &[]));
    let after: Vec<i64> = reader
        .complete_cuts_after("audit", NO_EPOCH)
        .unwrap()
        .iter()
        .map(|c| c.epoch)
        .collect();
    assert_eq!(after, [1, 3]);
}

#[test]
fn end_offsets_are_the_latest_offset_of_every_partition() {
    let mut c = Cluster::start();
    c.create_barrier_state(3);
    c.write_cut("audit", 1, &cut("orders", &[(0, 10)], &[]));
    c.write_cut("audit", 2, &cut("orders", &[(0, 20)], &[]));
    let mut consumer = consumer(&c);
    let tps: Vec<TopicPartition> = (0..3)
        .map(|p| TopicPartition::new(BARRIER_STATE_TOPIC, p))
        .collect();
    let ends = consumer.end_offsets(&tps).unwrap();
    let audit = c.state_partition("audit");
    let expected: BTreeMap<TopicPartition, i64> = tps
        .iter()
        .map(|tp| (tp.clone(), if tp.partition == audit { 2 } else { 0 }))
        .collect();
    assert_eq!(ends, expected);
}
