//! What `Describe` reports about a role's epoch (semantics §9): the newest
//! minted token and whether it is still held, from one DescribeTransactions
//! call and no topic read. Standard library only.

use std::fmt;

use super::token::{FencingToken, NO_EPOCH};

/// The leadership epoch of a role as the broker knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeadershipStatus {
    pub role: String,
    /// [`NO_EPOCH`] when the role was never taken.
    pub token: FencingToken,
    pub held: bool,
}

impl LeadershipStatus {
    /// A role whose transactional id is unknown to the broker.
    pub fn never_taken(role: impl Into<String>) -> Self {
        LeadershipStatus {
            role: role.into(),
            token: NO_EPOCH,
            held: false,
        }
    }

    /// `token` is the current, held epoch: writes fenced by it are authoritative.
    pub fn is_authoritative(&self, token: FencingToken) -> bool {
        self.held && self.token == token
    }
}

impl fmt::Display for LeadershipStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_no_epoch() {
            write!(f, "role {}: no epoch", self.role)
        } else {
            write!(f, "role {}: epoch {}", self.role, self.token)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_held_current_token_is_authoritative() {
        let token = FencingToken::new(4242, 7).unwrap();
        let mut status = LeadershipStatus {
            role: "controller".into(),
            token,
            held: true,
        };
        assert!(status.is_authoritative(token));
        assert!(!status.is_authoritative(FencingToken::new(4242, 6).unwrap()));
        status.held = false;
        assert!(!status.is_authoritative(token));
        let never = LeadershipStatus::never_taken("controller");
        assert!(!never.is_authoritative(NO_EPOCH));
    }
}
