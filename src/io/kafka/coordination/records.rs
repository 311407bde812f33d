//! Record batches of the coordination topic: encoding one record (plain, or
//! transactional under a producer id, epoch and sequence; never compressed)
//! and decoding a fetched range into [`StateRecord`]s with read_committed
//! semantics (control batches and batches of aborted transactions skipped).

use std::collections::HashSet;

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use crate::engine::coordination::StateRecord;

/// Batch header layout (record batch v2).
const HEADER_LEN: usize = 61;
const MAGIC_AT: usize = 16;
const CRC_AT: usize = 17;
const ATTRIBUTES_AT: usize = 21;
const LAST_OFFSET_DELTA_AT: usize = 23;
const PRODUCER_ID_AT: usize = 43;
const TRANSACTIONAL: i16 = 1 << 4;
const CONTROL: i16 = 1 << 5;
/// The largest base offset read: any i32 offset delta (and one more) still fits an i64.
const MAX_BASE_OFFSET: i64 = i64::MAX - i32::MAX as i64 - 1;

/// Who writes a batch: nobody in particular, or a transactional producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    Plain,
    Transactional {
        producer_id: i64,
        producer_epoch: i16,
        sequence: i32,
    },
}

/// Encodes one record (`None` value = tombstone) as a v2 batch.
pub fn encode_one(
    writer: Writer,
    key: &[u8],
    value: Option<&[u8]>,
    timestamp_ms: i64,
) -> Result<Bytes, String> {
    let (transactional, producer_id, producer_epoch, sequence) = match writer {
        Writer::Plain => (false, -1, -1, -1),
        Writer::Transactional {
            producer_id,
            producer_epoch,
            sequence,
        } => (true, producer_id, producer_epoch, sequence),
    };
    let record = Record {
        transactional,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: -1,
        producer_id,
        producer_epoch,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence,
        timestamp: timestamp_ms,
        key: Some(Bytes::copy_from_slice(key)),
        value: value.map(Bytes::copy_from_slice),
        headers: IndexMap::new(),
    };
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        [&record],
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .map_err(|e| format!("encode a record batch: {e}"))?;
    Ok(buf.freeze())
}

/// What one fetched range held.
#[derive(Debug, Default)]
pub struct Decoded {
    pub records: Vec<StateRecord>,
    /// The offset after the last complete batch (≥ the fetch offset).
    pub next_offset: i64,
}

fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes the complete batches of a fetched range starting at `from`
/// (records below it are dropped); a partial batch at the end is left for
/// the next fetch. `aborted` lists (producer id, first offset) of aborted
/// transactions, as the broker reported them.
pub fn decode_range(bytes: &Bytes, from: i64, aborted: &[(i64, i64)]) -> Result<Decoded, String> {
    let mut pending: Vec<(i64, i64)> = aborted.to_vec();
    pending.sort_by_key(|&(_, first)| first);
    let mut pending = pending.into_iter().peekable();
    let mut aborting: HashSet<i64> = HashSet::new();
    let mut out = Decoded {
        records: Vec::new(),
        next_offset: from,
    };
    let mut pos = 0usize;
    while bytes.len() - pos >= 12 {
        let base_offset = be_i64(bytes, pos);
        let length = be_i32(bytes, pos + 8);
        if length < 0 {
            return Err(format!(
                "record batch at offset {base_offset} has length {length}"
            ));
        }
        // Hostile bytes must not overflow an offset here or in the record decoder, which
        // adds each record's i32 delta to the base: a base offset leaves room for any delta.
        if !(0..=MAX_BASE_OFFSET).contains(&base_offset) {
            return Err(format!(
                "record batch has base offset {base_offset}, outside 0..={MAX_BASE_OFFSET}"
            ));
        }
        let Some(end) = (pos + 12).checked_add(length as usize) else {
            return Err(format!(
                "record batch at offset {base_offset} has length {length}"
            ));
        };
        if end > bytes.len() {
            break; // partial batch: fetched again next time
        }
        let batch = &bytes[pos..end];
        if batch.len() < HEADER_LEN {
            return Err(format!("record batch at offset {base_offset} is truncated"));
        }
        if batch[MAGIC_AT] != 2 {
            return Err(format!(
                "record batch at offset {base_offset} has magic {} (only v2 is read)",
                batch[MAGIC_AT]
            ));
        }
        let attributes = be_i16(batch, ATTRIBUTES_AT);
        let last_delta = be_i32(batch, LAST_OFFSET_DELTA_AT);
        if last_delta < 0 {
            return Err(format!(
                "record batch at offset {base_offset} has a negative last offset delta {last_delta}"
            ));
        }
        // Cannot overflow: base ≤ MAX_BASE_OFFSET and 0 ≤ delta ≤ i32::MAX, so last + 1 fits too.
        let last_offset = base_offset + i64::from(last_delta);
        let producer_id = be_i64(batch, PRODUCER_ID_AT);
        while let Some(&(pid, first)) = pending.peek() {
            if first > last_offset {
                break;
            }
            aborting.insert(pid);
            pending.next();
        }
        let control = attributes & CONTROL != 0;
        let transactional = attributes & TRANSACTIONAL != 0;
        let skipped = control || (transactional && aborting.contains(&producer_id));
        if skipped {
            // A batch skipped unread has its CRC checked here (the record decoder
            // checks those it reads): a damaged header must not make a data batch
            // vanish as a marker or as part of an aborted transaction.
            let crc = u32::from_be_bytes([
                batch[CRC_AT],
                batch[CRC_AT + 1],
                batch[CRC_AT + 2],
                batch[CRC_AT + 3],
            ]);
            let actual = crc32c::crc32c(&batch[ATTRIBUTES_AT..]);
            if crc != actual {
                return Err(format!(
                    "record batch at offset {base_offset} has CRC-32C {actual:08x}, its header says {crc:08x}"
                ));
            }
        }
        if control {
            // A transaction marker ends the producer's aborted range.
            aborting.remove(&producer_id);
        } else if !skipped {
            let mut slice = bytes.slice(pos..end);
            let set = RecordBatchDecoder::decode(&mut slice)
                .map_err(|e| format!("decode the record batch at offset {base_offset}: {e}"))?;
            for r in set.records {
                if r.offset >= from {
                    out.records.push(StateRecord::new(
                        r.offset,
                        r.key.map(|k| k.to_vec()).unwrap_or_default(),
                        r.value.map(|v| v.to_vec()),
                    ));
                }
            }
        }
        out.next_offset = out.next_offset.max(last_offset + 1);
        pos = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(pid: i64, seq: i32, key: &[u8]) -> Bytes {
        encode_one(
            Writer::Transactional {
                producer_id: pid,
                producer_epoch: 0,
                sequence: seq,
            },
            key,
            Some(b"v"),
            0,
        )
        .unwrap()
    }

    /// Writes the CRC-32C a batch's header names after a test edited the bytes it covers.
    fn recrc(b: &mut [u8]) {
        let crc = crc32c::crc32c(&b[ATTRIBUTES_AT..]);
        b[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
    }

    #[test]
    fn a_damaged_header_that_would_make_a_record_a_marker_is_refused_not_skipped() {
        let mut b = encode_one(Writer::Plain, b"k", Some(b"v"), 0)
            .unwrap()
            .to_vec();
        b[ATTRIBUTES_AT + 1] |= CONTROL as u8;
        let e = decode_range(&Bytes::from(b), 0, &[]).unwrap_err();
        assert!(
            e.contains("has CRC-32C") && e.contains("its header says"),
            "{e}"
        );
    }

    /// Rewrites the base offset of an encoded batch (the broker assigns it).
    fn at(offset: i64, batch: Bytes) -> Vec<u8> {
        let mut b = batch.to_vec();
        b[..8].copy_from_slice(&offset.to_be_bytes());
        b
    }

    #[test]
    fn a_plain_record_round_trips_with_its_tombstone_value() {
        let batch = encode_one(Writer::Plain, b"k", None, 5).unwrap();
        let decoded = decode_range(&batch, 0, &[]).unwrap();
        assert_eq!(
            decoded.records,
            vec![StateRecord::new(0, b"k".to_vec(), None)]
        );
        assert_eq!(decoded.next_offset, 1);
    }

    #[test]
    fn batches_of_aborted_transactions_are_skipped_and_partial_batches_left() {
        let mut range = at(0, txn(7, 0, b"a"));
        range.extend(at(1, txn(8, 0, b"b")));
        range.extend(at(2, txn(7, 1, b"c")));
        let partial = at(3, txn(8, 1, b"d"));
        range.extend(&partial[..partial.len() - 1]);
        let decoded = decode_range(&Bytes::from(range), 1, &[(7, 2)]).unwrap();
        let keys: Vec<_> = decoded
            .records
            .iter()
            .map(|r| (r.offset, r.key.clone()))
            .collect();
        assert_eq!(keys, vec![(1, b"b".to_vec())]);
        assert_eq!(decoded.next_offset, 3);
    }

    #[test]
    fn a_corrupt_length_is_an_error_not_a_panic() {
        let mut b = encode_one(Writer::Plain, b"k", Some(b"v"), 0)
            .unwrap()
            .to_vec();
        b[8..12].copy_from_slice(&(-5i32).to_be_bytes());
        assert!(decode_range(&Bytes::from(b), 0, &[]).is_err());
        let mut b = encode_one(Writer::Plain, b"k", Some(b"v"), 0)
            .unwrap()
            .to_vec();
        b[MAGIC_AT] = 1;
        assert!(decode_range(&Bytes::from(b), 0, &[]).is_err());
        let short = Bytes::from(vec![0u8; 12]);
        assert!(decode_range(&short, 0, &[]).is_err());
    }

    #[test]
    fn hostile_base_offsets_and_deltas_are_errors_not_overflows() {
        let batch = encode_one(Writer::Plain, b"k", Some(b"v"), 5).unwrap();
        for base in [i64::MAX, MAX_BASE_OFFSET + 1, -1, i64::MIN] {
            let e = decode_range(&Bytes::from(at(base, batch.clone())), 0, &[]).unwrap_err();
            assert!(e.contains("outside 0..="), "{e}");
        }
        // The largest base offset with the largest delta still decodes its header.
        let mut b = at(MAX_BASE_OFFSET, batch.clone());
        b[LAST_OFFSET_DELTA_AT..LAST_OFFSET_DELTA_AT + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        recrc(&mut b);
        let r = decode_range(&Bytes::from(b.clone()), 0, &[]);
        assert!(r.is_err() || r.unwrap().next_offset == i64::MAX);
        b[LAST_OFFSET_DELTA_AT..LAST_OFFSET_DELTA_AT + 4].copy_from_slice(&(-5i32).to_be_bytes());
        recrc(&mut b);
        let e = decode_range(&Bytes::from(b), 0, &[]).unwrap_err();
        assert!(e.contains("negative last offset delta -5"), "{e}");
    }
}
