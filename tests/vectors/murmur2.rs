use crate::support::{i64_of, id, of_kind, str_of};
use krabka_streams::engine::murmur2::{kafka_abs, murmur2, to_positive};

#[test]
fn every_murmur2_vector_matches_kafka() {
    for v in of_kind("murmur2", "murmur2") {
        let text = str_of(&v["inputs"]["text"], "text");
        let h = murmur2(text.as_bytes());
        let e = &v["expected"];
        assert_eq!(i64::from(h), i64_of(&e["murmur2"], "murmur2"), "{}", id(&v));
        assert_eq!(
            i64::from(to_positive(h)),
            i64_of(&e["to_positive"], "to_positive"),
            "{}",
            id(&v)
        );
        assert_eq!(
            i64::from(kafka_abs(h)),
            i64_of(&e["abs"], "abs"),
            "{}",
            id(&v)
        );
    }
}

#[test]
fn abs_of_min_is_zero() {
    assert_eq!(kafka_abs(i32::MIN), 0);
    assert_eq!(to_positive(i32::MIN), 0);
}
