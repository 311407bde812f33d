//! Epoch-keyed state snapshots: the shared container, file naming and known payloads.
