//! `--threads N` of `run` (offline) and `tail`: one definition, one meaning —
//! how many threads one batch may be worked on (default: the available
//! cores), the output byte-identical at every count (semantics §4).

use clap::Args;

#[derive(Debug, Args, Default, Clone, Copy)]
pub struct ThreadsArgs {
    /// Threads one batch may be worked on (default: the available cores): `run` offline splits filters, derived columns, group-bys and joins over them, `run` and `tail` encode Parquet columns on them. The output is byte-identical at every count; 1 is the one-thread path.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

impl ThreadsArgs {
    /// The count asked for, or the available cores.
    pub fn resolve(&self) -> usize {
        self.threads
            .unwrap_or_else(crate::engine::columnar::parallel::default_threads)
    }
}

fn parse_threads(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected a thread count from 1 to 1024, got `{text}`"
        )),
    }
}
