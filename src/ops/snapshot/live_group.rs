//! A restore never changes the state of a consumer group that is running
//! (docs/topology.md "State in Kafka", issue 19): a live member holds its
//! partitions' state in memory and saves it over whatever was restored at its
//! next round, rebalance or stop (or, for an epoch it never reads, ignores it),
//! so the restore would be lost or, worse, half taken. `snapshot restore` into a
//! state directory or a state topic therefore asks the broker whether the group
//! that owns the state has members, and refuses naming the group and each
//! member, unless `--allow-live-members` says to restore anyway.
//!
//! The group comes from the state itself: a directory's identity manifests
//! (`krabka-state-identity.json`), a state topic's record headers. A directory
//! without a manifest (a Java or Go runner's) names no group, so nothing can be
//! checked; one whose manifest does not decode is refused, as its owner is
//! unknown.

use std::collections::BTreeSet;
use std::time::Duration;

use super::identities;
use crate::io::kafka::groups::group_activity;
use crate::io::kafka::settings::KafkaSettings;
use crate::io::snapshot_dir::SnapshotDir;
use crate::ops::{Error, ErrorKind, Result};

/// The flag that restores into a running group's state anyway.
pub const ALLOW_FLAG: &str = "--allow-live-members";

/// The consumer groups a directory's identity manifests name.
pub fn groups_of_dir(dir: &SnapshotDir) -> Result<BTreeSet<String>> {
    let listing = dir.list().map_err(super::dir_error)?;
    let mut groups = BTreeSet::new();
    for (file, identity) in identities(dir, &listing.identity_files) {
        match identity {
            Ok(identity) => {
                groups.insert(identity.consumer_group);
            }
            Err(e) => {
                return Err(Error::failure(format!(
                    "{}: {e}: whose state the directory holds is unknown, so whether its group is running cannot be checked (pass {ALLOW_FLAG} to restore without checking); nothing was changed",
                    dir.path().join(&file).display()
                )));
            }
        }
    }
    Ok(groups)
}

/// Refuses when any of `groups` has members. `location` names the state
/// (`state topic T`, a directory); `connect` is only called when there is a
/// group to ask about.
pub fn refuse_running(
    groups: &BTreeSet<String>,
    location: &str,
    connect: &dyn Fn() -> Result<KafkaSettings>,
    timeout: Duration,
) -> Result<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let settings = connect().map_err(|e| {
        if e.kind == ErrorKind::Usage {
            let named: Vec<&str> = groups.iter().map(String::as_str).collect();
            Error::usage(format!(
                "{location} holds the state of consumer group {}: give the broker (-b) so that the restore can check the group has no live members, or pass {ALLOW_FLAG} to restore without checking ({})",
                named.join(", "),
                e.message
            ))
        } else {
            e
        }
    })?;
    for group in groups {
        let activity = group_activity(&settings, group, timeout)?;
        if !activity.is_inactive() {
            return Err(Error::failure(format!(
                "{location} holds the state of consumer group {group}, which is running ({}): a live member keeps its partitions' state in memory and would overwrite or ignore the restored state; stop every member of {group} first, or pass {ALLOW_FLAG} to restore anyway; nothing was changed",
                activity.describe()
            )));
        }
    }
    Ok(())
}
