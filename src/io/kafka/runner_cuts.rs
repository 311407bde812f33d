//! The group runner's [`CutSource`] on a real broker: a [`CutReader`] over
//! `__barrier_state` with a consumer of its own. The topic is created by the
//! broker when the first barrier group is defined, so until it exists the
//! runner simply sees no cuts; the partition count comes from metadata.

use std::time::Duration;

use crate::engine::columnar::barrier::{
    BARRIER_STATE_TOPIC, BarrierCut, CutReader, CutReaderOptions, InjectionTarget,
};
use crate::engine::columnar::runner::align::CutSource;
use crate::engine::columnar::runner::group::RunnerError;
use crate::io::kafka::barrier_consumer::KafkaBarrierConsumer;
use crate::io::kafka::error::KafkaIoError;
use crate::io::kafka::settings::KafkaSettings;

/// Follows `__barrier_state` once it exists.
pub struct BrokerCuts {
    settings: KafkaSettings,
    timeout: Duration,
    reader: Option<CutReader<KafkaBarrierConsumer>>,
}

fn runner_error(e: KafkaIoError) -> RunnerError {
    RunnerError {
        message: e.message,
        retriable: e.unreachable,
        fenced: None,
    }
}

impl BrokerCuts {
    pub fn new(settings: KafkaSettings, timeout: Duration) -> Self {
        BrokerCuts {
            settings,
            timeout,
            reader: None,
        }
    }

    /// The reader, built on first use once the topic exists.
    fn reader(&mut self) -> Result<Option<&mut CutReader<KafkaBarrierConsumer>>, RunnerError> {
        if self.reader.is_none() {
            let consumer =
                KafkaBarrierConsumer::new(&self.settings, self.timeout).map_err(runner_error)?;
            let Some(partitions) = consumer
                .partition_count(BARRIER_STATE_TOPIC)
                .map_err(runner_error)?
            else {
                return Ok(None);
            };
            let reader = CutReader::new(consumer, partitions, CutReaderOptions::default())
                .map_err(|e| RunnerError::new(e.to_string()))?;
            self.reader = Some(reader);
        }
        Ok(self.reader.as_mut())
    }
}

impl CutSource for BrokerCuts {
    fn complete_cuts_after(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Vec<BarrierCut>, RunnerError> {
        match self.reader()? {
            Some(reader) => CutSource::complete_cuts_after(reader, group, after),
            None => Ok(Vec::new()),
        }
    }

    fn complete_cut_at(
        &mut self,
        group: &str,
        epoch: i64,
    ) -> Result<Option<BarrierCut>, RunnerError> {
        match self.reader()? {
            Some(reader) => CutSource::complete_cut_at(reader, group, epoch),
            None => Ok(None),
        }
    }

    fn latest_complete_cut(&mut self, group: &str) -> Result<Option<BarrierCut>, RunnerError> {
        match self.reader()? {
            Some(reader) => CutSource::latest_complete_cut(reader, group),
            None => Ok(None),
        }
    }

    fn open_injection(
        &mut self,
        group: &str,
        after: i64,
    ) -> Result<Option<(i64, Vec<InjectionTarget>)>, RunnerError> {
        match self.reader.as_mut() {
            Some(reader) => CutSource::open_injection(reader, group, after),
            None => Ok(None),
        }
    }
}
