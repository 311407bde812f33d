//! `barrier show`: one cut in full (arguments and rendering; the use case is
//! `ops::barrier::show`).

use std::str::FromStr;

use clap::Args;

use crate::cmd::exit::CliResult;
use crate::cmd::global::GlobalArgs;
use crate::cmd::output::Ui;
use crate::cmd::render::barrier::{cut_full_json, write_cut_detail};
use crate::engine::columnar::barrier::selection::EpochSelector;
use crate::ops::barrier::show::show;

#[derive(Debug, Args)]
#[command(
    after_help = "`--epoch latest` is the highest-epoch complete cut; an exact epoch shows \
its cut whether complete or partial.

Exit codes: 0 shown, 1 no such cut (unknown group, an epoch never written or deleted by a \
tombstone; the message says which epochs exist) or a record of __barrier_state does not decode, \
4 broker unreachable. Use `barrier verify` for a check that exits 3."
)]
pub struct ShowArgs {
    /// Barrier group.
    #[arg(long, value_name = "GROUP")]
    pub group: String,

    /// Epoch of the cut, or `latest` (the highest complete cut).
    #[arg(long, value_name = "EPOCH|latest", value_parser = EpochSelector::from_str)]
    pub epoch: EpochSelector,
}

pub fn run(global: &GlobalArgs, command: &str, args: ShowArgs) -> CliResult<()> {
    let settings = global.connection.kafka_settings(command)?;
    let cut = show(
        &settings,
        global.connection.timeout,
        &args.group,
        args.epoch,
    )?;
    Ui::new(&global.output).report(cut_full_json(&cut), |out| write_cut_detail(out, &cut))
}
