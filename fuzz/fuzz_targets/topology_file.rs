//! Topology YAML files: parsed, then validated and built as `run` does offline.
#![no_main]
use krabka_streams::engine::columnar::topology::spec::{self, OfflineCodecs};
use krabka_streams::io::topology_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(parsed) = topology_file::parse(text) {
        let _ = spec::build(&parsed, &OfflineCodecs, &Default::default());
    }
});
