//! How a command hosts a tail (`ops::tail::TailHost`): once the tail is
//! positioned, Ctrl-C and SIGTERM only raise its flag (it then closes its output
//! and ends by itself), and a spinner on stderr shows its progress — used by
//! `tail` and by the demo's tails.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::ops::tail::{Progress, ProgressNumbers, TailHost};

/// Signals raise the tail's flag; a progress spinner when `progress`.
pub struct ConsoleHost {
    /// Draw the spinner (stderr a terminal, not `-q`, not `--output json`).
    pub progress: bool,
}

impl TailHost for ConsoleHost {
    fn cooperate(&self, cancelled: Arc<AtomicBool>) {
        watch_signals(cancelled);
    }

    fn progress(&self) -> Option<Box<dyn Progress>> {
        if !self.progress {
            return None;
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Some(Box::new(Spinner(bar)))
    }
}

struct Spinner(ProgressBar);

impl Progress for Spinner {
    fn show(&self, now: &ProgressNumbers) {
        self.0.set_message(format!(
            "{} records, {}, {:.0} records/s{}",
            now.records,
            indicatif::HumanBytes(now.bytes),
            now.records_per_second,
            now.lag.map_or_else(String::new, |l| format!(", lag {l}"))
        ));
    }

    fn clear(&self) {
        self.0.finish_and_clear();
    }
}

/// Sets the flag on Ctrl-C or SIGTERM while the tail holds it.
fn watch_signals(flag: Arc<AtomicBool>) {
    // From here on the tail stops by itself (closing its output): signals only
    // raise the flag (`cmd::interrupt`). Once the tail is over and has dropped
    // it, they end the process again, so a later step (the demo's) is cancellable.
    crate::cmd::interrupt::cooperate_while_alive(&flag);
}
