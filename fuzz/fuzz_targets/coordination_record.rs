//! Leader-election coordination records: keys, registrations and leases.
#![no_main]
use krabka_streams::engine::coordination::{CoordinationKey, LeaseValue, RegistrationValue};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(key) = CoordinationKey::decode(data) {
        assert_eq!(CoordinationKey::decode(&key.encode()).unwrap(), key);
    }
    if let Ok(value) = RegistrationValue::decode(data) {
        assert_eq!(RegistrationValue::decode(&value.encode()).unwrap(), value);
    }
    if let Ok(value) = LeaseValue::decode(data) {
        assert_eq!(LeaseValue::decode(&value.encode()).unwrap(), value);
    }
});
