//! The leader client's Kafka record-batch decoder: a fetched range of the coordination
//! topic, with aborted transactions, read with read_committed semantics.
#![no_main]
use krabka_streams::io::kafka::coordination::records::decode_range;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first 16 bytes: the fetch offset and one aborted transaction's first offset.
    if data.len() < 16 {
        return;
    }
    let from = i64::from_be_bytes(data[..8].try_into().unwrap());
    let aborted_first = i64::from_be_bytes(data[8..16].try_into().unwrap());
    let bytes = bytes::Bytes::copy_from_slice(&data[16..]);
    if let Ok(decoded) = decode_range(&bytes, from, &[(7, aborted_first)]) {
        assert!(decoded.next_offset >= from);
    }
});
