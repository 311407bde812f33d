//! Epoch-keyed state snapshots: the shared container, file naming and known payloads.
//!
//! `container` reads and writes the map of node/store name → bytes that one
//! snapshot file holds; `naming` maps storage keys to file names and back; the
//! payload modules (`tagged`, `groupby`, `join`, `byte_store`) decode what the
//! libraries put inside an entry, and `payload` picks one for display; `store` is
//! the load/save seam a runner uses, `epoch_retention` which barrier epochs the
//! Kafka store keeps, `plan` plans epoch copies and prunes before
//! anything is touched, and `lossless` is the JSON dump that restores byte for
//! byte. Restoring copies entry bytes verbatim: nothing here transcodes between
//! languages.

pub mod byte_store;
pub mod container;
pub mod decided;
pub mod delta;
pub mod epoch_retention;
pub mod groupby;
pub mod identity;
pub mod join;
pub mod lossless;
pub mod naming;
pub mod payload;
pub mod plan;
pub mod state_record;
pub mod store;
pub mod tagged;
