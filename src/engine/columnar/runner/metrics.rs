//! Runner metrics (semantics §7): batches (failed ones included), input
//! records, output records (successful batches only), failures, dead-letter
//! records and the time spent inside the topology.

use std::time::Duration;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Metrics {
    pub batches: u64,
    pub input_records: u64,
    pub output_records: u64,
    pub failures: u64,
    pub dead_letter_records: u64,
    pub processing_nanos: u64,
}

impl Metrics {
    pub fn processing(&self) -> Duration {
        Duration::from_nanos(self.processing_nanos)
    }
}

impl std::fmt::Display for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "batches {}, records in {}, records out {}, failures {}, dead letters {}, processing {:.3}s",
            self.batches,
            self.input_records,
            self.output_records,
            self.failures,
            self.dead_letter_records,
            self.processing().as_secs_f64()
        )
    }
}
