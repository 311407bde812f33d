//! Topic names as Kafka validates them (`org.apache.kafka.common.internals.Topic`):
//! 1 to 249 characters of `[a-zA-Z0-9._-]`, and neither `.` nor `..`. A name the
//! broker would refuse is refused here first, at the flag or line that gave it.

/// The longest topic name Kafka accepts.
pub const MAX_LENGTH: usize = 249;

/// `Ok` for a name Kafka accepts; else why not.
pub fn validate(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a topic name cannot be empty".into());
    }
    if name == "." || name == ".." {
        return Err(format!(
            "topic name {name:?} is not allowed (`.` and `..` are reserved)"
        ));
    }
    if name.len() > MAX_LENGTH {
        return Err(format!(
            "topic name {}… is {} characters; Kafka allows at most {MAX_LENGTH}",
            &name[..name.char_indices().nth(20).map_or(name.len(), |(i, _)| i)],
            name.chars().count()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "topic name {name:?} holds {bad:?}; Kafka allows only ASCII letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_as_kafka_does() {
        for ok in ["orders", "a.b_c-D9", &"x".repeat(249)] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a/../../b",
            "x y",
            "é",
            &"x".repeat(250),
            "a\0b",
        ] {
            assert!(validate(bad).is_err(), "{bad:?}");
        }
    }
}
