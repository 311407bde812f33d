//! `__barrier_state` records: the first byte splits the input into key and
//! value; every value kind is also decoded on its own. What decodes re-encodes
//! and decodes to the same record.
#![no_main]
use krabka_streams::engine::columnar::barrier::record::{
    BarrierStateKey, BarrierStateValue, Cut, GroupDefinition, InjectionStart, decode_record,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let split = usize::from(split).min(rest.len());
    let (key, value) = rest.split_at(split);
    if let Ok((decoded_key, decoded_value)) = decode_record(key, Some(value)) {
        let key_bytes = decoded_key.encode().expect("decoded key re-encodes");
        assert_eq!(BarrierStateKey::decode(&key_bytes).unwrap(), decoded_key);
        let value_bytes = match &decoded_value {
            BarrierStateValue::Group(v) => Some(v.encode().expect("re-encodes")),
            BarrierStateValue::InjectionStart(v) => Some(v.encode().expect("re-encodes")),
            BarrierStateValue::Cut(v) => Some(v.encode().expect("re-encodes")),
            _ => None,
        };
        if let Some(bytes) = value_bytes {
            let (_, back) = decode_record(&key_bytes, Some(&bytes)).expect("round trip");
            assert_eq!(back, decoded_value);
        }
    }
    let _ = GroupDefinition::decode(data);
    let _ = InjectionStart::decode(data);
    if let Ok(cut) = Cut::decode(data) {
        let _ = cut.is_complete();
        let _ = cut.offsets().count();
    }
});
