//! `barrier` use cases: read-only views of `__barrier_state` ([`list`], [`show`], [`watch`]),
//! verification of a cut ([`verify`]) and offline decoding of raw records ([`decode`]).
//! Each reads the topic through `io::kafka::barrier_state` / `io::kafka::barrier_watch`
//! and folds it with `engine::columnar::barrier` (`docs/formats.md` §7,
//! `docs/semantics.md` §8); nothing here writes to the broker.

pub mod decode;
pub mod list;
pub mod show;
pub mod verify;
pub mod watch;

use std::time::Duration;

use crate::io::kafka::barrier_state::{BarrierState, BarrierStateReadError, read_barrier_state};
use crate::io::kafka::settings::KafkaSettings;
use crate::ops::{Error, Result};

/// Reads and folds the whole topic; unreachable is [`crate::ops::ErrorKind::Unreachable`],
/// a malformed record a failure naming its partition and offset.
pub fn read_state(settings: &KafkaSettings, timeout: Duration) -> Result<BarrierState> {
    read_barrier_state(settings, timeout).map_err(state_error)
}

fn state_error(e: BarrierStateReadError) -> Error {
    match e {
        BarrierStateReadError::Kafka(k) => k.into(),
        malformed => Error::failure(malformed.to_string()),
    }
}
