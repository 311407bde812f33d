//! A barrier group of which `__barrier_state` holds no record. Every command that names a
//! group (`barrier show | verify | watch | list --group`, `snapshot restore-cut`,
//! `run --restore-cut`) refuses it with this one error, so a typo in a script reads the
//! same everywhere and is never mistaken for a failed or an empty cut (issue 20).

use std::fmt;

use crate::engine::columnar::barrier::cut_log::CutLog;
use crate::engine::columnar::barrier::record::BARRIER_STATE_TOPIC;

/// `group` has neither a definition nor a cut in the folded log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownGroup {
    pub group: String,
    pub topic_exists: bool,
    /// The groups the log does hold, sorted.
    pub known: Vec<String>,
}

impl fmt::Display for UnknownGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no such barrier group: {}", self.group)?;
        if !self.topic_exists {
            return write!(f, " ({BARRIER_STATE_TOPIC} does not exist)");
        }
        match self.known.as_slice() {
            [] => write!(f, " ({BARRIER_STATE_TOPIC} holds no group)"),
            known => write!(
                f,
                " (no record of it in {BARRIER_STATE_TOPIC}; groups: {})",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for UnknownGroup {}

/// `Ok` when the log holds any record (definition or cut) of `group`.
pub fn require_group(log: &CutLog, topic_exists: bool, group: &str) -> Result<(), UnknownGroup> {
    let known = log.groups();
    if known.iter().any(|g| g == group) {
        return Ok(());
    }
    Err(UnknownGroup {
        group: group.to_owned(),
        topic_exists,
        known,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_what_the_topic_holds() {
        let log = CutLog::new();
        assert_eq!(
            require_group(&log, false, "app").unwrap_err().to_string(),
            "no such barrier group: app (__barrier_state does not exist)"
        );
        assert_eq!(
            require_group(&log, true, "app").unwrap_err().to_string(),
            "no such barrier group: app (__barrier_state holds no group)"
        );
    }
}
