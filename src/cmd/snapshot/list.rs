//! `snapshot list DIR`: every snapshot file of a directory, by layout, with its
//! owner, epoch (live state marked `live`), size, entry count, modification time
//! and whether it decodes (and as which container generation). The listing is
//! `ops::snapshot::list`; this file renders it.

use std::path::PathBuf;

use clap::Args;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::render::snapshot::{list_human, list_json};
use crate::ops::snapshot::list::list;
use crate::ops::state_inspect::list_topic;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The snapshot directory (Java/Go and Rust layouts are told apart by file name).
    #[arg(value_name = "DIR", required_unless_present = "state_topic")]
    pub dir: Option<PathBuf>,

    /// List a state topic's snapshots instead (`state_store: kafka`), read with the broker flags.
    #[arg(long, value_name = "TOPIC", conflicts_with = "dir")]
    pub state_topic: Option<String>,
}

pub fn run(global: &GlobalArgs, args: ListArgs) -> CliResult<()> {
    let ui = Ui::new(&global.output);
    if let Some(topic) = &args.state_topic {
        let kafka = global.connection.kafka_settings("snapshot list")?;
        let listing = list_topic(&kafka, topic, global.connection.timeout)?;
        return ui.report(super::topic_view::listing_json(&listing), |out| {
            super::topic_view::listing_human(&listing, out)
        });
    }
    let Some(dir) = &args.dir else {
        return Err(crate::cmd::exit::CliError::usage(
            "give a DIR or --state-topic TOPIC",
        ));
    };
    let report = list(dir)?;
    ui.report(list_json(&report), |out| list_human(&report, out))
}
