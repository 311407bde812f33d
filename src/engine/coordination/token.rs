//! Fencing tokens (formats §9): the (producer id, producer epoch) pair minted by
//! `InitProducerId` for `transactional.id = <role>`, its text form and its order.
//!
//! Knows nothing of records or Kafka clients; standard library only.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A leadership epoch: the Kafka producer id and epoch that own a role.
///
/// Ordered by producer id first, then epoch: once an epoch passes 32767 Kafka
/// issues a fresh producer id with epoch 0, which must rank above the old one.
/// The derived order relies on the field order below.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FencingToken {
    producer_id: i64,
    producer_epoch: i16,
}

/// The role was never taken: ranks below every minted token.
/// (Distinct from the snapshot `NoEpoch` of formats §8.3.)
pub const NO_EPOCH: FencingToken = FencingToken {
    producer_id: -1,
    producer_epoch: -1,
};

impl FencingToken {
    /// A minted token; both parts must be non-negative.
    pub fn new(producer_id: i64, producer_epoch: i16) -> Result<Self, NegativeTokenError> {
        if producer_id < 0 || producer_epoch < 0 {
            return Err(NegativeTokenError {
                producer_id,
                producer_epoch,
            });
        }
        Ok(FencingToken {
            producer_id,
            producer_epoch,
        })
    }

    pub fn producer_id(self) -> i64 {
        self.producer_id
    }

    pub fn producer_epoch(self) -> i16 {
        self.producer_epoch
    }

    /// True for [`NO_EPOCH`], the token of a role that was never taken.
    pub fn is_no_epoch(self) -> bool {
        self == NO_EPOCH
    }

    /// `self` is strictly newer than `other` (compare > 0).
    pub fn supersedes(self, other: FencingToken) -> bool {
        self.cmp(&other) == Ordering::Greater
    }
}

impl fmt::Display for FencingToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.producer_id, self.producer_epoch)
    }
}

impl FromStr for FencingToken {
    type Err = TokenParseError;

    /// Parses `<producer_id>:<producer_epoch>`: exactly one `:`, base-10 i64 and
    /// i16, both non-negative.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let reject = || TokenParseError {
            text: text.to_string(),
        };
        let (id, epoch) = text.split_once(':').ok_or_else(reject)?;
        if epoch.contains(':') {
            return Err(reject());
        }
        let id: i64 = id.parse().map_err(|_| reject())?;
        let epoch: i16 = epoch.parse().map_err(|_| reject())?;
        FencingToken::new(id, epoch).map_err(|_| reject())
    }
}

/// A token was constructed from a negative producer id or epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegativeTokenError {
    pub producer_id: i64,
    pub producer_epoch: i16,
}

impl fmt::Display for NegativeTokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a fencing token must not be negative, got {}:{}",
            self.producer_id, self.producer_epoch
        )
    }
}

impl std::error::Error for NegativeTokenError {}

/// A text is not of the form `producer_id:producer_epoch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenParseError {
    pub text: String,
}

impl fmt::Display for TokenParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected a fencing token of the form producer_id:producer_epoch, got \"{}\"",
            self.text
        )
    }
}

impl std::error::Error for TokenParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: i64, epoch: i16) -> FencingToken {
        FencingToken::new(id, epoch).unwrap()
    }

    #[test]
    fn no_epoch_ranks_below_the_smallest_minted_token() {
        assert!(NO_EPOCH < t(0, 0));
        assert!(t(0, 0).supersedes(NO_EPOCH));
        assert!(!NO_EPOCH.supersedes(NO_EPOCH));
        assert!(NO_EPOCH.is_no_epoch());
        assert!(!t(0, 0).is_no_epoch());
    }

    #[test]
    fn a_fresh_producer_id_supersedes_the_last_epoch_of_the_old_one() {
        assert!(t(5, 0).supersedes(t(4, i16::MAX)));
        assert!(!t(4, i16::MAX).supersedes(t(5, 0)));
    }

    #[test]
    fn text_form_round_trips_at_the_extremes() {
        for token in [t(0, 0), t(4242, 7), t(i64::MAX, i16::MAX)] {
            assert_eq!(token.to_string().parse::<FencingToken>(), Ok(token));
        }
        assert_eq!(NO_EPOCH.to_string(), "-1:-1");
    }

    #[test]
    fn parse_rejects_spaces_and_overflow() {
        for text in [
            " 1:2",
            "1: 2",
            "1:2 ",
            "9223372036854775808:0",
            "1:32768",
            "1::2",
        ] {
            let err = text.parse::<FencingToken>().unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "expected a fencing token of the form producer_id:producer_epoch, got \"{text}\""
                )
            );
        }
    }

    #[test]
    fn negative_construction_names_both_parts() {
        assert_eq!(
            FencingToken::new(3, -2).unwrap_err().to_string(),
            "a fencing token must not be negative, got 3:-2"
        );
    }
}
