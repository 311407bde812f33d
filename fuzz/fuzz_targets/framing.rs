//! Confluent wire framing: Avro/JSON Schema frames and Protobuf frames with
//! message indexes. Whatever decodes must re-encode to the same bytes.
#![no_main]
use krabka_streams::engine::schema::framing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = framing::decode(data) {
        assert_eq!(
            framing::encode(frame.schema_id_unsigned(), frame.body),
            data
        );
    }
    if let Ok(frame) = framing::decode_protobuf(data)
        && let Some(indexes) = &frame.message_indexes
    {
        // A Protobuf frame may write the [0] path in its long form; only the
        // index values must survive a round trip.
        let again = framing::encode_protobuf(frame.schema_id_unsigned(), indexes, frame.body);
        if let Ok(again) = again {
            let back = framing::decode_protobuf(&again).expect("re-encoded frame decodes");
            assert_eq!(back.message_indexes.as_ref(), Some(indexes));
            assert_eq!(back.body, frame.body);
        }
    }
});
